//! Plug-in `resize-budget`: at most a share of the decisions at a window size other than
//! the one the run started at.
//!
//! At another size every page is a page not seen before and every screen is new, so Eq.
//! 1, the effect prior and the frontier all make staying there pay, while the app behind
//! the pixels does what it does at the start size. Once the budget is spent, resizes are
//! no candidates at the start size, and elsewhere the resizes that lead back to it (or
//! every resize, while none is known to) are the only ones. They stay among the page's
//! executable actions `m` of Eq. 1: the budget holds them back, the page still has them.

use std::collections::HashMap;

use gui_core::Action;

use super::{FinishedStep, Plugin, Shaping};
use crate::known::{Candidates, resizes};
use crate::{ActionKey, AgentConfig, AgentStats, Result};

#[derive(Debug)]
pub(crate) struct ResizeBudget {
    /// [`AgentConfig::resize_budget`].
    budget: f64,
    /// The size each resize led to from each size, the last time it ran.
    leads: HashMap<(ActionKey, (u32, u32)), (u32, u32)>,
}

impl ResizeBudget {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            budget: config.resize_budget,
            leads: HashMap::new(),
        }
    }

    /// Keeps the window size within the budget: once `stats.away_steps` (this decision
    /// included) exceed it, no resize at the start size, and away from it only resizes
    /// back (those known to lead from `size` to `start`, or else every resize). Leaves
    /// `candidates` whole when that would leave none.
    pub fn keep(
        &self,
        candidates: &mut Candidates,
        size: (u32, u32),
        start: (u32, u32),
        stats: &AgentStats,
    ) {
        let budget = self.budget * (stats.decisions + 1) as f64;
        if self.budget >= 1.0 || (stats.away_steps as f64) <= budget {
            return;
        }
        if size == start {
            candidates.retain(|a, _| !resizes(a.kind));
            return;
        }
        let back = |k: &ActionKey| self.leads.get(&(*k, size)) == Some(&start);
        let known = candidates.keys.iter().any(back);
        let keep = |a: &Action, k: &ActionKey| resizes(a.kind) && (!known || back(k));
        if candidates
            .actions
            .iter()
            .zip(&candidates.keys)
            .any(|(a, k)| keep(a, k))
        {
            candidates.retain(keep);
        }
    }
}

impl Plugin for ResizeBudget {
    fn name(&self) -> &'static str {
        "resize-budget"
    }

    fn shape(&mut self, shaping: &mut Shaping<'_>) {
        self.keep(
            shaping.candidates,
            shaping.size,
            shaping.start,
            shaping.stats,
        );
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if step.resize {
            let prev = step.prev;
            self.leads
                .insert((prev.key, prev.before.size()), step.screen.size());
        }
        Ok(())
    }
}
