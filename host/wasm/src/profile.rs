//! The profile untrusted code runs under: the tool bundles a skill ships.
//! Whatever such a manifest asks, the bundle gets no environment, sees any
//! folder it is granted read-only, has no network and no secrets, and runs
//! within tighter limits; what it asks beyond that is taken
//! away at load and said. The operator's approval is still needed for
//! whatever remains.

use std::time::Duration;

use crate::limits::Limits;
use crate::manifest::Manifest;

/// The ceilings of untrusted code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UntrustedProfile {
    /// Limits no call of untrusted code goes past.
    pub limits: Limits,
}

impl Default for UntrustedProfile {
    fn default() -> Self {
        let defaults = Limits::default();
        Self {
            limits: Limits {
                memory_bytes: 64 << 20,
                timeout: Duration::from_secs(10),
                fuel: 1_000_000_000,
                output_bytes: 256 << 10,
                log_bytes: 16 << 10,
                staging: defaults.staging,
                network: defaults.network,
            },
        }
    }
}

impl UntrustedProfile {
    /// Narrow `manifest` to this profile; what it took away, one line each.
    pub(crate) fn narrow(&self, manifest: &mut Manifest) -> Vec<String> {
        let mut taken = manifest.grants.untrusted();
        for name in std::mem::take(&mut manifest.secrets).into_keys() {
            taken.push(format!("secret {name} (untrusted code has no network)"));
        }
        let (limits, cap, default) = (&mut manifest.limits, self.limits, Limits::default());
        // A limit the manifest set above the ceiling is said; one it left at
        // its default is lowered quietly.
        let mut lower = |what: &str, asked: u128, ceiling: u128, default: u128| {
            if asked > ceiling && asked != default {
                taken.push(format!(
                    "{what} {asked} (untrusted code gets at most {ceiling})"
                ));
            }
        };
        lower(
            "memory bytes",
            limits.memory_bytes as u128,
            cap.memory_bytes as u128,
            default.memory_bytes as u128,
        );
        lower(
            "timeout ms",
            limits.timeout.as_millis(),
            cap.timeout.as_millis(),
            default.timeout.as_millis(),
        );
        lower(
            "fuel",
            u128::from(limits.fuel),
            u128::from(cap.fuel),
            u128::from(default.fuel),
        );
        lower(
            "output bytes",
            limits.output_bytes as u128,
            cap.output_bytes as u128,
            default.output_bytes as u128,
        );
        lower(
            "log bytes",
            limits.log_bytes as u128,
            cap.log_bytes as u128,
            default.log_bytes as u128,
        );
        limits.memory_bytes = limits.memory_bytes.min(cap.memory_bytes);
        limits.timeout = limits.timeout.min(cap.timeout);
        limits.fuel = limits.fuel.min(cap.fuel);
        limits.output_bytes = limits.output_bytes.min(cap.output_bytes);
        limits.log_bytes = limits.log_bytes.min(cap.log_bytes);
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::DirMode;
    use std::path::Path;

    #[test]
    fn untrusted_code_loses_env_write_access_and_generous_limits() {
        let mut manifest = Manifest::parse(
            Path::new("plugin.toml"),
            "[plugin]\nname = \"csv\"\nversion = \"0.1.0\"\nkind = \"tool\"\ncomponent = \"c.wasm\"\n[grants]\nenv = [\"HOME\"]\n[[grants.dirs]]\nhost = \".\"\nguest = \"/workspace\"\nmode = \"rw\"\n[limits]\ntimeout-ms = 600000\nmemory-mib = 32\n",
        )
        .unwrap();
        let taken = UntrustedProfile::default().narrow(&mut manifest);
        assert!(manifest.grants.env.is_empty());
        assert_eq!(manifest.grants.dirs[0].mode, DirMode::Ro);
        assert_eq!(manifest.limits.timeout, Duration::from_secs(10));
        assert_eq!(
            manifest.limits.memory_bytes,
            32 << 20,
            "a lower limit stays"
        );
        assert_eq!(
            manifest.limits.fuel, 1_000_000_000,
            "a default above the ceiling is lowered"
        );
        assert_eq!(
            taken.len(),
            3,
            "only what the manifest set is said: {taken:?}"
        );
        assert!(taken[0].starts_with("env HOME"), "{taken:?}");
    }
}
