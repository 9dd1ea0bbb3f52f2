//! Telling text files from binary ones.

/// A NUL byte in this many leading bytes marks a file as binary.
const BINARY_PROBE_BYTES: usize = 8192;

/// Whether `bytes` look like the contents of a binary file.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(BINARY_PROBE_BYTES).any(|&b| b == 0)
}
