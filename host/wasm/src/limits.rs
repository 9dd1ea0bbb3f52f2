//! Per-call resource limits: the manifest's `[limits]` table, its defaults and
//! ceilings, and the resource limiter that enforces memory inside a store.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Limits applied to every call into a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Largest linear memory, in bytes.
    pub memory_bytes: usize,
    /// Wall-clock time for one call, including time spent waiting on the host.
    pub timeout: Duration,
    /// WebAssembly fuel for one call (about one unit per instruction).
    pub fuel: u64,
    /// Largest tool output, in bytes of JSON.
    pub output_bytes: usize,
    /// Largest total of log messages, stdout and stderr, in bytes.
    pub log_bytes: usize,
    /// What a sandbox backend may stage in the host.
    pub staging: StagingLimits,
    /// What a call's outgoing requests may do.
    pub network: NetworkLimits,
}

/// How much a call may use the network it is granted: each bound holds
/// whatever the component asks (a guest's own 600 s timeout is cut to
/// these), and the call's own timeout holds over all of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NetworkLimits {
    /// Requests one call may make.
    pub requests: u32,
    /// Requests one call may have in flight at once.
    pub concurrent: u32,
    /// Largest request body, in bytes.
    pub request_bytes: u64,
    /// Largest response body, in bytes.
    pub response_bytes: u64,
    /// Time to connect (and finish a TLS handshake).
    pub connect_timeout: Duration,
    /// Time from sending a request to its response's first byte.
    pub first_byte_timeout: Duration,
    /// Time between two pieces of a response body.
    pub between_bytes_timeout: Duration,
}

impl Default for NetworkLimits {
    fn default() -> Self {
        Self {
            requests: 32,
            concurrent: 4,
            request_bytes: 1 << 20,
            response_bytes: 4 << 20,
            connect_timeout: Duration::from_secs(5),
            first_byte_timeout: Duration::from_secs(10),
            between_bytes_timeout: Duration::from_secs(10),
        }
    }
}

/// How much a sandbox backend's calls may stage in the host: the host holds
/// staged files in memory and commits them to the run store, so a backend's
/// own memory limit does not bound them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StagingLimits {
    /// Bytes one call may stage.
    pub call_bytes: u64,
    /// Paths one call may stage.
    pub call_entries: usize,
    /// Bytes all the calls of one step may stage.
    pub step_bytes: u64,
    /// Paths all the calls of one step may stage.
    pub step_entries: usize,
    /// Bytes a backend that never publishes (`staging = "always"`) may hold
    /// for a whole run.
    pub run_bytes: u64,
}

impl Default for StagingLimits {
    fn default() -> Self {
        Self {
            call_bytes: 64 << 20,
            call_entries: 10_000,
            step_bytes: 256 << 20,
            step_entries: 40_000,
            run_bytes: 1 << 30,
        }
    }
}

/// Defaults suited to a tool that does a modest amount of work per call.
impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 64 << 20,
            timeout: Duration::from_secs(10),
            fuel: 5_000_000_000,
            output_bytes: 1 << 20,
            log_bytes: 64 << 10,
            staging: StagingLimits::default(),
            network: NetworkLimits::default(),
        }
    }
}

/// The largest memory a manifest may ask for; the pooling allocator reserves this much.
pub const MAX_MEMORY_MIB: u64 = 1024;
const MAX_TIMEOUT_MS: u64 = 10 * 60 * 1000;
const MAX_OUTPUT_KIB: u64 = 64 << 10;
const MAX_LOG_KIB: u64 = 16 << 10;
const MAX_STAGED_MIB: u64 = 16 << 10;
const MAX_STAGED_ENTRIES: u64 = 1_000_000;
const MAX_REQUESTS: u64 = 100_000;
const MAX_CONCURRENT_REQUESTS: u64 = 256;
const MAX_BODY_KIB: u64 = 1 << 20;

/// `[limits]` as written in the manifest.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawLimits {
    memory_mib: Option<u64>,
    timeout_ms: Option<u64>,
    fuel: Option<u64>,
    output_kib: Option<u64>,
    log_kib: Option<u64>,
    staged_mib: Option<u64>,
    staged_entries: Option<u64>,
    step_staged_mib: Option<u64>,
    step_staged_entries: Option<u64>,
    run_staged_mib: Option<u64>,
    requests: Option<u64>,
    concurrent_requests: Option<u64>,
    request_kib: Option<u64>,
    response_kib: Option<u64>,
    connect_timeout_ms: Option<u64>,
    first_byte_timeout_ms: Option<u64>,
    between_bytes_timeout_ms: Option<u64>,
}

impl RawLimits {
    /// The limits, or the field, value and reason of the first bad one.
    pub(crate) fn validate(self) -> Result<Limits, (&'static str, u64, String)> {
        let defaults = Limits::default();
        let check = |field: &'static str, value: Option<u64>, min: u64, max: u64| match value {
            Some(v) if v < min || v > max => {
                Err((field, v, format!("must be between {min} and {max}")))
            }
            other => Ok(other),
        };
        let memory = check("memory-mib", self.memory_mib, 1, MAX_MEMORY_MIB)?;
        let timeout = check("timeout-ms", self.timeout_ms, 1, MAX_TIMEOUT_MS)?;
        let fuel = check("fuel", self.fuel, 1, u64::MAX)?;
        let output = check("output-kib", self.output_kib, 1, MAX_OUTPUT_KIB)?;
        let log = check("log-kib", self.log_kib, 0, MAX_LOG_KIB)?;
        let staged = defaults.staging;
        let mib_bytes = |value: Option<u64>, default: u64| value.map_or(default, |v| v << 20);
        let count = |value: Option<u64>, default: usize| value.map_or(default, |v| v as usize);
        let staging = StagingLimits {
            call_bytes: mib_bytes(
                check("staged-mib", self.staged_mib, 1, MAX_STAGED_MIB)?,
                staged.call_bytes,
            ),
            call_entries: count(
                check("staged-entries", self.staged_entries, 1, MAX_STAGED_ENTRIES)?,
                staged.call_entries,
            ),
            step_bytes: mib_bytes(
                check("step-staged-mib", self.step_staged_mib, 1, MAX_STAGED_MIB)?,
                staged.step_bytes,
            ),
            step_entries: count(
                check(
                    "step-staged-entries",
                    self.step_staged_entries,
                    1,
                    MAX_STAGED_ENTRIES,
                )?,
                staged.step_entries,
            ),
            run_bytes: mib_bytes(
                check("run-staged-mib", self.run_staged_mib, 1, MAX_STAGED_MIB)?,
                staged.run_bytes,
            ),
        };
        let net = defaults.network;
        let millis =
            |value: Option<u64>, default: Duration| value.map_or(default, Duration::from_millis);
        let kib_bytes = |value: Option<u64>, default: u64| value.map_or(default, |v| v << 10);
        let network = NetworkLimits {
            requests: check("requests", self.requests, 0, MAX_REQUESTS)?
                .map_or(net.requests, |v| v as u32),
            concurrent: check(
                "concurrent-requests",
                self.concurrent_requests,
                1,
                MAX_CONCURRENT_REQUESTS,
            )?
            .map_or(net.concurrent, |v| v as u32),
            request_bytes: kib_bytes(
                check("request-kib", self.request_kib, 0, MAX_BODY_KIB)?,
                net.request_bytes,
            ),
            response_bytes: kib_bytes(
                check("response-kib", self.response_kib, 0, MAX_BODY_KIB)?,
                net.response_bytes,
            ),
            connect_timeout: millis(
                check(
                    "connect-timeout-ms",
                    self.connect_timeout_ms,
                    1,
                    MAX_TIMEOUT_MS,
                )?,
                net.connect_timeout,
            ),
            first_byte_timeout: millis(
                check(
                    "first-byte-timeout-ms",
                    self.first_byte_timeout_ms,
                    1,
                    MAX_TIMEOUT_MS,
                )?,
                net.first_byte_timeout,
            ),
            between_bytes_timeout: millis(
                check(
                    "between-bytes-timeout-ms",
                    self.between_bytes_timeout_ms,
                    1,
                    MAX_TIMEOUT_MS,
                )?,
                net.between_bytes_timeout,
            ),
        };
        let kib = |v: u64| (v as usize) << 10;
        Ok(Limits {
            memory_bytes: memory.map_or(defaults.memory_bytes, |v| (v as usize) << 20),
            timeout: timeout.map_or(defaults.timeout, Duration::from_millis),
            fuel: fuel.unwrap_or(defaults.fuel),
            output_bytes: output.map_or(defaults.output_bytes, kib),
            log_bytes: log.map_or(defaults.log_bytes, kib),
            staging,
            network,
        })
    }
}

/// The error that stops a component growing its memory past the bundle's limit.
#[derive(Debug, thiserror::Error)]
#[error("memory limit of {} MiB exceeded", .0 >> 20)]
pub(crate) struct MemoryLimitExceeded(pub(crate) usize);

/// Enforces the memory limit of one call and remembers whether it refused growth,
/// so that the resulting trap can be reported as a memory limit rather than a crash.
#[derive(Debug)]
pub(crate) struct CallLimiter {
    memory_bytes: usize,
    pub(crate) memory_refused: bool,
}

impl CallLimiter {
    pub(crate) fn new(memory_bytes: usize) -> Self {
        Self {
            memory_bytes,
            memory_refused: false,
        }
    }
}

impl wasmtime::ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            // Past the bundle's limit the component stops, in every language:
            // a runtime that would catch a failed allocation (Python's
            // `MemoryError`) does not get to go on as if nothing happened.
            self.memory_refused = true;
            return Err(MemoryLimitExceeded(self.memory_bytes).into());
        }
        Ok(maximum.is_none_or(|max| desired <= max))
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000 && maximum.is_none_or(|max| desired <= max))
    }
}
