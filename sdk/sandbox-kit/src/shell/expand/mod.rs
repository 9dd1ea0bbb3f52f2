//! Word expansion, in bash's order: braces (`{a,b}`), then tilde,
//! parameters (`$x`, `${x:-d}`...), command substitutions (`$(cmd)`,
//! `` `cmd` ``) and arithmetic (`$((1+2))`), then field splitting of what
//! unquoted expansions produced (on `IFS`), then pathname expansion of
//! fields with unquoted `*`, `?` or `[`, then quote removal. A word's
//! structure comes from the shell grammar's word parser; nothing here
//! re-lexes quotes by hand.
//!
//! Three results: [`Expander::fields`] (command arguments, `for` lists),
//! [`Expander::string`] (one string: assignments, redirection targets,
//! here-strings, `case` values, `[[ ]]` operands) and
//! [`Expander::pattern`] (a pattern whose quoted parts match literally:
//! `case` patterns, `[[ == ]]`, `${x#pattern}`).

mod arith;
mod brace;
pub(super) mod glob;
mod param;

use brush_parser::word::{WordPiece, WordPieceWithSource};

use super::context::{Ctx, Interrupt};
use super::io::Io;
use super::vars::is_name;

/// Characters that make a word more than plain text.
const SPECIAL_CHARS: [char; 7] = ['$', '`', '\'', '"', '\\', '~', '{'];

/// Whether unquoted `text` has glob characters: `*`, `?`, or a `[` with a
/// `]` after it (a lone `[`, as in `[ -f x ]`, is plain text and costs no
/// directory listing).
fn is_glob(text: &str) -> bool {
    text.contains(['*', '?'])
        || text
            .find('[')
            .is_some_and(|open| text[open + 1..].contains(']'))
}
/// Characters a quoted part escapes in a pattern.
const PATTERN_CHARS: [char; 7] = ['*', '?', '[', ']', '\\', '(', ')'];

/// What a word expands to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Fields, split and globbed.
    Fields,
    /// One string.
    String,
    /// One pattern, quoted parts escaped.
    Pattern,
}

/// One field being built.
#[derive(Debug, Default)]
struct Field {
    /// Its text after quote removal.
    text: String,
    /// The same as a pattern: quoted metacharacters escaped.
    pattern: String,
    /// Whether unquoted glob characters are in it.
    globs: bool,
    /// Whether a quoted part is in it, so it exists even when empty.
    quoted: bool,
}

/// Builds a word's fields from its pieces.
struct Builder {
    mode: Mode,
    ifs: String,
    done: Vec<Field>,
    current: Field,
}

impl Builder {
    fn new(mode: Mode, ifs: String) -> Self {
        Self {
            mode,
            ifs,
            done: Vec::new(),
            current: Field::default(),
        }
    }

    /// Unquoted text as written: it may glob.
    fn literal(&mut self, text: &str) {
        self.current.text.push_str(text);
        self.current.pattern.push_str(text);
        if is_glob(text) {
            self.current.globs = true;
        }
    }

    /// Quoted text: taken literally.
    fn quoted(&mut self, text: &str) {
        self.current.text.push_str(text);
        for c in text.chars() {
            if PATTERN_CHARS.contains(&c) {
                self.current.pattern.push('\\');
            }
            self.current.pattern.push(c);
        }
        self.current.quoted = true;
    }

    /// Marks the field as quoted, so it exists even when empty.
    fn mark_quoted(&mut self) {
        self.current.quoted = true;
    }

    /// What an unquoted expansion produced: split on `IFS` when building
    /// fields, and globbed.
    fn expanded(&mut self, text: &str) {
        if self.mode != Mode::Fields || self.ifs.is_empty() {
            self.literal(text);
            return;
        }
        let ifs = self.ifs.clone();
        let mut piece = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if !ifs.contains(c) {
                piece.push(c);
                continue;
            }
            let space = c.is_ascii_whitespace();
            self.literal(&piece);
            if !piece.is_empty() || !space || !self.current.text.is_empty() || self.current.quoted {
                self.break_field(!space);
            }
            piece.clear();
            // Whitespace around a separator belongs to it.
            while chars
                .peek()
                .is_some_and(|&next| ifs.contains(next) && next.is_ascii_whitespace())
            {
                chars.next();
            }
        }
        self.literal(&piece);
    }

    /// Ends the current field; `keep_empty` keeps it even if it is empty
    /// (a non-whitespace separator delimits empty fields).
    fn break_field(&mut self, keep_empty: bool) {
        let field = std::mem::take(&mut self.current);
        if keep_empty || !field.text.is_empty() || field.quoted {
            self.done.push(field);
        }
    }

    /// Ends the current field where `"$@"` separates two parameters.
    fn split_here(&mut self) {
        let field = std::mem::take(&mut self.current);
        self.done.push(field);
    }

    fn finish(mut self) -> Vec<Field> {
        let last = std::mem::take(&mut self.current);
        if !last.text.is_empty() || last.quoted {
            self.done.push(last);
        }
        self.done
    }
}

/// Expands words for the shell `ctx`, running command substitutions with
/// the streams of `io`.
pub(super) struct Expander<'c, 'f> {
    pub(super) ctx: &'c mut Ctx<'f>,
    pub(super) io: &'c Io,
}

impl<'c, 'f> Expander<'c, 'f> {
    /// An expander over `ctx` and `io`.
    pub(super) fn new(ctx: &'c mut Ctx<'f>, io: &'c Io) -> Self {
        Self { ctx, io }
    }

    /// The fields the word `text` expands to.
    pub(super) fn fields(&mut self, text: &str) -> Result<Vec<String>, Interrupt> {
        let words = match brace::expand(text) {
            Ok(words) => words,
            Err(message) => return Err(self.fail(message)),
        };
        let mut out = Vec::new();
        for word in words {
            let fields = self.build(&word, Mode::Fields)?;
            for field in fields {
                if field.globs && !self.ctx.options.noglob {
                    let matches = glob::paths(self.ctx, &field.pattern);
                    if !matches.is_empty() {
                        out.extend(matches);
                        continue;
                    }
                }
                out.push(field.text);
            }
        }
        Ok(out)
    }

    /// The word `text` expanded to one string, without splitting or
    /// globbing.
    pub(super) fn string(&mut self, text: &str) -> Result<String, Interrupt> {
        let fields = self.build(text, Mode::String)?;
        Ok(fields
            .into_iter()
            .map(|field| field.text)
            .collect::<Vec<_>>()
            .join(" "))
    }

    /// The word `text` expanded to a pattern: what was quoted in it
    /// matches literally.
    pub(super) fn pattern(&mut self, text: &str) -> Result<String, Interrupt> {
        let fields = self.build(text, Mode::Pattern)?;
        Ok(fields
            .into_iter()
            .map(|field| field.pattern)
            .collect::<Vec<_>>()
            .join(" "))
    }

    /// A here-document's body expanded: parameters, substitutions and
    /// arithmetic, with quotes taken literally.
    pub(super) fn here_document(&mut self, text: &str) -> Result<String, Interrupt> {
        let pieces = match brush_parser::word::parse_heredoc(text, &super::parse::options()) {
            Ok(pieces) => pieces,
            Err(error) => return Err(self.fail(format!("here-document: {error}"))),
        };
        let mut builder = Builder::new(Mode::String, String::new());
        self.pieces(&mut builder, &pieces, true)?;
        Ok(builder
            .finish()
            .into_iter()
            .map(|field| field.text)
            .collect())
    }

    /// Text expanded as a string, for arithmetic.
    fn text(&mut self, text: &str) -> Result<String, Interrupt> {
        if !text.contains(['$', '`', '"', '\'', '\\']) {
            return Ok(text.to_owned());
        }
        self.string(text)
    }

    fn build(&mut self, text: &str, mode: Mode) -> Result<Vec<Field>, Interrupt> {
        let ifs = match self.ctx.vars.scalar("IFS") {
            Some(ifs) => ifs.to_owned(),
            None if self.ctx.vars.get("IFS").is_some() => String::new(),
            None => " \t\n".to_owned(),
        };
        let mut builder = Builder::new(mode, ifs);
        // Most words of a loop are plain text or one variable: they need no
        // trip through the word parser.
        if !text.contains(SPECIAL_CHARS) {
            builder.literal(text);
            return Ok(builder.finish());
        }
        if let Some(name) = text.strip_prefix('$').filter(|name| is_name(name))
            && !self.ctx.options.nounset
            && !matches!(name, "PWD" | "RANDOM")
        {
            if let Some(value) = self.ctx.vars.scalar(name) {
                let value = value.to_owned();
                builder.expanded(&value);
            }
            return Ok(builder.finish());
        }
        let pieces = match brush_parser::word::parse(text, &super::parse::options()) {
            Ok(pieces) => pieces,
            Err(_) => return Err(self.fail(format!("{text}: bad substitution"))),
        };
        self.pieces(&mut builder, &pieces, false)?;
        Ok(builder.finish())
    }

    fn pieces(
        &mut self,
        builder: &mut Builder,
        pieces: &[WordPieceWithSource],
        quoted: bool,
    ) -> Result<(), Interrupt> {
        for piece in pieces {
            match &piece.piece {
                WordPiece::Text(text) if quoted => builder.quoted(text),
                WordPiece::Text(text) => builder.literal(text),
                WordPiece::SingleQuotedText(text) => builder.quoted(text),
                WordPiece::AnsiCQuotedText(text) => builder.quoted(&ansi_c(text)),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    if !param::is_all_items(inner) {
                        builder.mark_quoted();
                    }
                    self.pieces(builder, inner, true)?;
                }
                WordPiece::TildeExpansion(tilde) => {
                    let home = self.tilde(tilde);
                    builder.quoted(&home);
                }
                WordPiece::EscapeSequence(escape) => {
                    let escaped = escape.strip_prefix('\\').unwrap_or(escape);
                    if escaped == "\n" {
                        continue;
                    }
                    builder.quoted(escaped);
                }
                WordPiece::ParameterExpansion(expr) => self.parameter(builder, expr, quoted)?,
                WordPiece::CommandSubstitution(program) => {
                    let output = self.substitute(program)?;
                    push_value(builder, &output, quoted);
                }
                WordPiece::BackquotedCommandSubstitution(program) => {
                    let output = self.substitute(&unbackquote(program))?;
                    push_value(builder, &output, quoted);
                }
                WordPiece::ArithmeticExpression(expr) => {
                    let value = self.arithmetic(&expr.value)?;
                    push_value(builder, &value.to_string(), quoted);
                }
            }
        }
        Ok(())
    }

    /// What a tilde expands to: `$HOME` (`/` without one), or the working
    /// directory.
    fn tilde(&self, tilde: &brush_parser::word::TildeExpr) -> String {
        use brush_parser::word::TildeExpr;
        match tilde {
            TildeExpr::Home => self
                .ctx
                .vars
                .scalar("HOME")
                .map_or_else(|| "/".to_owned(), str::to_owned),
            TildeExpr::WorkingDir => super::commands::shown_cwd(self.ctx),
            TildeExpr::OldWorkingDir => self
                .ctx
                .vars
                .scalar("OLDPWD")
                .unwrap_or_default()
                .to_owned(),
            TildeExpr::UserHome(user) => format!("~{user}"),
            TildeExpr::NthDirFromTopOfDirStack { .. }
            | TildeExpr::NthDirFromBottomOfDirStack { .. } => "~".to_owned(),
        }
    }

    /// The output of `program` run in a subshell, trailing newlines removed.
    fn substitute(&mut self, program: &str) -> Result<String, Interrupt> {
        let output = super::exec::substitution(self.ctx, self.io, program)?;
        let mut text = String::from_utf8_lossy(&output).into_owned();
        while text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }

    /// Reports `message` as the shell's error and stops the shell with
    /// status 1, as bash does on an expansion error.
    pub(super) fn fail(&self, message: String) -> Interrupt {
        self.io
            .stderr
            .borrow_mut()
            .push(format!("sh: {message}\n").as_bytes());
        Interrupt::Exit(1)
    }

    /// The error for expanding the unset `name` under `set -u`.
    fn unbound(&self, name: &str) -> Interrupt {
        self.io
            .stderr
            .borrow_mut()
            .push(format!("sh: {name}: unbound variable\n").as_bytes());
        Interrupt::Exit(127)
    }

    /// Element `index` of the array `name` (counted from its end when
    /// negative).
    fn element(&self, name: &str, index: i64) -> Option<String> {
        use super::vars::Value;
        match self.ctx.vars.get(name)? {
            Value::Scalar(text) => (index == 0 || index == -1).then(|| text.clone()),
            Value::Array(items) => {
                let index = if index < 0 {
                    i64::try_from(items.len()).ok()? + index
                } else {
                    index
                };
                items.get(usize::try_from(index).ok()?)?.clone()
            }
        }
    }
}

/// Adds an expansion's result: literally when quoted, split and globbed
/// when not.
fn push_value(builder: &mut Builder, text: &str, quoted: bool) {
    if quoted {
        builder.quoted(text);
    } else {
        builder.expanded(text);
    }
}

/// The text of a backquoted substitution with its backslash escapes of
/// `$`, `` ` `` and `\` removed.
fn unbackquote(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '\\')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// The text of `$'...'` with its escapes applied.
pub(super) fn ansi_c(text: &str) -> String {
    super::escapes::decode(text, super::escapes::Dialect::AnsiC).0
}
