//! `http.fetch`: GET a URL, with optional headers, and return the page.

use std::collections::BTreeMap;

use cordon_sdk::http::{self, Request};
use cordon_sdk::{Annotations, Tool, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::page::{self, Page};

/// Most text returned when `max_bytes` is left out.
const DEFAULT_MAX_BYTES: usize = 256 * 1024;
/// Most text any call returns.
const MAX_BYTES: usize = 400 * 1024;

/// Arguments of `http.fetch`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FetchArgs {
    /// The URL, `https://` or `http://`; its origin must be one the operator granted.
    url: String,
    /// Extra request headers, such as `{"accept": "application/json"}`.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Most bytes of the body to read, at most 409600. Defaults to 262144.
    max_bytes: Option<usize>,
}

/// What `http.fetch` returns.
#[derive(Serialize)]
pub(crate) struct FetchOutput {
    /// The URL fetched.
    url: String,
    /// The HTTP status code.
    status: u16,
    /// The response's content type, if it named one.
    content_type: Option<String>,
    /// Where a redirect points; the tool never follows one, a new call may.
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<String>,
    /// The page, as the model reads it.
    #[serde(flatten)]
    page: Page,
    /// Whether the body went on past `max_bytes`.
    truncated: bool,
}

/// The `http.fetch` tool.
pub(crate) struct Fetch;

impl Tool for Fetch {
    const NAME: &'static str = "http.fetch";
    const DESCRIPTION: &'static str = "Fetch a URL with GET and return its status and content: \
        JSON parsed (as `json`), HTML reduced to readable text with its links numbered (as \
        `text` and `links`), anything else as `text`. Only origins the operator granted are \
        reachable; redirects are returned, not followed. At most `max_bytes` of the body are read.";
    type Args = FetchArgs;
    type Output = FetchOutput;

    fn annotations() -> Annotations {
        Annotations {
            open_world: true,
            ..Annotations::READ_ONLY
        }
    }

    fn call(args: FetchArgs) -> Result<FetchOutput, ToolError> {
        let max = args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES).min(MAX_BYTES);
        let mut request = Request::get(&args.url);
        request.max_bytes = Some(max);
        for (name, value) in &args.headers {
            request = request.header(name, value);
        }
        let response = http::send(&request)?;
        let content_type = response.header("content-type").map(str::to_owned);
        let location = (300..400)
            .contains(&response.status)
            .then(|| response.header("location").map(str::to_owned))
            .flatten();
        Ok(FetchOutput {
            status: response.status,
            page: page::read(
                &response.body,
                content_type.as_deref(),
                response.truncated,
                &args.url,
            ),
            url: args.url,
            content_type,
            location,
            truncated: response.truncated,
        })
    }
}
