//! Splitting a command line into words and operators, with quoting, escapes
//! and `$` variables. Constructs the language does not support are refused
//! here with a message naming them.

use super::syntax::{Piece, Stream, Word};

/// Why a command line cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ParseError {
    /// It is not well formed.
    Syntax(String),
    /// It uses a construct the language does not have.
    Unsupported(String),
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Syntax(message) => write!(f, "syntax error: {message}"),
            ParseError::Unsupported(message) => f.write_str(message),
        }
    }
}

/// A syntax error saying `message`.
pub(super) fn syntax<T>(message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError::Syntax(message.into()))
}

/// A refusal of an unsupported construct described by `message`.
pub(super) fn unsupported<T>(message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError::Unsupported(message.into()))
}

/// An operator between words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// `;`.
    Semi,
    /// A line break, which separates like `;`.
    Newline,
    /// `&&`.
    And,
    /// `||`.
    Or,
    /// `|`.
    Pipe,
}

impl Op {
    /// The operator as written.
    pub(super) fn text(self) -> &'static str {
        match self {
            Op::Semi => ";",
            Op::Newline => "newline",
            Op::And => "&&",
            Op::Or => "||",
            Op::Pipe => "|",
        }
    }
}

/// A redirection operator; all but `Duplicate` take a file name word after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RedirectOp {
    /// `<`.
    Input,
    /// `>`, `>>`, `2>`, `2>>`.
    Output(Stream, bool),
    /// `&>` or `&>>`.
    Both(bool),
    /// `2>&1` or `>&2`.
    Duplicate(Stream),
}

impl RedirectOp {
    /// The operator as written.
    pub(super) fn text(self) -> &'static str {
        match self {
            RedirectOp::Input => "<",
            RedirectOp::Output(Stream::Out, false) => ">",
            RedirectOp::Output(Stream::Out, true) => ">>",
            RedirectOp::Output(Stream::Err, false) => "2>",
            RedirectOp::Output(Stream::Err, true) => "2>>",
            RedirectOp::Both(false) => "&>",
            RedirectOp::Both(true) => "&>>",
            RedirectOp::Duplicate(Stream::Err) => "2>&1",
            RedirectOp::Duplicate(Stream::Out) => ">&2",
        }
    }
}

/// One token of a command line.
#[derive(Debug)]
pub(super) enum Token {
    /// A word.
    Word(Word),
    /// A list or pipeline operator.
    Op(Op),
    /// A redirection operator.
    Redirect(RedirectOp),
}

/// Splits `line` into tokens, or says what is wrong with it.
pub(super) fn tokenize(line: &str) -> Result<Vec<Token>, ParseError> {
    Lexer {
        chars: line.chars().collect(),
        at: 0,
    }
    .run()
}

/// The state of a tokenization.
struct Lexer {
    chars: Vec<char>,
    at: usize,
}

/// Whether `c` ends an unquoted word.
fn ends_word(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
    )
}

/// Appends `c` to `word` as a piece of kind `bare` (or quoted).
fn push_char(word: &mut Word, c: char, bare: bool) {
    match (word.last_mut(), bare) {
        (Some(Piece::Bare(text)), true) | (Some(Piece::Quoted(text)), false) => text.push(c),
        (_, true) => word.push(Piece::Bare(c.to_string())),
        (_, false) => word.push(Piece::Quoted(c.to_string())),
    }
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Whether the input continues with `text`.
    fn looking_at(&self, text: &str) -> bool {
        text.chars()
            .enumerate()
            .all(|(i, c)| self.peek(i) == Some(c))
    }

    fn run(mut self) -> Result<Vec<Token>, ParseError> {
        let mut tokens = Vec::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' => self.at += 1,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                '\n' => {
                    self.at += 1;
                    tokens.push(Token::Op(Op::Newline));
                }
                ';' | '&' | '|' | '<' | '>' | '(' | ')' => tokens.push(self.operator()?),
                '1' | '2' if self.peek(1) == Some('>') => tokens.push(self.operator()?),
                _ => tokens.push(Token::Word(self.word()?)),
            }
        }
        Ok(tokens)
    }

    /// Consumes `text` and returns `token`.
    fn take(&mut self, text: &str, token: Token) -> Result<Token, ParseError> {
        self.at += text.chars().count();
        Ok(token)
    }

    fn operator(&mut self) -> Result<Token, ParseError> {
        use RedirectOp::{Both, Duplicate, Input, Output};
        const TABLE: &[(&str, RedirectOp)] = &[
            ("2>&1", Duplicate(Stream::Err)),
            ("1>&2", Duplicate(Stream::Out)),
            ("2>>", Output(Stream::Err, true)),
            ("1>>", Output(Stream::Out, true)),
            ("&>>", Both(true)),
            (">&2", Duplicate(Stream::Out)),
            ("2>", Output(Stream::Err, false)),
            ("1>", Output(Stream::Out, false)),
            ("&>", Both(false)),
            (">>", Output(Stream::Out, true)),
            (">", Output(Stream::Out, false)),
        ];
        if self.looking_at("<<") {
            return unsupported("here-documents and here-strings (`<<`) are not supported");
        }
        if self.looking_at("<(") || self.looking_at(">(") {
            return unsupported("process substitution is not supported");
        }
        for (text, op) in TABLE {
            if !self.looking_at(text) {
                continue;
            }
            if self.peek(text.len()) == Some('&') {
                return unsupported(format!(
                    "redirection `{text}&` to other file descriptors is not supported"
                ));
            }
            return self.take(text, Token::Redirect(*op));
        }
        let two = [self.peek(0), self.peek(1)];
        match two {
            [Some('&'), Some('&')] => self.take("&&", Token::Op(Op::And)),
            [Some('|'), Some('|')] => self.take("||", Token::Op(Op::Or)),
            [Some('|'), Some('&')] => unsupported("`|&` is not supported; use `2>&1 |`"),
            [Some('|'), _] => self.take("|", Token::Op(Op::Pipe)),
            [Some(';'), Some(';')] => unsupported("`;;` is not supported (there is no `case`)"),
            [Some(';'), _] => self.take(";", Token::Op(Op::Semi)),
            [Some('<'), Some('&')] => unsupported("redirection `<&` is not supported"),
            [Some('<'), _] => self.take("<", Token::Redirect(Input)),
            [Some('&'), _] => unsupported("background jobs (`&`) are not supported"),
            [Some('('), _] | [Some(')'), _] => {
                unsupported("subshells and groupings with `( )` are not supported")
            }
            _ => unsupported(format!(
                "redirection `{}` is not supported",
                self.chars[self.at..].iter().take(3).collect::<String>()
            )),
        }
    }

    fn word(&mut self) -> Result<Word, ParseError> {
        let mut word = Word::new();
        while let Some(c) = self.peek(0) {
            if ends_word(c) {
                break;
            }
            self.at += 1;
            match c {
                '\'' => {
                    let start = self.at;
                    while self.peek(0).is_some_and(|c| c != '\'') {
                        self.at += 1;
                    }
                    if self.peek(0).is_none() {
                        return syntax("unterminated single quote");
                    }
                    let text: String = self.chars[start..self.at].iter().collect();
                    self.at += 1;
                    word.push(Piece::Quoted(text));
                }
                '"' => self.double_quoted(&mut word)?,
                '\\' => match self.peek(0) {
                    Some('\n') => self.at += 1,
                    Some(escaped) => {
                        self.at += 1;
                        push_char(&mut word, escaped, false);
                    }
                    None => push_char(&mut word, '\\', false),
                },
                '$' => self.dollar(&mut word, false)?,
                '`' => return unsupported("command substitution with backticks is not supported"),
                _ => push_char(&mut word, c, true),
            }
        }
        Ok(word)
    }

    /// The rest of a double-quoted string, after its opening quote.
    fn double_quoted(&mut self, word: &mut Word) -> Result<(), ParseError> {
        word.push(Piece::Quoted(String::new()));
        loop {
            let Some(c) = self.peek(0) else {
                return syntax("unterminated double quote");
            };
            self.at += 1;
            match c {
                '"' => return Ok(()),
                '\\' => match self.peek(0) {
                    Some('\n') => self.at += 1,
                    Some(escaped @ ('"' | '\\' | '$' | '`')) => {
                        self.at += 1;
                        push_char(word, escaped, false);
                    }
                    _ => push_char(word, '\\', false),
                },
                '$' => self.dollar(word, true)?,
                '`' => return unsupported("command substitution with backticks is not supported"),
                _ => push_char(word, c, false),
            }
        }
    }

    /// What follows a `$`: a variable, or a literal `$`.
    fn dollar(&mut self, word: &mut Word, quoted: bool) -> Result<(), ParseError> {
        let var = |name: String| Piece::Var { name, quoted };
        match self.peek(0) {
            Some('(') if self.peek(1) == Some('(') => {
                unsupported("arithmetic expansion `$(( ))` is not supported")
            }
            Some('(') => unsupported("command substitution `$( )` is not supported"),
            Some('{') => {
                self.at += 1;
                let start = self.at;
                while self.peek(0).is_some_and(|c| c != '}') {
                    self.at += 1;
                }
                if self.peek(0).is_none() {
                    return syntax("unterminated `${`");
                }
                let name: String = self.chars[start..self.at].iter().collect();
                self.at += 1;
                if !is_name(&name) && name != "?" {
                    return unsupported(format!(
                        "parameter expansion `${{{name}}}` is not supported"
                    ));
                }
                word.push(var(name));
                Ok(())
            }
            Some(special @ ('?' | '#' | '@' | '*' | '$' | '!' | '-' | '0'..='9')) => {
                self.at += 1;
                word.push(var(special.to_string()));
                Ok(())
            }
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                let start = self.at;
                while self
                    .peek(0)
                    .is_some_and(|c| c == '_' || c.is_ascii_alphanumeric())
                {
                    self.at += 1;
                }
                word.push(var(self.chars[start..self.at].iter().collect()));
                Ok(())
            }
            _ => {
                push_char(word, '$', !quoted);
                Ok(())
            }
        }
    }
}

/// Whether `name` is a valid variable name.
pub(super) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}
