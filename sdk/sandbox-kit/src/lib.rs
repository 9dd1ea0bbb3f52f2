//! The core of Cordon's sandbox backends, independent of the component model
//! so it builds and tests natively: workspace paths ([`path`]), the layers of
//! a workspace ([`Base`] with [`DirBase`] and [`EmptyBase`], [`Staging`] with
//! [`MemoryStaging`]) stacked as one [`FileSystem`] ([`Overlay`] or
//! [`Direct`]), with the run's active skills' folders mounted beside it
//! read-only ([`Mounted`]), the operations of the WIT `workspace` interface
//! ([`workspace`]) and the in-process command language behind `exec`
//! ([`shell`]), which hands scripts of other languages to sandboxed
//! [`interpreters`]. Nothing here runs anything on the host.

mod base;
mod dir_base;
mod direct;
mod error;
mod fs;
pub mod interpreters;
mod mounted;
mod overlay;
pub mod path;
mod pattern;
mod search;
pub mod shell;
mod staging;
pub mod workspace;

pub use base::{Base, EmptyBase};
pub use dir_base::DirBase;
pub use direct::Direct;
pub use error::{Error, Result};
pub use fs::{FileSystem, Kind, Meta, Node, Prune};
pub use interpreters::{Interpreters, Invocation, NoInterpreters, NotRun, Ran};
pub use mounted::Mounted;
pub use overlay::Overlay;
pub use staging::{MemoryStaging, Staged, Staging};
