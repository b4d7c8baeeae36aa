//! Where the run's actions led, and how promising each page still is: the agent's map of
//! the app, learnt as it goes ([`AgentConfig::frontier`](crate::AgentConfig::frontier)).
//!
//! A page's *promise* is the best chance, among its candidates, of showing a screen not
//! seen before ([`EffectPrior::chance`](crate::EffectPrior::chance)), as of the agent's
//! last decision there. Once every button of a page was tried, its promise is that of
//! its least hopeless action, a right click on a label say. An action that led to another
//! page is then worth what can be reached through it: the promise of that page, or of a
//! page a few steps beyond it, discounted by [`Frontier::DECAY`] for each step on the
//! way. "Back to home" on a page that has nothing left is worth nearly as much as the
//! untried buttons of home.

use std::collections::HashMap;

use crate::{ActionKey, PageId};

/// The agent's map: the page each action led to last, and each page's promise.
#[derive(Debug, Clone, Default)]
pub struct Frontier {
    /// The page each action led to the last time it ran, when that was another page.
    leads: HashMap<(PageId, ActionKey), PageId>,
    /// Each page's promise, by page number; 0 for a page no decision was made on. Long
    /// enough for every page of `leads`.
    promise: Vec<f64>,
    /// Each page's untried mass, by page number ([`Self::set_mass`]); empty unless set.
    mass: Vec<f64>,
    /// Whether each page's mass was set, by page number.
    massed: Vec<bool>,
    /// The sum and count of the masses pages had when first set ([`Self::fresh_mass`]).
    first: (f64, u32),
}

impl Frontier {
    /// The discount of a promise per step needed to reach it.
    pub const DECAY: f64 = 0.8;
    /// The farthest a promise is seen from, in steps: beyond, `0.8^4 ≈ 0.4` of it would be
    /// left, and a route that long has most likely changed since it was walked.
    pub const HOPS: usize = 4;

    /// Sets `page`'s promise: the best chance among its candidates.
    pub fn set_promise(&mut self, page: PageId, promise: f64) {
        self.cover(page);
        self.promise[page.0] = promise;
    }

    /// Sets `page`'s untried mass: the summed chances of its likely untried candidates
    /// ([`AgentConfig::frontier_mass`](crate::AgentConfig::frontier_mass)).
    pub fn set_mass(&mut self, page: PageId, mass: f64) {
        self.cover(page);
        self.mass[page.0] = mass;
        if !self.massed[page.0] {
            self.massed[page.0] = true;
            self.first.0 += mass;
            self.first.1 += 1;
        }
    }

    /// The mean untried mass of a page when the agent first decided there: what an
    /// action that leads to a page not seen yet is likely to open (0 before any).
    pub fn fresh_mass(&self) -> f64 {
        if self.first.1 == 0 {
            0.0
        } else {
            self.first.0 / f64::from(self.first.1)
        }
    }

    /// Grows `promise` and `mass` to hold `page` (0 until set).
    fn cover(&mut self, page: PageId) {
        if self.promise.len() <= page.0 {
            self.promise.resize(page.0 + 1, 0.0);
            self.mass.resize(page.0 + 1, 0.0);
            self.massed.resize(page.0 + 1, false);
        }
    }

    /// The promise of `page` as last set (0 when never set).
    pub fn promise(&self, page: PageId) -> f64 {
        self.promise.get(page.0).copied().unwrap_or(0.0)
    }

    /// Records that `key` on `from` led to `to`. An action that stayed on its page leads
    /// nowhere.
    pub fn record(&mut self, from: PageId, key: ActionKey, to: PageId) {
        if from == to {
            self.leads.remove(&(from, key));
        } else {
            self.cover(from.max(to));
            self.leads.insert((from, key), to);
        }
    }

    /// The page `key` on `from` led to the last time, if another page.
    pub fn leads_to(&self, from: PageId, key: ActionKey) -> Option<PageId> {
        self.leads.get(&(from, key)).copied()
    }

    /// For every page, the best promise reachable from it within [`Self::HOPS`] steps
    /// along the recorded actions, each step discounted by [`Self::DECAY`] (its own
    /// promise at no step).
    pub fn reach(&self) -> Vec<f64> {
        self.reach_avoiding(None)
    }

    /// [`reach`](Self::reach) on routes that do not pass through `avoid`, whose own
    /// promise counts as 0: what can be found elsewhere than on `avoid`.
    pub fn reach_avoiding(&self, avoid: Option<PageId>) -> Vec<f64> {
        self.spread(&self.promise, avoid)
    }

    /// The best of `values` reachable from each page within [`Self::HOPS`] steps, each
    /// step discounted by [`Self::DECAY`], on routes that do not pass through `avoid`.
    fn spread(&self, values: &[f64], avoid: Option<PageId>) -> Vec<f64> {
        // `cover` keeps the vectors long enough for every page an edge touches.
        let mut best = values.to_vec();
        if let Some(p) = avoid.filter(|p| p.0 < best.len()) {
            best[p.0] = 0.0;
        }
        for _ in 0..Self::HOPS {
            let mut next = best.clone();
            for ((from, _), to) in &self.leads {
                if Some(*from) == avoid || Some(*to) == avoid {
                    continue;
                }
                let via = Self::DECAY * best[to.0];
                if via > next[from.0] {
                    next[from.0] = via;
                }
            }
            if next == best {
                break;
            }
            best = next;
        }
        best
    }

    /// Raises each of `page`'s candidates (`keys`, with their `chances`) that led to
    /// another page to what can be reached through it without coming back,
    /// `DECAY · reach` of that page avoiding `page`, when that is more than its own
    /// chance. A round trip to a dialog and back is worth what the dialog itself still
    /// offers, not what `page` does: `page`'s own actions are there to be chosen
    /// directly.
    pub fn boost(&self, page: PageId, keys: &[ActionKey], chances: &mut [f64]) {
        self.raise(page, keys, chances, &self.promise, 0.0);
    }

    /// Like [`boost`](Self::boost) with the untried masses of [`Self::set_mass`]: a
    /// route is worth `DECAY · mass` of what it reaches less `own`, the untried mass of
    /// `page` itself. The agent then leaves for what is worth more than what it has
    /// left here, not for every page with untried actions: two pages with as much to do
    /// would otherwise send it back and forth between them.
    pub fn boost_by_mass(&self, page: PageId, keys: &[ActionKey], chances: &mut [f64], own: f64) {
        self.raise(page, keys, chances, &self.mass, own);
    }

    fn raise(
        &self,
        page: PageId,
        keys: &[ActionKey],
        chances: &mut [f64],
        values: &[f64],
        own: f64,
    ) {
        if self.leads.is_empty() {
            return;
        }
        let reach = self.spread(values, Some(page));
        for (key, chance) in keys.iter().zip(chances.iter_mut()) {
            if let Some(to) = self.leads_to(page, *key) {
                let via = Self::DECAY * reach.get(to.0).copied().unwrap_or(0.0) - own;
                if via > *chance {
                    *chance = via;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use gui_core::ActionKind;

    use super::*;

    fn click(target: usize) -> ActionKey {
        ActionKey {
            kind: ActionKind::Click,
            target: Some(target),
            variant: 0,
        }
    }

    /// A map with `(from, click target, to)` recorded for each edge.
    fn map(edges: &[(usize, usize, usize)]) -> Frontier {
        let mut f = Frontier::default();
        for &(from, target, to) in edges {
            f.record(PageId(from), click(target), PageId(to));
        }
        f
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn an_action_is_worth_the_promise_it_leads_to_discounted_per_step() {
        let mut f = Frontier::default();
        // Home (0) leads to a form (1), which leads to a result page (2).
        f.record(PageId(0), click(0), PageId(1));
        f.record(PageId(1), click(0), PageId(2));
        f.set_promise(PageId(0), 0.05);
        f.set_promise(PageId(1), 0.1);
        f.set_promise(PageId(2), 0.6);
        let reach = f.reach();
        assert!(close(reach[2], 0.6));
        assert!(close(reach[1], 0.48));
        assert!(close(reach[0], 0.8 * 0.48));
        // On home, the click that leads on is raised to what the form reaches; an action
        // with no record is not.
        let mut chances = [0.05, 0.05];
        f.boost(PageId(0), &[click(0), click(1)], &mut chances);
        assert!(close(chances[0], 0.8 * 0.48));
        assert!(close(chances[1], 0.05));
        // An own chance above what the route offers is kept.
        let mut chances = [0.9];
        f.boost(PageId(0), &[click(0)], &mut chances);
        assert!(close(chances[0], 0.9));
    }

    #[test]
    fn a_cycle_does_not_feed_itself() {
        let mut f = Frontier::default();
        // Two exhausted pages that lead to each other keep their low promise.
        f.record(PageId(0), click(0), PageId(1));
        f.record(PageId(1), click(0), PageId(0));
        f.set_promise(PageId(0), 0.1);
        f.set_promise(PageId(1), 0.05);
        let reach = f.reach();
        assert!(close(reach[0], 0.1));
        assert!(close(reach[1], 0.08));
    }

    #[test]
    fn a_round_trip_is_worth_what_lies_elsewhere() {
        // A page with untried actions (0) opens a dialog (1) that only closes back to it,
        // and leads to a form (2) that goes on to a result page (3) and back home.
        let mut f = map(&[(0, 0, 1), (1, 0, 0), (0, 1, 2), (2, 0, 3), (2, 1, 0)]);
        f.set_promise(PageId(0), 0.5);
        f.set_promise(PageId(1), 0.05);
        f.set_promise(PageId(2), 0.1);
        f.set_promise(PageId(3), 0.2);
        // Seen from anywhere, the dialog reaches page 0's promise.
        assert!(close(f.reach()[1], 0.4));
        // On page 0, opening the dialog is worth the dialog's own promise, and the form
        // what lies beyond it.
        let mut chances = [0.01, 0.01];
        f.boost(PageId(0), &[click(0), click(1)], &mut chances);
        assert!(close(chances[0], 0.8 * 0.05));
        assert!(close(chances[1], 0.8 * 0.8 * 0.2));
        let avoiding = f.reach_avoiding(Some(PageId(0)));
        assert!(close(avoiding[0], 0.0));
        assert!(close(avoiding[2], 0.16));
    }

    #[test]
    fn a_route_by_mass_is_worth_what_exceeds_the_page_s_own() {
        // A list (1) and home (0) lead to each other; home also leads to a cart (2).
        let mut f = map(&[(0, 0, 1), (1, 0, 0), (0, 1, 2)]);
        f.set_mass(PageId(0), 3.0);
        f.set_mass(PageId(1), 0.0);
        f.set_mass(PageId(2), 1.0);
        // From the list, which has nothing untried, home is worth 0.8 of its mass.
        let mut chances = [0.1];
        f.boost_by_mass(PageId(1), &[click(0)], &mut chances, 0.0);
        assert!(close(chances[0], 2.4));
        // With 2.0 left on the list itself, only the excess counts.
        let mut chances = [0.1];
        f.boost_by_mass(PageId(1), &[click(0)], &mut chances, 2.0);
        assert!(close(chances[0], 0.4));
        // Less than the page has left: the action keeps its own chance.
        let mut chances = [0.1, 0.3];
        f.boost_by_mass(PageId(0), &[click(0), click(1)], &mut chances, 3.0);
        assert_eq!(chances, [0.1, 0.3]);
        // The promise by best chance is apart from the mass.
        assert_eq!(f.promise(PageId(0)), 0.0);
    }

    #[test]
    fn a_fresh_page_is_worth_the_mean_first_mass() {
        let mut f = Frontier::default();
        assert_eq!(f.fresh_mass(), 0.0);
        // Each page counts with the mass it had when first set; later masses move only
        // the route values.
        f.set_mass(PageId(0), 6.0);
        f.set_mass(PageId(2), 2.0);
        f.set_mass(PageId(0), 1.0);
        assert!(close(f.fresh_mass(), 4.0));
        f.set_mass(PageId(1), 7.0);
        assert!(close(f.fresh_mass(), 5.0));
    }

    #[test]
    fn an_action_that_stays_on_its_page_leads_nowhere() {
        let mut f = Frontier::default();
        f.record(PageId(0), click(0), PageId(1));
        assert_eq!(f.leads_to(PageId(0), click(0)), Some(PageId(1)));
        f.record(PageId(0), click(0), PageId(0));
        assert_eq!(f.leads_to(PageId(0), click(0)), None);
    }

    #[test]
    fn routes_longer_than_the_hop_limit_are_not_seen() {
        let mut f = Frontier::default();
        let n = Frontier::HOPS + 2;
        for i in 0..n {
            f.record(PageId(i), click(0), PageId(i + 1));
        }
        f.set_promise(PageId(n), 1.0);
        let reach = f.reach();
        assert!(close(
            reach[n - Frontier::HOPS],
            0.8f64.powi(Frontier::HOPS as i32)
        ));
        assert!(close(reach[n - Frontier::HOPS - 1], 0.0));
    }
}
