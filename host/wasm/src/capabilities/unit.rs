//! What a capability is to the host, in two traits that know neither the
//! manifest as a whole, nor the bundle, nor the store a call runs in.
//!
//! [`Grant`] is its part of a manifest: the section under `[grants]` it
//! reads, how that section is checked, what an operator's approval of it
//! covers, how the untrusted profile narrows it, and how `plugins check` and
//! `cordon grants` describe it. [`Imports`] is its part of a call: the view
//! of one call its imports see, linked into a store of any type through a
//! getter, as wasmtime links WASI. The registration list in the
//! capabilities' own module puts the units together; nothing else names
//! them one by one.

use wasmtime::component::{HasData, Linker};

use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;

/// One grant kind's section of a manifest, and what is judged of it.
pub(crate) trait Grant {
    /// Where its lines come in an operator's list: lower first.
    const SAID: u8;

    /// What a manifest asks for under its key.
    type Asked;

    /// Refuse what a bundle of `kind` may not ask, naming the field and value.
    fn validate(
        asked: &Self::Asked,
        kind: BundleKind,
        check: &Validator<'_>,
    ) -> Result<(), ManifestError>;

    /// Whether nothing is asked.
    fn is_empty(asked: &Self::Asked) -> bool;

    /// What is asked, one line per grant, for an operator.
    fn describe(asked: &Self::Asked) -> Vec<String>;

    /// What of `asked` an approval of `approved` does not cover, one line
    /// each: a bundle that asks it is refused until the operator approves.
    fn beyond(asked: &Self::Asked, approved: &Self::Asked) -> Vec<String>;

    /// What of `asked` an approval of `approved` leaves out without refusing
    /// the bundle, one line each: the grant is narrowed to the approval.
    fn narrowed(_asked: &Self::Asked, _approved: &Self::Asked) -> Vec<String> {
        Vec::new()
    }

    /// Check an approval's own value of the grant: the first problem as the
    /// field under the grant's key (such as `[0]`), the value, and why.
    fn check_approved(_approved: &Self::Asked) -> Result<(), (String, String, String)> {
        Ok(())
    }

    /// Narrow `asked` to what untrusted code is granted; what was taken
    /// away, one line each with the reason.
    fn untrusted(asked: &mut Self::Asked) -> Vec<String>;
}

/// One capability's imports, linked into a store of any type: `get` finds
/// the view of the call the store runs, as `add_to_linker_get_host` does
/// for WASI. The store's type is the registration list's to choose.
pub(crate) trait Imports: HasData {
    /// Link the imports into `linker`.
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()>;
}
