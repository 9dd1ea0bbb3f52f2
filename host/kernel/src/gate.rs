//! The gate every tool call passes: the agent's tool list and permission policy
//! first, narrowed by every active skill's `allowed-tools`, then each
//! before-tool-call hook in order. Deny beats ask beats allow;
//! a deny ends the chain; a hook that fails, or whose staged writes are refused,
//! denies (fail closed); rewritten arguments are judged by the policy again, so
//! no hook can turn the policy's deny into an allow.

use tracing::Instrument;

use crate::agent::AgentDef;
use crate::event::Event;
use crate::hooks::{GateVerdict, HookPhase, HookSet};
use crate::merge::{Admit, Refusal, StateConflict, Writer};
use crate::message::ToolCall;
use crate::policy::{Decider, Decision, Verdict};
use crate::progress::Trail;
use crate::skills::{ActiveSkills, skill_of};
use crate::spans;
use crate::state::json_kind;
use crate::tool::{ToolAnnotations, ToolError, ToolErrorKind};

/// The agent's own judgement, as the active skills narrow it: tools outside
/// its list are denied, and so are the tools of a skill that is not active;
/// its policy decides the rest, knowing the effects the tool declares; then
/// a call the policy does not deny is denied when an active skill's
/// `allowed-tools` leave it out. A skill's denial is an audit event.
pub(crate) fn policy_decision(
    agent: &AgentDef,
    skills: &ActiveSkills,
    events: &dyn Trail,
    annotations: ToolAnnotations,
    call: &ToolCall,
) -> Decision {
    if !agent.uses_tool(&call.name) {
        return Decision::by(
            Decider::Host,
            Verdict::Deny,
            format!("`{}` is not among the agent's tools", call.name),
        );
    }
    let refused = |skill: &str, reason: String| {
        events.emit(Event::SkillDenied {
            skill: skill.to_owned(),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            reason: reason.clone(),
        });
        Decision::by(Decider::Skill, Verdict::Deny, reason)
    };
    if let Some(skill) = skill_of(&call.name)
        && !skills.is_active(skill)
    {
        let reason = format!(
            "`{}` is a tool of skill `{skill}`, which is not active; activate it with the `skill` tool first",
            call.name
        );
        return refused(skill, reason);
    }
    let decision = agent
        .permissions
        .decide(&call.name, annotations, &call.args);
    if decision.verdict == Verdict::Deny {
        return decision;
    }
    match skills.refusal(&call.name, annotations, &call.args) {
        Some(refusal) => {
            let reason = format!(
                "skill `{}` is active and its allowed-tools [{}] do not include this call",
                refusal.skill,
                refusal.allowed.join(" ")
            );
            refused(&refusal.skill, reason)
        }
        None => decision,
    }
}

/// Where a hook leaves the gate.
enum Step {
    /// Ask the next hook.
    Next,
    /// The call is denied; ask no one else.
    Stop,
}

/// Judge `call` of a tool that declares `annotations`: the call as it will run
/// (possibly with rewritten arguments) and the combined decision. Fails only when a hook's writes cannot merge
/// with the step's, which fails the step.
pub(crate) async fn judge(
    agent: &AgentDef,
    skills: &ActiveSkills,
    hooks: &dyn HookSet,
    events: &dyn Trail,
    step: &mut dyn Admit,
    annotations: ToolAnnotations,
    mut call: ToolCall,
) -> Result<(ToolCall, Decision), StateConflict> {
    let mut decision = policy_decision(agent, skills, events, annotations, &call);
    if decision.verdict == Verdict::Deny {
        return Ok((call, decision));
    }
    let mut rewritten = false;
    for hook in hooks.handlers(HookPhase::BeforeToolCall) {
        let outcome = hooks
            .before_tool_call(&hook, &call, step.view())
            .instrument(spans::hook(
                &hook,
                HookPhase::BeforeToolCall,
                Some(&call.id),
            ))
            .await;
        events.record(outcome.events);
        let next = match outcome.result {
            Err(error) => {
                decision = failed(events, &hook, &call.id, error);
                Step::Stop
            }
            Ok(verdict) => {
                let writer = Writer::Hook {
                    bundle: hook.clone(),
                    phase: HookPhase::BeforeToolCall,
                    call_id: Some(call.id.clone()),
                };
                match step.admit(writer, outcome.writes) {
                    Err(Refusal::Conflict(conflict)) => return Err(conflict),
                    Err(Refusal::Rejected(reason)) => {
                        let error = ToolError::new(ToolErrorKind::Failed, reason);
                        decision = failed(events, &hook, &call.id, error);
                        Step::Stop
                    }
                    Ok(()) => match verdict {
                        GateVerdict::Allow => Step::Next,
                        GateVerdict::Deny(reason) => {
                            decision = Decision::by(
                                Decider::Hook,
                                Verdict::Deny,
                                format!("hook `{hook}`: {reason}"),
                            );
                            Step::Stop
                        }
                        GateVerdict::Ask(reason) => {
                            if decision.verdict < Verdict::Ask {
                                decision = Decision::by(
                                    Decider::Hook,
                                    Verdict::Ask,
                                    format!("hook `{hook}`: {reason}"),
                                );
                            }
                            Step::Next
                        }
                        GateVerdict::Rewrite(args) if args.is_object() => {
                            let original = std::mem::replace(&mut call.args, args);
                            events.emit(Event::ArgumentsRewritten {
                                bundle: hook.clone(),
                                call_id: call.id.clone(),
                                original,
                            });
                            rewritten = true;
                            Step::Next
                        }
                        GateVerdict::Rewrite(args) => {
                            let error = ToolError::new(
                                ToolErrorKind::Failed,
                                format!(
                                    "rewrote the arguments to {}, which is not a JSON object",
                                    json_kind(&args)
                                ),
                            );
                            decision = failed(events, &hook, &call.id, error);
                            Step::Stop
                        }
                    },
                }
            }
        };
        if let Step::Stop = next {
            return Ok((call, decision));
        }
    }
    if rewritten {
        let again = policy_decision(agent, skills, events, annotations, &call);
        if again.verdict > decision.verdict {
            decision = Decision {
                verdict: again.verdict,
                answered: None,
                rule: Some(match again.rule {
                    Some(rule) => format!("{rule} (on the rewritten arguments)"),
                    None => "the default permission (on the rewritten arguments)".to_owned(),
                }),
                by: again.by,
            };
        }
    }
    Ok((call, decision))
}

/// Record that `hook` failed on call `call_id` and deny the call.
fn failed(events: &dyn Trail, hook: &str, call_id: &str, error: ToolError) -> Decision {
    let why = format!("hook `{hook}` failed: {error}");
    events.emit(Event::HookFailed {
        bundle: hook.to_owned(),
        phase: HookPhase::BeforeToolCall,
        call_id: Some(call_id.to_owned()),
        error,
    });
    Decision::by(Decider::Host, Verdict::Deny, why)
}
