//! Postgres step commits per second with 1, 4 and 16 runs committing at once,
//! each against a bare `INSERT` of the same bytes into a plain table on the
//! same server, made by the same number of writers in the same run; the
//! same commits through a worker's lease; how long a claim takes (1 and 4
//! workers claiming at once) against a bare `SELECT 1` round trip; and how
//! long after a worker dies another takes its run over.
//!
//! Run with `CORDON_TEST_POSTGRES=postgres://… cargo bench -p cordon-store
//! --bench postgres` (`eval "$(scripts/postgres.sh start)"` starts a server).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::{CommitStore, Disposition, Durability, Message, RunHeader, StepCommit};
use cordon_store::{LeasedStore, PostgresCommitStore};
use tokio_postgres::NoTls;

/// Commits each writer makes per measurement.
const STEPS: u64 = 150;

fn step(run_id: &str, seq: u64) -> StepCommit {
    StepCommit {
        run_id: run_id.into(),
        seq,
        messages: vec![Message::User {
            text: format!("step {seq}: {}", "x".repeat(200)),
        }],
        tools: Vec::new(),
        state: Vec::new(),
        thread_state: Vec::new(),
        events: Vec::new(),
        skills: Vec::new(),
        disposition: Disposition::Running,
        continues: None,
        usage: None,
        files: Vec::new(),
    }
}

fn main() {
    let Ok(server) = std::env::var("CORDON_TEST_POSTGRES") else {
        eprintln!("set CORDON_TEST_POSTGRES to a Postgres URL (scripts/postgres.sh start)");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let schema = format!("cordon_bench_{}", std::process::id());
        let admin = connect(&server).await;
        admin
            .batch_execute(&format!(
                "CREATE SCHEMA {schema};
                 CREATE TABLE {schema}.bare (run_id TEXT NOT NULL, seq BIGINT NOT NULL,
                     body TEXT NOT NULL, PRIMARY KEY (run_id, seq))"
            ))
            .await
            .expect("schema");
        let separator = if server.contains('?') { '&' } else { '?' };
        let url = format!("{server}{separator}options=-csearch_path%3D{schema}");
        let store = Arc::new(PostgresCommitStore::connect(&url).await.expect("store"));
        println!("Postgres step commits, {STEPS} per writer, synchronous_commit on:");
        let mut alone = Duration::ZERO;
        for writers in [1, 4, 16] {
            let cordon = commits(&store, writers).await;
            if writers == 1 {
                alone = cordon;
            }
            let bare = bare_inserts(&url, writers).await;
            println!(
                "  {writers:>2} at once: {:>6.0} commits/s, bare insert {:>6.0}/s: {:.2}x the bare rate",
                rate(writers, cordon),
                rate(writers, bare),
                rate(writers, cordon) / rate(writers, bare),
            );
        }
        let leased = leased_commits(&store).await;
        println!(
            "  through a lease, 1 at once: {:>6.0} commits/s, without {:>6.0}/s: {:.2}x",
            rate(1, leased),
            rate(1, alone),
            rate(1, leased) / rate(1, alone),
        );
        let floor = percentiles(round_trips(&url).await);
        for claimers in [1, 4] {
            let claims = percentiles(claims(&store, claimers).await);
            println!(
                "  claim, {claimers} worker(s) at once: p50 {:>6.0} us, p99 {:>6.0} us; \
                 SELECT 1 p50 {:>4.0} us: {:.1}x",
                claims.0, claims.1, floor.0, claims.0 / floor.0
            );
        }
        let lease = Duration::from_millis(1_000);
        let poll = Duration::from_millis(50);
        let takeover = takeover(&store, lease, poll).await;
        println!(
            "  takeover after a worker dies: {:.0} ms with a {} ms lease and {} ms polling",
            takeover.as_secs_f64() * 1e3,
            lease.as_millis(),
            poll.as_millis()
        );
        admin
            .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
            .await
            .expect("drop");
    });
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.expect("connect");
    tokio::spawn(connection);
    client
}

fn rate(writers: u64, took: Duration) -> f64 {
    (writers * STEPS) as f64 / took.as_secs_f64()
}

/// How long `writers` runs take to commit [`STEPS`] steps each, at once.
async fn commits(store: &Arc<PostgresCommitStore>, writers: u64) -> Duration {
    let mut runs = Vec::new();
    for writer in 0..writers {
        let run_id = format!("w{writers}-{writer}");
        store.create_run(&header(&run_id)).await.expect("run");
        runs.push(run_id);
    }
    let started = Instant::now();
    let tasks: Vec<_> = runs
        .into_iter()
        .map(|run_id| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                for seq in 1..=STEPS {
                    store
                        .commit(&step(&run_id, seq), Durability::Disk)
                        .await
                        .expect("commit");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("writer");
    }
    started.elapsed()
}

/// How long `writers` connections take to insert the bytes of [`STEPS`]
/// steps each into a plain table, one autocommit `INSERT` per step.
async fn bare_inserts(url: &str, writers: u64) -> Duration {
    let mut clients = Vec::new();
    for _ in 0..writers {
        clients.push(connect(url).await);
    }
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(writer, client)| {
            tokio::spawn(async move {
                let insert = client
                    .prepare("INSERT INTO bare (run_id, seq, body) VALUES ($1, $2, $3)")
                    .await
                    .expect("prepare");
                let run_id = format!("w{writers}-{writer}");
                for seq in 1..=STEPS {
                    let body = serde_json::to_string(&step(&run_id, seq)).expect("body");
                    let seq = i64::try_from(seq).expect("seq");
                    client
                        .execute(&insert, &[&run_id, &seq, &body])
                        .await
                        .expect("insert");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("writer");
    }
    started.elapsed()
}

fn header(run_id: &str) -> RunHeader {
    RunHeader {
        run_id: run_id.into(),
        agent: "bench".into(),
        created: 0,
        thread: cordon_kernel::DEFAULT_THREAD.into(),
        metadata: Default::default(),
        parent: None,
    }
}

/// Create run `run_id` and queue it.
async fn queued(store: &PostgresCommitStore, run_id: &str) {
    store.create_run(&header(run_id)).await.expect("run");
    store
        .enqueue(run_id, &Default::default())
        .await
        .expect("enqueue");
}

/// How long one run takes to commit [`STEPS`] steps through a lease.
async fn leased_commits(store: &Arc<PostgresCommitStore>) -> Duration {
    queued(store, "leased").await;
    let lease = store
        .claim("bench", Duration::from_secs(600))
        .await
        .expect("claim")
        .expect("a runnable run");
    let leased = LeasedStore::new(Arc::clone(store), lease);
    let started = Instant::now();
    for seq in 1..=STEPS {
        leased
            .commit(&step("leased", seq), Durability::Disk)
            .await
            .expect("commit");
    }
    started.elapsed()
}

/// Each claim's time in microseconds, `claimers` claiming at once until
/// [`STEPS`] runs each are claimed.
async fn claims(store: &Arc<PostgresCommitStore>, claimers: u64) -> Vec<f64> {
    for index in 0..claimers * STEPS {
        queued(store, &format!("claim-{claimers}-{index}")).await;
    }
    let tasks: Vec<_> = (0..claimers)
        .map(|claimer| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                let mut times = Vec::new();
                for _ in 0..STEPS {
                    let started = Instant::now();
                    store
                        .claim(&format!("c{claimer}"), Duration::from_secs(600))
                        .await
                        .expect("claim")
                        .expect("a runnable run");
                    times.push(started.elapsed().as_secs_f64() * 1e6);
                }
                times
            })
        })
        .collect();
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await.expect("claimer"));
    }
    times
}

/// [`STEPS`] `SELECT 1` round trips, in microseconds.
async fn round_trips(url: &str) -> Vec<f64> {
    let client = connect(url).await;
    let select = client.prepare("SELECT 1").await.expect("prepare");
    let mut times = Vec::new();
    for _ in 0..STEPS {
        let started = Instant::now();
        client.query_one(&select, &[]).await.expect("select");
        times.push(started.elapsed().as_secs_f64() * 1e6);
    }
    times
}

/// From a worker's death right after its claim until another worker,
/// claiming every `poll`, holds the run.
async fn takeover(store: &PostgresCommitStore, lease: Duration, poll: Duration) -> Duration {
    queued(store, "orphan").await;
    let dead = store.claim("dead", lease).await.expect("claim");
    assert!(dead.is_some_and(|lease| lease.run_id == "orphan"));
    let died = Instant::now();
    loop {
        if let Some(taken) = store.claim("taker", lease).await.expect("claim") {
            assert_eq!(taken.run_id, "orphan");
            assert_eq!(taken.token, 2);
            return died.elapsed();
        }
        tokio::time::sleep(poll).await;
    }
}

/// The 50th and 99th percentiles of `times`.
fn percentiles(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let at = |share: f64| times[((times.len() - 1) as f64 * share).round() as usize];
    (at(0.5), at(0.99))
}
