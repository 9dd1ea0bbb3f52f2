//! WASI's filesystem for an interpreter, served from its [`View`] instead of
//! the real file system: one preopened directory, `/`, under which only the
//! view's tree exists. Every path a component hands WASI reaches the host
//! (none is resolved inside the guest against a missing preopen). A path
//! that is not in the tree is plain "not found"; climbing out with `..`, a
//! path a file rule refuses and a write to a place no program may write
//! are each a typed error to the component and a `denied` event. Files and
//! directories can be created, written, removed and renamed under
//! `/workspace` and `/tmp` (see [`super::writes`]); nothing can be linked,
//! and there are no symbolic links to follow.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};

use bytes::Bytes;
use cordon_kernel::Capability;
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::{DynInputStream, InputStream, Pollable, StreamError, StreamResult};

use super::layer::{self, Written};
use super::view::{Contents, Found, Node, Place, View};
use super::writes::{Open, WriteError};
use crate::audit::Audit;
use crate::capabilities::unit::Imports;

mod bindings {
    wasmtime::component::bindgen!({
        path: "wit/vfs",
        world: "cordon:vfs/vfs",
        with: {
            "wasi:io/poll": wasmtime_wasi::p2::bindings::io::poll,
            "wasi:io/streams": wasmtime_wasi::p2::bindings::io::streams,
            "wasi:io/error": wasmtime_wasi::p2::bindings::io::error,
            "wasi:clocks/wall-clock": wasmtime_wasi::p2::bindings::clocks::wall_clock,
            "wasi:filesystem/types.descriptor": super::Descriptor,
            "wasi:filesystem/types.directory-entry-stream": super::Listing,
        },
        require_store_data_send: true,
    });
}

use bindings::wasi::filesystem::{preopens, types};
use types::{
    Advice, DescriptorFlags, DescriptorStat, DescriptorType, DirectoryEntry, ErrorCode, Filesize,
    MetadataHashValue, NewTimestamp, OpenFlags, PathFlags,
};

/// An open node of the tree.
#[allow(unreachable_pub)] // the bindings re-export the resource types they are given
pub struct Descriptor {
    node: Node,
    /// Whether it was opened for writing.
    writable: bool,
}

/// A directory's entries, read one by one.
#[allow(unreachable_pub)] // the bindings re-export the resource types they are given
pub struct Listing {
    entries: VecDeque<DirectoryEntry>,
}

/// One interpreter run's file system.
pub(crate) struct Vfs {
    view: View,
}

impl Vfs {
    /// The file system showing `view`.
    pub(crate) fn new(view: View) -> Self {
        Self { view }
    }
}

/// Writes to a file the run opened for writing, from an offset or at its
/// end.
struct WrittenStream {
    file: Written,
    place: Place,
    offset: u64,
    append: bool,
}

/// Writes `bytes` into `file` at `offset` (its end when `append`), the
/// growth charged to the tree the file is in: the offset after.
fn write_into(file: &Written, offset: u64, append: bool, bytes: &[u8]) -> Result<u64, ErrorCode> {
    let offset = usize::try_from(offset).map_err(|_| ErrorCode::FileTooLarge)?;
    let end = layer::data(file)
        .write(offset, append, bytes)
        .map_err(|_| ErrorCode::InsufficientSpace)?;
    Ok(end as u64)
}

impl wasmtime_wasi::p2::OutputStream for WrittenStream {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        match write_into(&self.file, self.offset, self.append, &bytes) {
            Ok(end) => {
                self.offset = end;
                Ok(())
            }
            Err(_) => Err(StreamError::LastOperationFailed(
                std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    format!("{}: no space left in the sandbox", self.place.shown()),
                )
                .into(),
            )),
        }
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(1 << 20)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for WrittenStream {
    async fn ready(&mut self) {}
}

/// The filesystem as one call sees it.
pub(crate) struct VfsView<'a> {
    /// The file system; `None` for a call that is not an interpreter's,
    /// which sees nothing here.
    pub(crate) vfs: Option<&'a Vfs>,
    pub(crate) table: &'a mut ResourceTable,
    pub(crate) audit: &'a Audit,
}

/// The file system an interpreter's run sees, linked over wasmtime-wasi's
/// in interpreters' linker only.
pub(crate) struct ViewFs;

impl HasData for ViewFs {
    type Data<'a> = VfsView<'a>;
}

impl Imports for ViewFs {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        linker.allow_shadowing(true);
        types::add_to_linker::<T, Self>(linker, get)?;
        preopens::add_to_linker::<T, Self>(linker, get)?;
        linker.allow_shadowing(false);
        Ok(())
    }
}

/// Reads a file's contents from an offset, a chunk at a time.
struct FileStream {
    contents: Contents,
    offset: u64,
}

impl InputStream for FileStream {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        let chunk = self
            .contents
            .read(self.offset, size.min(1 << 20))
            .map_err(|error| StreamError::LastOperationFailed(error.into()))?;
        if chunk.is_empty() && size > 0 {
            return Err(StreamError::Closed);
        }
        self.offset += chunk.len() as u64;
        Ok(Bytes::from(chunk))
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for FileStream {
    async fn ready(&mut self) {}
}

impl VfsView<'_> {
    fn node(&self, fd: &Resource<Descriptor>) -> Result<&Node, ErrorCode> {
        self.table
            .get(fd)
            .map(|descriptor| &descriptor.node)
            .map_err(|_| ErrorCode::BadDescriptor)
    }

    fn place(&self, fd: &Resource<Descriptor>) -> Result<Place, ErrorCode> {
        Ok(match self.node(fd)? {
            Node::Dir(place) | Node::File(place, _) => place.clone(),
        })
    }

    /// Refuse `what` on `target`, audited.
    fn refuse(&self, target: &str, reason: &str, code: ErrorCode) -> ErrorCode {
        self.audit.deny(Capability::Filesystem, target, reason);
        code
    }

    /// Refuse making a link at `path` under `fd`: a program makes none.
    fn no_links(&self, fd: &Resource<Descriptor>, path: &str) -> ErrorCode {
        let target = self
            .place(fd)
            .map_or_else(|_| path.to_owned(), |place| joined(&place, path));
        self.refuse(
            &target,
            "creating a link: a program in the sandbox makes no links",
            ErrorCode::NotPermitted,
        )
    }

    /// What `path` under the directory `fd` leads to.
    fn lookup(&self, fd: &Resource<Descriptor>, path: &str) -> Result<Node, ErrorCode> {
        let parts = self.components(fd, path)?;
        let Some(vfs) = self.vfs else {
            return Err(ErrorCode::Access);
        };
        match vfs.view.find(&parts) {
            Found::Node(node) => Ok(node),
            Found::Missing => Err(ErrorCode::NoEntry),
            Found::NotADirectory => Err(ErrorCode::NotDirectory),
            Found::Refused(reason) => {
                Err(self.refuse(&format!("/{}", parts.join("/")), &reason, ErrorCode::Access))
            }
        }
    }

    /// The view and the path `path` under the directory `fd`, from the
    /// root, for a change.
    fn changing(
        &self,
        fd: &Resource<Descriptor>,
        path: &str,
    ) -> Result<(&View, Vec<String>), ErrorCode> {
        let parts = self.components(fd, path)?;
        let Some(vfs) = self.vfs else {
            return Err(ErrorCode::Access);
        };
        Ok((&vfs.view, parts))
    }

    /// The error a refused change of `parts` is, audited when a rule
    /// refused it.
    fn write_error(&self, parts: &[String], error: WriteError) -> ErrorCode {
        match error {
            WriteError::Denied(reason) => {
                self.refuse(&format!("/{}", parts.join("/")), &reason, ErrorCode::Access)
            }
            WriteError::Missing => ErrorCode::NoEntry,
            WriteError::Exists => ErrorCode::Exist,
            WriteError::NotADirectory => ErrorCode::NotDirectory,
            WriteError::IsADirectory => ErrorCode::IsDirectory,
            WriteError::NotEmpty => ErrorCode::NotEmpty,
            WriteError::NoSpace => ErrorCode::InsufficientSpace,
            WriteError::DirectoryRename => ErrorCode::CrossDevice,
            WriteError::NameTooLong => ErrorCode::NameTooLong,
            WriteError::Unreadable => ErrorCode::Io,
        }
    }

    /// The path `path` under the directory `fd`, component by component
    /// from the root; `..` may not climb out.
    fn components(&self, fd: &Resource<Descriptor>, path: &str) -> Result<Vec<String>, ErrorCode> {
        let Node::Dir(place) = self.node(fd)? else {
            return Err(ErrorCode::NotDirectory);
        };
        if path.starts_with('/') {
            return Err(ErrorCode::NotPermitted);
        }
        let mut parts = place.components();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        let target = joined(place, path);
                        return Err(self.refuse(
                            &target,
                            "climbs out of the sandbox",
                            ErrorCode::Access,
                        ));
                    }
                }
                name => parts.push(name.to_owned()),
            }
        }
        Ok(parts)
    }

    /// The file `fd` was opened for writing, with where it is.
    fn written(&self, fd: &Resource<Descriptor>) -> Result<(Place, Written), ErrorCode> {
        let descriptor = self.table.get(fd).map_err(|_| ErrorCode::BadDescriptor)?;
        match &descriptor.node {
            Node::File(place, Contents::Written(file)) if descriptor.writable => {
                Ok((place.clone(), file.clone()))
            }
            Node::Dir(_) => Err(ErrorCode::IsDirectory),
            Node::File(..) => Err(ErrorCode::BadDescriptor),
        }
    }

    fn output_stream(
        &mut self,
        fd: &Resource<Descriptor>,
        offset: u64,
        append: bool,
    ) -> Result<Resource<wasmtime_wasi::p2::DynOutputStream>, ErrorCode> {
        let (place, file) = self.written(fd)?;
        let stream: wasmtime_wasi::p2::DynOutputStream = Box::new(WrittenStream {
            file,
            place,
            offset,
            append,
        });
        self.table
            .push(stream)
            .map_err(|_| ErrorCode::InsufficientMemory)
    }
}

/// `path` under `place`, as written, for the trail.
fn joined(place: &Place, path: &str) -> String {
    let base = place.shown();
    if base == "/" {
        format!("/{path}")
    } else {
        format!("{base}/{path}")
    }
}

fn stat_of(node: &Node) -> DescriptorStat {
    let (kind, size) = match node {
        Node::Dir(_) => (DescriptorType::Directory, 0),
        Node::File(_, contents) => (DescriptorType::RegularFile, contents.size()),
    };
    DescriptorStat {
        type_: kind,
        link_count: 1,
        size,
        data_access_timestamp: None,
        data_modification_timestamp: None,
        status_change_timestamp: None,
    }
}

fn hash_of(node: &Node) -> MetadataHashValue {
    let place = match node {
        Node::Dir(place) | Node::File(place, _) => place,
    };
    let mut lower = DefaultHasher::new();
    place.hash(&mut lower);
    let mut upper = DefaultHasher::new();
    (place, "upper").hash(&mut upper);
    MetadataHashValue {
        lower: lower.finish(),
        upper: upper.finish(),
    }
}

impl types::Host for VfsView<'_> {
    fn filesystem_error_code(
        &mut self,
        error: Resource<wasmtime_wasi::p2::bindings::io::error::Error>,
    ) -> Option<ErrorCode> {
        let error = self.table.get(&error).ok()?;
        match error.downcast_ref::<std::io::Error>()?.kind() {
            std::io::ErrorKind::StorageFull => Some(ErrorCode::InsufficientSpace),
            _ => Some(ErrorCode::Io),
        }
    }
}

impl types::HostDescriptor for VfsView<'_> {
    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
    ) -> Result<Resource<DynInputStream>, ErrorCode> {
        let Node::File(_, contents) = self.node(&fd)? else {
            return Err(ErrorCode::IsDirectory);
        };
        let stream: DynInputStream = Box::new(FileStream {
            contents: contents.clone(),
            offset,
        });
        self.table
            .push(stream)
            .map_err(|_| ErrorCode::InsufficientMemory)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: Filesize,
    ) -> Result<Resource<wasmtime_wasi::p2::DynOutputStream>, ErrorCode> {
        self.output_stream(&fd, offset, false)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> Result<Resource<wasmtime_wasi::p2::DynOutputStream>, ErrorCode> {
        self.output_stream(&fd, 0, true)
    }

    fn advise(
        &mut self,
        _fd: Resource<Descriptor>,
        _offset: Filesize,
        _length: Filesize,
        _advice: Advice,
    ) -> Result<(), ErrorCode> {
        Ok(())
    }

    fn sync_data(&mut self, _fd: Resource<Descriptor>) -> Result<(), ErrorCode> {
        Ok(())
    }

    fn get_flags(&mut self, fd: Resource<Descriptor>) -> Result<DescriptorFlags, ErrorCode> {
        let descriptor = self.table.get(&fd).map_err(|_| ErrorCode::BadDescriptor)?;
        Ok(if descriptor.writable {
            DescriptorFlags::READ | DescriptorFlags::WRITE
        } else {
            DescriptorFlags::READ
        })
    }

    fn get_type(&mut self, fd: Resource<Descriptor>) -> Result<DescriptorType, ErrorCode> {
        Ok(stat_of(self.node(&fd)?).type_)
    }

    fn set_size(&mut self, fd: Resource<Descriptor>, size: Filesize) -> Result<(), ErrorCode> {
        let (_, file) = self.written(&fd)?;
        let size = usize::try_from(size).map_err(|_| ErrorCode::FileTooLarge)?;
        layer::data(&file)
            .set_len(size)
            .map_err(|_| ErrorCode::InsufficientSpace)
    }

    fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        _atime: NewTimestamp,
        _mtime: NewTimestamp,
    ) -> Result<(), ErrorCode> {
        // Times are not kept: a file's time is when its change lands.
        self.node(&fd)?;
        Ok(())
    }

    fn read(
        &mut self,
        fd: Resource<Descriptor>,
        length: Filesize,
        offset: Filesize,
    ) -> Result<(Vec<u8>, bool), ErrorCode> {
        let Node::File(_, contents) = self.node(&fd)? else {
            return Err(ErrorCode::IsDirectory);
        };
        let length = usize::try_from(length).unwrap_or(usize::MAX).min(1 << 24);
        let data = contents.read(offset, length).map_err(|_| ErrorCode::Io)?;
        let end = data.is_empty() || offset + data.len() as u64 >= contents.size();
        Ok((data, end))
    }

    fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buffer: Vec<u8>,
        offset: Filesize,
    ) -> Result<Filesize, ErrorCode> {
        let (_, file) = self.written(&fd)?;
        write_into(&file, offset, false, &buffer)?;
        Ok(buffer.len() as Filesize)
    }

    fn read_directory(&mut self, fd: Resource<Descriptor>) -> Result<Resource<Listing>, ErrorCode> {
        let Node::Dir(place) = self.node(&fd)?.clone() else {
            return Err(ErrorCode::NotDirectory);
        };
        let entries = self
            .vfs
            .map(|vfs| vfs.view.list(&place))
            .unwrap_or_default()
            .into_iter()
            .map(|(name, is_dir)| DirectoryEntry {
                type_: if is_dir {
                    DescriptorType::Directory
                } else {
                    DescriptorType::RegularFile
                },
                name,
            })
            .collect();
        self.table
            .push(Listing { entries })
            .map_err(|_| ErrorCode::InsufficientMemory)
    }

    fn sync(&mut self, _fd: Resource<Descriptor>) -> Result<(), ErrorCode> {
        Ok(())
    }

    fn create_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> Result<(), ErrorCode> {
        let (view, parts) = self.changing(&fd, &path)?;
        view.make_dir(&parts)
            .map_err(|error| self.write_error(&parts, error))
    }

    fn stat(&mut self, fd: Resource<Descriptor>) -> Result<DescriptorStat, ErrorCode> {
        Ok(stat_of(self.node(&fd)?))
    }

    fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        _flags: PathFlags,
        path: String,
    ) -> Result<DescriptorStat, ErrorCode> {
        Ok(stat_of(&self.lookup(&fd, &path)?))
    }

    fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        _flags: PathFlags,
        path: String,
        _atime: NewTimestamp,
        _mtime: NewTimestamp,
    ) -> Result<(), ErrorCode> {
        // Times are not kept; what may not be written may not be touched.
        self.lookup(&fd, &path)?;
        let (view, parts) = self.changing(&fd, &path)?;
        view.may_write(&parts)
            .map_err(|error| self.write_error(&parts, error))
    }

    fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        _flags: PathFlags,
        _from: String,
        _to_fd: Resource<Descriptor>,
        to: String,
    ) -> Result<(), ErrorCode> {
        Err(self.no_links(&fd, &to))
    }

    fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        _path_flags: PathFlags,
        path: String,
        open_flags: OpenFlags,
        flags: DescriptorFlags,
    ) -> Result<Resource<Descriptor>, ErrorCode> {
        let writes = flags.contains(DescriptorFlags::WRITE)
            || open_flags.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE);
        let descriptor = if writes && !open_flags.contains(OpenFlags::DIRECTORY) {
            let (view, parts) = self.changing(&fd, &path)?;
            let open = Open {
                create: open_flags.contains(OpenFlags::CREATE),
                exclusive: open_flags.contains(OpenFlags::EXCLUSIVE),
                truncate: open_flags.contains(OpenFlags::TRUNCATE),
            };
            let (place, file) = view
                .open_written(&parts, open)
                .map_err(|error| self.write_error(&parts, error))?;
            Descriptor {
                node: Node::File(place, Contents::Written(file)),
                writable: flags.contains(DescriptorFlags::WRITE),
            }
        } else {
            let node = self.lookup(&fd, &path)?;
            if open_flags.contains(OpenFlags::DIRECTORY) && matches!(node, Node::File(..)) {
                return Err(ErrorCode::NotDirectory);
            }
            Descriptor {
                node,
                writable: false,
            }
        };
        self.table
            .push(descriptor)
            .map_err(|_| ErrorCode::InsufficientMemory)
    }

    fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> Result<String, ErrorCode> {
        self.lookup(&fd, &path)?;
        Err(ErrorCode::Invalid)
    }

    fn remove_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> Result<(), ErrorCode> {
        let (view, parts) = self.changing(&fd, &path)?;
        view.remove(&parts, true)
            .map_err(|error| self.write_error(&parts, error))
    }

    fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        from: String,
        to_fd: Resource<Descriptor>,
        to: String,
    ) -> Result<(), ErrorCode> {
        let (view, from_parts) = self.changing(&fd, &from)?;
        let to_parts = self.components(&to_fd, &to)?;
        // A refusal names the path refused: the source, else the target.
        view.may_write(&from_parts)
            .map_err(|error| self.write_error(&from_parts, error))?;
        view.rename(&from_parts, &to_parts)
            .map_err(|error| self.write_error(&to_parts, error))
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        _target: String,
        path: String,
    ) -> Result<(), ErrorCode> {
        Err(self.no_links(&fd, &path))
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> Result<(), ErrorCode> {
        let (view, parts) = self.changing(&fd, &path)?;
        view.remove(&parts, false)
            .map_err(|error| self.write_error(&parts, error))
    }

    fn is_same_object(&mut self, fd: Resource<Descriptor>, other: Resource<Descriptor>) -> bool {
        match (self.place(&fd), self.place(&other)) {
            (Ok(one), Ok(two)) => one == two,
            _ => false,
        }
    }

    fn metadata_hash(&mut self, fd: Resource<Descriptor>) -> Result<MetadataHashValue, ErrorCode> {
        Ok(hash_of(self.node(&fd)?))
    }

    fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        _flags: PathFlags,
        path: String,
    ) -> Result<MetadataHashValue, ErrorCode> {
        Ok(hash_of(&self.lookup(&fd, &path)?))
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.table.delete(fd)?;
        Ok(())
    }
}

impl types::HostDirectoryEntryStream for VfsView<'_> {
    fn read_directory_entry(
        &mut self,
        listing: Resource<Listing>,
    ) -> Result<Option<DirectoryEntry>, ErrorCode> {
        let listing = self
            .table
            .get_mut(&listing)
            .map_err(|_| ErrorCode::BadDescriptor)?;
        Ok(listing.entries.pop_front())
    }

    fn drop(&mut self, listing: Resource<Listing>) -> wasmtime::Result<()> {
        self.table.delete(listing)?;
        Ok(())
    }
}

impl preopens::Host for VfsView<'_> {
    fn get_directories(&mut self) -> Vec<(Resource<Descriptor>, String)> {
        if self.vfs.is_none() {
            return Vec::new();
        }
        match self.table.push(Descriptor {
            node: Node::Dir(Place::Root),
            writable: false,
        }) {
            Ok(root) => vec![(root, "/".to_owned())],
            Err(_) => Vec::new(),
        }
    }
}
