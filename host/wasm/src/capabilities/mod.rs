//! Grants as capabilities, and the one list that registers them. Each kind
//! of grant is one module that owns its manifest section and its checks, the
//! context one call holds of it, and the imports through which a component
//! uses it: [`dirs`] (the filesystem), [`env`], [`state`], [`tools`],
//! [`staging`], [`interpreters`] (which a backend's shell runs, and which see
//! a read-only view of their own), [`network`], [`elicit`] (a tool's
//! questions to the person it runs for), and the ones every bundle has,
//! [`log`], [`config`] and (for a tool) [`content`]. A module is a
//! [`unit::Grant`] for its manifest section and a [`unit::Imports`] for its
//! imports, and knows neither the store nor the bundle.
//!
//! This module is the registration list: the manifest's `[grants]`, their
//! checks, approval, narrowing and description follow from [`grants!`]; the
//! other sections capabilities own are checked by [`check_sections`]; the
//! fields of a call's store are [`Contexts`], prepared by
//! [`Contexts::prepare`]; and [`add_to_linker`] links every import into any
//! store that is [`CallData`]. Adding a capability is adding it here.

pub(crate) mod config;
pub(crate) mod content;
pub(crate) mod dirs;
pub(crate) mod elicit;
pub(crate) mod env;
pub(crate) mod interpreters;
pub(crate) mod log;
pub(crate) mod network;
pub(crate) mod staging;
pub(crate) mod state;
pub(crate) mod tools;
pub(crate) mod unit;

use std::collections::BTreeMap;
use std::sync::Arc;

use cordon_kernel::{Asker, ContentBlock, FileWrites, StateReader, StateWrite};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiView};
use wasmtime_wasi_http::WasiHttpView;

use crate::audit::Audit;
use crate::bindings::cordon::plugin::{hook_types, types};
use crate::limits::Limits;
use crate::manifest::checks::{ManifestError, Validator};
use crate::manifest::kind::BundleKind;
use crate::state_keys::{self, StateDeclaration};
use crate::workspace::staging::CallFiles;

use config::ConfigView;
use content::ContentOutput;
use dirs::guard::FileGuard;
use dirs::wasi::GuardedFs;
use dirs::{DirAccess, ResolvedDir};
use elicit::{ElicitAccess, ElicitView};
use interpreters::vfs::{Vfs, VfsView};
use interpreters::{CommandIo, InterpreterAccess, InterpretersView};
use log::{LogOutput, LogView};
use network::grant::Allowlist;
use network::http::HttpAccess;
use network::policy::NetworkPolicy;
use staging::StagingView;
use state::{StateAccess, StateView};
use tools::{ToolAccess, ToolsView};
use unit::{Grant, Imports};

pub use dirs::{DirGrant, DirMode};
pub(crate) use interpreters::{CommandTable, InterpreterTable};
pub use network::secrets::SecretUse;
pub use staging::StagingPolicy;
pub use state::StateGrants;

/// Declares [`Grants`], one field per grant kind under `[grants]`, named
/// with the unit that judges it and the type of what it asks (which must be
/// the unit's [`Grant::Asked`]), and every judgement over all of them.
macro_rules! grants {
    ($($(#[$attribute:meta])* $field:ident($unit:ty): $asked:ty,)*) => {
        /// Capabilities a bundle requests. Everything absent is refused.
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Grants {
            $(
                $(#[$attribute])*
                #[serde(default)]
                pub $field: $asked,
            )*
        }

        impl Grants {
            /// Whether nothing is asked for.
            pub fn is_empty(&self) -> bool {
                $(<$unit as Grant>::is_empty(&self.$field))&&*
            }

            /// What these grants ask for that `approved` does not cover, one
            /// line per grant; empty when `approved` covers everything.
            /// Network origins are left out: an approval may grant fewer than
            /// asked (see [`Grants::narrowed`]).
            pub fn beyond(&self, approved: &Grants) -> Vec<String> {
                said(vec![$((
                    <$unit as Grant>::SAID,
                    <$unit as Grant>::beyond(&self.$field, &approved.$field),
                )),*])
            }

            /// What these grants ask for that `approved` leaves out without
            /// refusing the bundle, one line each: the origins a bundle may
            /// not connect to although it asks to.
            pub fn narrowed(&self, approved: &Grants) -> Vec<String> {
                said(vec![$((
                    <$unit as Grant>::SAID,
                    <$unit as Grant>::narrowed(&self.$field, &approved.$field),
                )),*])
            }

            /// What is granted, one line per grant, for an operator; empty
            /// when nothing is.
            pub fn summary(&self) -> Vec<String> {
                said(vec![$((
                    <$unit as Grant>::SAID,
                    <$unit as Grant>::describe(&self.$field),
                )),*])
            }

            /// Refuse what a bundle of `kind` may not ask.
            pub(crate) fn validate(
                &self,
                kind: BundleKind,
                check: &Validator<'_>,
            ) -> Result<(), ManifestError> {
                $(<$unit as Grant>::validate(&self.$field, kind, check)?;)*
                Ok(())
            }

            /// Check an approval's own grants: the first problem as its
            /// field under `grants`, the value, and why.
            pub(crate) fn check_approved(&self) -> Result<(), (String, String, String)> {
                $(
                    <$unit as Grant>::check_approved(&self.$field).map_err(
                        |(field, value, reason)| {
                            (format!("{}{field}", stringify!($field)), value, reason)
                        },
                    )?;
                )*
                Ok(())
            }

            /// Narrow these grants to untrusted code's; what was taken away,
            /// one line each with the reason.
            pub(crate) fn untrusted(&mut self) -> Vec<String> {
                let mut taken = Vec::new();
                $(taken.extend(<$unit as Grant>::untrusted(&mut self.$field));)*
                taken
            }
        }
    };
}

grants! {
    /// Environment variables passed through from the host, by name.
    env(env::Env): Vec<String>,
    /// Tools the component may call through `cordon:plugin/tools`.
    tools(tools::Tools): Vec<String>,
    /// State keys the component may read and write.
    state(state::State): StateGrants,
    /// Directories preopened for the component.
    dirs(dirs::Dirs): Vec<DirGrant>,
    /// Origins the component may reach, such as `https://api.example.com`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    network(network::grant::Network): Vec<String>,
    /// Whether a tool may ask the person its call runs for questions
    /// through `cordon:plugin/elicit`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    elicit(elicit::Elicit): bool,
}

/// The lines of every grant kind, in the order an operator reads them.
fn said(mut lines: Vec<(u8, Vec<String>)>) -> Vec<String> {
    lines.sort_by_key(|(said, _)| *said);
    lines.into_iter().flat_map(|(_, lines)| lines).collect()
}

/// The sections of a manifest beyond `[grants]` that capabilities own, as read.
pub(crate) struct Sections {
    /// `plugin.staging`.
    pub(crate) staging: Option<StagingPolicy>,
    /// `[config]`.
    pub(crate) config: Option<toml::Table>,
    /// `[interpreter]`.
    pub(crate) interpreter: Option<InterpreterTable>,
    /// `[command]`.
    pub(crate) command: Option<CommandTable>,
    /// `[secrets]`.
    pub(crate) secrets: BTreeMap<String, SecretUse>,
    /// `[state]`.
    pub(crate) state: BTreeMap<String, StateDeclaration>,
}

/// Those sections as checked.
pub(crate) struct Checked {
    pub(crate) staging: StagingPolicy,
    pub(crate) config: Value,
    pub(crate) commands: Vec<String>,
    pub(crate) secrets: BTreeMap<String, SecretUse>,
    pub(crate) state: BTreeMap<String, StateDeclaration>,
}

/// Check what a manifest of `kind` asks: `plugin.staging`, its `grants`,
/// then the other sections capabilities own, each error naming the field
/// and value.
pub(crate) fn check_sections(
    kind: BundleKind,
    grants: &Grants,
    sections: Sections,
    check: &Validator<'_>,
) -> Result<Checked, ManifestError> {
    let staging = staging::validate(sections.staging, kind, check)?;
    grants.validate(kind, check)?;
    network::secrets::validate(&sections.secrets, &grants.network, check)?;
    state_keys::validate(&sections.state, &grants.state, check)?;
    let config = config::from_table(sections.config, check)?;
    let granted = (!grants.is_empty()).then(|| grants.summary());
    let commands =
        interpreters::validate(sections.interpreter, sections.command, kind, granted, check)?;
    Ok(Checked {
        staging,
        config,
        commands,
        secrets: sections.secrets,
        state: sections.state,
    })
}

/// What a call's store holds of each capability: a fresh context per call.
pub(crate) struct Contexts {
    pub(crate) log: LogOutput,
    /// The content blocks a tool attached to its result.
    pub(crate) content: ContentOutput,
    /// Whom a tool's questions reach, when its bundle may ask.
    pub(crate) elicit: ElicitAccess,
    pub(crate) dirs: DirAccess,
    pub(crate) state: StateAccess,
    /// The call's outgoing HTTP, judged against its bundle's allowlist.
    pub(crate) http: HttpAccess,
    /// Present only for a bundle granted tool calls.
    pub(crate) tools: Option<ToolAccess>,
    /// Present only for a sandbox backend's call in a staged run.
    pub(crate) staging: Option<CallFiles>,
    /// Present only for an interpreter's run: the file system it sees.
    pub(crate) vfs: Option<Vfs>,
    /// Present only for a sandbox backend's call that may run interpreters.
    pub(crate) interpreters: Option<InterpreterAccess>,
}

/// What one call is given, from which its contexts are prepared.
pub(crate) struct CallInputs<'a> {
    /// The bundle's grants in force.
    pub(crate) grants: &'a Grants,
    /// The bundle, by name.
    pub(crate) bundle: &'a str,
    /// The secrets it uses and where each may go.
    pub(crate) secrets: &'a BTreeMap<String, SecretUse>,
    pub(crate) limits: Limits,
    /// What is called, for the trail.
    pub(crate) label: &'a str,
    pub(crate) audit: &'a Audit,
    pub(crate) guard: Arc<FileGuard>,
    /// The directories it sees: its grants as the run narrows them.
    pub(crate) dirs: &'a [ResolvedDir],
    /// Where it may connect.
    pub(crate) allowlist: &'a Arc<Allowlist>,
    pub(crate) network: &'a Arc<NetworkPolicy>,
    pub(crate) state: Arc<dyn StateReader>,
    pub(crate) tools: Option<ToolAccess>,
    pub(crate) staging: Option<CallFiles>,
    /// A command's streams, variables and args, for an interpreter's run,
    /// with the file system it sees.
    pub(crate) command: Option<(CommandIo, Vfs)>,
    pub(crate) interpreters: Option<InterpreterAccess>,
    /// Whom the call's questions reach.
    pub(crate) asker: Option<Arc<dyn Asker>>,
    /// Whether the call's result may carry content blocks: a tool's.
    pub(crate) attaching: bool,
    /// Whether the call runs on a thread of its own.
    pub(crate) own_thread: bool,
}

impl Contexts {
    /// Each capability's context for the call `inputs` describe, and its
    /// part of the call's WASI in `wasi`.
    pub(crate) fn prepare(
        inputs: CallInputs<'_>,
        wasi: &mut WasiCtxBuilder,
    ) -> wasmtime::Result<Self> {
        let limits = inputs.limits;
        let (log, vfs) = match inputs.command {
            None => (LogOutput::attach(wasi, limits.log_bytes), None),
            Some((io, vfs)) => {
                let log = LogOutput::attach_command(wasi, io.stdin, limits.output_bytes);
                wasi.args(&io.args);
                for (name, value) in &io.env {
                    wasi.env(name, value);
                }
                (log, Some(vfs))
            }
        };
        env::grant(wasi, &inputs.grants.env);
        dirs::preopen(wasi, inputs.dirs)?;
        let http = network::grant(
            wasi,
            network::Granted {
                bundle: inputs.bundle,
                secrets: inputs.secrets,
                allowlist: inputs.allowlist,
                policy: inputs.network,
                limits: limits.network,
            },
            inputs.audit,
            inputs.label,
        );
        Ok(Self {
            log,
            content: if inputs.attaching {
                ContentOutput::new(limits.output_bytes)
            } else {
                ContentOutput::refused()
            },
            elicit: ElicitAccess::new(inputs.grants.elicit, inputs.attaching, inputs.asker),
            dirs: DirAccess::new(inputs.guard, inputs.own_thread),
            state: StateAccess::new(inputs.state),
            http,
            tools: inputs.tools,
            staging: inputs.staging,
            vfs,
            interpreters: inputs.interpreters,
        })
    }

    /// Take out what the call staged, leaving the rest to be taken down
    /// with its instance. A backend's own layer of files fits its call quota
    /// already; a step's quota is the loop's to judge.
    pub(crate) fn take_effects(&mut self) -> Effects {
        let mut files = self
            .staging
            .take()
            .map(CallFiles::into_writes)
            .unwrap_or_default();
        if let Some(tools) = self.tools.take() {
            files.extend(tools.into_files());
        }
        Effects {
            writes: self.state.take_writes(),
            files,
            blocks_size: self.content.size(),
            blocks: self.content.take_blocks(),
        }
    }
}

/// What a finished call staged: state writes and file changes.
#[derive(Default)]
pub(crate) struct Effects {
    pub(crate) writes: Vec<StateWrite>,
    pub(crate) files: FileWrites,
    /// The content blocks a tool attached to its result, and their size.
    pub(crate) blocks: Vec<ContentBlock>,
    pub(crate) blocks_size: usize,
}

/// A store that runs one call, as its capabilities' imports reach it.
pub(crate) trait CallData: WasiView + WasiHttpView + Send + 'static {
    /// The parts of the call its capabilities' views are cut from.
    fn call(&mut self) -> CallParts<'_>;
}

/// The parts of one call: its capabilities' contexts and what they share.
pub(crate) struct CallParts<'a> {
    pub(crate) contexts: &'a mut Contexts,
    pub(crate) grants: &'a Grants,
    /// The bundle called, by name, and its `[config]`.
    pub(crate) bundle: &'a str,
    pub(crate) config: &'a Value,
    /// The tool, hook phase or backend operation called.
    pub(crate) label: &'a str,
    pub(crate) audit: &'a Audit,
    pub(crate) wasi: &'a mut WasiCtx,
    pub(crate) table: &'a mut ResourceTable,
}

/// Link WASI, the guarded filesystem over it, and every capability's
/// imports into a store that is [`CallData`].
pub(crate) fn add_to_linker<T: CallData>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    dirs::wasi::GuardedFilesystem::add_to_linker(linker, guarded_fs)?;
    types::add_to_linker::<T, TypesOnly>(linker, |_| TypesOnly)?;
    hook_types::add_to_linker::<T, TypesOnly>(linker, |_| TypesOnly)?;
    log::Log::add_to_linker(linker, log_view)?;
    content::Content::add_to_linker(linker, content_of)?;
    elicit::Elicit::add_to_linker(linker, elicit_view)?;
    config::Config::add_to_linker(linker, config_view)?;
    state::State::add_to_linker(linker, state_view)?;
    tools::Tools::add_to_linker(linker, tools_view)?;
    staging::Staging::add_to_linker(linker, staging_view)?;
    interpreters::RunInterpreters::add_to_linker(linker, interpreters_view)?;
    network::add_to_linker(linker, audit_of)
}

/// Link what an interpreter's imports may reach: WASI with its filesystem
/// served by the interpreter's read-only view instead of the host's, name
/// lookup refused, and nothing of Cordon's: an interpreter is granted
/// nothing.
pub(crate) fn add_interpreter_to_linker<T: CallData>(
    linker: &mut Linker<T>,
) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    interpreters::vfs::ViewFs::add_to_linker(linker, vfs_view)?;
    network::sockets::add_lookup_to_linker(linker, audit_of)
}

/// The interfaces that hold only types.
struct TypesOnly;

impl HasData for TypesOnly {
    type Data<'a> = TypesOnly;
}

impl types::Host for TypesOnly {}

impl hook_types::Host for TypesOnly {}

fn guarded_fs<T: CallData>(store: &mut T) -> GuardedFs<'_> {
    let call = store.call();
    GuardedFs {
        wasi: call.wasi,
        table: call.table,
        dirs: &mut call.contexts.dirs,
        audit: call.audit,
    }
}

fn audit_of<T: CallData>(store: &mut T) -> &Audit {
    store.call().audit
}

fn content_of<T: CallData>(store: &mut T) -> &mut ContentOutput {
    &mut store.call().contexts.content
}

fn log_view<T: CallData>(store: &mut T) -> LogView<'_> {
    let call = store.call();
    LogView {
        output: &mut call.contexts.log,
        audit: call.audit,
    }
}

fn elicit_view<T: CallData>(store: &mut T) -> ElicitView<'_> {
    let call = store.call();
    ElicitView {
        access: &mut call.contexts.elicit,
        label: call.label,
        audit: call.audit,
    }
}

fn config_view<T: CallData>(store: &mut T) -> ConfigView<'_> {
    ConfigView(store.call().config)
}

fn state_view<T: CallData>(store: &mut T) -> StateView<'_> {
    let call = store.call();
    StateView {
        grants: &call.grants.state,
        access: &mut call.contexts.state,
        audit: call.audit,
    }
}

fn tools_view<T: CallData>(store: &mut T) -> ToolsView<'_> {
    let call = store.call();
    ToolsView {
        bundle: call.bundle,
        granted: &call.grants.tools,
        label: call.label,
        access: call.contexts.tools.as_mut(),
        state: &mut call.contexts.state,
        audit: call.audit,
    }
}

fn staging_view<T: CallData>(store: &mut T) -> StagingView<'_> {
    let call = store.call();
    StagingView {
        files: call.contexts.staging.as_mut(),
        guard: &call.contexts.dirs.guard,
        audit: call.audit,
    }
}

fn interpreters_view<T: CallData>(store: &mut T) -> InterpretersView<'_> {
    let call = store.call();
    InterpretersView {
        access: call.contexts.interpreters.as_ref(),
        staging: call.contexts.staging.as_mut(),
        audit: call.audit,
    }
}

fn vfs_view<T: CallData>(store: &mut T) -> VfsView<'_> {
    let call = store.call();
    VfsView {
        vfs: call.contexts.vfs.as_ref(),
        table: call.table,
        audit: call.audit,
    }
}
