//! The request state of 2026-07-28 rounds. A call that needs an answer (an
//! approval the policy asks for, or a tool's question) ends its round with
//! an `input_required` result whose request state this server sealed: the
//! call it was issued for (tool and arguments), the approval given in an
//! earlier round, and the tool's answers so far. The client sends the same
//! call again with the state and the new answers; a state this server did
//! not seal for that very call is refused, never trusted. An approval is
//! taken only as the answer to a sealed request for one; a tool's answers
//! are the client's user's own, and are taken with or without a state.

use std::collections::BTreeMap;
use std::time::Duration;

use cordon_kernel::Approval;
use rmcp::ErrorData;
use rmcp::model::{ElicitResult, InputResponses, RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::approvals::approves;

/// The key of the one input request an approval travels as; a tool's
/// question may not take it.
pub const APPROVAL: &str = "approval";

/// How long a sealed request state stays valid.
const STATE_TTL: Duration = Duration::from_secs(600);

/// What a sealed state names and carries.
#[derive(Serialize, Deserialize)]
struct Issued {
    tool: String,
    args: String,
    /// The round asked for an approval.
    #[serde(default)]
    asks_approval: bool,
    /// A person approved the call in an earlier round.
    #[serde(default)]
    approved: bool,
    /// The tool's answers given in earlier rounds, by question key.
    #[serde(default)]
    answers: BTreeMap<String, ElicitResult>,
}

/// What a round of a call brings: the approval, when one was given, and
/// the answers to the tool's questions, by key.
#[derive(Debug, Default)]
pub struct Round {
    /// The person's answer to the approval asked for, or given before.
    pub approval: Option<Approval>,
    /// The tool's answers so far.
    pub answers: BTreeMap<String, ElicitResult>,
}

/// Seals and opens request states with a key of this server's own.
pub struct Sealed {
    codec: RequestStateCodec,
}

impl Sealed {
    /// A sealer with a fresh random key, never shared.
    pub fn new() -> Result<Self, ErrorData> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let codec = RequestStateCodec::try_new(key.to_vec())
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(Self { codec })
    }

    /// The state ending a round of `tool` (as it travels) with `args` that
    /// asks for an approval when `asks_approval`, else for the tool's
    /// questions, carrying what `round` brought so far.
    pub fn seal(
        &self,
        tool: &str,
        args: &Value,
        asks_approval: bool,
        round: &Round,
    ) -> Result<String, ErrorData> {
        let issued = Issued {
            tool: tool.to_owned(),
            args: digest(args),
            asks_approval,
            approved: round.approval == Some(Approval::Approve),
            answers: round.answers.clone(),
        };
        self.codec
            .seal_json_with(&issued, &SealOptions::new().ttl(STATE_TTL))
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }

    /// What a call of `tool` with `args` brings: its sealed `state`, if
    /// any, opened, and its `responses`. A state that was not sealed by this
    /// server for this very call, or one asking an approval that the
    /// responses do not answer, is a protocol error; a response that is not
    /// an elicitation result is left out, and its question asked again.
    pub fn open(
        &self,
        tool: &str,
        args: &Value,
        state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Result<Round, ErrorData> {
        let mut round = Round::default();
        if let Some(state) = state {
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
            round.answers = issued.answers;
            if issued.approved {
                round.approval = Some(Approval::Approve);
            }
            if issued.asks_approval {
                let response = responses
                    .and_then(|responses| responses.get(APPROVAL))
                    .ok_or_else(|| {
                        ErrorData::invalid_params(
                            format!(
                                "inputResponses has no `{APPROVAL}` answer for this requestState"
                            ),
                            None,
                        )
                    })?;
                let result: ElicitResult =
                    serde_json::from_value(response.clone()).map_err(|error| {
                        ErrorData::invalid_params(
                            format!(
                                "inputResponses.{APPROVAL} is not an elicitation result: {error}"
                            ),
                            None,
                        )
                    })?;
                round.approval = Some(approves(&result));
            }
        }
        for (key, response) in responses.into_iter().flatten() {
            if key == APPROVAL {
                continue;
            }
            if let Ok(result) = serde_json::from_value::<ElicitResult>(response.clone()) {
                round.answers.insert(key.clone(), result);
            }
        }
        Ok(round)
    }
}

/// A digest of `args` as they travel.
fn digest(args: &Value) -> String {
    let hash = Sha256::digest(args.to_string().as_bytes());
    hash.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn responses(entries: &[(&str, Value)]) -> InputResponses {
        let mut responses = InputResponses::new();
        for (key, value) in entries {
            responses.insert((*key).into(), value.clone());
        }
        responses
    }

    fn approve(yes: bool) -> InputResponses {
        responses(&[(
            APPROVAL,
            json!({"action": "accept", "content": {"approve": yes}}),
        )])
    }

    #[test]
    fn a_sealed_approval_answers_only_its_own_call() {
        let sealed = Sealed::new().unwrap();
        let args = json!({"text": "hi"});
        let state = sealed
            .seal("notes_add", &args, true, &Round::default())
            .unwrap();
        let yes = sealed
            .open("notes_add", &args, Some(&state), Some(&approve(true)))
            .unwrap();
        assert_eq!(yes.approval, Some(Approval::Approve));
        let no = sealed
            .open("notes_add", &args, Some(&state), Some(&approve(false)))
            .unwrap();
        assert_eq!(no.approval, Some(Approval::Deny));

        let other = sealed
            .open(
                "notes_add",
                &json!({"text": "rm -rf"}),
                Some(&state),
                Some(&approve(true)),
            )
            .unwrap_err();
        assert!(other.message.contains("another call"), "{}", other.message);

        let mut tampered = state.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        let refused = sealed
            .open("notes_add", &args, Some(&tampered), Some(&approve(true)))
            .unwrap_err();
        assert!(
            refused.message.contains("not issued by this server"),
            "{}",
            refused.message
        );
        let suffixed = format!("{state}-TAMPERED");
        assert!(
            sealed
                .open("notes_add", &args, Some(&suffixed), Some(&approve(true)))
                .is_err()
        );

        let foreign = Sealed::new().unwrap();
        assert!(
            foreign
                .open("notes_add", &args, Some(&state), Some(&approve(true)))
                .is_err(),
            "another server's key does not open it"
        );
        let unanswered = sealed
            .open("notes_add", &args, Some(&state), None)
            .unwrap_err();
        assert!(
            unanswered.message.contains("no `approval`"),
            "{}",
            unanswered.message
        );
    }

    #[test]
    fn an_approval_without_a_sealed_request_for_it_is_not_taken() {
        let sealed = Sealed::new().unwrap();
        let args = json!({});
        let round = sealed
            .open("notes_add", &args, None, Some(&approve(true)))
            .unwrap();
        assert_eq!(round.approval, None);
        let state = sealed
            .seal("notes_add", &args, false, &Round::default())
            .unwrap();
        let round = sealed
            .open("notes_add", &args, Some(&state), Some(&approve(true)))
            .unwrap();
        assert_eq!(round.approval, None, "that state asked no approval");
    }

    #[test]
    fn answers_gather_across_rounds_and_what_is_not_an_answer_is_left_out() {
        let sealed = Sealed::new().unwrap();
        let args = json!({});
        let first = sealed
            .open(
                "t",
                &args,
                None,
                Some(&responses(&[
                    (
                        "step1",
                        json!({"action": "accept", "content": {"name": "Ada"}}),
                    ),
                    ("junk", json!("not an elicitation result")),
                ])),
            )
            .unwrap();
        assert_eq!(first.answers.keys().collect::<Vec<_>>(), ["step1"]);
        let approved = Round {
            approval: Some(Approval::Approve),
            answers: first.answers,
        };
        let state = sealed.seal("t", &args, false, &approved).unwrap();
        let second = sealed
            .open(
                "t",
                &args,
                Some(&state),
                Some(&responses(&[(
                    "step2",
                    json!({"action": "accept", "content": {"color": "blue"}}),
                )])),
            )
            .unwrap();
        assert_eq!(second.approval, Some(Approval::Approve), "approved before");
        assert_eq!(
            second.answers.keys().collect::<Vec<_>>(),
            ["step1", "step2"]
        );
        let next = sealed.seal("t", &args, false, &second).unwrap();
        assert_ne!(next, state, "a later round's state differs");
    }
}
