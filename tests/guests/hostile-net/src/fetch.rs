//! Requests of any shape through the SDK's client.

use std::time::Duration;

use cordon_sdk::http::{self, Request};
use cordon_sdk::{Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// A request as a test writes it.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct FetchArgs {
    url: String,
    #[serde(default)]
    method: Option<String>,
    /// Headers, in order; `{secret:NAME}` in a value stands for that secret's placeholder.
    #[serde(default)]
    headers: Vec<(String, String)>,
    /// The body; `{secret:NAME}` stands for the placeholder here too.
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    connect_timeout_ms: Option<u64>,
    #[serde(default)]
    first_byte_timeout_ms: Option<u64>,
    #[serde(default)]
    between_bytes_timeout_ms: Option<u64>,
}

/// `text` with each `{secret:NAME}` replaced by that secret's placeholder.
fn fill(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("{secret:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "{secret:".len()..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[at..]);
            return out;
        };
        out.push_str(&http::secret(&after[..end]).unwrap_or_default());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn request(args: &FetchArgs) -> Request {
    let millis = |ms: Option<u64>| ms.map(Duration::from_millis);
    Request {
        method: args.method.clone().unwrap_or_else(|| "GET".into()),
        url: fill(&args.url),
        headers: args
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), fill(value)))
            .collect(),
        body: args.body.as_deref().map(|body| fill(body).into_bytes()),
        connect_timeout: millis(args.connect_timeout_ms),
        first_byte_timeout: millis(args.first_byte_timeout_ms),
        between_bytes_timeout: millis(args.between_bytes_timeout_ms),
        max_bytes: None,
    }
}

/// Send one request and return the response whole.
pub(crate) struct Fetch;

impl Tool for Fetch {
    const NAME: &'static str = "hostile-net.fetch";
    const DESCRIPTION: &'static str = "Send one HTTP request of any shape and return the response.";
    type Args = FetchArgs;
    type Output = Value;

    fn call(args: FetchArgs) -> Result<Value, ToolError> {
        let response = http::send(&request(&args))?;
        Ok(json!({
            "status": response.status,
            "headers": response.headers,
            "body": response.text(),
        }))
    }
}

/// A request repeated.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ManyArgs {
    url: String,
    count: u32,
}

/// Send the same request `count` times, one after another.
pub(crate) struct Many;

impl Tool for Many {
    const NAME: &'static str = "hostile-net.many";
    const DESCRIPTION: &'static str =
        "Send a GET `count` times in a row; report how many got a response.";
    type Args = ManyArgs;
    type Output = Value;

    fn call(args: ManyArgs) -> Result<Value, ToolError> {
        let mut answered = 0;
        let mut refused = Vec::new();
        for _ in 0..args.count {
            match http::get(&args.url) {
                Ok(_) => answered += 1,
                Err(error) => refused.push(error.to_string()),
            }
        }
        Ok(json!({ "answered": answered, "refused": refused }))
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct NameArgs {
    name: String,
}

/// What the component sees of a secret: its placeholder, if any.
pub(crate) struct Placeholder;

impl Tool for Placeholder {
    const NAME: &'static str = "hostile-net.placeholder";
    const DESCRIPTION: &'static str =
        "Return what the component sees of a secret, and its whole environment.";
    type Args = NameArgs;
    type Output = Value;

    fn call(args: NameArgs) -> Result<Value, ToolError> {
        Ok(json!({
            "placeholder": http::secret(&args.name),
            "environment": std::env::vars().collect::<Vec<_>>(),
        }))
    }
}
