//! The served runs requests run on. One served run commits one step at a
//! time, so requests that arrive while every run is busy open another run
//! of the same agent and thread, up to a limit; then they wait for one to
//! be free. A request takes the free run that was opened first and offers
//! its tool, so one client calling after another is served by the first
//! run alone, and a tool a skill offered in one run waits for that run.
//! What the server lists is what any of its runs offers now.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use cordon_kernel::{RunError, ServedRun, ToolSpec};
use tokio::sync::Notify;

/// What a run opened for requests keeps alive beside it (such as the lock
/// saying this process drives it), dropped when the server is.
pub type Kept = Box<dyn std::any::Any + Send + Sync>;

/// How another run is opened: its number (the first is 0) to the run.
pub type Opener = Box<dyn Fn(usize) -> Opening + Send + Sync>;

/// A run being opened, with what it keeps.
pub type Opening = Pin<Box<dyn Future<Output = anyhow::Result<(ServedRun, Kept)>> + Send>>;

/// The served runs of one server.
pub struct Lanes {
    open: Opener,
    limit: usize,
    runs: Mutex<Runs>,
    freed: Notify,
}

#[derive(Default)]
struct Runs {
    /// Every run opened, in the order they opened, with what each keeps.
    opened: Vec<(Arc<ServedRun>, Kept)>,
    /// Whether each run serves a request now.
    busy: Vec<bool>,
    /// How many runs are being opened.
    opening: usize,
    /// The number of the last run asked to open (the first is 0).
    numbered: usize,
}

/// Why a request found no run.
#[derive(Debug, thiserror::Error)]
pub enum LaneError {
    /// Opening another run for it failed.
    #[error("opening another run for a call made while {busy} ran: {source:#}")]
    Open {
        /// How many runs were busy.
        busy: usize,
        /// Why the run did not open.
        source: anyhow::Error,
    },
}

/// A run serving one request; it is free again when this is dropped.
pub struct Lane<'a> {
    lanes: &'a Lanes,
    index: usize,
    run: Arc<ServedRun>,
}

impl Lane<'_> {
    /// The run.
    pub fn run(&self) -> &ServedRun {
        &self.run
    }
}

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        self.lanes.lock().busy[self.index] = false;
        self.lanes.freed.notify_waiters();
    }
}

/// What a request may do next.
enum Next {
    Take(usize),
    Open,
    Wait,
}

impl Lanes {
    /// Lanes whose first run is open already; `open` opens more, at most
    /// `limit` runs in all.
    pub async fn new(open: Opener, limit: usize) -> anyhow::Result<Self> {
        let first = open(0).await?;
        Ok(Self {
            open,
            limit: limit.max(1),
            runs: Mutex::new(Runs {
                opened: vec![(Arc::new(first.0), first.1)],
                busy: vec![false],
                opening: 0,
                numbered: 0,
            }),
            freed: Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Runs> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The first run's id.
    pub fn first_run_id(&self) -> String {
        self.lock().opened[0].0.run_id().to_owned()
    }

    /// Every run opened so far, first to last.
    pub fn runs(&self) -> Vec<Arc<ServedRun>> {
        self.lock()
            .opened
            .iter()
            .map(|(run, _)| Arc::clone(run))
            .collect()
    }

    /// The tools any run offers now, each once, by name.
    pub fn offered(&self) -> Vec<ToolSpec> {
        let mut names = BTreeSet::new();
        self.runs()
            .iter()
            .flat_map(|run| run.offered())
            .filter(|spec| names.insert(spec.name.clone()))
            .collect()
    }

    /// A free run offering `tool`, opening another when every run is busy
    /// and one just opened would offer it, or waiting for one. A tool no
    /// run offers takes any free run, which answers that it is not offered.
    pub async fn take(&self, tool: &str) -> Result<Lane<'_>, LaneError> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Told of every run freed from here on, before looking.
            freed.as_mut().enable();
            let number = {
                let mut runs = self.lock();
                match self.choose(&runs, tool) {
                    Next::Take(index) => {
                        runs.busy[index] = true;
                        let run = Arc::clone(&runs.opened[index].0);
                        return Ok(Lane {
                            lanes: self,
                            index,
                            run,
                        });
                    }
                    Next::Open => {
                        runs.opening += 1;
                        runs.numbered += 1;
                        Some(runs.numbered)
                    }
                    Next::Wait => None,
                }
            };
            match number {
                Some(number) => return self.open_another(number).await,
                None => freed.await,
            }
        }
    }

    fn choose(&self, runs: &Runs, tool: &str) -> Next {
        let offers: Vec<bool> = runs
            .opened
            .iter()
            .map(|(run, _)| run.offers(tool))
            .collect();
        let free = |wanted: bool| {
            (0..offers.len()).find(|&index| !runs.busy[index] && (offers[index] || !wanted))
        };
        let room = runs.opened.len() + runs.opening < self.limit;
        let at_open = runs.opened[0].0.offers_at_open(tool);
        if let Some(index) = free(true) {
            Next::Take(index)
        } else if room && (at_open || !offers.contains(&true)) {
            Next::Open
        } else if offers.contains(&true) || at_open {
            Next::Wait
        } else {
            free(false).map_or(Next::Wait, Next::Take)
        }
    }

    /// Open run `number`, counted as opening already, and take it.
    async fn open_another(&self, number: usize) -> Result<Lane<'_>, LaneError> {
        let opened = (self.open)(number).await;
        let mut runs = self.lock();
        runs.opening -= 1;
        match opened {
            Ok((run, kept)) => {
                let run = Arc::new(run);
                runs.opened.push((Arc::clone(&run), kept));
                runs.busy.push(true);
                Ok(Lane {
                    lanes: self,
                    index: runs.opened.len() - 1,
                    run,
                })
            }
            Err(source) => {
                let busy = runs.busy.iter().filter(|busy| **busy).count();
                drop(runs);
                self.freed.notify_waiters();
                Err(LaneError::Open { busy, source })
            }
        }
    }

    /// End every run: a request after it is refused.
    pub async fn close(&self) -> Result<(), RunError> {
        let mut ended = Ok(());
        for run in self.runs() {
            let closed = run.close().await;
            if ended.is_ok() {
                ended = closed;
            }
        }
        ended
    }
}
