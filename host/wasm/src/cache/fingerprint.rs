//! A file's identity as the file system keeps it: device, inode, size, and
//! the times of its last change of content and of status. A file written
//! in place changes its status time, which no unprivileged process can set
//! back; a file replaced by a rename is another inode. So a fingerprint
//! recorded when a file's bytes were verified vouches for those bytes at a
//! later start without reading them again.
//!
//! Timestamps are kept at the kernel's clock tick, not the nanosecond: a
//! write in the same tick as the one before it could leave both times as
//! they were. So a fingerprint is recorded only for a file that is
//! [`Fingerprint::settled`], unchanged for longer than any tick, and
//! unchanged between the look before its bytes were read and the look
//! after; a file too fresh is read and verified again at the next start.
//!
//! Only a regular file on a local file system whose times the kernel keeps
//! has a fingerprint at all: a network or FUSE file system reports what its
//! server says, and a FAT one keeps coarse times and no status time. A file
//! whose fingerprint is to vouch for code the host maps must also be the
//! user's alone ([`Fingerprint::of_own`]): owned by this user, writable by
//! nobody else, and linked once, so that nobody else can rewrite it without
//! its times showing it.

use std::fs::{File, Metadata};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a file must have gone unchanged before its fingerprint vouches
/// for it: well above any kernel's timestamp granularity.
const SETTLE: Duration = Duration::from_secs(2);

/// The length of a fingerprint's encoding.
pub(crate) const LEN: usize = 40;

/// One file's identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    device: u64,
    inode: u64,
    size: u64,
    /// The last change of content, in nanoseconds since the epoch.
    modified: u64,
    /// The last change of status (content, mode, owner, links), likewise.
    changed: u64,
}

impl Fingerprint {
    /// The fingerprint of the open `file`, or none where it cannot vouch for
    /// the file: not a regular file, or not on a local file system whose
    /// times the kernel keeps.
    pub(crate) fn of(file: &File) -> Option<Self> {
        let metadata = file.metadata().ok()?;
        (metadata.is_file() && keeps_times(file))
            .then(|| Self::of_metadata(&metadata))
            .flatten()
    }

    /// [`Fingerprint::of`] a file that is also the user's alone: owned by
    /// the effective user, writable by nobody else, and linked once.
    pub(crate) fn of_own(file: &File) -> Option<Self> {
        let metadata = file.metadata().ok()?;
        owned_alone(&metadata).then(|| Self::of(file)).flatten()
    }

    #[cfg(unix)]
    fn of_metadata(metadata: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let nanos = |seconds: i64, nanos: i64| {
            u64::try_from(seconds)
                .ok()?
                .checked_mul(1_000_000_000)?
                .checked_add(u64::try_from(nanos).ok()?)
        };
        Some(Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: nanos(metadata.mtime(), metadata.mtime_nsec())?,
            changed: nanos(metadata.ctime(), metadata.ctime_nsec())?,
        })
    }

    #[cfg(not(unix))]
    fn of_metadata(_: &Metadata) -> Option<Self> {
        None
    }

    /// Whether the file has gone unchanged long enough, as of `now`, that a
    /// later write could not leave this fingerprint as it is.
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let latest = Duration::from_nanos(self.modified.max(self.changed));
        latest + SETTLE < now
    }

    /// The fingerprint as bytes, for a sealed record.
    pub(crate) fn encode(&self) -> [u8; LEN] {
        let mut bytes = [0u8; LEN];
        for (chunk, value) in bytes.chunks_exact_mut(8).zip([
            self.device,
            self.inode,
            self.size,
            self.modified,
            self.changed,
        ]) {
            chunk.copy_from_slice(&value.to_le_bytes());
        }
        bytes
    }

    /// The fingerprint `bytes` encode.
    pub(crate) fn decode(bytes: &[u8; LEN]) -> Self {
        let mut values = bytes
            .chunks_exact(8)
            .map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        let mut next = || values.next().unwrap_or_default();
        Self {
            device: next(),
            inode: next(),
            size: next(),
            modified: next(),
            changed: next(),
        }
    }

    /// The file's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }
}

/// Whether the file is owned by the effective user, writable by no group or
/// other user, and linked once.
#[cfg(unix)]
fn owned_alone(metadata: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    metadata.uid() == rustix::process::geteuid().as_raw()
        && metadata.mode() & 0o022 == 0
        && metadata.nlink() == 1
}

#[cfg(not(unix))]
fn owned_alone(_: &Metadata) -> bool {
    false
}

/// Whether `file` lies on a local file system whose inode numbers and
/// change times the kernel keeps itself.
#[cfg(target_os = "linux")]
fn keeps_times(file: &File) -> bool {
    /// ext2/3/4, XFS, Btrfs, F2FS, tmpfs, overlayfs and ZFS.
    const LOCAL: [i64; 7] = [
        0xEF53,
        0x5846_5342,
        0x9123_683E,
        0xF2F5_2010,
        0x0102_1994,
        0x794C_7630,
        0x2FC1_2FC1,
    ];
    rustix::fs::fstatfs(file).is_ok_and(|stat| {
        // The field's width differs between targets.
        #[allow(clippy::unnecessary_cast)]
        let kind = stat.f_type as i64;
        LOCAL.contains(&kind)
    })
}

#[cfg(not(target_os = "linux"))]
fn keeps_times(_: &File) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_or_a_replacement_changes_the_fingerprint_and_a_fresh_file_is_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"one").unwrap();
        let first = Fingerprint::of(&File::open(&path).unwrap()).unwrap();
        assert_eq!(
            Fingerprint::of_own(&File::open(&path).unwrap()),
            Some(first),
            "a file just made by this user is its own"
        );
        assert_eq!(Fingerprint::decode(&first.encode()), first);
        assert!(!first.settled(SystemTime::now()), "just written");
        assert!(first.settled(SystemTime::now() + SETTLE * 2));

        std::thread::sleep(Duration::from_millis(50));
        std::fs::write(&path, b"two").unwrap();
        let rewritten = Fingerprint::of(&File::open(&path).unwrap()).unwrap();
        assert_ne!(rewritten, first, "same size, written in place");

        let other = dir.path().join("g");
        std::fs::write(&other, b"two").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let replaced = Fingerprint::of(&File::open(&path).unwrap()).unwrap();
        assert_ne!(replaced, rewritten, "renamed over it");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_may_write_or_that_is_linked_twice_is_not_the_users_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"code").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o620)).unwrap();
        let shared = File::open(&path).unwrap();
        assert!(Fingerprint::of(&shared).is_some());
        assert_eq!(Fingerprint::of_own(&shared), None, "group-writable");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::hard_link(&path, dir.path().join("g")).unwrap();
        assert_eq!(
            Fingerprint::of_own(&File::open(&path).unwrap()),
            None,
            "linked twice"
        );
        assert_eq!(
            Fingerprint::of(&File::open(dir.path()).unwrap()),
            None,
            "a folder"
        );
    }
}
