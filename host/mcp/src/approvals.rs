//! Calls the policy sends to a person become elicitation: the client shows
//! the call and asks its user. A 2025-11-25 client that declares elicitation
//! is asked during the call ([`Elicit`]); a 2026-07-28 client gets an
//! `input_required` result asking it ([`request`]) whose request state,
//! sealed by this server ([`crate::sealed`]), binds the answer to that
//! exact call, and sends the call again with the answer ([`Answered`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use cordon_kernel::{Approval, ApprovalFuture, Approver, PendingCall};
use rmcp::ErrorData;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

/// What the client's user is asked about `pending`; `unsandboxed` says where
/// its tool runs when that is outside any sandbox.
pub fn question(pending: &PendingCall, unsandboxed: Option<&str>) -> String {
    let mut args = pending.call.args.to_string();
    if args.len() > 600 {
        let mut cut = 600;
        while !args.is_char_boundary(cut) {
            cut -= 1;
        }
        args.truncate(cut);
        args.push_str("...");
    }
    let why = pending
        .reason
        .asked()
        .unwrap_or_else(|| "its effect is unknown after a crash".to_owned());
    match unsandboxed {
        Some(note) => format!(
            "Cordon: allow `{}` to run with {args}? ({why}; {note})",
            pending.call.name
        ),
        None => format!(
            "Cordon: allow `{}` to run in its sandbox with {args}? ({why})",
            pending.call.name
        ),
    }
}

/// The form a person answers: one required yes or no.
fn form(message: String) -> Result<ElicitRequestParams, ErrorData> {
    let schema = ElicitationSchema::builder()
        .required_bool_with("approve", |field| {
            field
                .title("Approve")
                .description("Run this call once; no denies it")
        })
        .build()
        .map_err(|reason| ErrorData::internal_error(reason, None))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

/// Whether a person's answer approves: accepted, with `approve` true.
pub(crate) fn approves(result: &ElicitResult) -> Approval {
    let yes = matches!(result.action, ElicitationAction::Accept)
        && result
            .content
            .as_ref()
            .and_then(|content| content.get("approve"))
            .and_then(Value::as_bool)
            == Some(true);
    if yes {
        Approval::Approve
    } else {
        Approval::Deny
    }
}

/// Asks a 2025-11-25 client's user about each pending call, during the call.
pub struct Elicit {
    peer: Peer<RoleServer>,
    unsandboxed: Arc<BTreeMap<String, String>>,
}

impl Elicit {
    /// An approver asking through `peer`, saying of the tools `unsandboxed`
    /// names where they run.
    pub fn new(peer: Peer<RoleServer>, unsandboxed: Arc<BTreeMap<String, String>>) -> Self {
        Self { peer, unsandboxed }
    }
}

impl Approver for Elicit {
    fn decide<'a>(&'a self, pending: &'a [PendingCall]) -> ApprovalFuture<'a> {
        Box::pin(async move {
            let mut answers = Vec::with_capacity(pending.len());
            for call in pending {
                let note = self.unsandboxed.get(&call.call.name);
                let params = form(question(call, note.map(String::as_str))).ok()?;
                match self.peer.create_elicitation(params).await {
                    Ok(result) => answers.push(approves(&result)),
                    Err(error) => {
                        tracing::warn!(%error, "the client did not answer an elicitation");
                        return None;
                    }
                }
            }
            Some(answers)
        })
    }
}

/// An approver whose answer arrived with the request.
pub struct Answered(pub Approval);

impl Approver for Answered {
    fn decide<'a>(&'a self, pending: &'a [PendingCall]) -> ApprovalFuture<'a> {
        let answers = vec![self.0.clone(); pending.len()];
        Box::pin(async move { Some(answers) })
    }
}

/// The input request asking a 2026-07-28 client's user about `pending`;
/// `unsandboxed` says where its tool runs when that is outside any sandbox.
pub fn request(
    pending: &PendingCall,
    unsandboxed: Option<&str>,
) -> Result<InputRequest, ErrorData> {
    Ok(InputRequest::Elicitation(ElicitRequest::new(form(
        question(pending, unsandboxed),
    )?)))
}

#[cfg(test)]
mod tests {
    use cordon_kernel::ToolCall;
    use serde_json::json;

    use super::*;

    pub(crate) fn pending() -> PendingCall {
        PendingCall {
            call: ToolCall {
                id: "mcp-1".into(),
                name: "notes.add".into(),
                args: json!({"text": "hi"}),
            },
            reason: cordon_kernel::PendingReason::Approval {
                rule: Some("notes.*".into()),
                by: cordon_kernel::Decider::Policy,
            },
        }
    }

    #[test]
    fn the_question_names_the_tool_the_arguments_and_the_rule() {
        let asked = question(&pending(), None);
        assert!(asked.contains("`notes.add`"), "{asked}");
        assert!(asked.contains(r#"{"text":"hi"}"#), "{asked}");
        assert!(asked.contains("`notes.*`"), "{asked}");
        assert!(asked.contains("in its sandbox"), "{asked}");
    }

    #[test]
    fn the_question_about_an_unsandboxed_tool_says_where_it_runs() {
        let note = "unsandboxed: MCP server `git` runs `uvx mcp-server-git` on this host";
        let asked = question(&pending(), Some(note));
        assert!(asked.contains(note), "{asked}");
        assert!(!asked.contains("in its sandbox"), "{asked}");
        let asked = serde_json::to_string(&request(&pending(), Some(note)).unwrap()).unwrap();
        assert!(asked.contains("uvx mcp-server-git"), "{asked}");
    }
}
