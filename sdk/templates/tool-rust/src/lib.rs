//! The `{{name}}` bundle's tools.

use cordon_sdk::{Annotations, Tool, ToolError, export_tools, state};

/// Arguments of `{{name}}.greet`. A field the schema does not name is
/// refused before the call, as a misspelt argument should be.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    /// Who to greet.
    name: String,
    /// End with an exclamation mark.
    #[serde(default)]
    excited: bool,
}

/// Greet someone by name, and count the greetings.
struct Greet;

impl Tool for Greet {
    const NAME: &'static str = "{{name}}.greet";
    const DESCRIPTION: &'static str = "Greet someone by name, and count the greetings.";
    type Args = GreetArgs;
    type Output = String;

    fn annotations() -> Annotations {
        Annotations::default()
    }

    fn call(args: GreetArgs) -> Result<String, ToolError> {
        if args.name.trim().is_empty() {
            return Err(ToolError::InvalidInput("name must not be blank".into()));
        }
        let count = state::increment("{{name}}.greetings", 1)?;
        let end = if args.excited { "!" } else { "." };
        Ok(format!("Hello, {}{end} (greeting {count})", args.name))
    }
}

export_tools!(Greet);
