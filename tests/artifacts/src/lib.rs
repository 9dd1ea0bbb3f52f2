//! Absolute paths to the guest components the host's tests load, built from
//! source for `wasm32-wasip2` by this crate's build script: the bundled plugins
//! (`JQ`, `FILES`, `NOTES`, `REDACTOR`, `GUARD`, `BUDGET`) and the fixtures
//! (`HOSTILE`, `HOSTILE_HOOKS`, `NOT_A_TOOL`, `BAD_DESCRIBE`), plus
//! `PLUGINS_DIR`, the repository's `plugins/` folder holding each plugin's
//! `plugin.toml`.

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));
