//! Plug-in `command-states`: records per (command, next action).
//!
//! Some behaviour is only reached by a command and then the right action: Select all,
//! then Archive. Once Select all has shown what it shows, no per-action record brings the
//! agent back to it, and right after it Archive is one of many actions that may show
//! something new. Right after a command (a click on a button or image button that changed
//! the screen and left the agent on its page), each action keeps a record of its own for
//! that pair ([`EffectPrior::record_after`](crate::EffectPrior::record_after)), and the
//! command weighs at least [`Frontier::DECAY`] times the best chance still untried right
//! after it, so the agent comes back to a command until the actions after it were tried.
//! A command lasts until an action changes the screen or the agent leaves the page.

use std::collections::HashMap;

use super::{FinishedStep, Plugin, Weighing, routes::others_best};
use crate::effect::clicks_a_button;
use crate::{ActionKey, AgentConfig, Frontier, PageId, Result};

#[derive(Debug, Default)]
pub(crate) struct CommandStates {
    /// The best chance right after each command of a page, when it was last made.
    promise: HashMap<(PageId, ActionKey), f64>,
}

impl CommandStates {
    pub fn new(_: &AgentConfig) -> Self {
        Self::default()
    }
}

impl Plugin for CommandStates {
    fn name(&self) -> &'static str {
        "command-states"
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        let Weighing {
            worker,
            page,
            candidates,
            chances: Some(chances),
            weights: Some(weights),
            shared,
            ..
        } = w
        else {
            return Ok(());
        };
        if let Some(c) = shared.after_command(*worker, *page) {
            let best = candidates
                .keys
                .iter()
                .zip(chances.iter())
                .filter(|(k, _)| **k != c)
                .filter_map(|(_, ch)| *ch)
                .fold(0.0, f64::max);
            self.promise.insert((*page, c), best);
        }
        for (k, w) in candidates.keys.iter().zip(weights.iter_mut()) {
            if let Some(p) = self.promise.get(&(*page, *k)) {
                *w = w.max(Frontier::DECAY * p);
            }
        }
        Ok(())
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if step.resize {
            return Ok(());
        }
        let prev = step.prev;
        let command = step.shared.after_command(step.worker, prev.page);
        if let Some(c) = command {
            let prior = &mut step.shared.prior;
            prior.record_after(prev.page, c, prev.key, step.novel);
            let mine = prior.chance_after(prev.page, c, prev.key, prev.aim);
            self.promise
                .insert((prev.page, c), others_best(prev).max(mine));
        }
        let is_command = clicks_a_button(prev.kind, prev.target.map(|(_, k)| k));
        let next = if step.page != prev.page {
            None
        } else if !step.changed {
            command.map(|c| (step.page, c))
        } else if is_command {
            Some((step.page, prev.key))
        } else {
            None
        };
        step.shared.set_after_command(step.worker, next);
        Ok(())
    }
}
