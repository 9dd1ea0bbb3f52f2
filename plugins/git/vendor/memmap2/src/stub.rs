// Targets without memory mapping (WebAssembly, WASI): a "map" of a file is a
// copy of the mapped range on the heap, read when the map is made. Readers
// see the file as it was then, which is what read-only users of a map (such
// as gitoxide reading packs, indexes and objects) need. Writable maps of a
// file and executable maps stay unsupported; anonymous and private maps are
// plain heap memory.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

pub struct MmapInner {
    data: Vec<u8>,
}

impl MmapInner {
    /// A copy of `len` bytes of `file` from `offset`, leaving the file's
    /// cursor where it was (callers go on reading the same file).
    fn copy_of(len: usize, mut file: &File, offset: u64) -> io::Result<MmapInner> {
        let saved = file.stream_position()?;
        file.seek(SeekFrom::Start(offset))?;
        let mut data = vec![0; len];
        let read = file.read_exact(&mut data);
        file.seek(SeekFrom::Start(saved))?;
        read.map(|()| MmapInner { data })
    }

    pub fn map(
        len: usize,
        file: &File,
        offset: u64,
        _: bool,
        _: bool,
        _: bool,
    ) -> io::Result<MmapInner> {
        MmapInner::copy_of(len, file, offset)
    }

    pub fn map_exec(
        _: usize,
        _: &File,
        _: u64,
        _: bool,
        _: bool,
        _: bool,
    ) -> io::Result<MmapInner> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub fn map_mut(_: usize, _: &File, _: u64, _: bool, _: bool, _: bool) -> io::Result<MmapInner> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub fn map_copy(
        len: usize,
        file: &File,
        offset: u64,
        _: bool,
        _: bool,
        _: bool,
    ) -> io::Result<MmapInner> {
        MmapInner::copy_of(len, file, offset)
    }

    pub fn map_copy_read_only(
        len: usize,
        file: &File,
        offset: u64,
        _: bool,
        _: bool,
        _: bool,
    ) -> io::Result<MmapInner> {
        MmapInner::copy_of(len, file, offset)
    }

    pub fn map_anon(len: usize, _: bool, _: bool, _: Option<u8>, _: bool) -> io::Result<MmapInner> {
        Ok(MmapInner { data: vec![0; len] })
    }

    pub fn flush(&self, _: usize, _: usize) -> io::Result<()> {
        Ok(())
    }

    pub fn flush_async(&self, _: usize, _: usize) -> io::Result<()> {
        Ok(())
    }

    pub fn make_read_only(&mut self) -> io::Result<()> {
        Ok(())
    }

    pub fn make_exec(&mut self) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub fn make_mut(&mut self) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    pub fn ptr(&self) -> *const u8 {
        self.data.as_ptr()
    }

    #[inline]
    pub fn mut_ptr(&mut self) -> *mut u8 {
        self.data.as_mut_ptr()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.data.len()
    }

    #[allow(clippy::unnecessary_wraps)]
    pub fn check_safe_to_map(
        _file: &File,
        _offset: u64,
        _len: usize,
    ) -> Result<(), crate::MapIfSafeError> {
        Ok(())
    }
}

pub fn file_len(file: &File) -> io::Result<u64> {
    Ok(file.metadata()?.len())
}
