//! Agent Skills for Cordon. A skill is a folder holding a `SKILL.md`: YAML
//! frontmatter (a name and a description the model sees, and the
//! `allowed-tools` that narrow what it may do while the skill is active)
//! and a Markdown body of instructions, with any files beside it (references,
//! scripts) and tool bundles under `tools/`.
//!
//! This crate finds skills ([`discover`]), checks them against the open
//! format rule by rule ([`Skill::load`], [`Problem`]), offers the valid ones
//! as a run's [`Catalog`], and provides the built-in [`SkillTool`] through
//! which the model activates one. What an activation means for the run (the
//! narrowing layer, the committed activation, the skill's tools) is the
//! kernel's ([`cordon_kernel::skills`]); where a skill's folder is mounted and
//! how its tools and scripts are sandboxed is the WebAssembly host's.

mod allowed;
mod catalog;
mod discover;
mod frontmatter;
mod meta;
pub mod packages;
mod problem;
mod skill;
mod tool;

pub use catalog::Catalog;
pub use discover::{Discovery, Found, Invalid, PROJECT_SKILLS, Root, Shadowed, Source, discover};
pub use meta::{MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_NAME, SkillMeta, name_problems};
pub use problem::{Problem, Severity};
pub use skill::{MAX_LISTED, MAX_SKILL_FILE, SKILL_FILE, Skill, TOOLS_DIR};
pub use tool::{SKILLS_MOUNT, SkillTool};
