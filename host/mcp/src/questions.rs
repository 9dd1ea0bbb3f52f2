//! A tool's questions (`cordon:plugin/elicit`) as MCP elicitation. A
//! 2025-11-25 client that declares elicitation is asked during the call
//! ([`AskDuring`]); a 2026-07-28 client is asked between requests: a
//! question whose answer its request did not bring is deferred, the round
//! ends with an `input_required` result asking it ([`request`]), and the call
//! runs again with the answer ([`AskBetween`]). A client that declares no
//! elicitation cannot be asked ([`NobodyToAsk`]). The form the person sees
//! names the tool that asks.

use std::collections::BTreeMap;

use cordon_kernel::{Answer, AskFuture, Asker, Question, Unasked};
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    InputRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use crate::sealed::APPROVAL;

/// The form asking `question` of a call of `tool`.
fn form(tool: &str, question: &Question) -> Result<ElicitRequestParams, Unasked> {
    if question.key == APPROVAL {
        return Err(Unasked::Unable(format!(
            "the question key `{APPROVAL}` is Cordon's own; name the question otherwise"
        )));
    }
    let schema: ElicitationSchema =
        serde_json::from_value(question.schema.clone()).map_err(|error| {
            Unasked::Unable(format!(
                "the form's schema is not one MCP elicitation takes (an object of primitive fields): {error}"
            ))
        })?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("Cordon tool `{tool}` asks: {}", question.message),
        requested_schema: schema,
    })
}

/// The input request asking `question` of a call of `tool`.
pub fn request(tool: &str, question: &Question) -> Result<InputRequest, Unasked> {
    Ok(InputRequest::Elicitation(ElicitRequest::new(form(
        tool, question,
    )?)))
}

/// What the person's `result` answers.
fn answer(result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => Answer::Accept(
            result
                .content
                .clone()
                .filter(Value::is_object)
                .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
        ),
        ElicitationAction::Decline => Answer::Decline,
        // Cancel, and any action a later revision adds: not answered.
        _ => Answer::Cancel,
    }
}

/// Asks a 2025-11-25 client's user during the call.
pub struct AskDuring(pub Peer<RoleServer>);

impl Asker for AskDuring {
    fn ask<'a>(&'a self, tool: &'a str, question: &'a Question) -> AskFuture<'a> {
        Box::pin(async move {
            let params = form(tool, question)?;
            match self.0.create_elicitation(params).await {
                Ok(result) => Ok(answer(&result)),
                Err(error) => Err(Unasked::Unable(format!(
                    "the client did not answer the question: {error}"
                ))),
            }
        })
    }
}

/// Answers a 2026-07-28 client's questions from what its request brought;
/// the others wait for the next round.
pub struct AskBetween(pub BTreeMap<String, ElicitResult>);

impl Asker for AskBetween {
    fn ask<'a>(&'a self, tool: &'a str, question: &'a Question) -> AskFuture<'a> {
        Box::pin(async move {
            form(tool, question)?;
            match self.0.get(&question.key) {
                Some(result) => Ok(answer(result)),
                None => Err(Unasked::Deferred),
            }
        })
    }
}

/// For a client that declares no elicitation.
pub struct NobodyToAsk;

impl Asker for NobodyToAsk {
    fn ask<'a>(&'a self, _tool: &'a str, _question: &'a Question) -> AskFuture<'a> {
        Box::pin(async {
            Err(Unasked::Unable(
                "this MCP client declares no elicitation, so its user cannot be asked".to_owned(),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn question(key: &str, schema: Value) -> Question {
        Question {
            key: key.into(),
            message: "What is your name?".into(),
            schema,
        }
    }

    fn name_form() -> Value {
        json!({"type": "object", "properties": {"name": {"type": "string"}}})
    }

    #[tokio::test]
    async fn answers_come_from_the_request_and_the_rest_wait_for_the_next_round() {
        let answered: ElicitResult =
            serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}}))
                .unwrap();
        let between = AskBetween(BTreeMap::from([("name".to_owned(), answered)]));
        assert_eq!(
            between.ask("t.ask", &question("name", name_form())).await,
            Ok(Answer::Accept(json!({"name": "Ada"})))
        );
        assert_eq!(
            between.ask("t.ask", &question("other", name_form())).await,
            Err(Unasked::Deferred)
        );
        let asked =
            serde_json::to_string(&request("t.ask", &question("name", name_form())).unwrap())
                .unwrap();
        assert!(
            asked.contains("Cordon tool `t.ask` asks: What is your name?"),
            "{asked}"
        );
    }

    #[tokio::test]
    async fn a_question_posing_as_an_approval_or_with_no_form_is_not_asked() {
        let between = AskBetween(BTreeMap::new());
        let Err(Unasked::Unable(reason)) =
            between.ask("t.ask", &question(APPROVAL, name_form())).await
        else {
            panic!("the approval key is Cordon's own");
        };
        assert!(reason.contains("Cordon's own"), "{reason}");
        let nested = json!({"type": "object", "properties": {"x": {"type": "object"}}});
        let Err(Unasked::Unable(reason)) = between.ask("t.ask", &question("x", nested)).await
        else {
            panic!("a nested form is not one elicitation takes");
        };
        assert!(reason.contains("not one MCP elicitation takes"), "{reason}");
    }
}
