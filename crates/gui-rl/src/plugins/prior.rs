//! Plug-ins of the effect prior: `effect-prior`, `state-refresh` and `state-reward`.
//!
//! The network learns which actions do nothing slowly: Eq. 1 divides every reward of a
//! page by `√N`, so on a page visited often the difference an idle step makes is small
//! beside the network's own error, and the ~100 idle candidates of a web page keep most
//! of the probability. The effect prior ([`EffectPrior`](crate::EffectPrior)) learns,
//! during the run, the chance that each action shows something new, and the policy
//! multiplies each candidate's softmax term by it.

use gui_core::Action;

use super::{FinishedStep, Plugin, Weighing};
use crate::known::resizes;
use crate::{AgentConfig, Aim, EffectPrior, Result, sets_a_value};

/// Plug-in `effect-prior`. Resizes are not learnt: at another size every page is new
/// once, which would make them the surest way to something new; they weigh as much as the
/// screen's other actions on average, neither favoured nor avoided.
#[derive(Debug)]
pub(crate) struct EffectPriorPlugin;

impl EffectPriorPlugin {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

/// Each candidate's weight from its chance: the chance itself, and for the resizes
/// (`None`) the mean chance of the others.
pub(crate) fn base_weights(chances: &[Option<f64>]) -> Vec<f64> {
    let known: Vec<f64> = chances.iter().flatten().copied().collect();
    let mean = if known.is_empty() {
        EffectPrior::UNTRIED
    } else {
        known.iter().sum::<f64>() / known.len() as f64
    };
    chances.iter().map(|c| c.unwrap_or(mean)).collect()
}

impl Plugin for EffectPriorPlugin {
    fn name(&self) -> &'static str {
        "effect-prior"
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        let command = w.shared.after_command(w.worker, w.page);
        let prior = &w.shared.prior;
        let chances: Vec<Option<f64>> = w
            .candidates
            .actions
            .iter()
            .zip(&w.candidates.keys)
            .map(|(a, k): (&Action, _)| {
                (!resizes(a.kind)).then(|| {
                    let aim = Aim::of(a, w.screen);
                    match command {
                        Some(c) => prior.chance_after(w.page, c, *k, aim),
                        None => prior.chance(w.page, *k, aim),
                    }
                })
            })
            .collect();
        w.weights = Some(base_weights(&chances));
        w.chances = Some(chances);
        Ok(())
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if !step.resize {
            let prev = step.prev;
            step.shared
                .prior
                .record(prev.page, prev.key, prev.aim, step.novel);
        }
        Ok(())
    }
}

/// Whether `step` put its page in a new state: it showed something new and stayed on
/// the page. `Some(true)` when it did so by setting a value (typed text, a tick, a
/// choice), which refreshes the page's buttons alone.
fn new_state(step: &FinishedStep<'_>) -> Option<bool> {
    let prev = step.prev;
    (!step.resize && step.novel && step.page == prev.page)
        .then(|| sets_a_value(prev.kind, prev.target.map(|(_, k)| k)))
}

/// Plug-in `state-refresh`: when an action shows something new and the agent stays on
/// the same page, the page is in a new state, and its actions that once showed something
/// new count as untried again ([`EffectPrior::state_changed`]); after a value was set,
/// only its buttons ([`EffectPrior::values_changed`]). A cart's Checkout may do something
/// else once a coupon is applied.
#[derive(Debug)]
pub(crate) struct StateRefresh;

impl StateRefresh {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

impl Plugin for StateRefresh {
    fn name(&self) -> &'static str {
        "state-refresh"
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        match new_state(step) {
            Some(true) => step.shared.prior.values_changed(step.page),
            Some(false) => step.shared.prior.state_changed(step.page),
            None => {}
        }
        Ok(())
    }
}

/// Plug-in `state-reward`: when an action puts its page in a new state (not by setting a
/// value), the page's executed count `n` of Eq. 1 starts again from zero, so the step is
/// paid as one onto a page with nothing tried yet.
#[derive(Debug)]
pub(crate) struct StateReward;

impl StateReward {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

impl Plugin for StateReward {
    fn name(&self) -> &'static str {
        "state-reward"
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if new_state(step) == Some(false) {
            step.store.forget_executed(step.page)?;
        }
        Ok(())
    }
}
