//! The run inspector's page load: from navigating to `cordon ui`'s address
//! to a run's whole timeline drawn, in headless Chromium over WebDriver, for
//! a run of 1,000 steps beside a run of one step (the baseline), both in the
//! same store and browser. Also the server's answer for each run alone.
//!
//! Run with `cargo bench -p cordon-cli --bench inspector` (needs Debian's
//! `chromium` and `chromium-driver`: `scripts/toolchains.sh browser`).

#[path = "../tests/all/support/browser.rs"]
mod browser;
mod support;

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use browser::Driver;
use cordon_test_artifacts::{NOTES, PLUGINS_DIR};
use fantoccini::{Client, Locator};

const ROUNDS: usize = 7;

fn main() {
    let work = tempfile::tempdir().expect("scratch folder");
    let home = tempfile::tempdir().expect("cache and settings");
    let cordon = |dir: &Path| cordon(dir, home.path());
    let bundle = work.path().join("plugins/notes");
    std::fs::create_dir_all(&bundle).expect("bundle");
    std::fs::copy(
        Path::new(PLUGINS_DIR).join("notes/plugin.toml"),
        bundle.join("plugin.toml"),
    )
    .expect("manifest");
    std::fs::copy(NOTES, bundle.join("notes.wasm")).expect("component");
    std::fs::write(
        work.path().join("agent.toml"),
        "name = \"bench\"\nmax-steps = 1002\n[permissions]\ndefault = \"allow\"\n",
    )
    .expect("agent");
    for (run, steps) in [("small", 1), ("big", 1000)] {
        let mut script = String::new();
        for step in 0..steps {
            script.push_str(&format!(
                "[[turn]]\ntext = \"step {step}\"\n[[turn.call]]\ntool = \"notes.list\"\n"
            ));
        }
        script.push_str("[[turn]]\ntext = \"done\"\n");
        std::fs::write(work.path().join(format!("{run}.toml")), script).expect("script");
        let output = cordon(work.path())
            .args(["run", "--agent", "agent.toml", "--model"])
            .arg(format!("scripted:{run}.toml"))
            .args(["--run-id", run, "go"])
            .output()
            .expect("cordon run");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    let mut ui = cordon(work.path())
        .arg("ui")
        .stdout(Stdio::piped())
        .spawn()
        .expect("cordon ui");
    let mut lines = std::io::BufReader::new(ui.stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("the address").expect("a line");
    // Its stdout stays read, so it never writes to a closed pipe.
    std::thread::spawn(move || for _ in lines {});
    let url = first
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .expect("an address")
        .to_owned();
    let (address, token) = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split_once("/#token="))
        .expect("address and token");

    for run in ["small", "big"] {
        let (took, bytes) = answer_time(address, token, run);
        println!(
            "server answer for run {run}: {:.1} ms, {bytes} bytes",
            ms(took)
        );
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let driver = Driver::start();
    runtime.block_on(async {
        let browser = driver.browser().await;
        let (mut small, mut big) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            small.push(page_load(&browser, &url, "small", 3).await);
            big.push(page_load(&browser, &url, "big", 1002).await);
        }
        let (small, big) = (median(small), median(big));
        println!(
            "page load to the whole timeline (load {}): 1,000 steps {:.0} ms vs one step {:.0} ms; \
             1,000 steps/one step = {:.1}",
            support::load_average(),
            ms(big),
            ms(small),
            big.as_secs_f64() / small.as_secs_f64()
        );
        browser.close().await.expect("close");
    });
    let _ = ui.kill();
    let _ = ui.wait();
}

/// `cordon` in `dir`, its cache and settings in `home`.
fn cordon(dir: &Path, home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cordon"));
    command
        .current_dir(dir)
        .env("CORDON_CACHE_DIR", home.join("cache"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .stdin(Stdio::null());
    command
}

/// From navigating to the inspector to `rows` timeline rows of `run` drawn.
async fn page_load(browser: &Client, url: &str, run: &str, rows: usize) -> Duration {
    browser.goto("about:blank").await.expect("blank");
    let started = Instant::now();
    browser.goto(url).await.expect("page");
    let row = format!("#runs tbody tr[data-run=\"{run}\"]");
    browser
        .wait()
        .for_element(Locator::Css(&row))
        .await
        .expect("the run listed")
        .click()
        .await
        .expect("click");
    loop {
        let drawn = browser
            .execute(
                "return document.querySelectorAll('#timeline .row').length",
                Vec::new(),
            )
            .await
            .expect("count");
        if drawn.as_u64() == Some(rows as u64) {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// How long the server takes to answer `/api/run` for `run`, median of
/// [`ROUNDS`], and how big the answer is.
fn answer_time(address: &str, token: &str, run: &str) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let mut stream = std::net::TcpStream::connect(address).expect("connect");
        write!(
            stream,
            "GET /api/run?id={run} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        )
        .expect("request");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).expect("response");
        times.push(started.elapsed());
        assert!(
            response.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&response)
        );
        bytes = response.len();
    }
    (median(times), bytes)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
