//! Where commands read and write: standard input as bytes, and output streams
//! that are capped buffers (the caller's stdout and stderr, a pipe to the next
//! command, or a file a redirection writes when the command ends).

use std::fmt::Display;

/// Most bytes of stdout and of stderr returned to the caller.
pub const OUTPUT_LIMIT: usize = 1024 * 1024;
/// Most bytes a pipe between commands, or a redirected file, holds.
pub const PIPE_LIMIT: usize = 64 * 1024 * 1024;

/// A capped output buffer.
#[derive(Debug, Default)]
pub(super) struct Buffer {
    data: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Buffer {
    /// An empty buffer holding at most `limit` bytes.
    pub(super) fn new(limit: usize) -> Self {
        Self {
            data: Vec::new(),
            limit,
            truncated: false,
        }
    }

    /// Appends what fits of `bytes`.
    pub(super) fn push(&mut self, bytes: &[u8]) {
        let room = self.limit - self.data.len();
        if bytes.len() > room {
            self.data.extend_from_slice(&bytes[..room]);
            self.truncated = true;
        } else {
            self.data.extend_from_slice(bytes);
        }
    }

    /// Whether bytes were dropped at the limit.
    pub(super) fn truncated(&self) -> bool {
        self.truncated
    }

    /// The bytes held.
    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.data
    }
}

/// One command's streams: its input and the buffers its stdout and stderr go
/// to, which may be one and the same (`2>&1`).
pub(super) struct Io<'i> {
    /// Standard input.
    pub stdin: &'i [u8],
    /// Output buffers; `out` and `err` index into them.
    pub sinks: Vec<Buffer>,
    /// Index of standard output's buffer.
    pub out: usize,
    /// Index of standard error's buffer.
    pub err: usize,
}

impl Io<'_> {
    /// Writes to standard output.
    pub(super) fn out(&mut self, bytes: &[u8]) {
        self.sinks[self.out].push(bytes);
    }

    /// Writes a line of text to standard output.
    pub(super) fn outln(&mut self, text: impl Display) {
        let line = format!("{text}\n");
        self.out(line.as_bytes());
    }

    /// Writes to standard error.
    pub(super) fn err(&mut self, bytes: &[u8]) {
        self.sinks[self.err].push(bytes);
    }

    /// Writes a line of text to standard error.
    pub(super) fn errln(&mut self, text: impl Display) {
        let line = format!("{text}\n");
        self.sinks[self.err].push(line.as_bytes());
    }
}
