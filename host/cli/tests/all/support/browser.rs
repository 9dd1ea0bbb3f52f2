//! Headless Chromium driven over WebDriver, from Debian's `chromium` and
//! `chromium-driver` (`scripts/toolchains.sh browser` installs them): a
//! chromedriver on a port of its own, and fresh browser sessions through it.
//! The inspector's tests and its page-load benchmark share it.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};

/// A chromedriver on a port of its own, stopped when dropped.
pub(crate) struct Driver {
    child: Child,
    port: u16,
    profile: tempfile::TempDir,
}

impl Driver {
    pub(crate) fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start chromedriver ({error}); install Chromium and its driver: \
                     scripts/toolchains.sh browser (apt-get install chromium chromium-driver)"
                )
            });
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver never listened");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            child,
            port,
            profile: tempfile::tempdir().unwrap(),
        }
    }

    /// A fresh headless Chromium.
    pub(crate) async fn browser(&self) -> Client {
        let serde_json::Value::Object(capabilities) = serde_json::json!({
            "goog:chromeOptions": {
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1400,900", "--no-first-run",
                    format!("--user-data-dir={}", self.profile.path().display()),
                ],
            },
        }) else {
            unreachable!("a JSON object")
        };
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a Chromium session")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
