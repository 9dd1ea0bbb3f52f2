//! [`export_tools!`](crate::export_tools) and the glue it expands to: describing
//! each tool, dispatching calls by name, and converting JSON at the boundary.

/// Exports the listed [`Tool`](crate::Tool) types as this component's `tool` interface.
///
/// Invoke it once, at the crate root of a `cdylib` built for `wasm32-wasip2`:
///
/// ```ignore
/// cordon_sdk::export_tools!(Query, Format);
/// ```
///
/// `describe` lists every tool with its JSON Schema; `call` dispatches by name,
/// deserializes the arguments into the tool's `Args` (a mismatch is
/// `ToolError::InvalidInput` naming the problem) and serializes its output.
#[macro_export]
macro_rules! export_tools {
    ($($tool:ty),+ $(,)?) => {
        #[doc(hidden)]
        struct __CordonExportedTools;

        impl $crate::__private::Guest for __CordonExportedTools {
            fn describe() -> ::std::vec::Vec<$crate::__private::ToolSpec> {
                ::std::vec![$($crate::__private::spec::<$tool>()),+]
            }

            fn call(
                name: ::std::string::String,
                args: ::std::string::String,
            ) -> ::std::result::Result<$crate::__private::ToolOutput, $crate::__private::WitToolError> {
                $(
                    if name == <$tool as $crate::Tool>::NAME {
                        return $crate::__private::call::<$tool>(&args);
                    }
                )+
                ::std::result::Result::Err($crate::__private::unknown_tool(&name))
            }
        }

        $crate::bindings::export!(__CordonExportedTools with_types_in $crate::bindings);
    };
}

/// Items [`export_tools!`](crate::export_tools) expands to; not part of the public API.
pub mod __private {
    use crate::{Tool, ToolError};

    pub use crate::bindings::cordon::plugin::types::{
        ToolError as WitToolError, ToolOutput, ToolSpec,
    };
    pub use crate::bindings::exports::cordon::plugin::tool::Guest;
    pub use crate::hooks::glue as hooks;

    /// The spec `describe` reports for `T`.
    pub fn spec<T: Tool>() -> ToolSpec {
        ToolSpec {
            name: T::NAME.to_owned(),
            description: T::DESCRIPTION.to_owned(),
            input_schema: schemars::schema_for!(T::Args).as_value().to_string(),
            output_schema: None,
            annotations: T::annotations().into(),
        }
    }

    /// Runs `T` on the JSON text `args`.
    pub fn call<T: Tool>(args: &str) -> Result<ToolOutput, WitToolError> {
        let args: T::Args = serde_json::from_str(args).map_err(|error| {
            ToolError::InvalidInput(format!("arguments for {} do not fit: {error}", T::NAME))
        })?;
        let output = T::call(args)?;
        let content = serde_json::to_string(&output).map_err(|error| {
            ToolError::Failed(format!("output of {} is not JSON: {error}", T::NAME))
        })?;
        Ok(ToolOutput { content })
    }

    /// The error for a name no exported tool has.
    pub fn unknown_tool(name: &str) -> WitToolError {
        ToolError::InvalidInput(format!("unknown tool {name}")).into()
    }
}
