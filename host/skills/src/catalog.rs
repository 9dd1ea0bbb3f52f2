//! The skills a run offers: the valid, unshadowed skills of its search, by
//! name. The catalog answers a resumed run's question whether an activation
//! still matches its skill ([`SkillCatalog`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use cordon_kernel::SkillCatalog;

use crate::discover::Discovery;
use crate::skill::Skill;

/// The skills of one run, by name.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    skills: BTreeMap<String, Arc<Skill>>,
}

impl Catalog {
    /// A catalog of `skills`; of two with one name, the first stays.
    pub fn new(skills: impl IntoIterator<Item = Skill>) -> Self {
        let mut catalog = Self::default();
        for skill in skills {
            catalog
                .skills
                .entry(skill.name().to_owned())
                .or_insert_with(|| Arc::new(skill));
        }
        catalog
    }

    /// The catalog of what `discovery` found valid.
    pub fn of(discovery: &Discovery) -> Self {
        Self::new(discovery.skills.iter().map(|found| found.skill.clone()))
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.skills.get(name)
    }

    /// Every skill, by name.
    pub fn skills(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.skills.values()
    }

    /// Whether the catalog offers no skill.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// How many skills it offers.
    pub fn len(&self) -> usize {
        self.skills.len()
    }
}

impl SkillCatalog for Catalog {
    fn fingerprint(&self, name: &str) -> Option<String> {
        self.skills.get(name).map(|skill| skill.fingerprint.clone())
    }
}
