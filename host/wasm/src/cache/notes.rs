//! Facts about a component kept beside its compiled code, sealed like it:
//! what a start would otherwise instantiate the component to learn, such as
//! the tools it describes. A note is bound to the engine, the component's
//! digest, its topic and what it is about (the manifest it was learned
//! under), so a note never answers for another component or manifest; one
//! that does not verify is ignored and learned again.

use sha2::{Digest, Sha256};

use super::{ComponentCache, store};

/// What a note starts with.
const MAGIC: &[u8; 16] = b"cordon-note-v1\n\0";

impl ComponentCache {
    /// The note on `topic` about `about` for the component `digest`, when
    /// one is kept and verifies.
    pub(crate) fn recall(&self, digest: &str, topic: &str, about: &[u8]) -> Option<Vec<u8>> {
        let (config, _) = self.entry(digest)?;
        let file = config
            .dir
            .join("notes")
            .join(self.note_name(digest, topic, about));
        let kept = std::fs::read(file).ok()?;
        let rest = kept.strip_prefix(MAGIC)?;
        if rest.len() < blake3::OUT_LEN {
            return None;
        }
        let (mac, fact) = rest.split_at(blake3::OUT_LEN);
        let claimed: [u8; blake3::OUT_LEN] = mac.try_into().ok()?;
        // `blake3::Hash` compares in constant time.
        (self.note_mac(digest, topic, about, fact)? == blake3::Hash::from_bytes(claimed))
            .then(|| fact.to_vec())
    }

    /// Keep `fact` as the note on `topic` about `about` for the component
    /// `digest`; a failure only means it is learned again next time.
    pub(crate) fn note(&self, digest: &str, topic: &str, about: &[u8], fact: &[u8]) {
        let (Some((config, _)), Some(mac)) = (
            self.entry(digest),
            self.note_mac(digest, topic, about, fact),
        ) else {
            return;
        };
        let file = config
            .dir
            .join("notes")
            .join(self.note_name(digest, topic, about));
        let kept = [MAGIC.as_slice(), mac.as_bytes(), fact].concat();
        if let Err(error) = store(&file, &kept) {
            tracing::debug!(path = %file.display(), %error, "cannot keep a note on a component");
        }
    }

    fn note_name(&self, digest: &str, topic: &str, about: &[u8]) -> String {
        let mut name = Sha256::new();
        for part in [&self.context(digest), topic.as_bytes(), about] {
            name.update((part.len() as u64).to_le_bytes());
            name.update(part);
        }
        hex::encode(name.finalize())
    }

    fn note_mac(
        &self,
        digest: &str,
        topic: &str,
        about: &[u8],
        fact: &[u8],
    ) -> Option<blake3::Hash> {
        let (config, _) = self.entry(digest)?;
        Some(config.key.mac(&[
            b"note",
            &self.context(digest),
            topic.as_bytes(),
            about,
            fact,
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CacheConfig, CacheKey};
    use super::*;

    #[test]
    fn a_note_answers_only_for_its_component_topic_and_subject_and_a_forged_one_is_ignored() {
        let engine = wasmtime::Engine::default();
        let dir = tempfile::tempdir().unwrap();
        let config = CacheConfig {
            dir: dir.path().to_owned(),
            key: CacheKey::ephemeral(),
        };
        let cache = ComponentCache::new(&engine, Some(config.clone()));
        cache.note("d1", "tools", b"manifest", b"[1]");
        assert_eq!(
            cache.recall("d1", "tools", b"manifest").as_deref(),
            Some(&b"[1]"[..])
        );
        assert_eq!(cache.recall("d2", "tools", b"manifest"), None);
        assert_eq!(cache.recall("d1", "other", b"manifest"), None);
        assert_eq!(cache.recall("d1", "tools", b"changed"), None);

        let file = dir
            .path()
            .join("notes")
            .join(cache.note_name("d1", "tools", b"manifest"));
        let mut forged = std::fs::read(&file).unwrap();
        *forged.last_mut().unwrap() = b'2';
        std::fs::write(&file, &forged).unwrap();
        assert_eq!(cache.recall("d1", "tools", b"manifest"), None);

        let stranger = ComponentCache::new(
            &engine,
            Some(CacheConfig {
                key: CacheKey::ephemeral(),
                ..config
            }),
        );
        cache.note("d1", "tools", b"manifest", b"[1]");
        assert_eq!(
            stranger.recall("d1", "tools", b"manifest"),
            None,
            "another key"
        );
    }
}
