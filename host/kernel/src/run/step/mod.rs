//! What every step does with its calls, whoever asked for them: the model
//! (the loop), a requester from outside (a served run) or a tool (a nested
//! call). Three rooms, in the order a step meets them: [`judge`] passes each
//! call through the gate and asks a person about those it sends to one,
//! [`calls`] runs the allowed ones and admits what they changed, [`commit`]
//! answers the rest and commits the step.

pub(crate) mod calls;
pub(crate) mod commit;
pub(crate) mod judge;
