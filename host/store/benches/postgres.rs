//! Postgres step commits per second with 1, 4 and 16 runs committing at once,
//! each against a bare `INSERT` of the same bytes into a plain table on the
//! same server, made by the same number of writers in the same run.
//!
//! Run with `CORDON_TEST_POSTGRES=postgres://… cargo bench -p cordon-store
//! --bench postgres` (`eval "$(scripts/postgres.sh start)"` starts a server).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cordon_kernel::{CommitStore, Disposition, Message, RunHeader, StepCommit};
use cordon_store::PostgresCommitStore;
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
        for writers in [1, 4, 16] {
            let cordon = commits(&store, writers).await;
            let bare = bare_inserts(&url, writers).await;
            println!(
                "  {writers:>2} at once: {:>6.0} commits/s, bare insert {:>6.0}/s: {:.2}x the bare rate",
                rate(writers, cordon),
                rate(writers, bare),
                rate(writers, cordon) / rate(writers, bare),
            );
        }
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
        store
            .create_run(&RunHeader {
                run_id: run_id.clone(),
                agent: "bench".into(),
                created: 0,
                thread: cordon_kernel::DEFAULT_THREAD.into(),
                metadata: Default::default(),
            })
            .await
            .expect("run");
        runs.push(run_id);
    }
    let started = Instant::now();
    let tasks: Vec<_> = runs
        .into_iter()
        .map(|run_id| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                for seq in 1..=STEPS {
                    store.commit(&step(&run_id, seq)).await.expect("commit");
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
