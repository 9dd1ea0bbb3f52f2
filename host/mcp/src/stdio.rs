//! The standard input and output `cordon mcp` serves on. A client spawns the
//! server with a pipe or a socket for each; those are registered with the
//! runtime's reactor, so a request is read and its answer written on the
//! thread that serves it. Anything else (a terminal, a file), and streams that
//! share one file with each other or with standard error, go through tokio's
//! `Stdin` and `Stdout`, which hand every read, write and flush to a thread of
//! the blocking pool: a wake-up of another thread and back, twice or more per
//! request.
//!
//! Registering a stream makes it non-blocking, which every process sharing
//! that open file sees. Standard error stays as it is, and a stream shared
//! with it is left alone, so writing a diagnostic never meets a full pipe.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// Where requests are read from.
pub type Input = Box<dyn AsyncRead + Send + Unpin>;
/// Where answers and notifications are written.
pub type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// A standard stream the reactor can wait on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pipe,
    Socket,
}

impl Kind {
    fn reader(self, fd: OwnedFd) -> io::Result<Input> {
        Ok(match self {
            Self::Pipe => Box::new(pipe::Receiver::from_owned_fd(fd)?),
            Self::Socket => Box::new(socket(fd)?),
        })
    }

    fn writer(self, fd: OwnedFd) -> io::Result<Output> {
        Ok(match self {
            Self::Pipe => Box::new(pipe::Sender::from_owned_fd(fd)?),
            Self::Socket => Box::new(socket(fd)?),
        })
    }
}

/// This process's standard input and output. Fails only when a pipe or a
/// socket could not be registered: one opened only for the other direction,
/// which could not serve as that stream through any handle, or one already
/// made non-blocking when the reactor refused it.
pub fn streams() -> io::Result<(Input, Output)> {
    let input = Stream::of(io::stdin().as_fd())?;
    let output = Stream::of(io::stdout().as_fd())?;
    let error = Stream::of(io::stderr().as_fd())?;
    let separate =
        input.file != output.file && error.file != input.file && error.file != output.file;
    match (input.kind, output.kind) {
        (Some(read), Some(write)) if separate => {
            Ok((read.reader(input.fd)?, write.writer(output.fd)?))
        }
        _ => Ok((Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))),
    }
}

/// A standard stream: its own descriptor, what it is when the reactor can
/// wait on it, and which file it is.
struct Stream {
    fd: OwnedFd,
    kind: Option<Kind>,
    file: (u64, u64),
}

impl Stream {
    fn of(fd: BorrowedFd<'_>) -> io::Result<Self> {
        let file = File::from(fd.try_clone_to_owned()?);
        let metadata = file.metadata()?;
        let kind = if metadata.file_type().is_fifo() {
            Some(Kind::Pipe)
        } else if metadata.file_type().is_socket() {
            Some(Kind::Socket)
        } else {
            None
        };
        Ok(Self {
            fd: OwnedFd::from(file),
            kind,
            file: (metadata.dev(), metadata.ino()),
        })
    }
}

fn socket(fd: OwnedFd) -> io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}
