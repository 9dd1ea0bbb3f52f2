//! In-memory ports shared by the kernel's loop tests: a model that replays
//! turns and records what it was asked, and a tool set of plain functions.

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cordon_kernel::{
    AgentDef, CallContext, CallResult, EventLog, MemoryCommitStore, Message, ModelDelta,
    ModelError, ModelFuture, ModelProvider, ModelRequest, ModelResponse, PermissionPolicy, Reach,
    Rule, Runtime, StateOp, StateReader, StateWrite, StopReason, ToolAnnotations, ToolCall,
    ToolCallOutcome, ToolErrorKind, ToolFuture, ToolOutput, ToolSet, ToolSpec, Usage, Verdict,
};
use serde_json::{Value, json};

pub(crate) mod reloads;

/// What the model saw at each step.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub instructions: String,
    pub messages: Vec<Message>,
    pub tools: Vec<String>,
    pub state: BTreeMap<String, Value>,
}

/// Replays responses in order and records every request.
pub(crate) struct Replay {
    pub turns: Mutex<VecDeque<ModelResponse>>,
    pub seen: Mutex<Vec<Seen>>,
}

impl Replay {
    pub(crate) fn new(turns: Vec<ModelResponse>) -> Arc<Self> {
        Arc::new(Self {
            turns: Mutex::new(turns.into()),
            seen: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl ModelProvider for Replay {
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        deltas: &'a (dyn Fn(ModelDelta) + Send + Sync),
    ) -> ModelFuture<'a> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(Seen {
                instructions: request.instructions.to_owned(),
                messages: request.messages.to_vec(),
                tools: request.tools.iter().map(|tool| tool.name.clone()).collect(),
                state: request.state.clone(),
            });
            let turn = self
                .turns
                .lock()
                .unwrap()
                .pop_front()
                .ok_or_else(|| ModelError::Exhausted("no turn left".into()))?;
            deltas(ModelDelta::Text(turn.text.clone()));
            Ok(turn)
        })
    }
}

pub(crate) fn say(text: &str) -> ModelResponse {
    ModelResponse {
        text: text.into(),
        tool_calls: Vec::new(),
        usage: Usage::default(),
        stop: StopReason::EndTurn,
    }
}

pub(crate) fn call(calls: &[(&str, &str, Value)]) -> ModelResponse {
    ModelResponse {
        text: String::new(),
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                args: args.clone(),
            })
            .collect(),
        usage: Usage::default(),
        stop: StopReason::ToolUse,
    }
}

pub(crate) type Handler = Box<dyn Fn(&Value, &dyn StateReader) -> ToolCallOutcome + Send + Sync>;

/// Tools as plain functions, counting their calls.
pub(crate) struct Functions {
    pub tools: Vec<(ToolSpec, Handler)>,
    pub calls: AtomicUsize,
    pub during: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    pub rendezvous: Option<Arc<tokio::sync::Barrier>>,
    /// Tools that call another tool, through the call's gate, with their
    /// own arguments: (tool, callee).
    pub nests: Vec<(String, String)>,
    /// Tools whose every effect travels with their outcome.
    pub confined: Vec<String>,
}

impl Functions {
    pub(crate) fn new() -> Self {
        Self {
            tools: Vec::new(),
            calls: AtomicUsize::new(0),
            during: Mutex::new(None),
            rendezvous: None,
            nests: Vec::new(),
            confined: Vec::new(),
        }
    }

    /// Mark tool `name` as acting only through its outcome
    /// ([`Reach::Outcome`]), whatever its annotations say.
    pub(crate) fn confined(mut self, name: &str) -> Self {
        self.confined.push(name.into());
        self
    }

    /// Add tool `name`, which calls `callee` with its own arguments and
    /// returns what that call returns.
    pub(crate) fn nesting(
        mut self,
        name: &str,
        annotations: ToolAnnotations,
        callee: &str,
    ) -> Self {
        self = self.with(name, annotations, echo());
        self.nests.push((name.into(), callee.into()));
        self
    }

    pub(crate) fn with(
        mut self,
        name: &str,
        annotations: ToolAnnotations,
        handler: Handler,
    ) -> Self {
        self.tools.push((
            ToolSpec {
                name: name.into(),
                description: format!("the {name} tool"),
                input_schema: std::sync::Arc::new(json!({"type": "object"})),
                output_schema: None,
                annotations,
            },
            handler,
        ));
        self
    }

    pub(crate) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl ToolSet for Functions {
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|(spec, _)| spec.clone()).collect()
    }

    fn call<'a>(&'a self, name: &'a str, args: Value, context: CallContext) -> ToolFuture<'a> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if let Some((_, callee)) = self.nests.iter().find(|(tool, _)| tool == name) {
                let Some(nested) = &context.nested else {
                    return ToolCallOutcome {
                        files: Default::default(),
                        skills: Vec::new(),
                        events: Vec::new(),
                        result: Err(cordon_kernel::ToolError::new(
                            ToolErrorKind::Failed,
                            "no gate for nested calls",
                        )),
                        writes: Vec::new(),
                    };
                };
                return nested
                    .call(callee, args, context.state, context.files)
                    .await;
            }
            if let Some(rendezvous) = &self.rendezvous {
                rendezvous.wait().await;
            }
            if let Some(during) = self.during.lock().unwrap().as_ref() {
                during();
            }
            match self.tools.iter().find(|(spec, _)| spec.name == name) {
                Some((_, handler)) => handler(&args, context.state.as_ref()),
                None => ToolCallOutcome {
                    files: Default::default(),
                    skills: Vec::new(),
                    events: Vec::new(),
                    result: Err(cordon_kernel::ToolError::new(ToolErrorKind::NotFound, name)),
                    writes: Vec::new(),
                },
            }
        })
    }

    fn reach(&self, name: &str) -> Reach {
        if self.confined.iter().any(|tool| tool == name) {
            Reach::Outcome
        } else {
            Reach::Beyond
        }
    }
}

pub(crate) fn echo() -> Handler {
    Box::new(|args, _| ToolCallOutcome {
        files: Default::default(),
        skills: Vec::new(),
        events: Vec::new(),
        result: Ok(ToolOutput::new(args.clone())),
        writes: Vec::new(),
    })
}

pub(crate) fn counter() -> Handler {
    Box::new(|_, state| {
        let seen = state.get("count").unwrap().unwrap_or(json!(0));
        ToolCallOutcome {
            files: Default::default(),
            skills: Vec::new(),
            events: Vec::new(),
            result: Ok(ToolOutput::new(json!({ "saw": seen }))),
            writes: vec![StateWrite {
                key: "count".into(),
                op: StateOp::Increment { delta: 1 },
            }],
        }
    })
}

pub(crate) const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};
pub(crate) const EFFECTFUL: ToolAnnotations = ToolAnnotations {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
};

pub(crate) fn agent(default: Verdict, rules: &[(Verdict, &str)], max_steps: u32) -> AgentDef {
    let mut policy = PermissionPolicy::new(default);
    for (verdict, text) in rules {
        policy = policy.with_rule(Rule::parse(*verdict, text).unwrap());
    }
    AgentDef::new("test", "be brief", &["*"], max_steps, policy).unwrap()
}

pub(crate) struct Rig {
    pub model: Arc<Replay>,
    pub tools: Arc<Functions>,
    pub store: Arc<MemoryCommitStore>,
    pub runtime: Runtime,
}

pub(crate) fn rig(turns: Vec<ModelResponse>, tools: Functions) -> Rig {
    rig_on(turns, tools, Arc::new(MemoryCommitStore::new()))
}

/// A rig on `store`, as a new process on the same store would be.
pub(crate) fn rig_on(
    turns: Vec<ModelResponse>,
    tools: Functions,
    store: Arc<MemoryCommitStore>,
) -> Rig {
    let model = Replay::new(turns);
    let tools = Arc::new(tools);
    let runtime = Runtime::new(
        model.clone(),
        tools.clone(),
        store.clone(),
        Arc::new(EventLog::new()),
    );
    Rig {
        model,
        tools,
        store,
        runtime,
    }
}

pub(crate) fn tool_result(message: &Message) -> Option<&CallResult> {
    match message {
        Message::Tool { result, .. } => Some(result),
        _ => None,
    }
}
