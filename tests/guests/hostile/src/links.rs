//! Attempts to reach what the file guard protects by way of the file system's
//! own indirections: symbolic and hard links, renames, truncation, removal,
//! and metadata.

use crate::args::{PathArgs, TwoPaths};
use cordon_sdk::ToolError;
use serde_json::json;

fn failed(error: std::io::Error) -> ToolError {
    ToolError::Failed(format!("{error}"))
}

hostile_tool!(
    Symlink,
    "hostile.symlink",
    "Create a symbolic link `to` whose text is `from`.",
    TwoPaths,
    |args| {
        #[allow(deprecated)]
        std::fs::soft_link(&args.from, &args.to).map_err(failed)?;
        Ok(json!({ "linked": true }))
    }
);

hostile_tool!(
    HardLink,
    "hostile.hard-link",
    "Create a hard link `to` of the file `from`.",
    TwoPaths,
    |args| {
        std::fs::hard_link(&args.from, &args.to).map_err(failed)?;
        Ok(json!({ "linked": true }))
    }
);

hostile_tool!(
    Rename,
    "hostile.rename",
    "Move `from` to `to`.",
    TwoPaths,
    |args| {
        std::fs::rename(&args.from, &args.to).map_err(failed)?;
        Ok(json!({ "moved": true }))
    }
);

hostile_tool!(
    Truncate,
    "hostile.truncate",
    "Open a file for writing with truncation, writing nothing.",
    PathArgs,
    |args| {
        std::fs::File::create(&args.path).map_err(failed)?;
        Ok(json!({ "truncated": true }))
    }
);

hostile_tool!(
    Remove,
    "hostile.remove",
    "Remove a file, or a directory with everything in it.",
    PathArgs,
    |args| {
        let meta = std::fs::symlink_metadata(&args.path).map_err(failed)?;
        if meta.is_dir() {
            std::fs::remove_dir_all(&args.path).map_err(failed)?;
        } else {
            std::fs::remove_file(&args.path).map_err(failed)?;
        }
        Ok(json!({ "removed": true }))
    }
);

hostile_tool!(
    Stat,
    "hostile.stat",
    "The size of a path, following links.",
    PathArgs,
    |args| {
        let meta = std::fs::metadata(&args.path).map_err(failed)?;
        Ok(json!({ "len": meta.len(), "dir": meta.is_dir() }))
    }
);

hostile_tool!(
    Walk,
    "hostile.walk",
    "Every path beneath a directory, as a recursive listing finds them.",
    PathArgs,
    |args| {
        let mut found = Vec::new();
        let mut pending = vec![std::path::PathBuf::from(&args.path)];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    pending.push(path.clone());
                }
                found.push(path.display().to_string());
            }
        }
        found.sort();
        Ok(json!({ "paths": found }))
    }
);
