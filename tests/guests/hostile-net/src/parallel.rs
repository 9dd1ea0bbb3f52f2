//! Many requests in flight at once, through `wasi:http` directly.

use cordon_sdk::{Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use wasi::http::outgoing_handler;
use wasi::http::types::{Fields, OutgoingBody, OutgoingRequest, Scheme};

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ParallelArgs {
    /// `http://` host and port, such as `127.0.0.1:8080`.
    authority: String,
    /// The path of each, such as `/wait/100`.
    path: String,
    count: u32,
}

/// Start `count` GETs at once, then wait for every one.
pub(crate) struct Parallel;

impl Tool for Parallel {
    const NAME: &'static str = "hostile-net.parallel";
    const DESCRIPTION: &'static str =
        "Start `count` GETs of http://AUTHORITY/PATH at once and wait for all.";
    type Args = ParallelArgs;
    type Output = Value;

    fn call(args: ParallelArgs) -> Result<Value, ToolError> {
        let mut futures = Vec::new();
        for _ in 0..args.count {
            let request = OutgoingRequest::new(Fields::new());
            let _ = request.set_scheme(Some(&Scheme::Http));
            let _ = request.set_authority(Some(&args.authority));
            let _ = request.set_path_with_query(Some(&args.path));
            let body = request
                .body()
                .map_err(|()| ToolError::Failed("no request body".into()))?;
            let future = outgoing_handler::handle(request, None)
                .map_err(|code| ToolError::Failed(format!("{code:?}")))?;
            OutgoingBody::finish(body, None)
                .map_err(|code| ToolError::Failed(format!("{code:?}")))?;
            futures.push(future);
        }
        let mut answered = 0;
        let mut failed = Vec::new();
        for future in futures {
            future.subscribe().block();
            match future.get() {
                Some(Ok(Ok(_))) => answered += 1,
                Some(Ok(Err(code))) => failed.push(format!("{code:?}")),
                _ => failed.push("no response".to_owned()),
            }
        }
        Ok(json!({ "answered": answered, "failed": failed }))
    }
}
