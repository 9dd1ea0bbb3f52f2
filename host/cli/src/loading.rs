//! What a person sees while bundles load. A first start compiles every
//! component, which takes seconds, so it says so (`compiling 8 components,
//! cached afterwards`), with a progress bar on a terminal; a start from the
//! cache says nothing. `-v` lists each bundle as it loads, from the cache or
//! compiled, with its load time.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use cordon_wasm::{CacheOutcome, LoadProgress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Bundle loading shown on stderr.
pub(crate) struct LoadDisplay {
    /// `-v` and more list every bundle.
    verbose: u8,
    /// The bar of the load under way, on a terminal.
    bar: Mutex<Option<ProgressBar>>,
}

impl LoadDisplay {
    pub(crate) fn new(verbose: u8) -> Self {
        Self {
            verbose,
            bar: Mutex::new(None),
        }
    }

    /// Print `line` on stderr, above the bar when one is drawn.
    fn say(&self, line: &str) {
        match self
            .bar
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_ref()
        {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

impl LoadProgress for LoadDisplay {
    fn begin(&self, _bundles: usize, to_compile: usize) {
        if to_compile == 0 {
            return;
        }
        let plural = if to_compile == 1 { "" } else { "s" };
        eprintln!("compiling {to_compile} component{plural}, cached afterwards");
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(
                Some(to_compile as u64),
                ProgressDrawTarget::stderr(),
            );
            let style =
                ProgressStyle::with_template("{spinner} [{pos}/{len}] {wide_msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(120));
            *self
                .bar
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(bar);
        }
    }

    fn compiling(&self, name: &str, bytes: usize) {
        let what = format!("compiling {name} ({} KiB)", bytes.div_ceil(1024));
        let guard = self
            .bar
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match guard.as_ref() {
            Some(bar) => bar.set_message(what),
            None if self.verbose > 0 => {
                drop(guard);
                eprintln!("{what}");
            }
            None => {}
        }
    }

    fn loaded(&self, name: &str, outcome: CacheOutcome, time: Duration) {
        if outcome != CacheOutcome::Hit
            && let Some(bar) = self
                .bar
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .as_ref()
        {
            bar.inc(1);
        }
        if self.verbose > 0 {
            let how = match outcome {
                CacheOutcome::Hit => "from the cache",
                CacheOutcome::Compiled => "compiled and cached",
                CacheOutcome::Uncached => "compiled, not cached",
                CacheOutcome::Replaced(_) => "compiled again and cached",
            };
            self.say(&format!("loaded {name}: {how} in {} ms", time.as_millis()));
        }
    }

    fn end(&self) {
        if let Some(bar) = self
            .bar
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
        {
            bar.finish_and_clear();
        }
    }
}
