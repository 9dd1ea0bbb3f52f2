//! Redacting a tool's result: every string of an output, everything under a
//! field whose name says it is a secret, and the message of an error.

use cordon_sdk::ToolError;
use serde_json::Value;

use crate::rules::{NAMED_SECRET, Redactor, is_secret_name};
use crate::text::is_marker;

impl Redactor {
    /// `result` with its secrets redacted, or `None` when it has none. The
    /// shape stays: only strings change, except that a number under a
    /// secret-named field becomes a marker string.
    pub(crate) fn result(
        &self,
        result: &Result<Value, ToolError>,
    ) -> Option<Result<Value, ToolError>> {
        match result {
            Ok(output) => {
                let mut output = output.clone();
                self.value(&mut output).then_some(Ok(output))
            }
            Err(error) => self.error(error).map(Err),
        }
    }

    /// Redacts `value` in place; whether anything changed.
    fn value(&self, value: &mut Value) -> bool {
        match value {
            Value::String(text) => match self.text(text) {
                Some(redacted) => {
                    *text = redacted;
                    true
                }
                None => false,
            },
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.value(item) | changed),
            Value::Object(fields) => fields.iter_mut().fold(false, |changed, (name, field)| {
                let redacted = if is_secret_name(name) {
                    conceal(field)
                } else {
                    self.value(field)
                };
                redacted | changed
            }),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    fn error(&self, error: &ToolError) -> Option<ToolError> {
        Some(match error {
            ToolError::InvalidInput(message) => ToolError::InvalidInput(self.text(message)?),
            ToolError::Denied(message) => ToolError::Denied(self.text(message)?),
            ToolError::Failed(message) => ToolError::Failed(self.text(message)?),
            ToolError::Timeout(message) => ToolError::Timeout(self.text(message)?),
        })
    }
}

/// Replaces every string and number in `value`, a secret-named field's value,
/// with a marker: its name says it is secret whatever it looks like. Empty
/// strings and markers stay, so that concealing twice changes nothing.
fn conceal(value: &mut Value) -> bool {
    match value {
        Value::String(text) if text.is_empty() || is_marker(text) => false,
        Value::String(_) | Value::Number(_) => {
            *value = Value::String(format!("[REDACTED:{NAMED_SECRET}]"));
            true
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, item| conceal(item) | changed),
        Value::Object(fields) => fields
            .values_mut()
            .fold(false, |changed, field| conceal(field) | changed),
        Value::Null | Value::Bool(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use cordon_sdk::ToolError;
    use serde_json::json;

    use crate::rules::Redactor;

    fn redactor() -> Redactor {
        Redactor::new(&[]).expect("built-in rules compile")
    }

    #[test]
    fn nested_outputs_are_redacted_in_place() {
        let output = json!({
            "text": "here is the key: AKIAIOSFODNN7EXAMPLE",
            "items": [{ "note": "fine" }, ["ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"]],
            "config": { "password": "hunter2", "Api-Key": 12345, "user": "ann", "enabled": true },
            "credentials": { "client_secret": ["a", { "deep": "b" }] },
            "count": 3,
        });
        let redacted = redactor().result(&Ok(output)).expect("has secrets");
        assert_eq!(
            redacted,
            Ok(json!({
                "text": "here is the key: [REDACTED:aws-access-key]",
                "items": [{ "note": "fine" }, ["[REDACTED:github-token]"]],
                "config": {
                    "password": "[REDACTED:secret]",
                    "Api-Key": "[REDACTED:secret]",
                    "user": "ann",
                    "enabled": true,
                },
                "credentials": { "client_secret": ["[REDACTED:secret]", { "deep": "[REDACTED:secret]" }] },
                "count": 3,
            }))
        );
    }

    #[test]
    fn clean_outputs_are_kept() {
        let output = json!({
            "max_tokens": 4096,
            "summary": "the token budget is fine",
            "head": "e83c5163316f89bfbde7d9ab23ca2e25604af290",
            "password": "",
            "token": null,
        });
        assert_eq!(redactor().result(&Ok(output)), None);
    }

    #[test]
    fn error_messages_are_redacted_keeping_the_kind() {
        let error = ToolError::Failed("login failed with password=hunter2".to_owned());
        assert_eq!(
            redactor().result(&Err(error)),
            Some(Err(ToolError::Failed(
                "login failed with password=[REDACTED:secret]".to_owned()
            )))
        );
        assert_eq!(
            redactor().result(&Err(ToolError::Denied("no".to_owned()))),
            None
        );
    }

    #[test]
    fn redacting_twice_changes_nothing() {
        let output = json!({
            "token": "abc",
            "log": "Authorization: Bearer abc123def456ghi789",
            "pin": { "secret": 1234 },
        });
        let once = redactor().result(&Ok(output)).expect("has secrets");
        assert_eq!(redactor().result(&once), None);
    }
}
