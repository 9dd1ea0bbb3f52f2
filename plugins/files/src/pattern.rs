//! Glob filters over paths, with gitignore-like meaning: a pattern without `/`
//! matches file names at any depth (`*.rs`), a pattern with `/` matches the
//! whole path relative to the directory being listed or searched (`src/**/*.rs`).

use cordon_sdk::ToolError;
use globset::{GlobBuilder, GlobMatcher};
use std::path::Path;

/// A compiled glob filter.
pub(crate) struct PathPattern {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl PathPattern {
    /// Compiles `pattern`; a malformed glob is invalid input.
    pub(crate) fn new(pattern: &str) -> Result<Self, ToolError> {
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|error| {
                ToolError::InvalidInput(format!("invalid glob {pattern:?}: {error}"))
            })?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            whole_path: pattern.contains('/'),
        })
    }

    /// Whether `relative`, a path below the listed or searched directory, matches.
    pub(crate) fn matches(&self, relative: &Path) -> bool {
        if self.whole_path {
            self.matcher.is_match(relative)
        } else {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        }
    }
}
