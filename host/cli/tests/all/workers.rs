//! `cordon worker` as an operator runs it: runs submitted with `run --detach`
//! and `runs resume --detach` to a Postgres store, driven by worker processes
//! that race for them, die mid-step, stall past their lease, and share 200
//! runs. Each test has a schema of its own on the server
//! `CORDON_TEST_POSTGRES` names (`scripts/test.sh` starts one; without it each
//! test says it is skipped and passes).

use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use cordon_test_artifacts as artifacts;
use serde_json::Value;

use crate::support::{Project, postgres_schema, psql, text};

const AGENT: &str = "name = \"t\"\n[permissions]\ndefault = \"allow\"\nask = [\"notes.delete\"]\n";

/// A run that adds a note, then answers.
const NOTE_SCRIPT: &str = r#"
[[turn]]
text = "Saving."
[[turn.call]]
tool = "notes.add"
args = { title = "Milk", body = "buy milk" }

[[turn]]
text = "Done."
"#;

/// A run whose one call sleeps for `ms` on the host's clock; the call has
/// effects nobody declared safe to repeat.
fn sleep_script(ms: u64) -> String {
    format!(
        "[[turn]]\ntext = \"Sleeping.\"\n[[turn.call]]\ntool = \"hostile.sleep\"\nargs = {{ ms = {ms} }}\n\n[[turn]]\ntext = \"Woke.\"\n"
    )
}

/// A project with the notes plugin and the hostile fixture, given a long
/// timeout and a tool to call, so its calls may act past their step: one that
/// a dead worker left under way is never run again unasked.
fn project() -> Project {
    let project = Project::new();
    project.bundled("notes", artifacts::NOTES);
    project.bundle(
        "hostile",
        "[plugin]\nname = \"hostile\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\
         [grants]\ntools = [\"hostile.echo\"]\n[limits]\ntimeout-ms = 120000\n",
        artifacts::HOSTILE,
    );
    project.approve("hostile");
    project.write("agent.toml", AGENT);
    project.write("script.toml", NOTE_SCRIPT);
    project
}

/// `cordon run --detach` of `agent.toml` with `script.toml` as `run_id`.
fn submit(project: &Project, url: &str, run_id: &str) -> Output {
    project.cordon(&[
        "run",
        "--detach",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "--store",
        url,
        "--run-id",
        run_id,
        "go",
    ])
}

/// `cordon worker` on `url` named `name` with a lease of `lease_ms`, and
/// `extra` flags, in a child process whose stderr is kept.
pub(crate) fn worker(
    project: &Project,
    url: &str,
    name: &str,
    lease_ms: u64,
    extra: &[&str],
) -> Child {
    let lease = lease_ms.to_string();
    let mut args = vec![
        "worker",
        "--store",
        url,
        "--name",
        name,
        "--lease-ms",
        &lease,
        "--poll-ms",
        "50",
    ];
    args.extend_from_slice(extra);
    project
        .command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cordon worker")
}

/// Wait for `child` and return its stderr, asserting it exited 0.
pub(crate) fn finished(child: Child) -> String {
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    stderr
}

pub(crate) fn show(project: &Project, url: &str, run: &str) -> Value {
    let output = project.cordon(&["runs", "show", run, "--json", "--store", url]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The queue row of `run`: status, worker, token.
fn queue_row(url: &str, run: &str) -> String {
    psql(
        url,
        &format!("SELECT status, worker, token FROM cordon_queue WHERE run_id = '{run}'"),
    )
    .trim()
    .to_owned()
}

#[test]
fn a_detached_run_is_committed_and_queued_then_a_worker_drives_it() {
    let Some(url) = postgres_schema("a detached run", "detached") else {
        return;
    };
    let project = project();
    let submitted = submit(&project, &url, "r1");
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    assert!(
        text(&submitted.stderr).contains("run r1 is queued"),
        "{}",
        text(&submitted.stderr)
    );
    let shown = show(&project, &url, "r1");
    assert_eq!(shown["commits"].as_array().unwrap().len(), 1, "{shown}");
    assert_eq!(shown["disposition"]["disposition"], "running", "{shown}");
    assert_eq!(queue_row(&url, "r1"), "runnable||0");
    let listed = text(&project.cordon(&["runs", "list", "--store", &url]).stdout);
    assert!(listed.contains("running; queued for a worker"), "{listed}");

    let stderr = finished(worker(&project, &url, "w1", 30_000, &["--until-idle"]));
    assert!(
        stderr.contains("claimed run r1 (fencing token 1)") && stderr.contains("run r1: done"),
        "{stderr}"
    );
    let shown = show(&project, &url, "r1");
    assert_eq!(shown["disposition"]["answer"], "Done.", "{shown}");
    assert_eq!(shown["state"]["notes"].as_array().map(Vec::len), Some(1));
    assert_eq!(queue_row(&url, "r1"), "done|w1|1");
}

#[test]
fn detaching_needs_a_postgres_store_and_names_the_file_it_was_given() {
    let project = project();
    let output = project.cordon(&[
        "run",
        "--detach",
        "--agent",
        "agent.toml",
        "--model",
        "scripted:script.toml",
        "go",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("run --detach") && stderr.contains(".cordon/cordon.db"),
        "{stderr}"
    );
    assert!(project.read(".cordon/cordon.db").is_none());
    let output = project.cordon(&["worker", "--until-idle"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("Postgres store"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn of_two_workers_racing_for_one_run_one_drives_it_once() {
    let Some(url) = postgres_schema("two workers racing", "race") else {
        return;
    };
    let project = project();
    assert!(submit(&project, &url, "r1").status.success());
    let first = worker(&project, &url, "w1", 30_000, &["--until-idle"]);
    let second = worker(&project, &url, "w2", 30_000, &["--until-idle"]);
    let logs = [finished(first), finished(second)];
    let claims: Vec<&String> = logs
        .iter()
        .filter(|log| log.contains("claimed run r1"))
        .collect();
    assert_eq!(claims.len(), 1, "{logs:?}");
    let shown = show(&project, &url, "r1");
    // The prompt, the model's call with its result, the answer.
    assert_eq!(shown["commits"].as_array().unwrap().len(), 3, "{shown}");
    assert_eq!(shown["state"]["notes"].as_array().map(Vec::len), Some(1));
}

#[test]
fn a_waiting_run_resumed_detached_is_driven_by_any_worker_with_its_decisions() {
    let Some(url) = postgres_schema("resume --detach", "resume") else {
        return;
    };
    let project = project();
    project.write(
        "script.toml",
        r#"
[[turn]]
text = "Forgetting."
[[turn.call]]
tool = "notes.delete"
args = { id = 1 }

[[turn]]
text = "Gone."
"#,
    );
    assert!(submit(&project, &url, "r1").status.success());
    let stderr = finished(worker(&project, &url, "w1", 30_000, &["--until-idle"]));
    assert!(stderr.contains("run r1: waiting"), "{stderr}");
    assert_eq!(queue_row(&url, "r1"), "waiting|w1|1");

    let undecided = project.cordon(&["runs", "resume", "r1", "--detach", "--store", &url]);
    assert_eq!(undecided.status.code(), Some(2));
    let message = text(&undecided.stderr);
    assert!(
        message.contains("notes.delete") && message.contains("--approve"),
        "{message}"
    );
    assert_eq!(
        queue_row(&url, "r1"),
        "waiting|w1|1",
        "a refusal changes nothing"
    );

    // The run was queued before, so it goes back to the workers unasked.
    let queued = project.cordon(&[
        "runs",
        "resume",
        "r1",
        "--deny-all",
        "--reason",
        "keep it",
        "--store",
        &url,
    ]);
    assert!(queued.status.success(), "{}", text(&queued.stderr));
    assert_eq!(queue_row(&url, "r1"), "runnable||1");
    let stderr = finished(worker(&project, &url, "w2", 30_000, &["--until-idle"]));
    assert!(stderr.contains("run r1: done"), "{stderr}");
    let shown = show(&project, &url, "r1");
    assert_eq!(shown["disposition"]["answer"], "Gone.", "{shown}");
    let denied = shown["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|commit| commit["tools"].as_array().unwrap())
        .rfind(|tool| tool["call"]["name"] == "notes.delete")
        .unwrap()
        .clone();
    assert_eq!(denied["result"]["error"]["kind"], "denied", "{denied}");
}

#[test]
fn a_worker_killed_mid_step_is_taken_over_and_its_call_is_not_run_again() {
    let Some(url) = postgres_schema("a worker killed mid-step", "killed") else {
        return;
    };
    let project = project();
    project.write("script.toml", &sleep_script(60_000));
    assert!(submit(&project, &url, "r1").status.success());
    let mut doomed = worker(&project, &url, "doomed", 1_000, &[]);
    assert!(
        project.calls_started("r1", &["--store", &url]),
        "the worker never started the call"
    );
    // While its worker lives, the run is left to it.
    let resumed = project.cordon(&["runs", "resume", "r1", "--store", &url]);
    assert_eq!(resumed.status.code(), Some(1), "{}", text(&resumed.stderr));
    assert!(
        text(&resumed.stderr).contains("worker doomed drives it now"),
        "{}",
        text(&resumed.stderr)
    );
    doomed.kill().unwrap();
    doomed.wait().unwrap();
    let killed = Instant::now();
    let taker = worker(&project, &url, "taker", 1_000, &[]);
    let taken = wait_for(|| queue_row(&url, "r1").starts_with("waiting|taker|2"));
    let takeover = killed.elapsed();
    stop(taker);
    assert!(
        taken,
        "no worker took the run over: {}",
        queue_row(&url, "r1")
    );
    // The lease was renewed at most a third of it before the kill.
    assert!(
        takeover >= Duration::from_millis(600),
        "the run was taken over before the lease lapsed ({takeover:?})"
    );
    let shown = show(&project, &url, "r1");
    let pending = &shown["disposition"]["pending"];
    assert_eq!(pending[0]["call"]["name"], "hostile.sleep", "{shown}");
    assert_eq!(pending[0]["reason"], "indeterminate", "{shown}");
    assert!(shown["intent"].is_null(), "{shown}");
    // The prompt, then the interrupted step committed as waiting: the
    // model's turn is kept and its call is not run again.
    let commits = shown["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 2, "{shown}");
    assert!(
        commits[1]["tools"][0]["result"].is_null(),
        "the call has no result: it was not run again"
    );
}

#[test]
fn a_stalled_worker_whose_lease_lapsed_is_fenced_when_it_wakes() {
    let Some(url) = postgres_schema("a stalled worker", "lapsed") else {
        return;
    };
    let project = project();
    let stalled = stalled_past_its_lease(&project, &url);
    // No other worker claimed the run: the lease lapsed all the same, so the
    // call's result, which arrives after the lapse, is never committed.
    signal(&stalled, "CONT");
    let log = finished(stalled);
    assert!(log.contains("run r1: lost"), "{log}");
    // Claimed again under a new token, the run settles as after a crash.
    assert!(
        log.contains("claimed run r1 (fencing token 2)") && log.contains("run r1: waiting"),
        "{log}"
    );
    let shown = show(&project, &url, "r1");
    let commits = shown["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 2, "{shown}");
    assert!(commits[1]["tools"][0]["result"].is_null(), "{shown}");
    assert_eq!(
        shown["disposition"]["pending"][0]["reason"], "indeterminate",
        "{shown}"
    );
}

#[test]
fn a_stalled_worker_woken_after_a_takeover_leaves_the_run_to_its_new_holder() {
    let Some(url) = postgres_schema("a stalled worker", "stalled") else {
        return;
    };
    let project = project();
    let stalled = stalled_past_its_lease(&project, &url);
    let taker = worker(&project, &url, "taker", 30_000, &["--until-idle"]);
    let taker_log = finished(taker);
    assert!(
        taker_log.contains("claimed run r1 (fencing token 2)")
            && taker_log.contains("run r1: waiting"),
        "{taker_log}"
    );
    let before = show(&project, &url, "r1");
    signal(&stalled, "CONT");
    let stalled_log = finished(stalled);
    assert!(stalled_log.contains("run r1: lost"), "{stalled_log}");
    assert_eq!(
        show(&project, &url, "r1"),
        before,
        "the stalled worker committed nothing"
    );
    assert_eq!(queue_row(&url, "r1"), "waiting|taker|2");
}

#[test]
fn two_hundred_runs_across_four_worker_processes_all_finish_once() {
    let Some(url) = postgres_schema("200 runs, 4 workers", "many") else {
        return;
    };
    let project = Project::new();
    std::fs::create_dir(project.path("plugins")).unwrap();
    project.write(
        "agent.toml",
        "name = \"t\"\n[permissions]\ndefault = \"allow\"\n",
    );
    project.write("script.toml", "[[turn]]\ntext = \"Done.\"\n");
    for run in 0..200 {
        let submitted = submit(&project, &url, &format!("r{run:03}"));
        assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    }
    let workers: Vec<Child> = (0..4)
        .map(|index| {
            worker(
                &project,
                &url,
                &format!("w{index}"),
                30_000,
                &["--until-idle"],
            )
        })
        .collect();
    let logs: Vec<String> = workers.into_iter().map(finished).collect();
    let claims: usize = logs
        .iter()
        .map(|log| log.matches("claimed run").count())
        .sum();
    assert_eq!(claims, 200, "each run is claimed once");
    assert_eq!(
        psql(
            &url,
            "SELECT count(*) FROM cordon_queue WHERE status = 'done' AND token = 1"
        )
        .trim(),
        "200"
    );
    let listed = project.cordon(&["runs", "list", "--json", "--store", &url]);
    let runs: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.len(), 200);
    for run in &runs {
        // The prompt and the answer.
        assert_eq!(run["last_seq"], 2, "{run}");
        assert_eq!(run["disposition"]["answer"], "Done.", "{run}");
    }
}

/// A worker that claimed run `r1`, whose one call sleeps 1.5 s, and that was
/// stopped (`SIGSTOP`) mid-call until its 1 s lease lapsed.
fn stalled_past_its_lease(project: &Project, url: &str) -> Child {
    project.write("script.toml", &sleep_script(1_500));
    assert!(submit(project, url, "r1").status.success());
    let stalled = worker(project, url, "stalled", 1_000, &["--until-idle"]);
    assert!(project.calls_started("r1", &["--store", url]));
    signal(&stalled, "STOP");
    std::thread::sleep(Duration::from_millis(1_500));
    stalled
}

/// Whether `done` holds within a minute, looking every 50 ms.
fn wait_for(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Send `SIG<name>` to `child`.
fn signal(child: &Child, name: &str) {
    let sent = std::process::Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Ask worker `child` to stop (Ctrl-C) and wait for it.
fn stop(child: Child) {
    signal(&child, "INT");
    finished(child);
}

#[test]
fn an_idle_worker_stops_at_once_on_ctrl_c() {
    use std::io::BufRead;
    let Some(url) = postgres_schema("an idle worker's Ctrl-C", "idle") else {
        return;
    };
    let project = project();
    // The default poll interval, as a person starts it.
    let mut child = project
        .command(&["worker", "--store", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert!(first.contains("claiming runs from"), "{first}");
    let asked = Instant::now();
    signal(&child, "INT");
    let status = child.wait().unwrap();
    let took = asked.elapsed();
    assert!(status.success(), "{status:?}");
    assert!(
        took < Duration::from_secs(2),
        "an idle worker took {took:?} to stop"
    );
}
