//! Filesystem refusals, audited.
//!
//! WASI's filesystem is served by wasmtime-wasi over cap-std, which already
//! refuses any path that leaves a granted directory (`..`, absolute paths,
//! symlinks pointing out) and any write through a read-only grant. Those
//! refusals reach the component as an error code, but the host would never hear
//! of them. This module wraps every path-taking operation of
//! `wasi:filesystem/types` so that a refusal (`not-permitted` or `access`) also
//! becomes a [`Denial`](cordon_kernel::Denial) naming the bundle, the operation
//! and the path. The operation itself is still wasmtime-wasi's own.
//!
//! Paths a component resolves against no granted directory at all never reach
//! the host: the guest's libc fails them itself, so there is nothing to audit.

use cordon_kernel::Capability;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemView};
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self as fs, DescriptorFlags, ErrorCode, HostDescriptor, OpenFlags, PathFlags,
};

use crate::sandbox::CallState;

/// The WASI filesystem interface as wasmtime-wasi 48 registers it.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

impl CallState {
    /// `result` as the component sees it, recording a denial if it was refused.
    fn audit_fs<T>(
        &mut self,
        operation: &str,
        target: &str,
        result: FsResult<T>,
    ) -> wasmtime::Result<Result<T, ErrorCode>> {
        let error = match result {
            Ok(value) => return Ok(Ok(value)),
            Err(error) => error,
        };
        let code = fs::Host::convert_error_code(&mut self.filesystem(), error)?;
        if matches!(code, ErrorCode::NotPermitted | ErrorCode::Access) {
            let reason = format!("{operation} refused outside the bundle's directory grants");
            self.deny(Capability::Filesystem, target, &reason);
        }
        Ok(Err(code))
    }
}

/// Replace the path-taking filesystem functions in `linker` with audited ones.
macro_rules! audited {
    ($types:ident, $name:literal, $operation:literal,
     |$view:ident, $($arg:ident: $ty:ty),*| $call:expr, target = $target:expr) => {
        $types.func_wrap_async(
            $name,
            |mut store: wasmtime::StoreContextMut<'_, CallState>, ($($arg,)*): ($($ty,)*)| {
                Box::new(async move {
                    let target: String = $target;
                    let state = store.data_mut();
                    let result = {
                        let mut $view = state.filesystem();
                        $call.await
                    };
                    Ok((state.audit_fs($operation, &target, result)?,))
                })
            },
        )?;
    };
}

pub(crate) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(FILESYSTEM_TYPES)?;
    audited!(
        types,
        "[method]descriptor.open-at",
        "open",
        |view,
         fd: Resource<Descriptor>,
         path_flags: PathFlags,
         path: String,
         open: OpenFlags,
         flags: DescriptorFlags| view.open_at(fd, path_flags, path, open, flags),
        target = path.clone()
    );
    audited!(
        types,
        "[method]descriptor.stat-at",
        "stat",
        |view, fd: Resource<Descriptor>, path_flags: PathFlags, path: String| view
            .stat_at(fd, path_flags, path),
        target = path.clone()
    );
    audited!(
        types,
        "[method]descriptor.readlink-at",
        "readlink",
        |view, fd: Resource<Descriptor>, path: String| view.readlink_at(fd, path),
        target = path.clone()
    );
    audited!(
        types,
        "[method]descriptor.create-directory-at",
        "create directory",
        |view, fd: Resource<Descriptor>, path: String| view.create_directory_at(fd, path),
        target = path.clone()
    );
    audited!(
        types,
        "[method]descriptor.remove-directory-at",
        "remove directory",
        |view, fd: Resource<Descriptor>, path: String| view.remove_directory_at(fd, path),
        target = path.clone()
    );
    audited!(
        types,
        "[method]descriptor.unlink-file-at",
        "remove file",
        |view, fd: Resource<Descriptor>, path: String| view.unlink_file_at(fd, path),
        target = path.clone()
    );
    audited!(
        types,
        "[method]descriptor.symlink-at",
        "create symlink",
        |view, fd: Resource<Descriptor>, source: String, path: String| view
            .symlink_at(fd, source, path),
        target = path.clone()
    );
    audited!(
        types,
        "[method]descriptor.rename-at",
        "rename",
        |view, fd: Resource<Descriptor>, from: String, to_fd: Resource<Descriptor>, to: String| {
            view.rename_at(fd, from, to_fd, to)
        },
        target = format!("{from} -> {to}")
    );
    audited!(
        types,
        "[method]descriptor.link-at",
        "link",
        |view,
         fd: Resource<Descriptor>,
         flags: PathFlags,
         from: String,
         to_fd: Resource<Descriptor>,
         to: String| view.link_at(fd, flags, from, to_fd, to),
        target = format!("{from} -> {to}")
    );
    linker.allow_shadowing(false);
    Ok(())
}
