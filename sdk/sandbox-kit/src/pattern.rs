//! Glob patterns over workspace paths (globset): `*` stays within a path
//! component, `**` crosses them. A pattern splits into the literal directory
//! it starts in, which is all a search needs to walk, and the glob proper.
//! Backslash is an ordinary character; `[*]` matches a literal `*`.

use crate::error::{Error, Result};
use crate::path;
use globset::{GlobBuilder, GlobMatcher};

/// Whether `text` has glob metacharacters.
pub(crate) fn has_glob_chars(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// Compiles `pattern`, matching `/` only literally; a malformed pattern is
/// invalid.
pub(crate) fn matcher(pattern: &str, case_insensitive: bool) -> Result<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(false)
        .case_insensitive(case_insensitive)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|error| Error::Invalid(format!("invalid glob {pattern:?}: {error}")))
}

/// A glob over whole workspace paths.
pub(crate) struct PathGlob {
    /// The directory holding every possible match, normalized.
    pub root: String,
    /// Whether the pattern has no glob characters at all.
    pub literal: bool,
    matcher: GlobMatcher,
}

impl PathGlob {
    /// Compiles `pattern`, a workspace-relative glob such as `src/**/*.rs`.
    pub(crate) fn new(pattern: &str) -> Result<Self> {
        let mounted = path::mount_of(pattern).is_some();
        if pattern.starts_with('/') && !mounted {
            return Err(Error::Denied(format!(
                "{pattern}: absolute paths are outside the workspace"
            )));
        }
        let parts: Vec<&str> = pattern
            .split('/')
            .filter(|part| !part.is_empty() && *part != ".")
            .collect();
        let literal_len = parts
            .iter()
            .position(|part| has_glob_chars(part))
            .unwrap_or(parts.len());
        let literal = literal_len == parts.len();
        let split = if literal {
            parts.len().saturating_sub(1)
        } else {
            literal_len
        };
        let literal_root = parts[..split].join("/");
        let root = path::normalize(&if mounted {
            format!("/{literal_root}")
        } else {
            literal_root
        })?;
        let rest = &parts[split..];
        if rest.contains(&"..") {
            return Err(Error::Invalid(format!(
                "glob {pattern:?}: `..` may only come before the first wildcard"
            )));
        }
        let whole = path::join(&root, &rest.join("/"));
        Ok(Self {
            root,
            literal,
            matcher: matcher(&whole, false)?,
        })
    }

    /// Whether the workspace path `path` matches.
    pub(crate) fn is_match(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }
}

/// A filter on file paths with gitignore-like meaning: a pattern without `/`
/// matches file names at any depth (`*.rs`), one with `/` matches the whole
/// workspace path (`src/**/*.rs`).
pub(crate) struct FileFilter {
    whole_path: bool,
    matcher: GlobMatcher,
}

impl FileFilter {
    /// Compiles `pattern`.
    pub(crate) fn new(pattern: &str) -> Result<Self> {
        let pattern = pattern.trim_start_matches("./");
        Ok(Self {
            whole_path: pattern.contains('/'),
            matcher: matcher(pattern, false)?,
        })
    }

    /// Whether the file at workspace path `path` passes.
    pub(crate) fn is_match(&self, path: &str) -> bool {
        if self.whole_path {
            self.matcher.is_match(path)
        } else {
            self.matcher.is_match(path::file_name(path))
        }
    }
}
