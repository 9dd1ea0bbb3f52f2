//! A `cordon ui` of a project on a port of its own, and raw HTTP to it.

use std::io::{BufRead, Read, Write};
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

    /// `method path` with `headers` and `body`, as a browser on this
    /// machine would send it when `own` (its Host), else with only the
    /// headers given: the status and the whole response.
    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        let mut stream = std::net::TcpStream::connect(&self.address).unwrap();
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("host"))
        {
            request.push_str(&format!("Host: {}\r\n", self.address));
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status in {response:?}"));
        (status, response)
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
