//! A `cordon ui` of a project on a port of its own, and raw HTTP to it.

use std::io::BufRead;
use std::process::{Child, Stdio};

use super::Project;

/// A running inspector: its address and the launch's token.
pub(crate) struct Inspector {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub(crate) address: String,
    /// The launch's token.
    pub(crate) token: String,
    /// The address as printed, token and all.
    pub(crate) url: String,
}

impl Inspector {
    /// `cordon ui` of `project`'s store.
    pub(crate) fn start(project: &Project) -> Self {
        Self::start_with(project, &[])
    }

    /// `cordon ui` of `project` with the flags `extra`.
    pub(crate) fn start_with(project: &Project, extra: &[&str]) -> Self {
        let mut args = vec!["ui"];
        args.extend_from_slice(extra);
        let mut child = project
            .command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = std::io::BufReader::new(stdout).lines();
        let first = lines
            .next()
            .expect("the inspector said where it is")
            .unwrap();
        let url = first
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        let rest = url.strip_prefix("http://").unwrap();
        let (address, fragment) = rest.split_once("/#token=").unwrap();
        std::thread::spawn(move || for _ in lines {});
        Self {
            child,
            address: address.to_owned(),
            token: fragment.to_owned(),
            url,
        }
    }

    /// `method path` with exactly `headers` (and `Host` unless one names
    /// it) and `body`: the status and the whole response.
    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        super::http::send(&self.address, method, path, headers, body)
            .unwrap_or_else(|error| panic!("no answer from {}: {error}", self.address))
    }

    /// `GET path` with the token, as the page asks: the JSON answer.
    pub(crate) fn get(&self, path: &str) -> serde_json::Value {
        let bearer = format!("Bearer {}", self.token);
        let (status, response) = self.send("GET", path, &[("Authorization", &bearer)], "");
        assert_eq!(status, 200, "{response}");
        let body = response.split_once("\r\n\r\n").unwrap().1;
        serde_json::from_str(body).unwrap()
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
