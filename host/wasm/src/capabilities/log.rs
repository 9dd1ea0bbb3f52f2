//! The log capability, which every bundle has: the `log` import (lines and
//! progress) and the component's stdout and stderr, all bounded by the
//! bundle's `log-kib` and all kept in the call's audit trail. Output past the
//! budget stops the component as a `limit`. An interpreter's stdout and
//! stderr are a command's output instead: bounded by its `output-kib`, given
//! back to the command, never logged.

use std::sync::atomic::{AtomicBool, Ordering};

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use cordon_kernel::LogLevel;
use wasmtime::component::{HasData, Linker};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

use crate::audit::Audit;
use crate::bindings::cordon::plugin::log;
use crate::capabilities::unit::Imports;

/// The error a host import raises to stop a component that logs past its
/// budget, or an interpreter that prints past its output limit.
#[derive(Debug, thiserror::Error)]
#[error("{} exceeded the bundle's limit of {limit} bytes", if *.command { "output" } else { "log output" })]
pub(crate) struct LogLimitExceeded {
    pub(crate) limit: usize,
    /// Whether it was a command's output rather than a log.
    pub(crate) command: bool,
}

/// One call's output: its stdout and stderr, and what it may still log.
pub(crate) struct LogOutput {
    stdout: Captured,
    stderr: Captured,
    /// The bundle's limit, in bytes.
    limit: usize,
    /// Bytes of log messages still allowed.
    budget: usize,
    /// Whether stdout and stderr are a command's output, given back.
    command: bool,
}

/// What a command printed.
pub(crate) struct CommandOutput {
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
    pub(crate) stdout_truncated: bool,
    pub(crate) stderr_truncated: bool,
}

impl LogOutput {
    /// Output bounded by `limit` bytes, with stdout and stderr attached to `wasi`.
    pub(crate) fn attach(wasi: &mut WasiCtxBuilder, limit: usize) -> Self {
        let output = Self {
            stdout: Captured::new(limit, false),
            stderr: Captured::new(limit, false),
            limit,
            budget: limit,
            command: false,
        };
        wasi.stdout(output.stdout.clone())
            .stderr(output.stderr.clone());
        output
    }

    /// A command's output, stdout and stderr each bounded by `limit` bytes,
    /// attached to `wasi`, with `stdin` as its standard input.
    pub(crate) fn attach_command(wasi: &mut WasiCtxBuilder, stdin: Vec<u8>, limit: usize) -> Self {
        let output = Self {
            stdout: Captured::new(limit, true),
            stderr: Captured::new(limit, true),
            limit,
            budget: 0,
            command: true,
        };
        wasi.stdin(wasmtime_wasi::p2::pipe::MemoryInputPipe::new(stdin))
            .stdout(output.stdout.clone())
            .stderr(output.stderr.clone());
        output
    }

    /// What a command printed, and whether each stream was cut.
    pub(crate) fn command_output(&self) -> CommandOutput {
        CommandOutput {
            stdout: self.stdout.contents().to_vec(),
            stderr: self.stderr.contents().to_vec(),
            stdout_truncated: self.stdout.shared.truncated.load(Ordering::Relaxed),
            stderr_truncated: self.stderr.shared.truncated.load(Ordering::Relaxed),
        }
    }

    /// Charge `bytes` of log output, or stop the component once its budget is spent.
    fn charge(&mut self, bytes: usize) -> wasmtime::Result<()> {
        match self.budget.checked_sub(bytes) {
            Some(rest) => {
                self.budget = rest;
                Ok(())
            }
            None => Err(LogLimitExceeded {
                limit: self.limit,
                command: self.command,
            }
            .into()),
        }
    }

    /// What the component said last on stderr before it stopped: the message of
    /// a Rust panic when there was one, otherwise the last non-empty line.
    pub(crate) fn last_words(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        if let Some(start) = text.rfind("panicked at ") {
            let mut lines = text[start..].lines();
            let location = lines.next().unwrap_or_default().trim_end_matches(':');
            let message: Vec<&str> = lines
                .take_while(|line| !line.starts_with("note: "))
                .collect();
            return Some(format!("{location}: {}", message.join(" ")));
        }
        text.lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .map(str::to_owned)
    }

    /// Turn what the component wrote to stdout and stderr into log events;
    /// a command's output is given back instead.
    pub(crate) fn flush(&self, audit: &Audit) {
        if self.command {
            return;
        }
        for (pipe, level) in [
            (&self.stdout, LogLevel::Info),
            (&self.stderr, LogLevel::Warn),
        ] {
            let bytes = pipe.contents();
            let text = String::from_utf8_lossy(&bytes);
            for line in text.lines().filter(|line| !line.trim().is_empty()) {
                audit.log(level, line.to_owned());
            }
        }
    }
}

/// A stdout or stderr kept in memory, up to the bundle's limit. A write past
/// the limit keeps what fits and stops the component as a `limit`, whatever
/// the language: a runtime that would catch a failed write (Python's
/// `BrokenPipeError`) never gets the chance to go on printing.
#[derive(Clone)]
struct Captured {
    limit: usize,
    /// What was written, shared with the stream WASI writes to.
    shared: Arc<Written>,
    /// Whether this is a command's output rather than a log.
    command: bool,
}

/// A stream's bytes, and whether a write did not fit.
#[derive(Default)]
struct Written {
    buffer: Mutex<BytesMut>,
    truncated: AtomicBool,
}

impl Captured {
    fn new(limit: usize, command: bool) -> Self {
        Self {
            limit,
            shared: Arc::default(),
            command,
        }
    }

    fn overflow(&self) -> LogLimitExceeded {
        self.shared.truncated.store(true, Ordering::Relaxed);
        LogLimitExceeded {
            limit: self.limit,
            command: self.command,
        }
    }

    fn contents(&self) -> Bytes {
        self.shared
            .buffer
            .lock()
            .map(|buffer| buffer.clone().freeze())
            .unwrap_or_default()
    }

    /// Keep as much of `bytes` as fits; `false` when some did not.
    fn keep(&self, bytes: &[u8]) -> bool {
        let Ok(mut buffer) = self.shared.buffer.lock() else {
            return false;
        };
        let room = self.limit.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
        bytes.len() <= room
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for Captured {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        if self.keep(&bytes) {
            Ok(())
        } else {
            Err(StreamError::Trap(self.overflow().into()))
        }
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        // Always invite the write: the one that overflows is the one that stops.
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Captured {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for Captured {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(if self.keep(bytes) {
            Ok(bytes.len())
        } else {
            Err(std::io::Error::other(self.overflow()))
        })
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

impl IsTerminal for Captured {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Captured {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// The `log` import as one call sees it.
pub(crate) struct LogView<'a> {
    pub(crate) output: &'a mut LogOutput,
    pub(crate) audit: &'a Audit,
}

/// The log capability, which every bundle has.
pub(crate) struct Log;

impl HasData for Log {
    type Data<'a> = LogView<'a>;
}

impl Imports for Log {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        log::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
}

impl log::Host for LogView<'_> {
    async fn log(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        self.output.charge(message.len())?;
        let level = match level {
            log::Level::Trace => LogLevel::Trace,
            log::Level::Debug => LogLevel::Debug,
            log::Level::Info => LogLevel::Info,
            log::Level::Warn => LogLevel::Warn,
            log::Level::Error => LogLevel::Error,
        };
        self.audit.log(level, message);
        Ok(())
    }

    async fn progress(
        &mut self,
        done: u64,
        total: Option<u64>,
        message: String,
    ) -> wasmtime::Result<()> {
        self.output.charge(message.len() + 16)?;
        self.audit.progress(done, total, message);
        Ok(())
    }
}
