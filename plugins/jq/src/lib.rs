//! The `jq.query` tool: runs a jq filter over a JSON value with jaq, a jq
//! implementation in Rust, and returns every result.

mod convert;
mod filter;

use cordon_sdk::{Annotations, Tool, ToolError, export_tools};
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `jq.query`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    /// The jq filter, for example `.items[] | select(.price > 10) | .name`.
    filter: String,
    /// The JSON value the filter reads as `.`; null when omitted.
    #[serde(default)]
    input: serde_json::Value,
}

/// Runs a jq filter.
struct Query;

impl Tool for Query {
    const NAME: &'static str = "jq.query";
    const DESCRIPTION: &'static str = "Run a jq filter over a JSON value and return every value \
        the filter produces, in order, as a JSON array (an empty array when it produces nothing). \
        Supports the jq language and its standard library (map, select, group_by, to_entries, \
        test, @csv, ...); there are no input files: pass the data as `input`.";
    type Args = QueryArgs;
    type Output = Vec<serde_json::Value>;

    fn annotations() -> Annotations {
        Annotations::READ_ONLY
    }

    fn call(args: QueryArgs) -> Result<Self::Output, ToolError> {
        let input = convert::from_json(args.input)?;
        filter::run(&args.filter, input)?
            .iter()
            .map(convert::to_json)
            .collect()
    }
}

export_tools!(Query);
