//! Calls the policy sends to a person become elicitation: the client shows
//! the call and asks its user. A 2025-11-25 client that declares elicitation
//! is asked during the call ([`Elicit`]); a 2026-07-28 client gets an
//! `input_required` result whose request state, sealed by this server, binds
//! the answer to that exact call ([`Sealed`]), and sends the call again with
//! the answer. A tampered or foreign state is refused, never trusted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cordon_kernel::{Approval, ApprovalFuture, Approver, PendingCall, PendingReason};
use rmcp::ErrorData;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest, InputRequests, InputResponses, RequestStateCodec, SealOptions,
};
use rmcp::service::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The key of the one input request an approval travels as.
const APPROVAL: &str = "approval";

/// How long a sealed approval request stays valid.
const STATE_TTL: Duration = Duration::from_secs(600);

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
    let why = match &pending.reason {
        PendingReason::Approval { rule: Some(rule) } => format!("permission rule `{rule}` asks"),
        PendingReason::Approval { rule: None } => "the default permission asks".to_owned(),
        PendingReason::Indeterminate => "its effect is unknown after a crash".to_owned(),
    };
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
fn approves(result: &ElicitResult) -> Approval {
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

/// What a sealed approval request names: the call it was issued for.
#[derive(Serialize, Deserialize)]
struct Issued {
    tool: String,
    args: String,
}

/// Seals and opens the request state of 2026-07-28 approvals.
pub struct Sealed {
    codec: RequestStateCodec,
}

impl Sealed {
    /// A sealer with a key of this server's own, never shared.
    pub fn new() -> Result<Self, ErrorData> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let codec = RequestStateCodec::try_new(key.to_vec())
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(Self { codec })
    }

    /// The input requests and sealed state asking about `pending`, a call of
    /// `tool` (as it travels) with `args`; `unsandboxed` says where it runs
    /// when that is outside any sandbox.
    pub fn ask(
        &self,
        tool: &str,
        args: &Value,
        pending: &PendingCall,
        unsandboxed: Option<&str>,
    ) -> Result<(InputRequests, String), ErrorData> {
        let issued = Issued {
            tool: tool.to_owned(),
            args: digest(args),
        };
        let state = self
            .codec
            .seal_json_with(&issued, &SealOptions::new().ttl(STATE_TTL))
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(form(question(pending, unsandboxed))?)),
        );
        Ok((requests, state))
    }

    /// The answer a retried call of `tool` with `args` brings in `state` and
    /// `responses`; a state this server did not seal for this very call, or
    /// a missing answer, is a protocol error.
    pub fn answer(
        &self,
        tool: &str,
        args: &Value,
        state: &str,
        responses: Option<&InputResponses>,
    ) -> Result<Approval, ErrorData> {
        let issued: Issued = self.codec.open_json(state).map_err(|_| {
            ErrorData::invalid_params(
                "requestState was not issued by this server, was changed, or expired; call the tool again without it",
                None,
            )
        })?;
        if issued.tool != tool || issued.args != digest(args) {
            return Err(ErrorData::invalid_params(
                "requestState was issued for another call; send it back only with the call that received it",
                None,
            ));
        }
        let response = responses
            .and_then(|responses| responses.get(APPROVAL))
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("inputResponses has no `{APPROVAL}` answer for this requestState"),
                    None,
                )
            })?;
        let result: ElicitResult = serde_json::from_value(response.clone()).map_err(|error| {
            ErrorData::invalid_params(
                format!("inputResponses.{APPROVAL} is not an elicitation result: {error}"),
                None,
            )
        })?;
        Ok(approves(&result))
    }
}

/// A digest of `args` as they travel.
fn digest(args: &Value) -> String {
    let hash = Sha256::digest(args.to_string().as_bytes());
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use cordon_kernel::ToolCall;
    use serde_json::json;

    use super::*;

    fn pending() -> PendingCall {
        PendingCall {
            call: ToolCall {
                id: "mcp-1".into(),
                name: "notes.add".into(),
                args: json!({"text": "hi"}),
            },
            reason: PendingReason::Approval {
                rule: Some("notes.*".into()),
            },
        }
    }

    fn accept(approve: bool) -> InputResponses {
        let mut responses = InputResponses::new();
        responses.insert(
            APPROVAL.into(),
            json!({"action": "accept", "content": {"approve": approve}}),
        );
        responses
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
        let sealed = Sealed::new().unwrap();
        let (requests, _) = sealed
            .ask("notes_add", &json!({"text": "hi"}), &pending(), Some(note))
            .unwrap();
        let asked = serde_json::to_string(&requests).unwrap();
        assert!(asked.contains("uvx mcp-server-git"), "{asked}");
    }

    #[test]
    fn a_sealed_state_answers_only_its_own_call() {
        let sealed = Sealed::new().unwrap();
        let args = json!({"text": "hi"});
        let (requests, state) = sealed.ask("notes_add", &args, &pending(), None).unwrap();
        assert!(requests.contains_key(APPROVAL));
        let yes = sealed
            .answer("notes_add", &args, &state, Some(&accept(true)))
            .unwrap();
        assert_eq!(yes, Approval::Approve);
        let no = sealed
            .answer("notes_add", &args, &state, Some(&accept(false)))
            .unwrap();
        assert_eq!(no, Approval::Deny);

        let other = sealed
            .answer(
                "notes_add",
                &json!({"text": "rm -rf"}),
                &state,
                Some(&accept(true)),
            )
            .unwrap_err();
        assert!(other.message.contains("another call"), "{}", other.message);

        let mut tampered = state.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        let refused = sealed
            .answer("notes_add", &args, &tampered, Some(&accept(true)))
            .unwrap_err();
        assert!(
            refused.message.contains("not issued by this server"),
            "{}",
            refused.message
        );

        let foreign = Sealed::new().unwrap();
        assert!(
            foreign
                .answer("notes_add", &args, &state, Some(&accept(true)))
                .is_err(),
            "another server's key does not open it"
        );
        assert!(sealed.answer("notes_add", &args, &state, None).is_err());
    }
}
