//! A `cordon mcp --http` server for the tests that speak HTTP to it.

use serde_json::Value;

use super::Project;

/// A `cordon mcp --http` of `project` on a port of its own, and its address.
pub(crate) struct HttpServer {
    child: std::process::Child,
    /// The `host:port` it listens on.
    pub(crate) address: String,
}

impl HttpServer {
    /// `cordon mcp --permissions permissions.toml --http 127.0.0.1:0` in
    /// `project`, with `extra` flags.
    pub(crate) fn start(project: &Project, extra: &[&str]) -> Self {
        use std::io::BufRead;
        let mut args = vec![
            "mcp",
            "--permissions",
            "permissions.toml",
            "--http",
            "127.0.0.1:0",
        ];
        args.extend_from_slice(extra);
        let mut child = project
            .command(&args)
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = std::io::BufReader::new(stderr).lines();
        let address = loop {
            let line = lines
                .next()
                .expect("the server said where it listens")
                .unwrap();
            if let Some(rest) = line.split("http://").nth(1) {
                break rest.split('/').next().unwrap().to_owned();
            }
        };
        // Keep draining the server's stderr so it never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        Self { child, address }
    }

    /// POST `body` to `path` with `headers`: the status and the response,
    /// headers and body.
    pub(crate) fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        self.send("POST", path, headers, body)
    }

    /// A `method` request of `body` to `path` with `headers`: the status and
    /// the response, headers and body.
    pub(crate) fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String) {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&self.address).unwrap();
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
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
        stream.write_all(request.as_bytes()).unwrap();
        // A refused body may be cut off; what was sent is enough.
        let _ = stream.write_all(body.as_bytes());
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let response = String::from_utf8_lossy(&response).into_owned();
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status in {response:?}"));
        (status, response)
    }

    /// A 2026-07-28 request of `method` with `params` (and the per-request
    /// `_meta` that era requires): the JSON-RPC message answering it.
    pub(crate) fn stateless(&self, method: &str, mut params: Value, capabilities: Value) -> Value {
        params["_meta"] = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        });
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if !name.is_empty() {
            headers.push(("Mcp-Name", &name));
        }
        let (status, response) = self.post("/mcp", &headers, &body.to_string());
        response
            .lines()
            .filter_map(|line| line.strip_prefix("data: ").or(Some(line)))
            .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
            .rfind(|message| message.get("id") == Some(&serde_json::json!(7)))
            .unwrap_or_else(|| panic!("no answer to {method} ({status}): {response}"))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
