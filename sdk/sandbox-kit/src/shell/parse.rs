//! The shell grammar: bash's, parsed by `brush-parser` into its syntax
//! tree, with its error turned into the message a user reads.

use brush_parser::ast::Program;
use brush_parser::{Parser, ParserOptions};

/// How every program, word and pattern is parsed: bash's grammar, with
/// extended globs and tilde expansion at the start of words.
pub(super) fn options() -> ParserOptions {
    ParserOptions::default()
}

/// `text` parsed as a program, or the syntax error's message.
pub(super) fn program(text: &str) -> Result<Program, String> {
    Parser::new(std::io::Cursor::new(text.as_bytes()), &options())
        .parse_program()
        .map_err(|error| error.to_string())
}
