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
    /// The server is stopping: no call takes a run.
    closed: bool,
}

/// Why a request found no run.
#[derive(Debug, thiserror::Error)]
pub enum LaneError {
    /// Opening another run for it failed.
    #[error(
        "opening another run for a call made while the {open} open run(s) could not take it: {source:#}"
    )]
    Open {
        /// How many runs were open.
        open: usize,
        /// Why the run did not open.
        source: anyhow::Error,
    },
    /// The server is stopping.
    #[error("the server is stopping and takes no more calls")]
    Closed,
}

/// A run being opened, counted among those opening until this is dropped,
/// so that a call given up while its run opens leaves the room it took.
struct OpeningRoom<'a>(&'a Lanes);

impl Drop for OpeningRoom<'_> {
    fn drop(&mut self) {
        self.0.lock().opening -= 1;
        self.0.freed.notify_waiters();
    }
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
                closed: false,
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
            let number = {
                let mut runs = self.lock();
                if runs.closed {
                    return Err(LaneError::Closed);
                }
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
                        Some((runs.numbered, runs.opened.len()))
                    }
                    Next::Wait => {
                        // Told of every run freed from here on: a run is
                        // freed only while this lock is held.
                        freed.as_mut().enable();
                        None
                    }
                }
            };
            match number {
                Some((number, open)) => return self.open_another(number, open).await,
                None => freed.await,
            }
        }
    }

    fn choose(&self, runs: &Runs, tool: &str) -> Next {
        let mut free = (0..runs.opened.len()).filter(|&index| !runs.busy[index]);
        if let Some(index) = free
            .clone()
            .find(|&index| runs.opened[index].0.offers(tool))
        {
            return Next::Take(index);
        }
        let room = runs.opened.len() + runs.opening < self.limit;
        if room && runs.opened[0].0.offers_at_open(tool) {
            // A run opened now offers it.
            return Next::Open;
        }
        if runs.opened.iter().any(|(run, _)| run.offers(tool)) {
            // A busy run offers it; wait for one.
            return Next::Wait;
        }
        // No run offers it: any run answers so.
        match free.next() {
            Some(index) => Next::Take(index),
            None if room => Next::Open,
            None => Next::Wait,
        }
    }

    /// Open run `number`, counted as opening already, and take it; `open`
    /// runs were open when it was asked for.
    async fn open_another(&self, number: usize, open: usize) -> Result<Lane<'_>, LaneError> {
        let opening = OpeningRoom(self);
        let opened = (self.open)(number).await;
        let lane = match opened {
            Ok((run, kept)) => {
                let run = Arc::new(run);
                let mut runs = self.lock();
                runs.opened.push((Arc::clone(&run), kept));
                runs.busy.push(true);
                Ok(Lane {
                    lanes: self,
                    index: runs.opened.len() - 1,
                    run,
                })
            }
            Err(source) => Err(LaneError::Open { open, source }),
        };
        drop(opening);
        lane
    }

    /// End every run, once the runs being opened are open; a call after it
    /// is refused.
    pub async fn close(&self) -> Result<(), RunError> {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            {
                let mut runs = self.lock();
                runs.closed = true;
                if runs.opening == 0 {
                    break;
                }
                freed.as_mut().enable();
            }
            freed.await;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_kernel::{
        AgentDef, CallContext, DeferApprovals, EventLog, MemoryCommitStore, PermissionPolicy,
        Requester, Runtime, Served, ToolAnnotations, ToolCall, ToolCallOutcome, ToolFuture,
        ToolSet, Unanswered, Verdict,
    };
    use serde_json::{Value, json};
    use tokio::sync::Semaphore;

    /// `hold`, which answers once the test lets it, and `quick`.
    struct Tools(Arc<Semaphore>);

    impl ToolSet for Tools {
        fn specs(&self) -> Vec<ToolSpec> {
            ["hold", "quick"]
                .into_iter()
                .map(|name| ToolSpec {
                    name: name.into(),
                    description: String::new(),
                    input_schema: Arc::new(json!({"type": "object"})),
                    output_schema: None,
                    annotations: ToolAnnotations::default(),
                })
                .collect()
        }

        fn call<'a>(&'a self, name: &'a str, _: Value, _: CallContext) -> ToolFuture<'a> {
            Box::pin(async move {
                if name == "hold" {
                    self.0.acquire().await.unwrap().forget();
                }
                ToolCallOutcome::output(json!(name))
            })
        }
    }

    /// Lanes of at most `limit` runs over one memory store, and the gate
    /// `hold` waits at.
    async fn lanes(limit: usize) -> (Lanes, Arc<Semaphore>) {
        lanes_opening(limit, Arc::new(Semaphore::new(Semaphore::MAX_PERMITS))).await
    }

    /// [`lanes`] whose runs after the first open only as `opens` lets them.
    async fn lanes_opening(limit: usize, opens: Arc<Semaphore>) -> (Lanes, Arc<Semaphore>) {
        let store = Arc::new(MemoryCommitStore::new());
        let gate = Arc::new(Semaphore::new(0));
        let tools: Arc<dyn ToolSet> = Arc::new(Tools(Arc::clone(&gate)));
        let agent =
            AgentDef::new("a", "", &["*"], 4, PermissionPolicy::new(Verdict::Allow)).unwrap();
        let open: Opener = Box::new(move |number| {
            let runtime =
                Runtime::for_requests(Arc::clone(&tools), store.clone(), Arc::new(EventLog::new()));
            let (agent, opens) = (agent.clone(), Arc::clone(&opens));
            Box::pin(async move {
                if number > 0 {
                    opens.acquire().await?.forget();
                }
                let run =
                    ServedRun::open(runtime, &agent, "t", &format!("run-{number}"), 1).await?;
                Ok((run, Box::new(()) as Kept))
            })
        });
        (Lanes::new(open, limit).await.unwrap(), gate)
    }

    async fn call(lane: &Lane<'_>, tool: &str) -> Served {
        let call = ToolCall {
            id: tool.into(),
            name: tool.into(),
            args: json!({}),
        };
        lane.run()
            .call(
                vec![call],
                &DeferApprovals,
                Unanswered::Deny,
                &Requester::default(),
            )
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn calls_one_after_another_stay_on_the_first_run_and_a_busy_one_opens_another() {
        let (lanes, gate) = lanes(4).await;
        for _ in 0..3 {
            let lane = lanes.take("quick").await.unwrap();
            assert_eq!(lane.run().run_id(), "run-0");
            call(&lane, "quick").await;
        }
        {
            let first = lanes.take("hold").await.unwrap();
            let holding = call(&first, "hold");
            tokio::pin!(holding);
            assert!(pending(holding.as_mut()).await, "hold waits at the gate");
            let second = lanes.take("quick").await.unwrap();
            assert_eq!(second.run().run_id(), "run-1", "the first run is busy");
            call(&second, "quick").await;
            drop(second);
            gate.add_permits(1);
            holding.await;
        }
        let again = lanes.take("quick").await.unwrap();
        assert_eq!(again.run().run_id(), "run-0", "the first free run");
        drop(again);
        assert_eq!(lanes.runs().len(), 2);
        lanes.close().await.unwrap();
        assert!(matches!(lanes.take("quick").await, Err(LaneError::Closed)));
    }

    #[tokio::test]
    async fn a_call_given_up_while_its_run_opens_leaves_the_room_it_took() {
        let opens = Arc::new(Semaphore::new(0));
        let (lanes, gate) = lanes_opening(2, Arc::clone(&opens)).await;
        let first = lanes.take("hold").await.unwrap();
        let holding = call(&first, "hold");
        tokio::pin!(holding);
        assert!(pending(holding.as_mut()).await, "hold waits at the gate");
        {
            let opening = lanes.take("quick");
            tokio::pin!(opening);
            assert!(pending(opening.as_mut()).await, "its run is opening");
            // Given up here: the room it took for the run is free again.
        }
        opens.add_permits(1);
        let second = tokio::time::timeout(std::time::Duration::from_secs(5), lanes.take("quick"))
            .await
            .expect("the room is there")
            .unwrap();
        assert_ne!(second.run().run_id(), "run-0");
        drop(second);
        gate.add_permits(1);
        holding.await;
    }

    /// Whether `future` is still pending after a moment.
    async fn pending<F: Future>(future: Pin<&mut F>) -> bool {
        tokio::time::timeout(std::time::Duration::from_millis(20), future)
            .await
            .is_err()
    }

    #[tokio::test]
    async fn past_the_limit_a_call_waits_for_a_run_to_be_free() {
        let (lanes, gate) = lanes(1).await;
        let first = lanes.take("hold").await.unwrap();
        let waiting = lanes.take("quick");
        tokio::pin!(waiting);
        assert!(pending(waiting.as_mut()).await, "no room for a second run");
        gate.add_permits(1);
        call(&first, "hold").await;
        drop(first);
        let lane = tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("the waiting call was told a run is free")
            .unwrap();
        assert_eq!(lane.run().run_id(), "run-0");
        assert_eq!(lanes.runs().len(), 1);
    }

    #[tokio::test]
    async fn a_tool_no_run_offers_takes_a_free_run_which_answers_not_found() {
        let (lanes, _gate) = lanes(2).await;
        let lane = lanes.take("nowhere").await.unwrap();
        let Served::Committed { records, .. } = call(&lane, "nowhere").await else {
            panic!("not committed");
        };
        let answered = format!("{:?}", records[0].result);
        assert!(answered.contains("NotFound"), "{answered}");
    }
}
