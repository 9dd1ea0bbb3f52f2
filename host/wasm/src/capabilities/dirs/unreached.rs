//! What a component's "no such file" means when the file lies outside its
//! directory grants: WASI finds no preopened directory for such a path and
//! fails it without asking the host, so the component only reports an errno
//! (`No such file or directory (os error 44)` from Rust, `[Errno 44]` from
//! Python). A tool error that reads so is told which directories the bundle
//! does reach and how to grant another.

use super::DirGrant;

/// How languages print WASI's "not found" (`ENOENT`, 44) and "not capable"
/// (`ENOTCAPABLE`, 76), which is what a path outside every grant gets.
const NOT_REACHED: &[&str] = &[
    "os error 44",
    "Errno 44",
    "os error 76",
    "Errno 76",
    "No such file or directory",
];

/// The hint to add to a tool error `message` of a bundle whose directory
/// grants are `dirs`, when the message reads like a path no grant reaches.
pub(crate) fn hint(message: &str, dirs: &[DirGrant]) -> Option<String> {
    if !NOT_REACHED.iter().any(|pattern| message.contains(pattern)) {
        return None;
    }
    let reached = if dirs.is_empty() {
        "it has no directory grant".to_owned()
    } else {
        let listed: Vec<String> = dirs
            .iter()
            .map(|dir| format!("{} ({})", dir.guest, dir.mode))
            .collect();
        format!("it reaches only {}", listed.join(", "))
    };
    Some(format!(
        " (if that is a path outside the bundle's directory grants: {reached}; grant another \
         with a [[grants.dirs]] entry in its plugin.toml, such as host = \"data\", \
         guest = \"/data\", mode = \"ro\")"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::dirs::DirMode;

    fn workspace() -> Vec<DirGrant> {
        vec![DirGrant {
            host: ".".into(),
            guest: "/workspace".into(),
            mode: DirMode::Ro,
        }]
    }

    #[test]
    fn a_not_found_errno_names_the_grants_and_how_to_add_one() {
        let said = hint(
            "reading /data/x: No such file or directory (os error 44)",
            &workspace(),
        )
        .unwrap();
        assert!(said.contains("it reaches only /workspace (ro)"), "{said}");
        assert!(said.contains("[[grants.dirs]]"), "{said}");
        let python = hint("[Errno 44] No such file: '/etc/x'", &[]).unwrap();
        assert!(python.contains("it has no directory grant"), "{python}");
    }

    #[test]
    fn other_failures_get_no_hint() {
        assert_eq!(hint("the filter does not parse", &workspace()), None);
        assert_eq!(hint("os error 4", &workspace()), None);
    }
}
