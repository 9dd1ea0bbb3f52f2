//! The WASI filesystem as every component reaches it: wasmtime-wasi's own
//! implementation, with the [`FileGuard`] in front of every path and every
//! refusal audited.
//!
//! wasmtime-wasi over cap-std keeps a component inside its granted
//! directories (no `..`, absolute path or symbolic link leads out) and
//! refuses writes through a read-only grant. Inside a grant, the guard adds
//! the run store's folder, which nothing reaches, and the run's file rules.
//! Each path-taking function of `wasi:filesystem/types` is replaced here:
//!
//! - **Opening** is judged on the path as written and, once the kernel has
//!   opened it, on the handle's real path; a handle that lands somewhere
//!   refused is closed before the component sees it. Truncation waits until
//!   the handle is judged, so a refused open changes nothing, and no file
//!   is created through a link that leads nowhere yet.
//! - **Stat and metadata hashes** of a name in a directory are judged by the
//!   path at the cost of one `lstat`; any other path is opened as a path-only
//!   handle, judged, and that very handle is stat'ed.
//! - **Changes** (create, remove, rename, link, symlink, set times) open the
//!   target's parent, judge it, and act on the one name inside that fixed
//!   parent, so a link swapped in between cannot redirect them. A symbolic
//!   link may not point into a refused place; a directory moved carries no
//!   protected path with it; no name with a control character is created.
//! - **Listings** leave out what a component may not reach.
//!
//! A refusal is `access` to the component and a [`Denial`](cordon_kernel::Denial)
//! naming the rule. Whenever the guard cannot judge a path because the path
//! does not resolve (it does not exist, or it leads out of the grant),
//! wasmtime-wasi's own operation runs and fails as it would have.

use std::collections::HashMap;
use std::fs::File as StdFile;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_primitives::fs::FollowSymlinks;
use cordon_kernel::{Capability, FileAccess};
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, WasiFilesystemView};
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self as fs, DescriptorFlags, DescriptorStat, DirectoryEntry, DirectoryEntryStream, ErrorCode,
    HostDescriptor, HostDirectoryEntryStream, MetadataHashValue, NewTimestamp, OpenFlags,
    PathFlags,
};
use wasmtime_wasi::{FsPerms, OpenMode, WasiCtx, WasiCtxView, WasiView};

use super::DirAccess;
use super::guard::{FileGuard, Identity, Refused, real_path};
use crate::audit::Audit;
use crate::capabilities::unit::Imports;

/// The WASI filesystem interface as wasmtime-wasi 48 registers it.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// What a guarded operation came to: the operation's own result, or a
/// refusal by the guard before or instead of it.
type Guarded<T> = Result<FsResult<T>, Refused>;

/// A component's directory descriptor, as the guard needs it.
struct DirHandle {
    file: Arc<StdFile>,
    perms: FsPerms,
    open_mode: OpenMode,
}

/// The parent of a path, opened and judged, ready for the operation.
enum Parent {
    /// The guard has nothing to judge: let wasmtime-wasi run the operation
    /// as asked, and fail as it fails.
    Pass,
    /// The final component is `.` or `..`, which no change may name.
    Invalid,
    /// A temporary descriptor of the parent, the final name in it, and the
    /// real path the name stands for there.
    Ready {
        temp: Resource<Descriptor>,
        name: String,
        real: PathBuf,
    },
}

/// Both parents of a rename or a link, opened and judged.
enum Pair {
    /// Nothing to judge: wasmtime-wasi runs the operation as asked.
    Pass,
    /// A final `.` or `..`.
    Invalid,
    /// Temporary descriptors of both parents, each with its final name.
    Ready {
        from: (Resource<Descriptor>, String),
        to: (Resource<Descriptor>, String),
    },
}

/// What the guard keeps during one call: each directory stream's directory
/// (its real path and its handle), and the real paths of the directories it
/// has looked up, which it forgets when the call renames, removes or links
/// anything.
#[derive(Default)]
pub(crate) struct Listings {
    streams: HashMap<u32, Listing>,
    dirs: HashMap<u32, (usize, PathBuf)>,
    /// Real paths of parents of stat'ed paths, by descriptor and path.
    parents: HashMap<(u32, String), PathBuf>,
    /// The files of the run store that have other names, looked up at the
    /// call's first need: a file with one name was judged by its path.
    linked: Option<Arc<[(u64, u64)]>>,
}

/// How the guard answers a stat of a path under a directory descriptor.
enum Lookup {
    /// Judged as it is: the path names one entry of the directory, not
    /// through a link. wasmtime-wasi's own operation runs.
    Direct,
    /// Located and judged as a path-only handle; stat that handle.
    Located(StdFile),
    /// Nothing to judge: the path does not resolve.
    Pass,
}

/// A directory being listed.
#[derive(Clone)]
struct Listing {
    real: PathBuf,
    dir: Arc<StdFile>,
    /// Files of the run store that have other names, which the listing
    /// leaves out wherever it meets them.
    linked: Arc<[(u64, u64)]>,
}

/// Run wasmtime-wasi's `$method` on the final name of `$path` inside its
/// parent, opened and judged for `$access` first: the arguments before `;`
/// go between the directory and the name, those after it follow the name.
/// `$invalid` answers a final `.` or `..`.
macro_rules! by_name {
    ($state:ident, $fd:ident, $path:ident, $access:expr, $invalid:expr,
     $method:ident($($before:expr),* $(; $($after:expr),*)?)) => {
        match $state.parent(&$fd, &$path, $access)? {
            Parent::Pass => Ok($state
                .filesystem()
                .$method($fd, $($before,)* $path $($(, $after)*)?)
                .await),
            Parent::Invalid => Ok(Err($invalid.into())),
            Parent::Ready { temp, name, .. } => {
                let done = $state
                    .filesystem()
                    .$method(Resource::new_borrow(temp.rep()), $($before,)* name $($(, $after)*)?)
                    .await;
                $state.release(temp);
                Ok(done)
            }
        }
    };
}

/// The filesystem of one call: WASI's, its file accesses under the call's
/// guard, each refusal in its trail.
pub(crate) struct GuardedFs<'a> {
    pub(crate) wasi: &'a mut WasiCtx,
    pub(crate) table: &'a mut ResourceTable,
    pub(crate) dirs: &'a mut DirAccess,
    pub(crate) audit: &'a Audit,
}

impl WasiView for GuardedFs<'_> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: self.wasi,
            table: self.table,
        }
    }
}

impl GuardedFs<'_> {
    /// The call's resource table.
    fn table(&mut self) -> &mut ResourceTable {
        self.table
    }
    /// The real path of the directory descriptor `fd`, whose handle is `dir`.
    fn dir_real(&mut self, fd: &Resource<Descriptor>, dir: &DirHandle) -> Result<PathBuf, Refused> {
        let handle = Arc::as_ptr(&dir.file) as usize;
        if let Some((seen, real)) = self.dirs.listings.dirs.get(&fd.rep())
            && *seen == handle
        {
            return Ok(real.clone());
        }
        let real = located(&dir.file)?;
        self.dirs
            .listings
            .dirs
            .insert(fd.rep(), (handle, real.clone()));
        Ok(real)
    }

    /// Judge a stat of `path` under directory `fd`. The path's parent is
    /// resolved once per call and remembered; the final name is then judged
    /// by its path (at the cost of one `lstat` when it might be a link to
    /// follow or a second name of the run store). A final link to follow is
    /// located and judged where it leads. Stats reveal metadata only, so a
    /// parent changed by another process during the call can mislead no more
    /// than a stat; opening is judged on the opened handle itself.
    fn lookup(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
    ) -> Result<Lookup, Refused> {
        let Some(dir) = self.dir_handle(fd) else {
            return Ok(Lookup::Pass);
        };
        let Some((parent, name)) = split(path).filter(|(_, name)| *name != "." && *name != "..")
        else {
            return self.located(fd, path, follow);
        };
        let dir_real = self.dir_real(fd, &dir)?;
        let Some(parent_real) = self.parent_real(fd, &dir, &dir_real, parent)? else {
            return Ok(Lookup::Pass);
        };
        self.dirs.guard.check_both(
            &dir_real,
            path,
            Some(&parent_real.join(name)),
            FileAccess::Read,
        )?;
        if !follow && self.store_links().is_empty() {
            return Ok(Lookup::Direct);
        }
        match cap_primitives::fs::stat(&dir.file, Path::new(path), FollowSymlinks::No) {
            Ok(meta) if follow && meta.file_type().is_symlink() => self.located(fd, path, follow),
            Ok(meta) => {
                self.refuse_store_identity(Identity::of(&meta))?;
                Ok(Lookup::Direct)
            }
            Err(_) => Ok(Lookup::Pass),
        }
    }

    /// Judge a stat of `path` by locating it.
    fn located(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
    ) -> Result<Lookup, Refused> {
        Ok(match self.target(fd, path, follow, FileAccess::Read)? {
            Some((_, target)) => Lookup::Located(target),
            None => Lookup::Pass,
        })
    }

    /// The real path of the directory `parent` names under the directory
    /// `dir` (descriptor `fd`, real path `dir_real`), remembered for the
    /// call; `None` when it does not resolve.
    fn parent_real(
        &mut self,
        fd: &Resource<Descriptor>,
        dir: &DirHandle,
        dir_real: &Path,
        parent: &str,
    ) -> Result<Option<PathBuf>, Refused> {
        if parent == "." {
            return Ok(Some(dir_real.to_owned()));
        }
        let key = (fd.rep(), parent.to_owned());
        if let Some(real) = self.dirs.listings.parents.get(&key) {
            return Ok(Some(real.clone()));
        }
        let Ok(opened) = cap_primitives::fs::open_dir(&dir.file, Path::new(parent)) else {
            return Ok(None);
        };
        let real = located(&opened)?;
        self.dirs.listings.parents.insert(key, real.clone());
        Ok(Some(real))
    }

    /// Forget the directories looked up so far: the call changed the tree.
    fn forget_paths(&mut self) {
        self.dirs.listings.dirs.clear();
        self.dirs.listings.parents.clear();
    }

    fn dir_handle(&mut self, fd: &Resource<Descriptor>) -> Option<DirHandle> {
        match self.table().get(fd) {
            Ok(Descriptor::Dir(dir)) => Some(DirHandle {
                file: Arc::clone(&dir.dir),
                perms: dir.perms,
                open_mode: dir.open_mode,
            }),
            _ => None,
        }
    }

    /// Open the parent of `path` under directory `fd`, judge `access` to what
    /// the path names there, and hold the parent as a temporary descriptor.
    fn parent(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        access: FileAccess,
    ) -> Result<Parent, Refused> {
        let Some(dir) = self.dir_handle(fd) else {
            return Ok(Parent::Pass);
        };
        let Some((parent, name)) = split(path) else {
            return Ok(Parent::Pass);
        };
        if name == "." || name == ".." {
            return Ok(Parent::Invalid);
        }
        let Ok(opened) = cap_primitives::fs::open_dir(&dir.file, Path::new(parent)) else {
            return Ok(Parent::Pass);
        };
        let dir_real = self.dir_real(fd, &dir)?;
        let real = located(&opened)?.join(name);
        self.dirs
            .guard
            .check_both(&dir_real, path, Some(&real), access)?;
        let temp = Descriptor::Dir(Dir::new(
            opened,
            dir.perms,
            dir.open_mode,
            self.dirs.own_thread,
        ));
        let temp = self
            .table()
            .push(temp)
            .map_err(|error| Refused(format!("cannot hold the parent directory: {error}")))?;
        Ok(Parent::Ready {
            temp,
            name: name.to_owned(),
            real,
        })
    }

    fn release(&mut self, temp: Resource<Descriptor>) {
        let _closed = self.table().delete(temp);
    }

    /// Open `path` under directory `fd` as a path-only handle, following a
    /// final link when `follow`, and judge `access` to it. `None` when it
    /// does not resolve.
    fn target(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
        access: FileAccess,
    ) -> Result<Option<(DirHandle, StdFile)>, Refused> {
        let Some(dir) = self.dir_handle(fd) else {
            return Ok(None);
        };
        let Ok(target) = locate(&dir.file, path, follow) else {
            return Ok(None);
        };
        let real = located(&target)?;
        let dir_real = self.dir_real(fd, &dir)?;
        self.dirs
            .guard
            .check_both(&dir_real, path, Some(&real), access)?;
        self.refuse_store_handle(&target)?;
        Ok(Some((dir, target)))
    }

    /// The files of the run store that have other names (usually none).
    fn store_links(&mut self) -> Arc<[(u64, u64)]> {
        if let Some(linked) = &self.dirs.listings.linked {
            return Arc::clone(linked);
        }
        let linked: Arc<[(u64, u64)]> = self.dirs.guard.linked_files().into();
        self.dirs.listings.linked = Some(Arc::clone(&linked));
        linked
    }

    /// Refuse a file that is the run store under another name (a hard link).
    fn refuse_store_identity(&mut self, identity: Identity) -> Result<(), Refused> {
        if identity.links > 1
            && !identity.is_dir
            && self.store_links().contains(&(identity.dev, identity.ino))
        {
            return Err(Refused(
                "it is a hard link to a file of Cordon's run store".into(),
            ));
        }
        Ok(())
    }

    /// Refuse the open `file` when it is the run store under another name;
    /// when no file of the store has another name, there is nothing to ask.
    fn refuse_store_handle(&mut self, file: &StdFile) -> Result<(), Refused> {
        if self.store_links().is_empty() {
            return Ok(());
        }
        file.metadata().map_or(Ok(()), |meta| {
            self.refuse_store_identity(Identity::of_std(&meta))
        })
    }

    /// Judge the descriptor `opened` just returned for `access`.
    fn judge_opened(
        &mut self,
        opened: &Resource<Descriptor>,
        access: FileAccess,
    ) -> Result<(), Refused> {
        let file = match self.table().get(opened) {
            Ok(Descriptor::File(file)) => Arc::clone(&file.file),
            Ok(Descriptor::Dir(dir)) => Arc::clone(&dir.dir),
            Err(error) => return Err(Refused(format!("cannot inspect the opened file: {error}"))),
        };
        let real = located(&file)?;
        self.dirs.guard.check(&real, access)?;
        self.refuse_store_handle(&file)
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        oflags: OpenFlags,
        flags: DescriptorFlags,
    ) -> Guarded<Resource<Descriptor>> {
        let writes = oflags.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE)
            || flags.intersects(DescriptorFlags::WRITE | DescriptorFlags::MUTATE_DIRECTORY);
        let access = if writes {
            FileAccess::Write
        } else {
            FileAccess::Read
        };
        let Some(dir) = self.dir_handle(&fd) else {
            return Ok(self
                .filesystem()
                .open_at(fd, path_flags, path, oflags, flags)
                .await);
        };
        let dir_real = self.dir_real(&fd, &dir)?;
        self.dirs.guard.check_both(&dir_real, &path, None, access)?;
        if oflags.contains(OpenFlags::CREATE) && path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
            refuse_dangling_link(&dir.file, &path)?;
        }
        // Truncate only once the handle is judged.
        let truncate = oflags.contains(OpenFlags::TRUNCATE);
        let (oflags, flags) = if truncate {
            (
                oflags & !OpenFlags::TRUNCATE,
                flags | DescriptorFlags::WRITE,
            )
        } else {
            (oflags, flags)
        };
        let opened = match self
            .filesystem()
            .open_at(fd, path_flags, path, oflags, flags)
            .await
        {
            Ok(opened) => opened,
            Err(error) => return Ok(Err(error)),
        };
        if let Err(refused) = self.judge_opened(&opened, access) {
            self.release(opened);
            return Err(refused);
        }
        if truncate {
            let borrowed = Resource::new_borrow(opened.rep());
            if let Err(error) = self.filesystem().set_size(borrowed, 0).await {
                self.release(opened);
                return Ok(Err(error));
            }
        }
        Ok(Ok(opened))
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
    ) -> Guarded<DescriptorStat> {
        let follow = path_flags.contains(PathFlags::SYMLINK_FOLLOW);
        let Lookup::Located(target) = self.lookup(&fd, &path, follow)? else {
            return Ok(self.filesystem().stat_at(fd, path_flags, path).await);
        };
        let temp = self.hold_target(target)?;
        let stat = self
            .filesystem()
            .stat(Resource::new_borrow(temp.rep()))
            .await;
        self.release(temp);
        Ok(stat)
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
    ) -> Guarded<MetadataHashValue> {
        let follow = path_flags.contains(PathFlags::SYMLINK_FOLLOW);
        let Lookup::Located(target) = self.lookup(&fd, &path, follow)? else {
            return Ok(self
                .filesystem()
                .metadata_hash_at(fd, path_flags, path)
                .await);
        };
        let temp = self.hold_target(target)?;
        let hash = self
            .filesystem()
            .metadata_hash(Resource::new_borrow(temp.rep()))
            .await;
        self.release(temp);
        Ok(hash)
    }

    /// A temporary descriptor for a located, judged path-only handle.
    fn hold_target(&mut self, target: StdFile) -> Result<Resource<Descriptor>, Refused> {
        let own_thread = self.dirs.own_thread;
        self.table()
            .push(Descriptor::File(File::new(
                target,
                FsPerms::ReadOnly,
                OpenMode::READ,
                own_thread,
            )))
            .map_err(|error| Refused(format!("cannot hold the file: {error}")))
    }

    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> Guarded<String> {
        by_name!(
            self,
            fd,
            path,
            FileAccess::Read,
            ErrorCode::Invalid,
            readlink_at()
        )
    }

    async fn create_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> Guarded<()> {
        by_name!(
            self,
            fd,
            path,
            FileAccess::Write,
            ErrorCode::Exist,
            create_directory_at()
        )
    }

    async fn remove_directory_at(&mut self, fd: Resource<Descriptor>, path: String) -> Guarded<()> {
        let done = by_name!(
            self,
            fd,
            path,
            FileAccess::Write,
            ErrorCode::Invalid,
            remove_directory_at()
        );
        if matches!(done, Ok(Ok(()))) {
            self.forget_paths();
        }
        done
    }

    async fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> Guarded<()> {
        let done = by_name!(
            self,
            fd,
            path,
            FileAccess::Write,
            ErrorCode::Invalid,
            unlink_file_at()
        );
        if matches!(done, Ok(Ok(()))) {
            self.forget_paths();
        }
        done
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        atim: NewTimestamp,
        mtim: NewTimestamp,
    ) -> Guarded<()> {
        if path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
            // Where a final link leads is judged too.
            self.target(&fd, &path, true, FileAccess::Write)?;
        }
        by_name!(
            self,
            fd,
            path,
            FileAccess::Write,
            ErrorCode::Invalid,
            set_times_at(path_flags; atim, mtim)
        )
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        target: String,
        path: String,
    ) -> Guarded<()> {
        match self.parent(&fd, &path, FileAccess::Write)? {
            Parent::Pass => Ok(self.filesystem().symlink_at(fd, target, path).await),
            Parent::Invalid => Ok(Err(ErrorCode::Exist.into())),
            Parent::Ready { temp, name, real } => {
                // Judged where the text leads as written and where it leads
                // through the links already on its way.
                let leads = FileGuard::link_target(&real, &target)
                    .map(|leads| (FileGuard::resolved(&leads), leads))
                    .filter(|(resolved, leads)| {
                        self.dirs.guard.inside(leads) && self.dirs.guard.inside(resolved)
                    })
                    .ok_or_else(|| {
                        Refused(format!("a link to {target:?} leads out of the workspace"))
                    })
                    .and_then(|(resolved, leads)| {
                        self.dirs.guard.check(&leads, FileAccess::Read)?;
                        self.dirs.guard.check(&resolved, FileAccess::Read)
                    });
                if let Err(refused) = leads {
                    self.release(temp);
                    return Err(refused);
                }
                let done = self
                    .filesystem()
                    .symlink_at(Resource::new_borrow(temp.rep()), target, name)
                    .await;
                self.release(temp);
                if done.is_ok() {
                    self.forget_paths();
                }
                Ok(done)
            }
        }
    }

    /// Open and judge, for writing, the parents of both names of a rename
    /// or a link, and judge the source's real path by `source` too.
    fn pair(
        &mut self,
        (fd, from): (&Resource<Descriptor>, &str),
        (to_fd, to): (&Resource<Descriptor>, &str),
        source: impl FnOnce(&mut Self, &Path) -> Result<(), Refused>,
    ) -> Result<Pair, Refused> {
        let (from_temp, from_name, from_real) = match self.parent(fd, from, FileAccess::Write)? {
            Parent::Pass => return Ok(Pair::Pass),
            Parent::Invalid => return Ok(Pair::Invalid),
            Parent::Ready { temp, name, real } => (temp, name, real),
        };
        let to = source(self, &from_real).and_then(|()| self.parent(to_fd, to, FileAccess::Write));
        match to {
            Ok(Parent::Ready { temp, name, .. }) => Ok(Pair::Ready {
                from: (from_temp, from_name),
                to: (temp, name),
            }),
            other => {
                self.release(from_temp);
                match other? {
                    Parent::Invalid => Ok(Pair::Invalid),
                    _ => Ok(Pair::Pass),
                }
            }
        }
    }

    async fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        from: String,
        to_fd: Resource<Descriptor>,
        to: String,
    ) -> Guarded<()> {
        // A directory moved carries everything beneath it along.
        let moved =
            |state: &mut Self, real: &Path| state.dirs.guard.check_tree(real, FileAccess::Write);
        match self.pair((&fd, &from), (&to_fd, &to), moved)? {
            Pair::Pass => Ok(self.filesystem().rename_at(fd, from, to_fd, to).await),
            Pair::Invalid => Ok(Err(ErrorCode::Invalid.into())),
            Pair::Ready {
                from: (from_temp, from_name),
                to: (to_temp, to_name),
            } => {
                let done = self
                    .filesystem()
                    .rename_at(
                        Resource::new_borrow(from_temp.rep()),
                        from_name,
                        Resource::new_borrow(to_temp.rep()),
                        to_name,
                    )
                    .await;
                self.release(from_temp);
                self.release(to_temp);
                if done.is_ok() {
                    self.forget_paths();
                }
                Ok(done)
            }
        }
    }

    async fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        flags: PathFlags,
        from: String,
        to_fd: Resource<Descriptor>,
        to: String,
    ) -> Guarded<()> {
        // A second name for a file may not open a way to what the first is
        // protected from: the source must be writable too, and no file of the
        // run store.
        let store_file = |state: &mut Self, real: &Path| match std::fs::symlink_metadata(real) {
            Ok(meta) => state.refuse_store_identity(Identity::of_std(&meta)),
            Err(_) => Ok(()),
        };
        match self.pair((&fd, &from), (&to_fd, &to), store_file)? {
            Pair::Pass => Ok(self.filesystem().link_at(fd, flags, from, to_fd, to).await),
            Pair::Invalid => Ok(Err(ErrorCode::Invalid.into())),
            Pair::Ready {
                from: (from_temp, from_name),
                to: (to_temp, to_name),
            } => {
                let done = self
                    .filesystem()
                    .link_at(
                        Resource::new_borrow(from_temp.rep()),
                        flags,
                        from_name,
                        Resource::new_borrow(to_temp.rep()),
                        to_name,
                    )
                    .await;
                self.release(from_temp);
                self.release(to_temp);
                Ok(done)
            }
        }
    }

    async fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> Guarded<Resource<DirectoryEntryStream>> {
        let Some(dir) = self.dir_handle(&fd) else {
            return Ok(self.filesystem().read_directory(fd).await);
        };
        let real = self.dir_real(&fd, &dir)?;
        self.dirs.guard.check(&real, FileAccess::Read)?;
        let stream = match self.filesystem().read_directory(fd).await {
            Ok(stream) => stream,
            Err(error) => return Ok(Err(error)),
        };
        let listing = Listing {
            real,
            dir: dir.file,
            linked: self.store_links(),
        };
        self.dirs.listings.streams.insert(stream.rep(), listing);
        Ok(Ok(stream))
    }

    async fn read_directory_entry(
        &mut self,
        stream: Resource<DirectoryEntryStream>,
    ) -> FsResult<Option<DirectoryEntry>> {
        let listing = self.dirs.listings.streams.get(&stream.rep()).cloned();
        loop {
            let next = self
                .filesystem()
                .read_directory_entry(Resource::new_borrow(stream.rep()))
                .await;
            match (&next, &listing) {
                (Ok(Some(entry)), Some(listing)) if self.hidden(listing, &entry.name) => {}
                _ => return next,
            }
        }
    }

    /// Whether `listing` leaves out its entry `name`: what the guard hides,
    /// and another name of a file of the run store.
    fn hidden(&self, listing: &Listing, name: &str) -> bool {
        if self.dirs.guard.hides(&listing.real.join(name)) {
            return true;
        }
        if listing.linked.is_empty() {
            return false;
        }
        cap_primitives::fs::stat(&listing.dir, Path::new(name), FollowSymlinks::No).is_ok_and(
            |meta| {
                let identity = Identity::of(&meta);
                listing.linked.contains(&(identity.dev, identity.ino))
            },
        )
    }

    /// `result` as the component sees it, recording a denial if it was
    /// refused, by the guard or by the grant.
    fn finish<T>(
        &mut self,
        operation: &str,
        target: &str,
        result: Guarded<T>,
    ) -> wasmtime::Result<Result<T, ErrorCode>> {
        let error = match result {
            Ok(Ok(value)) => return Ok(Ok(value)),
            Ok(Err(error)) => error,
            Err(Refused(reason)) => {
                self.audit.deny(
                    Capability::Filesystem,
                    target,
                    &format!("{operation}: {reason}"),
                );
                return Ok(Err(ErrorCode::Access));
            }
        };
        let code = fs::Host::convert_error_code(&mut self.filesystem(), error)?;
        if matches!(code, ErrorCode::NotPermitted | ErrorCode::Access) {
            let reason = format!("{operation} refused outside the bundle's directory grants");
            self.audit.deny(Capability::Filesystem, target, &reason);
        }
        Ok(Err(code))
    }
}

/// The real path of a handle the guard opened or was given; a handle whose
/// place cannot be told is refused.
fn located(file: &StdFile) -> Result<PathBuf, Refused> {
    real_path(file).map_err(|error| Refused(format!("cannot tell where the file is: {error}")))
}

/// Refuse creating a file through a final symbolic link that leads nowhere
/// yet: the file would appear where the link points, a place no check has
/// seen. A link to an existing file is judged once that file is opened.
fn refuse_dangling_link(dir: &StdFile, path: &str) -> Result<(), Refused> {
    let is_link = cap_primitives::fs::stat(dir, Path::new(path), FollowSymlinks::No)
        .is_ok_and(|meta| meta.file_type().is_symlink());
    if is_link && locate(dir, path, true).is_err() {
        return Err(Refused(format!(
            "{path:?} is a link to nothing yet; no file is created through it"
        )));
    }
    Ok(())
}

/// Open `path` beneath `dir` as a path-only handle (`O_PATH`), following a
/// final symbolic link when `follow`; never leaving `dir`.
fn locate(dir: &StdFile, path: &str, follow: bool) -> std::io::Result<StdFile> {
    use cap_primitives::fs::{OpenOptions, OpenOptionsExt};
    let mut options = OpenOptions::new();
    options.read(true);
    options._cap_fs_ext_follow(if follow {
        FollowSymlinks::Yes
    } else {
        FollowSymlinks::No
    });
    options.custom_flags(rustix::fs::OFlags::PATH.bits() as i32);
    let path = if path.is_empty() { "." } else { path };
    cap_primitives::fs::open(dir, Path::new(path), &options)
}

/// `path` as a parent to open and the final name in it; `None` when there
/// is no final name (empty, or absolute, which cap-std refuses on its own).
fn split(path: &str) -> Option<(&str, &str)> {
    if path.starts_with('/') {
        return None;
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return None;
    }
    Some(match trimmed.rsplit_once('/') {
        Some((parent, name)) if parent.trim_end_matches('/').is_empty() => (".", name),
        Some((parent, name)) => (parent, name),
        None => (".", trimmed),
    })
}

/// Register one guarded function: `$method` of [`GuardedFs`] under `$name`,
/// audited as `$operation` on `$target`, the store's filesystem found by `$get`.
macro_rules! guarded {
    ($types:ident, $get:ident, $name:literal, $operation:literal, $method:ident,
     ($($arg:ident: $ty:ty),*), target = $target:expr) => {
        $types.func_wrap_async(
            $name,
            move |mut store: wasmtime::StoreContextMut<'_, T>, ($($arg,)*): ($($ty,)*)| {
                Box::new(async move {
                    let target: String = $target;
                    let mut state = $get(store.data_mut());
                    let result = state.$method($($arg),*).await;
                    Ok((state.finish($operation, &target, result)?,))
                })
            },
        )?;
    };
}

/// The guarded filesystem, linked over wasmtime-wasi's: the path-taking
/// filesystem functions replaced with guarded ones.
pub(crate) struct GuardedFilesystem;

impl HasData for GuardedFilesystem {
    type Data<'a> = GuardedFs<'a>;
}

impl Imports for GuardedFilesystem {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> GuardedFs<'_>,
    ) -> wasmtime::Result<()> {
        add_to_linker(linker, get)
    }
}

fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> GuardedFs<'_>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(FILESYSTEM_TYPES)?;
    guarded!(types, get, "[method]descriptor.open-at", "open", open_at,
        (fd: Resource<Descriptor>, path_flags: PathFlags, path: String, oflags: OpenFlags, flags: DescriptorFlags),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.stat-at", "stat", stat_at,
        (fd: Resource<Descriptor>, path_flags: PathFlags, path: String),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.metadata-hash-at", "stat", metadata_hash_at,
        (fd: Resource<Descriptor>, path_flags: PathFlags, path: String),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.readlink-at", "readlink", readlink_at,
        (fd: Resource<Descriptor>, path: String),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.create-directory-at", "create directory", create_directory_at,
        (fd: Resource<Descriptor>, path: String),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.remove-directory-at", "remove directory", remove_directory_at,
        (fd: Resource<Descriptor>, path: String),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.unlink-file-at", "remove file", unlink_file_at,
        (fd: Resource<Descriptor>, path: String),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.set-times-at", "set times", set_times_at,
        (fd: Resource<Descriptor>, path_flags: PathFlags, path: String, atim: NewTimestamp, mtim: NewTimestamp),
        target = path.clone());
    guarded!(types, get, "[method]descriptor.symlink-at", "create symlink", symlink_at,
        (fd: Resource<Descriptor>, target: String, path: String),
        target = format!("{path} -> {target}"));
    guarded!(types, get, "[method]descriptor.rename-at", "rename", rename_at,
        (fd: Resource<Descriptor>, from: String, to_fd: Resource<Descriptor>, to: String),
        target = format!("{from} -> {to}"));
    guarded!(types, get, "[method]descriptor.link-at", "link", link_at,
        (fd: Resource<Descriptor>, flags: PathFlags, from: String, to_fd: Resource<Descriptor>, to: String),
        target = format!("{from} -> {to}"));
    guarded!(types, get, "[method]descriptor.read-directory", "list", read_directory,
        (fd: Resource<Descriptor>),
        target = "(a directory listing)".to_owned());
    types.func_wrap_async(
        "[method]directory-entry-stream.read-directory-entry",
        move |mut store: wasmtime::StoreContextMut<'_, T>,
              (stream,): (Resource<DirectoryEntryStream>,)| {
            Box::new(async move {
                let mut state = get(store.data_mut());
                let next = state.read_directory_entry(stream).await;
                Ok((state.finish("list", "", Ok(next))?,))
            })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn a_path_splits_into_its_parent_and_final_name() {
        assert_eq!(split("a"), Some((".", "a")));
        assert_eq!(split("a/b/c"), Some(("a/b", "c")));
        assert_eq!(split("a/b/"), Some(("a", "b")));
        assert_eq!(split("a//b"), Some(("a/", "b")));
        assert_eq!(split("/etc/passwd"), None);
        assert_eq!(split(""), None);
        assert_eq!(split("a/.."), Some(("a", "..")));
    }
}
