//! A `cordon mcp --http` server for the tests that speak HTTP to it.

use serde_json::Value;

use super::Project;

/// The manifest of the MCP fixtures as bundle `test`, with no grants.
pub(crate) const FIXTURES_MANIFEST: &str =
    "[plugin]\nname = \"test\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n";

/// The MCP fixtures' manifest granting questions to the person.
pub(crate) const FIXTURES_ELICITING: &str = "[plugin]\nname = \"test\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"tool.wasm\"\n\n[grants]\nelicit = true\n";

/// A `cordon mcp --http` of `project` on a port of its own, and its address.
pub(crate) struct HttpServer {
    child: std::sync::Mutex<std::process::Child>,
    /// The `host:port` it listens on.
    pub(crate) address: String,
}

impl HttpServer {
    /// `cordon mcp --permissions permissions.toml --http 127.0.0.1:0` in
    /// `project`, with `extra` flags.
    pub(crate) fn start(project: &Project, extra: &[&str]) -> Self {
        Self::start_with_env(project, extra, &[])
    }

    /// [`HttpServer::start`] with the variables `env` set.
    pub(crate) fn start_with_env(project: &Project, extra: &[&str], env: &[(&str, &str)]) -> Self {
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
            .envs(env.iter().copied())
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
        Self {
            child: std::sync::Mutex::new(child),
            address,
        }
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
        self.try_send(method, path, headers, body)
            .unwrap_or_else(|error| panic!("no answer from {}: {error}", self.address))
    }

    /// [`HttpServer::send`], or why no answer came (the server is gone).
    fn try_send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> std::io::Result<(u16, String)> {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        super::http::send(&self.address, method, path, &all, body)
    }

    /// A 2026-07-28 request of `method` with `params` (and the per-request
    /// `_meta` that era requires): the JSON-RPC message answering it.
    pub(crate) fn stateless(&self, method: &str, params: Value, capabilities: Value) -> Value {
        self.stateless_with(method, params, capabilities, &[])
    }

    /// [`HttpServer::stateless`] with the `extra` headers.
    pub(crate) fn stateless_with(
        &self,
        method: &str,
        params: Value,
        capabilities: Value,
        extra: &[(&str, &str)],
    ) -> Value {
        let (status, response) = self
            .try_stateless_with(method, params, capabilities, extra)
            .unwrap_or_else(|error| panic!("no answer to {method}: {error}"));
        answer(&response).unwrap_or_else(|| panic!("no answer to {method} ({status}): {response}"))
    }

    /// A 2026-07-28 request of `method` with `params`, whose `_meta` keeps
    /// what it holds beside what that era requires: the status and the whole
    /// response (notifications, then the answer), or why none came.
    pub(crate) fn try_stateless(
        &self,
        method: &str,
        params: Value,
        capabilities: Value,
    ) -> std::io::Result<(u16, String)> {
        self.try_stateless_with(method, params, capabilities, &[])
    }

    /// [`HttpServer::try_stateless`] with the `extra` headers.
    fn try_stateless_with(
        &self,
        method: &str,
        mut params: Value,
        capabilities: Value,
        extra: &[(&str, &str)],
    ) -> std::io::Result<(u16, String)> {
        let meta = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
        });
        match params.get_mut("_meta").and_then(Value::as_object_mut) {
            Some(given) => given.extend(meta.as_object().unwrap().clone()),
            None => params["_meta"] = meta,
        }
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
        headers.extend_from_slice(extra);
        self.try_send("POST", "/mcp", &headers, &body.to_string())
    }

    /// Kill the server at once, as a crash would.
    pub(crate) fn kill(&self) {
        let mut child = self.child.lock().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

/// The JSON-RPC messages of an HTTP `response`, plain or as server-sent
/// events, in order.
pub(crate) fn messages(response: &str) -> Vec<Value> {
    response
        .lines()
        .filter_map(|line| line.strip_prefix("data: ").or(Some(line)))
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .collect()
}

/// The answer in `response` to a request [`HttpServer::stateless`] sent.
pub(crate) fn answer(response: &str) -> Option<Value> {
    messages(response)
        .into_iter()
        .rfind(|message| message.get("id") == Some(&serde_json::json!(7)))
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let child = self
            .child
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = child.kill();
        let _ = child.wait();
    }
}
