//! `grants.elicit`: whether a tool may ask the person its call runs for
//! questions, through `cordon:plugin/elicit`. Only a `tool` bundle may ask
//! for it, and only its tool calls are answered. A bundle not granted it,
//! a call that is not a tool's, a schema that is not JSON, and a call with
//! nobody to ask (a model's run) are refused at every `ask` with the reason,
//! and the refusal is audited; the tool carries on. A question the requester
//! defers (a 2026-07-28 MCP client answers between requests) stops the
//! instance: nothing of the call is kept, and it runs again with the answer.

use std::sync::Arc;

use cordon_kernel::{Answer, Asker, Capability, Question, Unasked};
use serde_json::Value;
use wasmtime::component::{HasData, Linker};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::elicit;
use crate::manifest::{BundleKind, ManifestError, Validator};
use crate::sandbox::CallState;

/// Check `grants.elicit`: only a tool asks questions.
pub(crate) fn validate(
    elicit: bool,
    kind: BundleKind,
    check: &Validator<'_>,
) -> Result<(), ManifestError> {
    if elicit && kind != BundleKind::Tool {
        return Err(check.invalid(
            "grants.elicit",
            elicit,
            &format!("only `tool` bundles ask questions; this bundle's kind is `{kind}`"),
        ));
    }
    Ok(())
}

/// The grant, for an operator.
pub(crate) fn describe(elicit: bool) -> Option<String> {
    elicit.then(|| "elicit (asks the person it runs for questions)".to_owned())
}

/// The grant when `approved` leaves it out.
pub(crate) fn beyond(asked: bool, approved: bool) -> Option<String> {
    (asked && !approved).then(|| "elicit".to_owned())
}

/// What one call may ask, and of whom.
pub(crate) struct ElicitAccess {
    /// Granted, and the call is a tool's.
    allowed: bool,
    asker: Option<Arc<dyn Asker>>,
}

impl ElicitAccess {
    /// For a call whose bundle was `granted` questions, of a tool when
    /// `tool`, whose requester's questions reach `asker`.
    pub(crate) fn new(granted: bool, tool: bool, asker: Option<Arc<dyn Asker>>) -> Self {
        Self {
            allowed: granted && tool,
            asker,
        }
    }
}

/// The `elicit` import of one call.
pub(crate) struct ElicitView<'a> {
    pub(crate) access: &'a ElicitAccess,
    /// The tool called.
    pub(crate) label: &'a str,
    pub(crate) audit: &'a Audit,
}

impl ElicitView<'_> {
    fn refuse(&self, key: &str, reason: String) -> Result<elicit::Answer, String> {
        self.audit.deny(Capability::Elicit, key, &reason);
        Err(reason)
    }
}

struct ElicitCapability;

impl HasData for ElicitCapability {
    type Data<'a> = ElicitView<'a>;
}

/// Link the `elicit` import.
pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    elicit::add_to_linker::<CallState, ElicitCapability>(linker, CallState::elicit_view)
}

impl elicit::Host for ElicitView<'_> {
    async fn ask(
        &mut self,
        key: String,
        message: String,
        schema: String,
    ) -> wasmtime::Result<Result<elicit::Answer, String>> {
        if !self.access.allowed {
            return Ok(self.refuse(
                &key,
                "this bundle is not granted questions; a tool that asks declares `elicit = true` under [grants] in its plugin.toml".to_owned(),
            ));
        }
        let schema: Value = match serde_json::from_str(&schema) {
            Ok(schema) => schema,
            Err(error) => return Ok(Err(format!("the form's schema is not JSON: {error}"))),
        };
        let Some(asker) = self.access.asker.clone() else {
            return Ok(self.refuse(
                &key,
                "nobody can be asked: whoever requested this call (a model's run, or a single call from the command line) has no person to put questions to".to_owned(),
            ));
        };
        let question = Question {
            key,
            message,
            schema,
        };
        Ok(match asker.ask(self.label, &question).await {
            Ok(Answer::Accept(fields)) => Ok(elicit::Answer::Accept(fields.to_string())),
            Ok(Answer::Decline) => Ok(elicit::Answer::Decline),
            Ok(Answer::Cancel) => Ok(elicit::Answer::Cancel),
            Err(Unasked::Unable(reason)) => Err(reason),
            Err(Unasked::Deferred) => {
                return Err(wasmtime::Error::msg(format!(
                    "the question `{}` waits for the person's answer; the call runs again with it",
                    question.key
                )));
            }
        })
    }
}
