//! The MCP handler: `tools/list` from the runs' catalog, `tools/call` as one
//! step of a served run ([`crate::lanes`]), so a client's call passes the
//! same policy, hooks, sandbox and step commit as a model's, and runs while
//! other clients' calls run. A tool's own failure is a result
//! with `isError: true` and its typed kind in the text; an unknown tool or
//! arguments breaking the schema are protocol errors. A call the policy asks
//! about becomes elicitation ([`crate::approvals`]); a client that cannot
//! elicit gets a denial that says so. A call that changes the tools the run
//! offers (a skill it activates) tells every listening client, as a bundle
//! added on disk does.

#![allow(deprecated)] // `logging/setLevel` is deprecated in 2026-07-28 and still served to 2025 clients.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tracing::Instrument;

use cordon_kernel::{
    Asker, CallResult, Cancellation, DeferApprovals, Deferred, PendingCall, Requester, Served,
    ToolCall, ToolRecord, Unanswered,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InputRequests, InputRequiredResult, ListToolsResult, LoggingLevel, PaginatedRequestParams,
    ProtocolVersion, ResourceContents, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscriptionFilter, Tool,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, SubscriptionContext, SubscriptionSink,
};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::approvals::{self, Answered, Elicit};
use crate::catalog::{Catalog, CatalogError};
use crate::lanes::Lanes;
use crate::questions::{self, AskBetween, AskDuring, NobodyToAsk};
use crate::relay::{self, Audience};
use crate::sealed::{APPROVAL, Round, Sealed};

/// What the server tells clients about itself.
const INSTRUCTIONS: &str = "Every tool runs in Cordon's WebAssembly sandbox with only the grants its bundle declares and the operator approved; each call passes the operator's permission policy and hooks and is committed to Cordon's run store.";

/// Cordon's tools served to MCP clients. Each session gets a clone: the runs
/// and the catalog are shared, the session's logging level is its own.
pub struct CordonMcp {
    shared: Arc<Shared>,
    /// The level `logging/setLevel` asked for in this session (2025 clients).
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
}

impl Clone for CordonMcp {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            log_level: Arc::default(),
        }
    }
}

struct Shared {
    lanes: Lanes,
    catalog: RwLock<Arc<Catalog>>,
    sealed: Sealed,
    /// What a person approving a call of a tool that runs outside any
    /// sandbox is told, by tool name.
    unsandboxed: Arc<BTreeMap<String, String>>,
    calls: AtomicU64,
    /// The clients told when the tools change: sessions that initialized
    /// (stdio, 2025 HTTP sessions) and 2026 `subscriptions/listen` streams.
    listeners: Mutex<Listeners>,
}

#[derive(Default)]
struct Listeners {
    peers: Vec<Peer<RoleServer>>,
    streams: Vec<SubscriptionSink>,
}

impl CordonMcp {
    /// A server for the runs of `lanes`; the tools `unsandboxed` names run
    /// outside any sandbox, as it says.
    pub fn new(lanes: Lanes, unsandboxed: BTreeMap<String, String>) -> Result<Self, CatalogError> {
        let catalog = Catalog::new(lanes.offered())?;
        let sealed = Sealed::new().map_err(|error| CatalogError::Schema {
            tool: String::new(),
            reason: error.message.to_string(),
        })?;
        Ok(Self {
            shared: Arc::new(Shared {
                lanes,
                catalog: RwLock::new(Arc::new(catalog)),
                sealed,
                unsandboxed: Arc::new(unsandboxed),
                calls: AtomicU64::new(0),
                listeners: Mutex::new(Listeners::default()),
            }),
            log_level: Arc::default(),
        })
    }

    /// End the served runs, once no client is left.
    pub async fn close(&self) -> Result<(), cordon_kernel::RunError> {
        self.shared.lanes.close().await
    }

    /// Offer the runs' tools as they are now, and tell every listening
    /// client when that changed what `tools/list` shows. A set of tools whose
    /// names collide keeps the listing in force and says why.
    pub async fn tools_changed(&self) -> Result<bool, CatalogError> {
        let next = Catalog::new(self.shared.lanes.offered())?;
        let changed = next.tools() != self.catalog().tools();
        if !changed {
            return Ok(false);
        }
        *self
            .shared
            .catalog
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(next);
        let (peers, streams) = {
            let mut listeners = self
                .shared
                .listeners
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            listeners.peers.retain(|peer| !peer.is_transport_closed());
            (listeners.peers.clone(), listeners.streams.clone())
        };
        for peer in peers {
            if let Err(error) = peer.notify_tool_list_changed().await {
                tracing::debug!(%error, "a client was not told the tools changed");
            }
        }
        for stream in streams {
            if let Err(error) = stream.notify_tool_list_changed().await {
                tracing::debug!(%error, "a listen stream was not told the tools changed");
            }
        }
        Ok(true)
    }

    fn listeners(&self) -> std::sync::MutexGuard<'_, Listeners> {
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many tools are offered.
    pub fn tool_count(&self) -> usize {
        self.catalog().tools().len()
    }

    /// The id of the first served run, which serves every request that
    /// arrives while no other runs.
    pub fn run_id(&self) -> String {
        self.shared.lanes.first_run_id()
    }

    fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(
            &self
                .shared
                .catalog
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Run the call `request` names as one step of the run.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let catalog = self.catalog();
        let resolved = catalog.resolve(&request.name, &args)?;
        let stateless = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        let elicits = context
            .client_capabilities()
            .and_then(|capabilities| capabilities.elicitation)
            .is_some();
        let round = self.shared.sealed.open(
            &request.name,
            &args,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        )?;
        let answered = round.approval.clone().map(Answered);
        let number = self.shared.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let call = ToolCall {
            id: format!("mcp-{number}"),
            name: resolved.tool.clone(),
            args: args.clone(),
        };
        // A 2026-07-28 request names its own level; a 2025 session's stands
        // for each of its requests.
        let log_level = context.meta.log_level().or_else(|| {
            (!stateless)
                .then(|| {
                    *self
                        .log_level
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                })
                .flatten()
        });
        let audience = Audience {
            peer: context.peer.clone(),
            progress: context.meta.get_progress_token(),
            log_level,
        };
        let elicit = Elicit::new(context.peer.clone(), Arc::clone(&self.shared.unsandboxed));
        let (approver, unanswered): (&dyn cordon_kernel::Approver, Unanswered) =
            match (&answered, stateless, elicits) {
                (Some(answer), _, _) => (answer, Unanswered::Deny),
                (None, true, true) => (&DeferApprovals, Unanswered::Withdraw),
                (None, false, true) => (&elicit, Unanswered::Deny),
                (None, _, false) => (&DeferApprovals, Unanswered::Deny),
            };
        let asker: Arc<dyn Asker> = match (stateless, elicits) {
            (_, false) => Arc::new(NobodyToAsk),
            (false, true) => Arc::new(AskDuring(context.peer.clone())),
            (true, true) => Arc::new(AskBetween(round.answers.clone())),
        };
        let cancel = Cancellation::new();
        let requester = Requester {
            cancel: cancel.clone(),
            asker: Some(asker),
        };
        // A call cancelled while it waits for a run never runs, and nothing
        // of it commits.
        let lane = tokio::select! {
            lane = self.shared.lanes.take(&resolved.tool) => {
                lane.map_err(|error| ErrorData::internal_error(error.to_string(), None))?
            }
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled before it ran", None));
            }
        };
        // A client's `notifications/cancelled` stops the call's instance; the
        // step commits what happened all the same. The run is free again
        // once it has, before the call's last notifications are sent.
        let (requester, cancelled) = (&requester, &context.ct);
        let served = relay::relayed(audience, async move {
            let served = {
                let served = lane.run().call(vec![call], approver, unanswered, requester);
                tokio::pin!(served);
                tokio::select! {
                    served = &mut served => served,
                    () = cancelled.cancelled() => {
                        cancel.cancel();
                        served.await
                    }
                }
            };
            drop(lane);
            served
        })
        .await;
        match served {
            Ok(Served::Committed {
                records,
                offers_changed,
            }) => {
                if offers_changed && let Err(error) = self.tools_changed().await {
                    tracing::warn!(%error, "the tools a call changed are not offered");
                }
                Ok(result(&records, resolved.wraps, elicits).into())
            }
            Ok(Served::Withdrawn(pending)) => {
                Ok(self.ask_approval(&request, &args, &pending, &round)?.into())
            }
            Ok(Served::Asking(deferred)) => Ok(self
                .ask_questions(&request, &args, &deferred, &round)?
                .into()),
            Err(error) => Err(ErrorData::internal_error(
                format!("the call could not be committed: {error}"),
                None,
            )),
        }
    }

    /// The `input_required` result asking about the first of `pending`,
    /// its state carrying what `round` brought.
    fn ask_approval(
        &self,
        request: &CallToolRequestParams,
        args: &Value,
        pending: &[PendingCall],
        round: &Round,
    ) -> Result<InputRequiredResult, ErrorData> {
        let first = pending
            .first()
            .ok_or_else(|| ErrorData::internal_error("nothing to ask about", None))?;
        let note = self.shared.unsandboxed.get(&first.call.name);
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL.to_owned(),
            approvals::request(first, note.map(String::as_str))?,
        );
        let state = self.shared.sealed.seal(&request.name, args, true, round)?;
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The `input_required` result asking the tool's `deferred` questions,
    /// its state carrying what `round` brought.
    fn ask_questions(
        &self,
        request: &CallToolRequestParams,
        args: &Value,
        deferred: &[Deferred],
        round: &Round,
    ) -> Result<InputRequiredResult, ErrorData> {
        let mut requests = InputRequests::new();
        for asked in deferred {
            let input = questions::request(&asked.tool, &asked.question).map_err(|unasked| {
                ErrorData::internal_error(
                    format!("the question cannot be asked: {unasked:?}"),
                    None,
                )
            })?;
            requests.insert(asked.question.key.clone(), input);
        }
        let state = self.shared.sealed.seal(&request.name, args, false, round)?;
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

/// The MCP result of the one call in `records`: its output as
/// `structuredContent` (inside `{"result": ...}` when the tool `wraps` or
/// the output is not an object) and as text (a string output is that text
/// itself, any other its JSON), then the content blocks it carries. An
/// output of `null` with blocks is the blocks alone.
fn result(records: &[ToolRecord], wraps: bool, elicits: bool) -> CallToolResult {
    let Some(record) = records.first() else {
        return CallToolResult::error(vec![ContentBlock::text("the call left no record")]);
    };
    let blocks = record.blocks.iter().map(block);
    match &record.result {
        Some(CallResult::Output(Value::Null)) if !record.blocks.is_empty() => {
            CallToolResult::success(blocks.collect())
        }
        Some(CallResult::Output(value)) => {
            let mut result = if value.is_object() && !wraps {
                CallToolResult::structured(value.clone())
            } else {
                let text = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(serde_json::json!({ "result": value }));
                result
            };
            result.content.extend(blocks);
            result
        }
        Some(CallResult::Error(error)) => {
            let hint = if !elicits && error.message.contains(cordon_kernel::NO_APPROVER) {
                " (this client declares no elicitation, so Cordon cannot ask its user; allow the tool in the permissions file, or use a client that supports elicitation)"
            } else {
                ""
            };
            CallToolResult::error(vec![ContentBlock::text(format!(
                "{}: {}{hint}",
                error.kind, error.message
            ))])
        }
        None => CallToolResult::error(vec![ContentBlock::text("the call has no result")]),
    }
}

/// A Cordon content block as MCP carries it.
fn block(block: &cordon_kernel::ContentBlock) -> ContentBlock {
    use cordon_kernel::{ContentBlock as Cordon, ResourceBody};
    match block {
        Cordon::Text { text } => ContentBlock::text(text.clone()),
        Cordon::Image { mime_type, data } => ContentBlock::image(data.clone(), mime_type.clone()),
        Cordon::Audio { mime_type, data } => ContentBlock::audio(data.clone(), mime_type.clone()),
        Cordon::Resource {
            uri,
            mime_type,
            body,
        } => {
            let contents = match body {
                ResourceBody::Text(text) => ResourceContents::text(text.clone(), uri.clone()),
                ResourceBody::Blob(blob) => ResourceContents::blob(blob.clone(), uri.clone()),
            };
            ContentBlock::resource(match mime_type {
                Some(mime_type) => contents.with_mime_type(mime_type.clone()),
                None => contents,
            })
        }
    }
}

impl ServerHandler for CordonMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("cordon", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.catalog().tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalog().tool(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = crate::trace::served_call(&request.name, &context);
        self.call(request, context).instrument(span).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.listeners().peers.push(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        self.listeners().streams.push(sink);
        context.cancelled().await;
        self.listeners().streams.retain(|stream| *stream.id() != id);
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(request.level);
        Ok(())
    }
}
