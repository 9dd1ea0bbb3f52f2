//! The bundled sandbox backend component, behind both the `dir` and the
//! `memory` bundles: the workspace is the folder the host preopens at
//! `/workspace`, if any. When the host stages changes, every write goes to its
//! staging layer over the (then read-only) folder, or over nothing when no
//! folder is granted; otherwise writes go straight to the folder. The bundles
//! differ only in their manifests: `dir` is granted the folder read-write and
//! stages when the run is transactional; `memory` is granted it read-only as a
//! seed and always stages, so its changes never reach a file system. All the
//! work is done by `cordon-sandbox-kit`; this crate converts between the WIT
//! types and the kit's.

mod convert;
mod host_staging;

use convert::{
    command_from_wit, entry_to_wit, error_to_wit, grep_query_from_wit, grep_result_to_wit,
    output_to_wit,
};
use cordon_sandbox_kit::{DirBase, Direct, EmptyBase, Error, FileSystem, Overlay, workspace};
use exports::cordon::plugin::workspace::{
    Command, CommandResult, Entry, GrepQuery, GrepResult, Guest, WorkspaceError,
};
use host_staging::HostStaging;

wit_bindgen::generate!({ path: "../../wit", world: "sandbox-backend" });

/// Where the host preopens the granted folder.
const ROOT: &str = "/workspace";

/// Runs `operation` over the workspace as this call's grants and staging
/// mode have it.
fn with_fs<T>(
    operation: impl FnOnce(&dyn FileSystem) -> cordon_sandbox_kit::Result<T>,
) -> Result<T, WorkspaceError> {
    let granted = std::path::Path::new(ROOT).is_dir();
    let result = match (cordon::plugin::staging::active(), granted) {
        (true, true) => operation(&Overlay::new(DirBase::new(ROOT), HostStaging)),
        (true, false) => operation(&Overlay::new(EmptyBase, HostStaging)),
        (false, true) => operation(&Direct::new(DirBase::new(ROOT))),
        (false, false) => Err(Error::Failed(
            "no workspace folder is granted and the host stages nothing".into(),
        )),
    };
    result.map_err(error_to_wit)
}

/// The exported `workspace` interface.
struct Backend;

impl Guest for Backend {
    fn read(path: String) -> Result<Vec<u8>, WorkspaceError> {
        with_fs(|fs| workspace::read(fs, &path))
    }

    fn write(path: String, contents: Vec<u8>) -> Result<(), WorkspaceError> {
        with_fs(|fs| workspace::write(fs, &path, &contents))
    }

    fn edit(path: String, old: String, new: String) -> Result<(), WorkspaceError> {
        with_fs(|fs| workspace::edit(fs, &path, &old, &new))
    }

    fn list_dir(path: String) -> Result<Vec<Entry>, WorkspaceError> {
        with_fs(|fs| workspace::list_dir(fs, &path))
            .map(|entries| entries.into_iter().map(entry_to_wit).collect())
    }

    fn glob(pattern: String) -> Result<Vec<Entry>, WorkspaceError> {
        with_fs(|fs| workspace::glob(fs, &pattern))
            .map(|entries| entries.into_iter().map(entry_to_wit).collect())
    }

    fn grep(query: GrepQuery) -> Result<GrepResult, WorkspaceError> {
        let query = grep_query_from_wit(query);
        with_fs(|fs| workspace::grep(fs, &query)).map(grep_result_to_wit)
    }

    fn stat(path: String) -> Result<Entry, WorkspaceError> {
        with_fs(|fs| workspace::stat(fs, &path)).map(entry_to_wit)
    }

    fn remove(path: String) -> Result<(), WorkspaceError> {
        with_fs(|fs| workspace::remove(fs, &path))
    }

    fn rename(source: String, destination: String) -> Result<(), WorkspaceError> {
        with_fs(|fs| workspace::rename(fs, &source, &destination))
    }

    fn mkdir(path: String) -> Result<(), WorkspaceError> {
        with_fs(|fs| workspace::mkdir(fs, &path))
    }

    fn exec(command: Command) -> Result<CommandResult, WorkspaceError> {
        let command = command_from_wit(command);
        with_fs(|fs| workspace::exec(fs, &command)).map(output_to_wit)
    }
}

export!(Backend);
