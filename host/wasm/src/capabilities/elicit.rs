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
use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;

use super::unit::{Grant, Imports};

/// How many questions one call may ask: past it, a tool that asks in a
/// loop is refused rather than put to the person again and again.
pub(crate) const MAX_QUESTIONS: u32 = 16;

/// The capability of asking questions.
pub(crate) struct Elicit;

impl Grant for Elicit {
    const SAID: u8 = 5;

    /// Whether the tool may ask.
    type Asked = bool;

    /// Only a tool asks questions.
    fn validate(
        elicit: &bool,
        kind: BundleKind,
        check: &Validator<'_>,
    ) -> Result<(), ManifestError> {
        if *elicit && kind != BundleKind::Tool {
            return Err(check.invalid(
                "grants.elicit",
                elicit,
                &format!("only `tool` bundles ask questions; this bundle's kind is `{kind}`"),
            ));
        }
        Ok(())
    }

    fn is_empty(elicit: &bool) -> bool {
        !elicit
    }

    fn describe(elicit: &bool) -> Vec<String> {
        elicit
            .then(|| "elicit (asks the person it runs for questions)".to_owned())
            .into_iter()
            .collect()
    }

    fn beyond(asked: &bool, approved: &bool) -> Vec<String> {
        (*asked && !approved)
            .then(|| "elicit".to_owned())
            .into_iter()
            .collect()
    }

    /// Untrusted code may ask: the person answers, or declines.
    fn untrusted(_elicit: &mut bool) -> Vec<String> {
        Vec::new()
    }
}

/// What one call may ask, and of whom.
pub(crate) struct ElicitAccess {
    /// Granted, and the call is a tool's.
    allowed: bool,
    asker: Option<Arc<dyn Asker>>,
    /// The questions asked so far.
    asked: u32,
}

impl ElicitAccess {
    /// For a call whose bundle was `granted` questions, of a tool when
    /// `tool`, whose requester's questions reach `asker`.
    pub(crate) fn new(granted: bool, tool: bool, asker: Option<Arc<dyn Asker>>) -> Self {
        Self {
            allowed: granted && tool,
            asker,
            asked: 0,
        }
    }
}

/// The `elicit` import of one call.
pub(crate) struct ElicitView<'a> {
    pub(crate) access: &'a mut ElicitAccess,
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

impl HasData for Elicit {
    type Data<'a> = ElicitView<'a>;
}

impl Imports for Elicit {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        elicit::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
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
        if self.access.asked == MAX_QUESTIONS {
            return Ok(self.refuse(
                &key,
                format!("a call asks at most {MAX_QUESTIONS} questions"),
            ));
        }
        self.access.asked += 1;
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

#[cfg(test)]
mod tests {
    use cordon_kernel::{AskFuture, EventLog};

    use super::*;
    use crate::bindings::cordon::plugin::elicit::Host as _;

    /// Accepts every question with an empty form.
    struct Yes;

    impl Asker for Yes {
        fn ask<'a>(&'a self, _tool: &'a str, _question: &'a Question) -> AskFuture<'a> {
            Box::pin(async { Ok(Answer::Accept(serde_json::json!({}))) })
        }
    }

    async fn ask(access: &mut ElicitAccess, audit: &Audit) -> Result<elicit::Answer, String> {
        let mut view = ElicitView {
            access,
            label: "survey.ask",
            audit,
        };
        view.ask("q".into(), "?".into(), r#"{"type":"object"}"#.into())
            .await
            .expect("no trap")
    }

    fn denials(events: &EventLog) -> Vec<String> {
        events
            .denials()
            .into_iter()
            .map(|denial| denial.reason)
            .collect()
    }

    #[tokio::test]
    async fn questions_are_answered_only_with_the_grant_and_up_to_the_cap() {
        let events = Arc::new(EventLog::new());
        let audit = Audit::new("survey", events.clone());

        let mut ungranted = ElicitAccess::new(false, true, Some(Arc::new(Yes)));
        let refused = ask(&mut ungranted, &audit).await.unwrap_err();
        assert!(refused.contains("not granted questions"), "{refused}");
        let mut hook = ElicitAccess::new(true, false, Some(Arc::new(Yes)));
        assert!(
            ask(&mut hook, &audit).await.is_err(),
            "only a tool call asks"
        );
        let mut alone = ElicitAccess::new(true, true, None);
        let refused = ask(&mut alone, &audit).await.unwrap_err();
        assert!(refused.contains("nobody can be asked"), "{refused}");
        assert_eq!(denials(&events).len(), 3, "each refusal is audited");

        let mut granted = ElicitAccess::new(true, true, Some(Arc::new(Yes)));
        for _ in 0..MAX_QUESTIONS {
            assert!(matches!(
                ask(&mut granted, &audit).await,
                Ok(elicit::Answer::Accept(_))
            ));
        }
        let refused = ask(&mut granted, &audit).await.unwrap_err();
        assert!(refused.contains("at most 16 questions"), "{refused}");
        assert_eq!(denials(&events).len(), 4);
        assert_eq!(denials(&events)[3], refused);
    }
}
