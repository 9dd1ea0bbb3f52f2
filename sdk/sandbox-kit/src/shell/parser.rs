//! Recursive-descent parsing of tokens into a [`Script`]: `;` and line breaks
//! separate chains, `&&` and `||` join pipelines left to right, `|` joins
//! simple commands. Shell keywords (`if`, `for`, `{`, ...) are refused.

use super::lexer::{Op, ParseError, RedirectOp, Token, is_name, syntax, tokenize, unsupported};
use super::syntax::{Chain, Connector, Piece, Pipeline, Redirect, Script, Simple, Word};
use std::iter::Peekable;
use std::vec::IntoIter;

/// Parses a command line, or says what is wrong with it.
pub(super) fn parse(line: &str) -> Result<Script, ParseError> {
    let mut parser = Parser {
        tokens: tokenize(line)?.into_iter().peekable(),
    };
    parser.script()
}

/// The state of a parse.
struct Parser {
    tokens: Peekable<IntoIter<Token>>,
}

/// What an unexpected token is called in a message.
fn describe(token: Option<&Token>) -> String {
    match token {
        None => "end of line".into(),
        Some(Token::Op(op)) => format!("`{}`", op.text()),
        Some(Token::Redirect(op)) => format!("`{}`", op.text()),
        Some(Token::Word(_)) => "word".into(),
    }
}

/// The keyword-like text of `word` if it is one unquoted piece.
fn bare_text(word: &Word) -> Option<&str> {
    match word.as_slice() {
        [Piece::Bare(text)] => Some(text),
        _ => None,
    }
}

/// Refuses shell keywords in command position.
fn refuse_keyword(word: &Word) -> Result<(), ParseError> {
    let Some(text) = bare_text(word) else {
        return Ok(());
    };
    let what = match text {
        "if" | "then" | "elif" | "else" | "fi" => "`if` conditionals are",
        "for" | "while" | "until" | "do" | "done" | "select" => "loops are",
        "case" | "esac" => "`case` is",
        "function" => "functions are",
        "{" | "}" => "command groups `{ }` are",
        "[[" | "]]" => "`[[ ]]` tests are (use `test` or `[`)",
        _ => return Ok(()),
    };
    unsupported(format!("{what} not supported (found `{text}`)"))
}

/// Splits `NAME=value` off the front of `word`, if it is an assignment.
fn assignment(word: &Word) -> Option<(String, Word)> {
    let Some(Piece::Bare(first)) = word.first() else {
        return None;
    };
    let (name, value) = first.split_once('=')?;
    if !is_name(name) {
        return None;
    }
    let mut rest = vec![Piece::Bare(value.to_owned())];
    rest.extend(word[1..].iter().cloned());
    Some((name.to_owned(), rest))
}

impl Parser {
    fn skip_newlines(&mut self) {
        while matches!(self.tokens.peek(), Some(Token::Op(Op::Newline))) {
            self.tokens.next();
        }
    }

    fn script(&mut self) -> Result<Script, ParseError> {
        let mut script = Script::default();
        loop {
            self.skip_newlines();
            if self.tokens.peek().is_none() {
                return Ok(script);
            }
            script.chains.push(self.chain()?);
            match self.tokens.next() {
                None => return Ok(script),
                Some(Token::Op(Op::Semi | Op::Newline)) => {}
                other => {
                    return syntax(format!(
                        "unexpected {} after a command",
                        describe(other.as_ref())
                    ));
                }
            }
        }
    }

    fn chain(&mut self) -> Result<Chain, ParseError> {
        let first = self.pipeline(None)?;
        let mut rest = Vec::new();
        loop {
            let connector = match self.tokens.peek() {
                Some(Token::Op(Op::And)) => Connector::And,
                Some(Token::Op(Op::Or)) => Connector::Or,
                _ => return Ok(Chain { first, rest }),
            };
            self.tokens.next();
            self.skip_newlines();
            let after = if connector == Connector::And {
                Op::And
            } else {
                Op::Or
            };
            rest.push((connector, self.pipeline(Some(after))?));
        }
    }

    /// A pipeline; `after` is the operator before it, for messages.
    fn pipeline(&mut self, after: Option<Op>) -> Result<Pipeline, ParseError> {
        let mut negated = false;
        if let Some(Token::Word(word)) = self.tokens.peek()
            && bare_text(word) == Some("!")
        {
            negated = true;
            self.tokens.next();
        }
        let mut commands = vec![self.simple(after)?];
        while matches!(self.tokens.peek(), Some(Token::Op(Op::Pipe))) {
            self.tokens.next();
            self.skip_newlines();
            commands.push(self.simple(Some(Op::Pipe))?);
        }
        Ok(Pipeline { negated, commands })
    }

    /// A simple command; `after` is the operator before it, for messages.
    fn simple(&mut self, after: Option<Op>) -> Result<Simple, ParseError> {
        let mut simple = Simple::default();
        loop {
            match self.tokens.next_if(|token| !matches!(token, Token::Op(_))) {
                Some(Token::Word(word)) => {
                    if simple.words.is_empty() {
                        if let Some(assigned) = assignment(&word) {
                            simple.assignments.push(assigned);
                            continue;
                        }
                        refuse_keyword(&word)?;
                    }
                    simple.words.push(word);
                }
                Some(Token::Redirect(op)) => simple.redirects.push(self.redirect(op)?),
                _ => {
                    let next = self.tokens.peek();
                    if simple.words.is_empty()
                        && simple.assignments.is_empty()
                        && simple.redirects.is_empty()
                    {
                        return syntax(match after {
                            Some(op) if next.is_none() => {
                                format!("`{}` with nothing after it", op.text())
                            }
                            _ => format!("unexpected {}", describe(next)),
                        });
                    }
                    return Ok(simple);
                }
            }
        }
    }

    fn redirect(&mut self, op: RedirectOp) -> Result<Redirect, ParseError> {
        Ok(match op {
            RedirectOp::Duplicate(from) => Redirect::Duplicate { from },
            RedirectOp::Input => Redirect::Input(self.target(op)?),
            RedirectOp::Output(stream, append) => Redirect::Output {
                stream,
                target: self.target(op)?,
                append,
            },
            RedirectOp::Both(append) => Redirect::Both {
                target: self.target(op)?,
                append,
            },
        })
    }

    /// The file name word after the redirection `op`.
    fn target(&mut self, op: RedirectOp) -> Result<Word, ParseError> {
        match self.tokens.next() {
            Some(Token::Word(word)) => Ok(word),
            other => syntax(format!(
                "`{}` needs a file name, found {}",
                op.text(),
                describe(other.as_ref())
            )),
        }
    }
}
