//! Parameter expansion: `$x`, `${x}`, positional and special parameters,
//! arrays, and the operators: defaults (`:-`, `:=`, `:?`, `:+`), length,
//! prefix and suffix removal, substrings, replacement and case changes.

use brush_parser::word::{
    Parameter, ParameterExpr, ParameterTestType, ParameterTransformOp, SpecialParameter,
    SubstringMatchKind, WordPiece, WordPieceWithSource,
};

use super::glob::Pattern;
use super::{Builder, Expander, push_value};
use crate::shell::context::Interrupt;

/// What a parameter holds.
enum Lookup {
    /// Nothing: it is unset.
    Unset,
    /// One string.
    One(String),
    /// Several: `$@`, `$*`, `${a[@]}`, `${a[*]}`; `joined` for the `*`
    /// forms, which make one string in double quotes.
    Many { items: Vec<String>, joined: bool },
}

impl Lookup {
    /// Whether the test of `:-` and its kin takes it as missing.
    fn missing(&self, test: &ParameterTestType) -> bool {
        match (self, test) {
            (Lookup::Unset, _) => true,
            (Lookup::One(text), ParameterTestType::UnsetOrNull) => text.is_empty(),
            (Lookup::Many { items, .. }, ParameterTestType::UnsetOrNull) => {
                items.iter().all(String::is_empty)
            }
            _ => false,
        }
    }

    /// The value changed item by item.
    fn map(self, mut change: impl FnMut(&str) -> String) -> Lookup {
        match self {
            Lookup::Unset => Lookup::Unset,
            Lookup::One(text) => Lookup::One(change(&text)),
            Lookup::Many { items, joined } => Lookup::Many {
                items: items.iter().map(|item| change(item)).collect(),
                joined,
            },
        }
    }
}

/// Whether a double-quoted sequence is exactly `"$@"` or `"${a[@]}"`, which
/// makes no field at all when there is nothing to expand.
pub(super) fn is_all_items(inner: &[WordPieceWithSource]) -> bool {
    matches!(inner, [only] if matches!(&only.piece, WordPiece::ParameterExpansion(ParameterExpr::Parameter { parameter, .. }) if is_items(parameter)))
}

fn is_items(parameter: &Parameter) -> bool {
    matches!(
        parameter,
        Parameter::Special(SpecialParameter::AllPositionalParameters { concatenate: false })
            | Parameter::NamedWithAllIndices {
                concatenate: false,
                ..
            }
    )
}

impl Expander<'_, '_> {
    /// Expands `expr` into `builder`.
    pub(super) fn parameter(
        &mut self,
        builder: &mut Builder,
        expr: &ParameterExpr,
        quoted: bool,
    ) -> Result<(), Interrupt> {
        let value = match expr {
            ParameterExpr::Parameter {
                parameter,
                indirect,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                if matches!(value, Lookup::Unset) && self.ctx.options.nounset {
                    return Err(self.unbound(&name_of(parameter)));
                }
                value
            }
            ParameterExpr::UseDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                if value.missing(test_type) {
                    return self.word_into(builder, default_value.as_deref(), quoted);
                }
                value
            }
            ParameterExpr::AssignDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                if value.missing(test_type) {
                    let assigned = self.string(default_value.as_deref().unwrap_or_default())?;
                    match parameter {
                        Parameter::Named(name) => self.ctx.vars.set(name, assigned.clone()),
                        other => {
                            return Err(
                                self.fail(format!("{}: cannot assign in this way", name_of(other)))
                            );
                        }
                    }
                    Lookup::One(assigned)
                } else {
                    value
                }
            }
            ParameterExpr::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                test_type,
                error_message,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                if value.missing(test_type) {
                    let message = match error_message {
                        Some(text) => self.string(text)?,
                        None => "parameter null or not set".to_owned(),
                    };
                    self.io
                        .stderr
                        .borrow_mut()
                        .push(format!("sh: {}: {message}\n", name_of(parameter)).as_bytes());
                    return Err(Interrupt::Exit(127));
                }
                value
            }
            ParameterExpr::UseAlternativeValue {
                parameter,
                indirect,
                test_type,
                alternative_value,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                if !value.missing(test_type) {
                    return self.word_into(builder, alternative_value.as_deref(), quoted);
                }
                return Ok(());
            }
            ParameterExpr::ParameterLength {
                parameter,
                indirect,
            } => {
                let length = match self.lookup(parameter, *indirect)? {
                    Lookup::Unset if self.ctx.options.nounset => {
                        return Err(self.unbound(&name_of(parameter)));
                    }
                    Lookup::Unset => 0,
                    Lookup::One(text) => text.chars().count(),
                    Lookup::Many { items, .. } => items.len(),
                };
                Lookup::One(length.to_string())
            }
            ParameterExpr::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                pattern,
            } => self.trim(
                parameter,
                *indirect,
                pattern.as_deref(),
                Trim::ShortestSuffix,
            )?,
            ParameterExpr::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                pattern,
            } => self.trim(
                parameter,
                *indirect,
                pattern.as_deref(),
                Trim::LongestSuffix,
            )?,
            ParameterExpr::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                pattern,
            } => self.trim(
                parameter,
                *indirect,
                pattern.as_deref(),
                Trim::ShortestPrefix,
            )?,
            ParameterExpr::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                pattern,
            } => self.trim(
                parameter,
                *indirect,
                pattern.as_deref(),
                Trim::LongestPrefix,
            )?,
            ParameterExpr::Substring {
                parameter,
                indirect,
                offset,
                length,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                let offset = self.arithmetic(&offset.value)?;
                let length = match length {
                    Some(length) => Some(self.arithmetic(&length.value)?),
                    None => None,
                };
                match value {
                    Lookup::Unset => Lookup::One(String::new()),
                    Lookup::One(text) => {
                        let chars: Vec<char> = text.chars().collect();
                        match slice(chars.len(), offset, length) {
                            Some((start, end)) => Lookup::One(chars[start..end].iter().collect()),
                            None => Lookup::One(String::new()),
                        }
                    }
                    Lookup::Many { items, joined } => {
                        // `${@:1}` counts `$0` as position 0.
                        let mut all = items;
                        if matches!(
                            parameter,
                            Parameter::Special(SpecialParameter::AllPositionalParameters { .. })
                        ) {
                            all.insert(0, self.ctx.vars.zero.clone());
                        }
                        let items = match slice(all.len(), offset, length) {
                            Some((start, end)) => all[start..end].to_vec(),
                            None => Vec::new(),
                        };
                        Lookup::Many { items, joined }
                    }
                }
            }
            ParameterExpr::Transform {
                parameter,
                indirect,
                op,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                match op {
                    ParameterTransformOp::ToUpperCase => value.map(str::to_uppercase),
                    ParameterTransformOp::ToLowerCase => value.map(str::to_lowercase),
                    ParameterTransformOp::CapitalizeInitial => value.map(capitalize),
                    ParameterTransformOp::Quoted => {
                        value.map(|text| format!("'{}'", text.replace('\'', r"'\''")))
                    }
                    ParameterTransformOp::ExpandEscapeSequences => value.map(super::ansi_c),
                    _ => value,
                }
            }
            ParameterExpr::UppercaseFirstChar {
                parameter,
                indirect,
                ..
            } => self.lookup(parameter, *indirect)?.map(capitalize),
            ParameterExpr::UppercasePattern {
                parameter,
                indirect,
                ..
            } => self.lookup(parameter, *indirect)?.map(str::to_uppercase),
            ParameterExpr::LowercaseFirstChar {
                parameter,
                indirect,
                ..
            } => self.lookup(parameter, *indirect)?.map(|text| {
                let mut chars = text.chars();
                chars
                    .next()
                    .map(|first| first.to_lowercase().chain(chars).collect())
                    .unwrap_or_default()
            }),
            ParameterExpr::LowercasePattern {
                parameter,
                indirect,
                ..
            } => self.lookup(parameter, *indirect)?.map(str::to_lowercase),
            ParameterExpr::ReplaceSubstring {
                parameter,
                indirect,
                pattern,
                replacement,
                match_kind,
            } => {
                let value = self.lookup(parameter, *indirect)?;
                let pattern = self.pattern(pattern)?;
                let replacement = match replacement {
                    Some(text) => self.string(text)?,
                    None => String::new(),
                };
                let Some(pattern) = Pattern::new(&pattern) else {
                    return Ok(());
                };
                value.map(|text| pattern.replace(text, &replacement, match_kind))
            }
            ParameterExpr::VariableNames {
                prefix,
                concatenate,
            } => Lookup::Many {
                items: self.ctx.vars.names(prefix),
                joined: *concatenate,
            },
            ParameterExpr::MemberKeys {
                variable_name,
                concatenate,
            } => {
                use crate::shell::vars::Value;
                let items = match self.ctx.vars.get(variable_name) {
                    None => Vec::new(),
                    Some(Value::Scalar(_)) => vec!["0".to_owned()],
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .filter(|(_, item)| item.is_some())
                        .map(|(index, _)| index.to_string())
                        .collect(),
                };
                Lookup::Many {
                    items,
                    joined: *concatenate,
                }
            }
        };
        self.push(builder, value, quoted);
        Ok(())
    }

    /// Adds a parameter's value to `builder`.
    fn push(&self, builder: &mut Builder, value: Lookup, quoted: bool) {
        match value {
            Lookup::Unset => {}
            Lookup::One(text) => push_value(builder, &text, quoted),
            Lookup::Many { items, joined } if quoted && joined => {
                let separator = match self.ctx.vars.scalar("IFS") {
                    Some(ifs) => ifs.chars().next().map(String::from).unwrap_or_default(),
                    None => " ".to_owned(),
                };
                builder.quoted(&items.join(&separator));
            }
            Lookup::Many { items, .. } => {
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        if quoted {
                            builder.split_here();
                        } else {
                            builder.break_field(false);
                        }
                    }
                    push_value(builder, item, quoted);
                }
            }
        }
    }

    /// Expands the word `text` of an operator (`${x:-text}`) into `builder`
    /// as if it stood where the expansion does.
    fn word_into(
        &mut self,
        builder: &mut Builder,
        text: Option<&str>,
        quoted: bool,
    ) -> Result<(), Interrupt> {
        let Some(text) = text.filter(|text| !text.is_empty()) else {
            return Ok(());
        };
        let pieces = match brush_parser::word::parse(text, &super::super::parse::options()) {
            Ok(pieces) => pieces,
            Err(_) => return Err(self.fail(format!("{text}: bad substitution"))),
        };
        self.pieces(builder, &pieces, quoted)
    }

    /// The value of `parameter` (through `${!name}` when `indirect`).
    fn lookup(&mut self, parameter: &Parameter, indirect: bool) -> Result<Lookup, Interrupt> {
        let value = self.direct(parameter)?;
        if !indirect {
            return Ok(value);
        }
        match value {
            Lookup::One(name) if !name.is_empty() => {
                match brush_parser::word::parse_parameter(&name, &super::super::parse::options()) {
                    Ok(parameter) => self.direct(&parameter),
                    Err(_) => Err(self.fail(format!("{name}: invalid variable name"))),
                }
            }
            _ => Ok(Lookup::Unset),
        }
    }

    fn direct(&mut self, parameter: &Parameter) -> Result<Lookup, Interrupt> {
        use crate::shell::vars::Value;
        let vars = &self.ctx.vars;
        Ok(match parameter {
            Parameter::Positional(0) => Lookup::One(vars.zero.clone()),
            Parameter::Positional(n) => usize::try_from(*n - 1)
                .ok()
                .and_then(|index| vars.positional.get(index))
                .map_or(Lookup::Unset, |value| Lookup::One(value.clone())),
            Parameter::Special(special) => match special {
                SpecialParameter::AllPositionalParameters { concatenate } => Lookup::Many {
                    items: vars.positional.clone(),
                    joined: *concatenate,
                },
                SpecialParameter::PositionalParameterCount => {
                    Lookup::One(vars.positional.len().to_string())
                }
                SpecialParameter::LastExitStatus => Lookup::One(self.ctx.status.to_string()),
                SpecialParameter::CurrentOptionFlags => Lookup::One(self.flags()),
                SpecialParameter::ProcessId => Lookup::One(PROCESS_ID.to_owned()),
                SpecialParameter::LastBackgroundProcessId => Lookup::Unset,
                SpecialParameter::ShellName => Lookup::One(vars.zero.clone()),
            },
            Parameter::Named(name) => match name.as_str() {
                "PWD" if vars.get("PWD").is_none() => {
                    Lookup::One(crate::shell::commands::shown_cwd(self.ctx))
                }
                "RANDOM" => Lookup::One(self.ctx.random().to_string()),
                _ => vars
                    .scalar(name)
                    .map_or(Lookup::Unset, |value| Lookup::One(value.to_owned())),
            },
            Parameter::NamedWithIndex { name, index } => {
                let index = self.arithmetic(index)?;
                self.element(name, index).map_or(Lookup::Unset, Lookup::One)
            }
            Parameter::NamedWithAllIndices { name, concatenate } => match vars.get(name) {
                None => Lookup::Many {
                    items: Vec::new(),
                    joined: *concatenate,
                },
                Some(value @ (Value::Scalar(_) | Value::Array(_))) => Lookup::Many {
                    items: value.items(),
                    joined: *concatenate,
                },
            },
        })
    }

    /// `$-`: the options set, as letters.
    fn flags(&self) -> String {
        let options = self.ctx.options;
        let mut flags = String::from("h");
        for (set, letter) in [
            (options.errexit, 'e'),
            (options.noglob, 'f'),
            (options.nounset, 'u'),
            (options.xtrace, 'x'),
        ] {
            if set {
                flags.push(letter);
            }
        }
        flags.push('B');
        flags
    }

    /// `${x#p}` and its kin.
    fn trim(
        &mut self,
        parameter: &Parameter,
        indirect: bool,
        pattern: Option<&str>,
        trim: Trim,
    ) -> Result<Lookup, Interrupt> {
        let value = self.lookup(parameter, indirect)?;
        let pattern = self.pattern(pattern.unwrap_or_default())?;
        let Some(pattern) = Pattern::new(&pattern) else {
            return Ok(value);
        };
        Ok(value.map(|text| pattern.trim(text, trim)))
    }
}

/// What `$$` shows: the shell runs in no process of its own.
const PROCESS_ID: &str = "1";

/// Which part `${x#p}` and its kin remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trim {
    /// `#`.
    ShortestPrefix,
    /// `##`.
    LongestPrefix,
    /// `%`.
    ShortestSuffix,
    /// `%%`.
    LongestSuffix,
}

/// `text` with its first letter in upper case.
fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The range `${x:offset:length}` takes of `len` items, bash's way:
/// negative offsets count from the end, a negative length ends that far
/// from the end.
fn slice(len: usize, offset: i64, length: Option<i64>) -> Option<(usize, usize)> {
    let len = i64::try_from(len).ok()?;
    let start = if offset < 0 { len + offset } else { offset };
    if start < 0 || start > len {
        return None;
    }
    let end = match length {
        None => len,
        Some(length) if length < 0 => len + length,
        Some(length) => (start + length).min(len),
    };
    if end < start {
        return None;
    }
    Some((usize::try_from(start).ok()?, usize::try_from(end).ok()?))
}

/// The name a parameter is shown by in messages.
fn name_of(parameter: &Parameter) -> String {
    match parameter {
        Parameter::Positional(n) => n.to_string(),
        Parameter::Special(special) => special.to_string(),
        Parameter::Named(name) => name.clone(),
        Parameter::NamedWithIndex { name, index } => format!("{name}[{index}]"),
        Parameter::NamedWithAllIndices { name, concatenate } => {
            format!("{name}[{}]", if *concatenate { '*' } else { '@' })
        }
    }
}

impl Pattern {
    /// `text` with the part `trim` names removed.
    fn trim(&self, text: &str, trim: Trim) -> String {
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|&index| text.is_char_boundary(index))
            .collect();
        let found = match trim {
            Trim::ShortestPrefix => bounds.iter().find(|&&end| self.matches(&text[..end])),
            Trim::LongestPrefix => bounds.iter().rev().find(|&&end| self.matches(&text[..end])),
            Trim::ShortestSuffix => bounds
                .iter()
                .rev()
                .find(|&&start| self.matches(&text[start..])),
            Trim::LongestSuffix => bounds.iter().find(|&&start| self.matches(&text[start..])),
        };
        match (found, trim) {
            (Some(&end), Trim::ShortestPrefix | Trim::LongestPrefix) => text[end..].to_owned(),
            (Some(&start), Trim::ShortestSuffix | Trim::LongestSuffix) => text[..start].to_owned(),
            (None, _) => text.to_owned(),
        }
    }

    /// `text` with matches replaced by `replacement`, as `${x/p/r}` (first),
    /// `${x//p/r}` (all), `${x/#p/r}` (at the start) and `${x/%p/r}` (at
    /// the end) do; each match is the longest at its place.
    fn replace(&self, text: &str, replacement: &str, kind: &SubstringMatchKind) -> String {
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|&index| text.is_char_boundary(index))
            .collect();
        let longest_at = |start: usize| {
            bounds
                .iter()
                .rev()
                .copied()
                .filter(|&end| end >= start)
                .find(|&end| self.matches(&text[start..end]))
        };
        match kind {
            SubstringMatchKind::Prefix => match longest_at(0) {
                Some(end) => format!("{replacement}{}", &text[end..]),
                None => text.to_owned(),
            },
            SubstringMatchKind::Suffix => {
                match bounds.iter().find(|&&start| self.matches(&text[start..])) {
                    Some(&start) => format!("{}{replacement}", &text[..start]),
                    None => text.to_owned(),
                }
            }
            SubstringMatchKind::FirstOccurrence | SubstringMatchKind::Anywhere => {
                let all = matches!(kind, SubstringMatchKind::Anywhere);
                let mut out = String::new();
                let mut position = 0;
                let mut replaced = false;
                let mut index = 0;
                while index < bounds.len() {
                    let start = bounds[index];
                    if start < position || (replaced && !all) {
                        index += 1;
                        continue;
                    }
                    if let Some(end) = longest_at(start).filter(|&end| end > start) {
                        out.push_str(&text[position..start]);
                        out.push_str(replacement);
                        position = end;
                        replaced = true;
                    }
                    index += 1;
                }
                out.push_str(&text[position..]);
                out
            }
        }
    }
}
