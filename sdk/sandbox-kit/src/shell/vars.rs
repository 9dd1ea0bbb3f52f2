//! Shell variables: scalars and indexed arrays by name, the positional
//! parameters, and the scopes `local` opens in a function, restored when it
//! returns.

use std::collections::BTreeMap;

/// A variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// One string.
    Scalar(String),
    /// An indexed array; unset elements are `None`.
    Array(Vec<Option<String>>),
}

impl Value {
    /// The value as `$NAME` shows it: an array's first element.
    pub(super) fn scalar(&self) -> Option<&str> {
        match self {
            Self::Scalar(text) => Some(text),
            Self::Array(items) => items.first().and_then(Option::as_deref),
        }
    }

    /// Every set element: the scalar alone, or the array's set elements.
    pub(super) fn items(&self) -> Vec<String> {
        match self {
            Self::Scalar(text) => vec![text.clone()],
            Self::Array(items) => items.iter().flatten().cloned().collect(),
        }
    }
}

/// Whether `name` is a valid variable name.
pub(super) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Every variable of a shell.
#[derive(Debug, Clone, Default)]
pub(super) struct Vars {
    values: BTreeMap<String, Value>,
    /// `$0`.
    pub zero: String,
    /// `$1`, `$2`, ...
    pub positional: Vec<String>,
    /// For each function running, what its `local`s hid.
    scopes: Vec<Vec<(String, Option<Value>)>>,
}

impl Vars {
    /// Variables from `env`, with `$0` set to `zero`.
    pub(super) fn new(env: impl IntoIterator<Item = (String, String)>, zero: &str) -> Self {
        Self {
            values: env
                .into_iter()
                .map(|(name, value)| (name, Value::Scalar(value)))
                .collect(),
            zero: zero.to_owned(),
            positional: Vec::new(),
            scopes: Vec::new(),
        }
    }

    /// The variable `name`, if set.
    pub(super) fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// The scalar value of `name` (an array's first element), if set.
    pub(super) fn scalar(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(Value::scalar)
    }

    /// Sets `name` to the string `value`; in an array, its first element.
    pub(super) fn set(&mut self, name: &str, value: String) {
        match self.values.get_mut(name) {
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    items.push(None);
                }
                items[0] = Some(value);
            }
            _ => {
                self.values.insert(name.to_owned(), Value::Scalar(value));
            }
        }
    }

    /// Sets element `index` of the array `name`, making it an array.
    pub(super) fn set_element(&mut self, name: &str, index: usize, value: String) {
        let entry = self
            .values
            .entry(name.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Scalar(text) = entry {
            *entry = Value::Array(vec![Some(std::mem::take(text))]);
        }
        if let Value::Array(items) = entry {
            if items.len() <= index {
                items.resize(index + 1, None);
            }
            items[index] = Some(value);
        }
    }

    /// Replaces `name` with `value`.
    pub(super) fn assign(&mut self, name: &str, value: Value) {
        self.values.insert(name.to_owned(), value);
    }

    /// Unsets `name`.
    pub(super) fn unset(&mut self, name: &str) {
        self.values.remove(name);
    }

    /// The names of the set variables starting with `prefix`, sorted.
    pub(super) fn names(&self, prefix: &str) -> Vec<String> {
        self.values
            .keys()
            .filter(|name| name.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// Every scalar variable as `(name, value)`, for an interpreter's
    /// environment.
    pub(super) fn environment(&self) -> Vec<(String, String)> {
        self.values
            .iter()
            .filter_map(|(name, value)| match value {
                Value::Scalar(text) => Some((name.clone(), text.clone())),
                Value::Array(_) => None,
            })
            .collect()
    }

    /// Opens a function's scope.
    pub(super) fn enter_function(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Closes the innermost function's scope, restoring what its `local`s
    /// hid.
    pub(super) fn leave_function(&mut self) {
        if let Some(hidden) = self.scopes.pop() {
            for (name, value) in hidden.into_iter().rev() {
                match value {
                    Some(value) => self.values.insert(name, value),
                    None => self.values.remove(&name),
                };
            }
        }
    }

    /// Makes `name` local to the running function; false outside one.
    pub(super) fn make_local(&mut self, name: &str) -> bool {
        let Some(scope) = self.scopes.last_mut() else {
            return false;
        };
        if !scope.iter().any(|(hidden, _)| hidden == name) {
            scope.push((name.to_owned(), self.values.get(name).cloned()));
        }
        true
    }
}
