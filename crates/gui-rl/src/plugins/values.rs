//! Plug-ins that change the Q-values the Boltzmann policy sees: `optimistic` and
//! `stall-reset`.

use super::{FinishedStep, Plugin, Weighing, prior::base_weights, routes::LIKELY_SHARE, slot};
use crate::{AgentConfig, Result};

/// Plug-in `optimistic`: optimistic initial values. Every candidate not tried on its page
/// takes the best Q-value among all the candidates, if the effect prior weighs it at
/// least [`LIKELY_SHARE`] of the best (all of them without the prior). The long tail of
/// actions the prior thinks unlikely (right clicks on labels) keeps the network's guess.
#[derive(Debug)]
pub(crate) struct Optimistic;

impl Optimistic {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

/// Lifts the Q-value `q[j]` of each candidate not `tried` to the best of `q`, if its
/// weight is at least [`LIKELY_SHARE`] of the best weight (all of them without
/// `weights`).
pub(crate) fn optimistic_values(q: &mut [f32], tried: &[bool], weights: Option<&[f64]>) {
    let top = q.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let best = weights.map_or(0.0, |w| w.iter().copied().fold(0.0, f64::max));
    for (j, v) in q.iter_mut().enumerate() {
        let likely = weights.is_none_or(|w| w[j] >= LIKELY_SHARE * best);
        if !tried[j] && likely {
            *v = top;
        }
    }
}

impl Plugin for Optimistic {
    fn name(&self) -> &'static str {
        "optimistic"
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        // The prior's own weights, before routes raised any: how likely each action is
        // to show something new here.
        let likely = w.chances.as_deref().map(base_weights);
        optimistic_values(w.q, w.tried, likely.as_deref());
        Ok(())
    }
}

/// Plug-in `stall-reset`: after [`stall_steps`](AgentConfig::stall_steps) decisions in a
/// row whose actions showed nothing new, the Q-values stop ranking the candidates: all
/// take the best one, so each is chosen in proportion to its prior weight, until an
/// action shows something new again. Eq. 1 pays every return to a page with many
/// unexecuted actions, so two such pages can feed each other's values, and at a low
/// temperature a loop between them keeps nearly all the probability.
#[derive(Debug)]
pub(crate) struct StallReset {
    steps: u32,
    /// Each worker's decisions since its last step that showed something new.
    stall: Vec<Option<u32>>,
}

impl StallReset {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            steps: config.stall_steps,
            stall: Vec::new(),
        }
    }
}

impl Plugin for StallReset {
    fn name(&self) -> &'static str {
        "stall-reset"
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        let stall = slot(&mut self.stall, step.worker);
        *stall = Some(if step.novel {
            0
        } else {
            stall.unwrap_or(0) + 1
        });
        Ok(())
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        let stall = slot(&mut self.stall, w.worker).unwrap_or(0);
        if self.steps > 0 && stall >= self.steps {
            let top = w.q.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            w.q.iter_mut().for_each(|v| *v = top);
            w.stats.stalled_steps += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimistic_values_lift_only_the_untried() {
        let mut q = [0.2f32, 0.9, -0.4, 0.5];
        optimistic_values(&mut q, &[true, true, false, true], None);
        assert_eq!(q, [0.2, 0.9, 0.9, 0.5]);
        // The best may itself be untried; the tried keep their own values.
        let mut q = [0.2f32, 0.9, -0.4];
        optimistic_values(&mut q, &[true, false, false], None);
        assert_eq!(q, [0.2, 0.9, 0.9]);
        // With prior weights, only the untried that weigh at least half the best.
        let mut q = [0.2f32, 0.9, -0.4, 0.1];
        let w = [0.6, 0.5, 0.4, 0.1];
        optimistic_values(&mut q, &[true, true, false, false], Some(&w));
        assert_eq!(q, [0.2, 0.9, 0.9, 0.1]);
    }
}
