//! Plug-ins of the frontier, the agent's map of where actions led: `frontier`,
//! `frontier-mass` and `fresh-exits`.
//!
//! The effect prior judges each action by its own record. Once a page's buttons were all
//! tried, all its candidates look alike, and the many right, middle and double clicks on
//! its labels outweigh its one "Back to home". These plug-ins raise the weight of an
//! action that led elsewhere to what can still be found there ([`Frontier`]).
//!
//! Each raises a candidate's weight to the larger of its own and what it offers, so the
//! three commute: the order they run in does not matter.

use super::{FinishedStep, Pending, Plugin, Weighing};
use crate::{AgentConfig, Frontier, Result};

/// The share of its page's best chance at which an untried candidate counts as likely
/// to show something new: optimistic values lift it, and it adds to the page's untried
/// mass.
pub(crate) const LIKELY_SHARE: f64 = 0.5;

/// The candidates never executed on their page that are likely to show something new
/// (at least [`LIKELY_SHARE`] of the page's best chance), with their chances. Resizes
/// (`None`) are none of them.
fn likely_untried<'a>(
    chances: &'a [Option<f64>],
    tried: &'a [bool],
) -> impl Iterator<Item = (usize, f64)> + 'a {
    let best = chances.iter().flatten().copied().fold(0.0, f64::max);
    chances
        .iter()
        .zip(tried)
        .enumerate()
        .filter_map(|(j, (c, tried))| c.filter(|_| !tried).map(|c| (j, c)))
        .filter(move |(_, c)| *c >= LIKELY_SHARE * best)
}

/// The sum of the chances of the [likely untried](likely_untried) candidates, leaving
/// out candidate `skip`: a page's *untried mass*.
pub(crate) fn untried_mass(chances: &[Option<f64>], tried: &[bool], skip: Option<usize>) -> f64 {
    likely_untried(chances, tried)
        .filter(|(j, _)| Some(*j) != skip)
        .map(|(_, c)| c)
        .sum()
}

/// Raises the weight of each [likely untried](likely_untried) candidate to its chance
/// times `fresh`, what a page not seen yet is worth, when that is more.
pub(crate) fn lift_untried(
    weights: &mut [f64],
    chances: &[Option<f64>],
    tried: &[bool],
    fresh: f64,
) {
    if fresh <= 0.0 {
        // Then `c · fresh` is at most 0, below every weight (each is at least its chance).
        return;
    }
    for (j, c) in likely_untried(chances, tried) {
        weights[j] = weights[j].max(c * fresh);
    }
}

/// The best chance among the candidates of `prev`'s decision other than the one chosen:
/// the page's promise once the chosen action has run, beside that action's own chance
/// then.
pub(crate) fn others_best(prev: &Pending) -> f64 {
    prev.chances
        .iter()
        .flatten()
        .enumerate()
        .filter(|(j, _)| *j != prev.index)
        .filter_map(|(_, c)| *c)
        .fold(0.0, f64::max)
}

/// Plug-in `frontier`: the agent keeps where each action led and each page's *promise*,
/// its best chance; an action that led to another page weighs at least
/// [`Frontier::DECAY`]`^k` times the best promise `k` steps beyond it, up to
/// [`Frontier::HOPS`] steps, on routes that do not come back through the page itself.
#[derive(Debug)]
pub(crate) struct FrontierRoutes;

impl FrontierRoutes {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

impl Plugin for FrontierRoutes {
    fn name(&self) -> &'static str {
        "frontier"
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        let Weighing {
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
        let promise = chances.iter().flatten().copied().fold(0.0, f64::max);
        shared.frontier.set_promise(*page, promise);
        shared.frontier.boost(*page, &candidates.keys, weights);
        Ok(())
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if step.resize {
            return Ok(());
        }
        let prev = step.prev;
        step.shared.frontier.record(prev.page, prev.key, step.page);
        let mine = step.shared.prior.chance(prev.page, prev.key, prev.aim);
        step.shared
            .frontier
            .set_promise(prev.page, others_best(prev).max(mine));
        Ok(())
    }
}

/// Plug-in `frontier-mass`: a route also weighs what is left to do where it leads, the
/// *untried mass* of that page (the summed chances of its likely untried actions),
/// discounted as the frontier discounts, less the untried mass of the page the agent is
/// on ([`Frontier::boost_by_mass`]). The best chance alone makes one "Back to home" worth
/// one of home's untried buttons, not all of them.
#[derive(Debug)]
pub(crate) struct FrontierMass;

impl FrontierMass {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

impl Plugin for FrontierMass {
    fn name(&self) -> &'static str {
        "frontier-mass"
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        let Weighing {
            page,
            candidates,
            tried,
            chances: Some(chances),
            weights: Some(weights),
            shared,
            ..
        } = w
        else {
            return Ok(());
        };
        let own = untried_mass(chances, tried, None);
        shared.frontier.set_mass(*page, own);
        shared
            .frontier
            .boost_by_mass(*page, &candidates.keys, weights, own);
        Ok(())
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if step.resize {
            return Ok(());
        }
        let prev = step.prev;
        let others = prev
            .chances
            .as_deref()
            .map_or(0.0, |c| untried_mass(c, &prev.tried, Some(prev.index)));
        step.shared.frontier.set_mass(prev.page, others);
        Ok(())
    }
}

/// Plug-in `fresh-exits`: an action never executed on its page, that the prior thinks
/// likely to show something new, weighs at least its chance times what a page not seen
/// yet offers: [`Frontier::DECAY`] times the mean untried mass pages had when first seen
/// ([`Frontier::fresh_mass`]), less the page's own untried mass. Without it, a route to a
/// known page with many untried actions outweighs every untried button of the page the
/// agent is on, and those may lead to pages never seen.
#[derive(Debug)]
pub(crate) struct FreshExits;

impl FreshExits {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

impl Plugin for FreshExits {
    fn name(&self) -> &'static str {
        "fresh-exits"
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        let Weighing {
            tried,
            chances: Some(chances),
            weights: Some(weights),
            shared,
            ..
        } = w
        else {
            return Ok(());
        };
        // After `frontier-mass` has set this page's mass: it counts in the mean.
        let own = untried_mass(chances, tried, None);
        let fresh = Frontier::DECAY * shared.frontier.fresh_mass() - own;
        lift_untried(weights, chances, tried, fresh);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_untried_mass_sums_the_likely_untried() {
        // The best chance (0.5) belongs to a tried action and still sets the bar: 0.25.
        let chances = [Some(0.4), Some(0.3), Some(0.1), None, Some(0.5)];
        let tried = [false, false, false, false, true];
        assert!((untried_mass(&chances, &tried, None) - 0.7).abs() < 1e-12);
        assert!((untried_mass(&chances, &tried, Some(0)) - 0.3).abs() < 1e-12);
        assert_eq!(untried_mass(&chances, &[true; 5], None), 0.0);
    }

    #[test]
    fn a_likely_untried_action_weighs_what_a_new_page_offers() {
        // A route (index 4, tried) was raised to 2.0; the untried button (0.5) and the
        // field (0.4) are likely, the label (0.1) is not, the resize has no chance.
        let chances = [Some(0.5), Some(0.4), Some(0.1), None, Some(0.5)];
        let tried = [false, false, false, false, true];
        let mut weights = [0.5, 0.4, 0.1, 0.3, 2.0];
        lift_untried(&mut weights, &chances, &tried, 6.0);
        assert_eq!(weights, [3.0, 0.4 * 6.0, 0.1, 0.3, 2.0]);
        // What a new page offers, less the page's own mass, may be below an action's
        // own chance: the chance stays.
        let mut weights = [0.5, 0.4, 0.1, 0.3, 2.0];
        lift_untried(&mut weights, &chances, &tried, 0.5);
        assert_eq!(weights, [0.5, 0.4, 0.1, 0.3, 2.0]);
        lift_untried(&mut weights, &chances, &tried, -1.0);
        assert_eq!(weights, [0.5, 0.4, 0.1, 0.3, 2.0]);
    }
}
