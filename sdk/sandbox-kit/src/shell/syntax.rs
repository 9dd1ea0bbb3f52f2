//! The command language's syntax tree: lists of and-or chains of pipelines of
//! simple commands, whose words keep which of their parts were quoted.

/// A word as written: pieces that expand and glob differently.
pub(super) type Word = Vec<Piece>;

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    /// Unquoted text: may glob.
    Bare(String),
    /// Quoted or escaped text: taken literally.
    Quoted(String),
    /// `$NAME`, `${NAME}` or `$?`; inside double quotes when `quoted`.
    Var {
        /// The variable's name, `?` for the last exit status.
        name: String,
        /// Whether it stood in double quotes, which keeps it one field.
        quoted: bool,
    },
}

/// A whole command line: and-or chains run one after another.
#[derive(Debug, Default)]
pub(super) struct Script {
    /// The chains in order.
    pub chains: Vec<Chain>,
}

/// Pipelines joined by `&&` and `||`, evaluated left to right.
#[derive(Debug)]
pub(super) struct Chain {
    /// The first pipeline.
    pub first: Pipeline,
    /// Each later pipeline with the operator before it.
    pub rest: Vec<(Connector, Pipeline)>,
}

/// How a pipeline joins the chain before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Connector {
    /// `&&`: run only if the chain so far succeeded.
    And,
    /// `||`: run only if the chain so far failed.
    Or,
}

/// Simple commands joined by `|`, optionally negated with `!`.
#[derive(Debug)]
pub(super) struct Pipeline {
    /// Whether `!` inverts the exit status.
    pub negated: bool,
    /// The commands, first to last.
    pub commands: Vec<Simple>,
}

/// One simple command.
#[derive(Debug, Default)]
pub(super) struct Simple {
    /// `NAME=value` words before the command name.
    pub assignments: Vec<(String, Word)>,
    /// The command name and its arguments.
    pub words: Vec<Word>,
    /// Redirections, in the order written.
    pub redirects: Vec<Redirect>,
}

/// An output stream of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    /// Standard output, descriptor 1.
    Out,
    /// Standard error, descriptor 2.
    Err,
}

/// A redirection.
#[derive(Debug)]
pub(super) enum Redirect {
    /// `< file`.
    Input(Word),
    /// `> file`, `>> file`, `2> file`, `2>> file`.
    Output {
        /// The stream sent to the file.
        stream: Stream,
        /// The file.
        target: Word,
        /// Whether to append rather than replace.
        append: bool,
    },
    /// `&> file` or `&>> file`: both streams.
    Both {
        /// The file.
        target: Word,
        /// Whether to append rather than replace.
        append: bool,
    },
    /// `2>&1` (`from` is `Err`) or `>&2` (`from` is `Out`): one stream goes
    /// wherever the other goes now.
    Duplicate {
        /// The stream redirected.
        from: Stream,
    },
}
