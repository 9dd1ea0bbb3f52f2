//! WASI's filesystem for an interpreter, served from its [`View`] instead of
//! the real file system: one preopened directory, `/`, under which only the
//! view's tree exists. Every path a component hands WASI reaches the host
//! (none is resolved inside the guest against a missing preopen), so a
//! reach outside the tree, a write of any kind and a path a file rule
//! refuses are each a typed error to the component and a `denied` event.
//! Nothing can be created, changed, removed, renamed or linked; there are no
//! symbolic links to follow.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};

use bytes::Bytes;
use cordon_kernel::Capability;
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::{DynInputStream, InputStream, Pollable, StreamError, StreamResult};

use super::view::{Contents, Found, Node, Place, View};
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
pub(crate) struct ReadOnlyFs;

impl HasData for ReadOnlyFs {
    type Data<'a> = VfsView<'a>;
}

impl Imports for ReadOnlyFs {
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

    /// Refuse a change to `path` under `fd`: nothing of the tree changes.
    fn read_only(&self, fd: &Resource<Descriptor>, path: &str, what: &str) -> ErrorCode {
        let target = self
            .place(fd)
            .map_or_else(|_| path.to_owned(), |place| joined(&place, path));
        self.refuse(
            &target,
            &format!("{what}: an interpreter sees its files read-only"),
            ErrorCode::ReadOnly,
        )
    }

    /// What `path` under the directory `fd` leads to.
    fn lookup(&self, fd: &Resource<Descriptor>, path: &str) -> Result<Node, ErrorCode> {
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
        _error: Resource<wasmtime_wasi::p2::bindings::io::error::Error>,
    ) -> Option<ErrorCode> {
        None
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
        _offset: Filesize,
    ) -> Result<Resource<wasmtime_wasi::p2::DynOutputStream>, ErrorCode> {
        Err(self.read_only(&fd, "", "writing"))
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> Result<Resource<wasmtime_wasi::p2::DynOutputStream>, ErrorCode> {
        Err(self.read_only(&fd, "", "appending"))
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
        self.node(&fd)?;
        Ok(DescriptorFlags::READ)
    }

    fn get_type(&mut self, fd: Resource<Descriptor>) -> Result<DescriptorType, ErrorCode> {
        Ok(stat_of(self.node(&fd)?).type_)
    }

    fn set_size(&mut self, fd: Resource<Descriptor>, _size: Filesize) -> Result<(), ErrorCode> {
        Err(self.read_only(&fd, "", "truncating"))
    }

    fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        _atime: NewTimestamp,
        _mtime: NewTimestamp,
    ) -> Result<(), ErrorCode> {
        Err(self.read_only(&fd, "", "setting times"))
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
        _buffer: Vec<u8>,
        _offset: Filesize,
    ) -> Result<Filesize, ErrorCode> {
        Err(self.read_only(&fd, "", "writing"))
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
        Err(self.read_only(&fd, &path, "creating a directory"))
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
        Err(self.read_only(&fd, &path, "setting times"))
    }

    fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        _flags: PathFlags,
        from: String,
        _to_fd: Resource<Descriptor>,
        _to: String,
    ) -> Result<(), ErrorCode> {
        Err(self.read_only(&fd, &from, "linking"))
    }

    fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        _path_flags: PathFlags,
        path: String,
        open_flags: OpenFlags,
        flags: DescriptorFlags,
    ) -> Result<Resource<Descriptor>, ErrorCode> {
        let writes = flags.intersects(DescriptorFlags::WRITE | DescriptorFlags::MUTATE_DIRECTORY)
            || open_flags.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE);
        if writes {
            return Err(self.read_only(&fd, &path, "opening for writing"));
        }
        let node = self.lookup(&fd, &path)?;
        if open_flags.contains(OpenFlags::DIRECTORY) && matches!(node, Node::File(..)) {
            return Err(ErrorCode::NotDirectory);
        }
        self.table
            .push(Descriptor { node })
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
        Err(self.read_only(&fd, &path, "removing a directory"))
    }

    fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        from: String,
        _to_fd: Resource<Descriptor>,
        _to: String,
    ) -> Result<(), ErrorCode> {
        Err(self.read_only(&fd, &from, "renaming"))
    }

    fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        _target: String,
        path: String,
    ) -> Result<(), ErrorCode> {
        Err(self.read_only(&fd, &path, "creating a link"))
    }

    fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> Result<(), ErrorCode> {
        Err(self.read_only(&fd, &path, "removing a file"))
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
        }) {
            Ok(root) => vec![(root, "/".to_owned())],
            Err(_) => Vec::new(),
        }
    }
}
