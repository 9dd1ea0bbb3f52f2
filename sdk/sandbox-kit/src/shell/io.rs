//! Where commands read and write: standard input as bytes read through a
//! cursor that every command of a group shares (so `while read line` takes
//! one line each time round and `cat` in the loop would take the rest), and
//! output streams that are capped, shared buffers (the caller's stdout and
//! stderr, a pipe to the next command, a command substitution, or a file a
//! redirection writes when its command ends).

use std::cell::{Cell, RefCell};
use std::fmt::Display;
use std::rc::Rc;

/// Most bytes of stdout and of stderr returned to the caller.
pub const OUTPUT_LIMIT: usize = 1024 * 1024;
/// Most bytes a pipe between commands, a command substitution or a
/// redirected file holds.
pub const PIPE_LIMIT: usize = 64 * 1024 * 1024;

/// A capped output buffer.
#[derive(Debug, Default)]
pub(super) struct Buffer {
    data: Vec<u8>,
    limit: usize,
    truncated: bool,
    pipe: bool,
}

impl Buffer {
    /// An empty buffer holding at most `limit` bytes.
    pub(super) fn new(limit: usize) -> Self {
        Self {
            data: Vec::new(),
            limit,
            truncated: false,
            pipe: false,
        }
    }

    /// An empty pipe to the next command of a pipeline: once full, a
    /// command writing to it is stopped.
    pub(super) fn pipe() -> Self {
        Self {
            pipe: true,
            ..Self::new(PIPE_LIMIT)
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

    /// Takes the bytes held, leaving the buffer empty (and its cut flag).
    pub(super) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.data)
    }
}

/// An output stream: a buffer that `2>&1` lets two streams share.
pub(super) type Sink = Rc<RefCell<Buffer>>;

/// A new stream holding at most `limit` bytes.
pub(super) fn sink(limit: usize) -> Sink {
    Rc::new(RefCell::new(Buffer::new(limit)))
}

/// Standard input: bytes and how far the commands reading them have read.
#[derive(Debug, Default)]
pub(super) struct Input {
    data: Vec<u8>,
    read: Cell<usize>,
}

impl Input {
    /// Input holding `data`, none of it read.
    pub(super) fn new(data: Vec<u8>) -> Rc<Self> {
        Rc::new(Self {
            data,
            read: Cell::new(0),
        })
    }

    /// Everything not yet read, which is read now.
    pub(super) fn rest(&self) -> Vec<u8> {
        let start = self.read.get();
        self.read.set(self.data.len());
        self.data[start..].to_vec()
    }

    /// The next record ending in `delimiter` (without it), or what is left
    /// before the end; `None` when nothing is left. The bool says whether the
    /// delimiter ended it.
    pub(super) fn record(&self, delimiter: u8) -> Option<(Vec<u8>, bool)> {
        let start = self.read.get();
        if start >= self.data.len() {
            return None;
        }
        let rest = &self.data[start..];
        match memchr::memchr(delimiter, rest) {
            Some(end) => {
                self.read.set(start + end + 1);
                Some((rest[..end].to_vec(), true))
            }
            None => {
                self.read.set(self.data.len());
                Some((rest.to_vec(), false))
            }
        }
    }
}

/// One command's streams.
#[derive(Clone)]
pub(super) struct Io {
    /// Standard input.
    pub stdin: Rc<Input>,
    /// Standard output.
    pub stdout: Sink,
    /// Standard error.
    pub stderr: Sink,
}

impl Io {
    /// What is left of standard input, which the command now has read.
    pub(super) fn stdin(&self) -> Vec<u8> {
        self.stdin.rest()
    }

    /// Writes to standard output.
    pub(super) fn out(&mut self, bytes: &[u8]) {
        self.stdout.borrow_mut().push(bytes);
    }

    /// Writes a line of text to standard output.
    pub(super) fn outln(&mut self, text: impl Display) {
        let line = format!("{text}\n");
        self.out(line.as_bytes());
    }

    /// Writes to standard error.
    pub(super) fn err(&mut self, bytes: &[u8]) {
        self.stderr.borrow_mut().push(bytes);
    }

    /// Writes a line of text to standard error.
    pub(super) fn errln(&mut self, text: impl Display) {
        let line = format!("{text}\n");
        self.err(line.as_bytes());
    }

    /// Whether standard output is a pipe already full: a command writing
    /// more to it is stopped, as a writer is when its reader has gone.
    pub(super) fn stdout_full(&self) -> bool {
        let stdout = self.stdout.borrow();
        stdout.pipe && stdout.truncated
    }
}
