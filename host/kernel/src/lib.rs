//! Cordon's native core.
//!
//! The kernel owns the contracts every other crate speaks: what a tool is and how a
//! call ends ([`tool`]), the agent's typed state and how staged writes apply
//! ([`state`]), the events that make up the audit trail ([`event`]), and which
//! tool calls may run ([`policy`]). It knows nothing of WebAssembly, SQL or
//! HTTP; adapters implement its ports.

pub mod agent;
pub mod approval;
pub mod ask;
pub mod cancel;
pub mod commit;
pub mod content;
pub mod delegation;
pub mod event;
pub mod file_rules;
pub mod files;
mod gate;
pub mod hooks;
pub mod merge;
pub mod message;
pub mod model;
mod nested;
mod phases;
pub mod policy;
pub mod progress;
pub mod reload;
pub mod requester;
pub mod run;
pub mod served;
pub mod skills;
pub mod spans;
pub mod state;
pub mod tool;
pub mod typed_state;
pub mod watching;

pub use agent::{AgentDef, AgentError, McpServerDecl, ModelSettings, StateDisagreement};
pub use approval::{Approval, ApprovalFuture, Approver, DeferApprovals};
pub use ask::{Answer, AskFuture, Asker, Deferred, Question, Unasked};
pub use cancel::{Cancellation, Cancelled};
pub use commit::{
    CallTiming, CommitError, CommitStore, Continued, DEFAULT_THREAD, Disposition, Durability,
    EndCause, Intent, MemoryCommitStore, ParentLink, PendingCall, PendingReason, Receipt,
    RunHeader, RunRecord, RunSummary, StepCommit, ToolRecord,
};
pub use content::{ContentBlock, ResourceBody};
pub use delegation::{DelegationLimits, SubAgent};
pub use event::{Capability, Denial, Event, EventLog, EventSink, LimitKind, LogLevel};
pub use file_rules::{FileAccess, FileRefusal, FileRuleKind, FileRules};
pub use files::{
    CommitTurn, FileChange, FileConflict, FileLedger, FileState, FileWrites, NoFiles, PublishError,
    QuotaExceeded, StepFiles,
};
pub use hooks::{
    CallStatus, ChosenHooks, GateVerdict, HookFuture, HookOutcome, HookPhase, HookSet,
    InferenceRequest, InferenceVerdict, NoHooks, Observation, StepSummary,
};
pub use merge::{Refusal, StateConflict, StepEffects, StepState, Writer};
pub use message::{CallResult, Message, Role, ToolCall};
pub use model::{
    ModelDelta, ModelError, ModelFuture, ModelProvider, ModelRequest, ModelResolver, ModelResponse,
    Retry, StopReason, Usage,
};
pub use policy::{Decider, Decision, PermissionPolicy, PolicyError, Rule, Verdict};
pub use progress::{Observer, Progress, Unobserved};
pub use reload::Reloadable;
pub use requester::Requester;
pub use run::{RunError, RunOutcome, Runtime};
pub use served::{NO_APPROVER, Served, ServedRun, Unanswered};
pub use skills::{
    ActiveSkills, SKILL_TOOL, SkillActivation, SkillCatalog, SkillChange, SkillRefusal, skill_of,
};
pub use spans::SpanContent;
pub use state::{
    MemoryStateStore, StagedState, StateError, StateOp, StateReader, StateSnapshot, StateStore,
    StateStoreError, StateWrite, Touch, apply_writes,
};
pub use tool::{
    CallContext, NestedCalls, Reach, ToolAnnotations, ToolCallOutcome, ToolError, ToolErrorKind,
    ToolFuture, ToolOutput, ToolSet, ToolSets, ToolSpec, call_committed, nearest_name,
    schema_problems, unknown_tool,
};
pub use typed_state::{MergePolicy, Scope, StateKey};
