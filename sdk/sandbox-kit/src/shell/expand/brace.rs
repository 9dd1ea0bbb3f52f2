//! Brace expansion, the first step of a word's expansion: `{a,b}.txt`
//! becomes `a.txt b.txt`, `{1..3}` becomes `1 2 3`, `{a..c}` becomes
//! `a b c`; nested braces multiply out. A word without a brace expression
//! stays as it is.

use brush_parser::word::{BraceExpressionMember, BraceExpressionOrText};

/// Most words one brace expansion may make, so `{1..999999999}` cannot eat
/// the sandbox's memory.
const MAX_WORDS: usize = 1_000_000;

/// The words `text` brace-expands to, in order, or why it may not.
pub(super) fn expand(text: &str) -> Result<Vec<String>, String> {
    if !text.contains('{') {
        return Ok(vec![text.to_owned()]);
    }
    match brush_parser::word::parse_brace_expansions(text, &super::super::parse::options()) {
        Ok(Some(pieces)) => sequence(&pieces),
        Ok(None) | Err(_) => Ok(vec![text.to_owned()]),
    }
}

/// The words a sequence of texts and brace expressions makes.
fn sequence(pieces: &[BraceExpressionOrText]) -> Result<Vec<String>, String> {
    let mut words = vec![String::new()];
    for piece in pieces {
        let choices = match piece {
            BraceExpressionOrText::Text(text) => vec![text.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut choices = Vec::new();
                for member in members {
                    choices.extend(self::member(member)?);
                }
                choices
            }
        };
        if words.len().saturating_mul(choices.len()) > MAX_WORDS {
            return Err(format!("brace expansion makes more than {MAX_WORDS} words"));
        }
        words = words
            .iter()
            .flat_map(|word| choices.iter().map(move |choice| format!("{word}{choice}")))
            .collect();
    }
    Ok(words)
}

/// The words one member of a brace expression makes.
fn member(member: &BraceExpressionMember) -> Result<Vec<String>, String> {
    match member {
        BraceExpressionMember::Child(pieces) => sequence(pieces),
        BraceExpressionMember::NumberSequence {
            start,
            end,
            increment,
        } => {
            let step = increment.unsigned_abs().max(1);
            let count = start.abs_diff(*end) / step + 1;
            if count > MAX_WORDS as u64 {
                return Err(format!("brace expansion makes more than {MAX_WORDS} words"));
            }
            let step = i64::try_from(step).unwrap_or(1);
            let mut words = Vec::new();
            let mut value = *start;
            for _ in 0..count {
                words.push(value.to_string());
                value = if start <= end {
                    value.saturating_add(step)
                } else {
                    value.saturating_sub(step)
                };
            }
            Ok(words)
        }
        BraceExpressionMember::CharSequence {
            start,
            end,
            increment,
        } => {
            let step = usize::try_from(increment.unsigned_abs().max(1)).unwrap_or(1);
            let (low, high) = (u32::from(*start.min(end)), u32::from(*start.max(end)));
            let mut chars: Vec<String> = (low..=high)
                .filter_map(char::from_u32)
                .map(String::from)
                .collect();
            if start > end {
                chars.reverse();
            }
            Ok(chars.into_iter().step_by(step).collect())
        }
    }
}
