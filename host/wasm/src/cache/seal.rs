//! The seal of a compiled entry, kept beside its code: the keyed MAC of the
//! code, the fingerprint of the code's file once it settled, and what the
//! component's binary says of its footprint, all under one MAC over this
//! engine's hash and the component's digest. The code stays a file of its
//! own, exactly as wasmtime serialized it, so that it can be mapped.

use super::Discarded;
use super::fingerprint::{self, Fingerprint};
use super::key::CacheKey;

/// What a seal starts with.
const MAGIC: &[u8; 16] = b"cordon-cwasm-v2\n";
/// A MAC's length.
const MAC_LEN: usize = blake3::OUT_LEN;
/// The length of a seal.
const LEN: usize = MAGIC.len() + MAC_LEN + 1 + fingerprint::LEN + 4 + MAC_LEN;

/// What a seal vouches for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seal {
    /// The MAC of the code.
    pub(super) code: blake3::Hash,
    /// The code file as it was when its bytes last verified, once settled.
    pub(super) file: Option<Fingerprint>,
    /// The core instances one instance of the component creates.
    pub(super) core_instances: u32,
}

impl Seal {
    /// The MAC of `code` as the compiled form of the component `context`
    /// names (the engine's hash and the component's digest).
    pub(super) fn code_mac(key: &CacheKey, context: &[u8], code: &[u8]) -> blake3::Hash {
        key.mac(&[b"code", context, code])
    }

    /// The seal as its file holds it.
    pub(super) fn encode(&self, key: &CacheKey, context: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(self.code.as_bytes());
        match self.file {
            Some(file) => {
                bytes.push(1);
                bytes.extend_from_slice(&file.encode());
            }
            None => {
                bytes.push(0);
                bytes.extend_from_slice(&[0; fingerprint::LEN]);
            }
        }
        bytes.extend_from_slice(&self.core_instances.to_le_bytes());
        let mac = key.mac(&[b"seal", context, &bytes]);
        bytes.extend_from_slice(mac.as_bytes());
        bytes
    }

    /// The seal `bytes` hold, when they are one and verify for `context`.
    pub(super) fn decode(bytes: &[u8], key: &CacheKey, context: &[u8]) -> Result<Self, Discarded> {
        if bytes.len() != LEN || !bytes.starts_with(MAGIC) {
            return Err(Discarded::Malformed);
        }
        let (body, mac) = bytes.split_at(LEN - MAC_LEN);
        let claimed: [u8; MAC_LEN] = mac.try_into().map_err(|_| Discarded::Malformed)?;
        // `blake3::Hash` compares in constant time.
        if key.mac(&[b"seal", context, body]) != blake3::Hash::from_bytes(claimed) {
            return Err(Discarded::Unverified);
        }
        let rest = &body[MAGIC.len()..];
        let (code, rest) = rest.split_at(MAC_LEN);
        let (flag, rest) = rest.split_at(1);
        let (file, rest) = rest.split_at(fingerprint::LEN);
        let code: [u8; MAC_LEN] = code.try_into().map_err(|_| Discarded::Malformed)?;
        let file: [u8; fingerprint::LEN] = file.try_into().map_err(|_| Discarded::Malformed)?;
        let core_instances: [u8; 4] = rest.try_into().map_err(|_| Discarded::Malformed)?;
        Ok(Self {
            code: blake3::Hash::from_bytes(code),
            file: (flag == [1]).then(|| Fingerprint::decode(&file)),
            core_instances: u32::from_le_bytes(core_instances),
        })
    }
}
