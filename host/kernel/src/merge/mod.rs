//! Merging one step's state writes. Every call and hook of a step stages its
//! writes alone; [`StepState`] admits each batch in a fixed order, checking
//! that every key is declared, that every value it leaves fits the key's
//! schema, and that it merges with the batches admitted before it under the
//! key's [`MergePolicy`]. A batch that is undeclared or off-schema is refused
//! on its own (its call fails); a batch that cannot merge fails the whole step
//! with a [`StateConflict`] that names the key and every writer.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub(crate) mod writer;

pub use writer::Writer;

use crate::agent::AgentDef;
use crate::files::{FileConflict, FileWrites};
use crate::skills::{ActiveSkills, SkillActivation, SkillChange};
use crate::state::{StateReader, StateStoreError, StateWrite, Touch};
use crate::typed_state::{MergePolicy, Scope};

/// Writes to one key in one step that its merge policy cannot combine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error(
    "state conflict on key `{key}` ({policy}): {detail}; writers: {}",
    writers.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
)]
pub struct StateConflict {
    /// The key.
    pub key: String,
    /// Its merge policy.
    pub policy: MergePolicy,
    /// Every writer that touched the key in the step, in admission order.
    pub writers: Vec<Writer>,
    /// What could not be merged.
    pub detail: String,
}

/// Why a batch of writes was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The batch writes a key the agent does not declare, or leaves a value its
    /// schema rejects, or applies an operation to a value of the wrong shape.
    /// Only this batch is discarded.
    #[error("{0}")]
    Rejected(String),
    /// The batch cannot merge with earlier ones; the step fails.
    #[error(transparent)]
    Conflict(StateConflict),
}

/// Where writes are admitted while a step runs: the step's own state, or the
/// state a nested call's gate admits its hooks' writes into. The gate and the
/// hook phases judge and filter calls the same way whichever it is.
pub(crate) trait Admit: Send {
    /// The state as the writes admitted so far leave it.
    fn view(&self) -> Arc<dyn StateReader>;
    /// Admit `writes` by `writer`, or say why not.
    fn admit(&mut self, writer: Writer, writes: Vec<StateWrite>) -> Result<(), Refusal>;
}

impl Admit for StepState {
    fn view(&self) -> Arc<dyn StateReader> {
        StepState::view(self)
    }

    fn admit(&mut self, writer: Writer, writes: Vec<StateWrite>) -> Result<(), Refusal> {
        StepState::admit(self, writer, writes)
    }
}

/// How one writer touched one key.
#[derive(Debug, Clone, Default)]
struct KeyTouch {
    whole: bool,
    commutative: bool,
    fields: BTreeSet<String>,
}

/// One step's state and files as its admitted writes leave them.
pub struct StepState {
    agent: Arc<AgentDef>,
    base: Arc<BTreeMap<String, Value>>,
    changed: BTreeMap<String, Option<Value>>,
    touched: BTreeMap<String, Vec<(usize, KeyTouch)>>,
    writers: Vec<Writer>,
    writes: Vec<StateWrite>,
    /// The file changes admitted, and who made each.
    files: FileWrites,
    file_writers: BTreeMap<String, Writer>,
    /// The skills active as the step began.
    active: Arc<ActiveSkills>,
    /// The activations admitted, in the model's call order.
    activated: Vec<SkillChange>,
}

/// Everything a step admitted, as its commit takes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepEffects {
    /// Run-scoped state writes, in admission order.
    pub state: Vec<StateWrite>,
    /// Thread-scoped state writes, in admission order.
    pub thread_state: Vec<StateWrite>,
    /// File changes, by path.
    pub files: FileWrites,
    /// Skills activated, in the model's call order.
    pub skills: Vec<SkillChange>,
}

/// The state a step's calls read: the committed state with the writes admitted
/// so far on top.
struct Layered {
    base: Arc<BTreeMap<String, Value>>,
    changed: BTreeMap<String, Option<Value>>,
}

impl StateReader for Layered {
    fn get(&self, key: &str) -> Result<Option<Value>, StateStoreError> {
        Ok(match self.changed.get(key) {
            Some(value) => value.clone(),
            None => self.base.get(key).cloned(),
        })
    }
}

struct Snapshot(Arc<BTreeMap<String, Value>>);

impl StateReader for Snapshot {
    fn get(&self, key: &str) -> Result<Option<Value>, StateStoreError> {
        Ok(self.0.get(key).cloned())
    }
}

impl StepState {
    /// A step of `agent` starting from the committed state `base`.
    pub fn new(agent: &Arc<AgentDef>, base: Arc<BTreeMap<String, Value>>) -> Self {
        Self {
            agent: Arc::clone(agent),
            base,
            changed: BTreeMap::new(),
            touched: BTreeMap::new(),
            writers: Vec::new(),
            writes: Vec::new(),
            files: FileWrites::new(),
            file_writers: BTreeMap::new(),
            active: ActiveSkills::none(),
            activated: Vec::new(),
        }
    }

    /// This step with `active` as the skills active as it began.
    pub fn with_skills(mut self, active: Arc<ActiveSkills>) -> Self {
        self.active = active;
        self
    }

    /// The skills active as the step began.
    pub fn skills(&self) -> &Arc<ActiveSkills> {
        &self.active
    }

    /// Admit the activations call `call_id` brought back, in order. A skill
    /// active already, or activated by an earlier call of the step, is not
    /// activated again: its name is among those returned.
    pub fn admit_skills(
        &mut self,
        call_id: &str,
        activations: Vec<SkillActivation>,
    ) -> Vec<String> {
        let mut again = Vec::new();
        for activation in activations {
            let taken = self.active.is_active(&activation.skill)
                || self.activated.iter().any(|change| {
                    matches!(change, SkillChange::Activated { activation: earlier, .. }
                        if earlier.skill == activation.skill)
                });
            if taken {
                again.push(activation.skill);
            } else {
                self.activated.push(SkillChange::Activated {
                    call_id: call_id.to_owned(),
                    activation,
                });
            }
        }
        again
    }

    /// The state as the writes admitted so far leave it.
    pub fn view(&self) -> Arc<dyn StateReader> {
        if self.changed.is_empty() {
            Arc::new(Snapshot(Arc::clone(&self.base)))
        } else {
            Arc::new(Layered {
                base: Arc::clone(&self.base),
                changed: self.changed.clone(),
            })
        }
    }

    /// A step that starts where this one stands: the same committed state
    /// with this step's admitted values on top, and no writer yet.
    pub(crate) fn fork(&self) -> Self {
        Self {
            agent: Arc::clone(&self.agent),
            base: Arc::clone(&self.base),
            changed: self.changed.clone(),
            touched: BTreeMap::new(),
            writers: Vec::new(),
            writes: Vec::new(),
            files: FileWrites::new(),
            file_writers: BTreeMap::new(),
            active: Arc::clone(&self.active),
            activated: Vec::new(),
        }
    }

    /// The agent whose declarations the step's writes must fit.
    pub fn agent(&self) -> &Arc<AgentDef> {
        &self.agent
    }

    /// Whether no write has been admitted.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.files.is_empty() && self.activated.is_empty()
    }

    /// The file changes admitted so far.
    pub fn files(&self) -> &FileWrites {
        &self.files
    }

    /// Admit the file changes `files` by `writer`, or name the path another
    /// writer of the step changed already. Nothing changes on refusal.
    pub fn admit_files(&mut self, writer: Writer, files: FileWrites) -> Result<(), FileConflict> {
        if let Some((path, earlier)) = files
            .keys()
            .find_map(|path| self.file_writers.get(path).map(|earlier| (path, earlier)))
        {
            return Err(FileConflict {
                path: path.clone(),
                writers: vec![earlier.clone(), writer],
            });
        }
        for path in files.keys() {
            self.file_writers.insert(path.clone(), writer.clone());
        }
        self.files.extend(files);
        Ok(())
    }

    /// Admit `writes` by `writer`, or say why not. Nothing changes on refusal.
    pub fn admit(&mut self, writer: Writer, writes: Vec<StateWrite>) -> Result<(), Refusal> {
        if writes.is_empty() {
            return Ok(());
        }
        if self.agent.is_delegated()
            && let Some(write) = writes
                .iter()
                .find(|write| self.agent.scope_of(&write.key) == Scope::Thread)
        {
            return Err(Refusal::Rejected(format!(
                "state key `{}` is thread-scoped, and sub-agent `{}` writes no thread state: what a sub-agent changes travels back with its answer, and the thread's state would not; the writes of {writer} were discarded",
                write.key, self.agent.name
            )));
        }
        if let Some(write) = writes.iter().find(|write| !self.agent.declares(&write.key)) {
            return Err(Refusal::Rejected(format!(
                "state key `{}` is not declared by agent `{}`; the writes of {writer} were discarded",
                write.key, self.agent.name
            )));
        }
        let mut next: BTreeMap<String, Option<Value>> = BTreeMap::new();
        let mut touches: BTreeMap<String, KeyTouch> = BTreeMap::new();
        for write in &writes {
            let current = match next.get(&write.key) {
                Some(value) => value.clone(),
                None => self.current(&write.key),
            };
            let value = write.op.apply(current).map_err(|error| {
                Refusal::Rejected(format!(
                    "state key `{}`: {error}; the writes of {writer} were discarded",
                    write.key
                ))
            })?;
            next.insert(write.key.clone(), value);
            let touch = touches.entry(write.key.clone()).or_default();
            match write.op.touch() {
                Touch::Whole => touch.whole = true,
                Touch::Commutative => touch.commutative = true,
                Touch::Field(field) => {
                    touch.fields.insert(field.to_owned());
                }
            }
        }
        for (key, value) in &next {
            let (Some(declared), Some(value)) = (self.agent.key(key), value) else {
                continue;
            };
            if let Err(reason) = declared.check(value) {
                return Err(Refusal::Rejected(format!(
                    "state key `{key}` would not fit its schema ({reason}); the writes of {writer} were discarded"
                )));
            }
        }
        for (key, touch) in &touches {
            if let Some(detail) = self.clash(key, touch) {
                let mut writers: Vec<Writer> = self.touched[key]
                    .iter()
                    .map(|(index, _)| self.writers[*index].clone())
                    .collect();
                writers.push(writer);
                return Err(Refusal::Conflict(StateConflict {
                    key: key.clone(),
                    policy: self.agent.merge_of(key),
                    writers,
                    detail,
                }));
            }
        }
        let index = self.writers.len();
        self.writers.push(writer);
        for (key, touch) in touches {
            self.touched.entry(key).or_default().push((index, touch));
        }
        self.changed.extend(next);
        self.writes.extend(writes);
        Ok(())
    }

    fn current(&self, key: &str) -> Option<Value> {
        match self.changed.get(key) {
            Some(value) => value.clone(),
            None => self.base.get(key).cloned(),
        }
    }

    /// Why a new writer's `touch` of `key` cannot merge with earlier writers'.
    fn clash(&self, key: &str, touch: &KeyTouch) -> Option<String> {
        let earlier = self.touched.get(key)?;
        if earlier.is_empty() {
            return None;
        }
        match self.agent.merge_of(key) {
            MergePolicy::Exclusive => Some("an exclusive key takes one writer per step".to_owned()),
            MergePolicy::Commutative => {
                let replaces = touch.whole
                    || !touch.fields.is_empty()
                    || earlier
                        .iter()
                        .any(|(_, other)| other.whole || !other.fields.is_empty());
                replaces.then(|| {
                    "only increment, append and insert merge; a set or remove needs the key to itself"
                        .to_owned()
                })
            }
            MergePolicy::Disjoint => {
                if touch.whole
                    || touch.commutative
                    || earlier
                        .iter()
                        .any(|(_, other)| other.whole || other.commutative)
                {
                    return Some(
                        "writers of a disjoint key may only set or remove fields".to_owned(),
                    );
                }
                earlier
                    .iter()
                    .flat_map(|(_, other)| other.fields.intersection(&touch.fields))
                    .next()
                    .map(|field| format!("two writers touched field `{field}`"))
            }
        }
    }

    /// What the step admitted: its state writes split by scope, and its
    /// file changes.
    pub fn into_effects(self) -> StepEffects {
        let agent = &self.agent;
        let (state, thread_state) = self
            .writes
            .into_iter()
            .partition(|write| agent.scope_of(&write.key) == Scope::Run);
        StepEffects {
            state,
            thread_state,
            files: self.files,
            skills: self.activated,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PermissionPolicy;
    use crate::state::StateOp;
    use crate::typed_state::StateKey;
    use serde_json::json;

    fn agent(keys: &[(&str, MergePolicy)]) -> Arc<AgentDef> {
        Arc::new(
            keys.iter().fold(
                AgentDef::new(
                    "a",
                    "",
                    &["*"],
                    4,
                    PermissionPolicy::new(crate::policy::Verdict::Allow),
                )
                .unwrap(),
                |agent, (key, merge)| {
                    agent.with_state_key(key, StateKey::new(None).unwrap().merged_by(*merge))
                },
            ),
        )
    }

    fn tool(id: &str) -> Writer {
        Writer::Tool {
            call_id: id.into(),
            tool: "t".into(),
        }
    }

    fn op(key: &str, op: StateOp) -> Vec<StateWrite> {
        vec![StateWrite {
            key: key.into(),
            op,
        }]
    }

    fn conflict(result: Result<(), Refusal>) -> StateConflict {
        match result {
            Err(Refusal::Conflict(conflict)) => conflict,
            other => panic!("expected a conflict, got {other:?}"),
        }
    }

    #[test]
    fn a_second_writer_of_an_exclusive_key_conflicts_and_both_are_named() {
        let agent = agent(&[("k", MergePolicy::Exclusive)]);
        let mut step = StepState::new(&agent, Arc::default());
        step.admit(tool("c1"), op("k", StateOp::Set { value: json!(1) }))
            .unwrap();
        let conflict = conflict(step.admit(tool("c2"), op("k", StateOp::Set { value: json!(2) })));
        assert_eq!(conflict.key, "k");
        assert_eq!(conflict.writers, vec![tool("c1"), tool("c2")]);
        assert!(conflict.to_string().contains("call c1 (t), call c2 (t)"));
    }

    #[test]
    fn commutative_writers_add_up_but_a_set_among_them_conflicts() {
        let agent = agent(&[("n", MergePolicy::Commutative)]);
        let mut step = StepState::new(&agent, Arc::new([("n".into(), json!(1))].into()));
        for id in ["c1", "c2", "c3"] {
            step.admit(tool(id), op("n", StateOp::Increment { delta: 2 }))
                .unwrap();
        }
        assert_eq!(step.view().get("n").unwrap(), Some(json!(7)));
        conflict(step.admit(tool("c4"), op("n", StateOp::Set { value: json!(0) })));
        let effects = step.into_effects();
        assert_eq!((effects.state.len(), effects.thread_state.len()), (3, 0));
    }

    #[test]
    fn disjoint_writers_merge_on_different_fields_and_conflict_on_one() {
        let agent = agent(&[("m", MergePolicy::Disjoint)]);
        let mut step = StepState::new(&agent, Arc::default());
        let field = |field: &str, value: i64| {
            op(
                "m",
                StateOp::SetField {
                    field: field.into(),
                    value: json!(value),
                },
            )
        };
        step.admit(tool("c1"), field("a", 1)).unwrap();
        step.admit(tool("c2"), field("b", 2)).unwrap();
        assert_eq!(step.view().get("m").unwrap(), Some(json!({"a": 1, "b": 2})));
        let conflict = conflict(step.admit(tool("c3"), field("a", 3)));
        assert!(conflict.detail.contains("`a`"), "{conflict}");
        assert_eq!(conflict.writers.len(), 3);
    }

    #[test]
    fn one_writer_may_do_anything_to_a_key() {
        let agent = agent(&[("m", MergePolicy::Disjoint)]);
        let mut step = StepState::new(&agent, Arc::default());
        let mut writes = op("m", StateOp::Set { value: json!({}) });
        writes.extend(op(
            "m",
            StateOp::SetField {
                field: "x".into(),
                value: json!(true),
            },
        ));
        step.admit(tool("c1"), writes).unwrap();
        assert_eq!(step.view().get("m").unwrap(), Some(json!({"x": true})));
    }

    #[test]
    fn undeclared_and_off_schema_batches_are_refused_alone() {
        let agent = Arc::new(
            Arc::unwrap_or_clone(agent(&[("k", MergePolicy::Exclusive)]))
                .with_state("typed", Some(json!({"type": "integer"})))
                .unwrap(),
        );
        let mut step = StepState::new(&agent, Arc::default());
        let refused = step.admit(tool("c1"), op("other", StateOp::Remove));
        assert!(matches!(refused, Err(Refusal::Rejected(ref m)) if m.contains("`other`")));
        let refused = step.admit(tool("c2"), op("typed", StateOp::Set { value: json!("x") }));
        assert!(matches!(refused, Err(Refusal::Rejected(ref m)) if m.contains("schema")));
        step.admit(tool("c3"), op("typed", StateOp::Set { value: json!(3) }))
            .unwrap();
        assert!(!step.is_empty());
    }

    #[test]
    fn two_writers_of_one_path_conflict_and_different_paths_merge() {
        use crate::files::FileState;
        let agent = agent(&[]);
        let mut step = StepState::new(&agent, Arc::default());
        let file = |text: &str| FileState::File(text.as_bytes().into());
        step.admit_files(tool("c1"), [("a".to_owned(), file("1"))].into())
            .unwrap();
        step.admit_files(tool("c2"), [("b".to_owned(), FileState::Absent)].into())
            .unwrap();
        let conflict = step
            .admit_files(
                tool("c3"),
                [("c".to_owned(), file("3")), ("a".to_owned(), file("3"))].into(),
            )
            .unwrap_err();
        assert_eq!(conflict.path, "a");
        assert_eq!(conflict.writers, vec![tool("c1"), tool("c3")]);
        assert!(conflict.to_string().contains("call c1 (t), call c3 (t)"));
        let effects = step.into_effects();
        assert_eq!(effects.files.keys().collect::<Vec<_>>(), ["a", "b"]);
    }
}
