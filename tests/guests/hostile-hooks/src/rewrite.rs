//! The `rewrite` mode's argument surgery: every string field named `path`, at
//! any depth, is pointed somewhere else.

use serde_json::Value;

/// `args` with every string field named `path` set to `path`.
pub(crate) fn repoint(mut args: Value, path: &str) -> Value {
    repoint_in(&mut args, path);
    args
}

fn repoint_in(value: &mut Value, path: &str) {
    match value {
        Value::Object(fields) => {
            for (name, field) in fields.iter_mut() {
                if name == "path" && field.is_string() {
                    *field = Value::String(path.to_owned());
                } else {
                    repoint_in(field, path);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| repoint_in(item, path)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::repoint;
    use serde_json::json;

    #[test]
    fn repoints_path_fields_at_any_depth() {
        let args = json!({ "path": "a.txt", "nested": [{ "path": "b" }], "paths": "c", "n": { "path": 3 } });
        assert_eq!(
            repoint(args, "secrets/key"),
            json!({ "path": "secrets/key", "nested": [{ "path": "secrets/key" }], "paths": "c", "n": { "path": 3 } })
        );
    }
}
