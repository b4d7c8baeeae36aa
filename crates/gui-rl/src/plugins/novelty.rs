//! What a finished step showed, and what it is paid when it showed nothing: plug-ins
//! `local-novelty` (with `region-sights`) and `idle-reward`.
//!
//! A step is *novel* when it showed something the run had not seen. The agent's default
//! judge is the whole screen: novel when the screen after the step was never seen (a
//! resize: when it led to a new page). The effect prior, the frontier and the stall
//! reset learn from that judgement.

use std::collections::{HashMap, HashSet};

use gui_core::Rect;

use super::{FinishedStep, Pending, Plugin};
use crate::effect::{grown, inside};
use crate::{AgentConfig, PageId, Result, ScreenPrint};

/// Plug-in `local-novelty`: when an action leaves the agent on its page, whether it showed
/// something new is judged by the part of the screen it changed
/// ([`ScreenPrint::changed_parts`]), without the widget the pointer left; a part within
/// the target widget (typed text, a tick) is judged on the whole widget, so the same text
/// in the same field is one sight whatever it replaced. A form's fields, boxes and
/// switches make more whole screens than a run has steps, each one new.
///
/// With `region-sights`, a part of a page (its page and the 16-px cell of its top left
/// corner) shows something new for at most
/// [`region_sights`](AgentConfig::region_sights) distinct sights; later ones are values
/// changing in place: a slider's readout, a counter, digits typed at the caret.
#[derive(Debug)]
pub(crate) struct LocalNovelty {
    /// Most sights per part; 0 sets no limit.
    cap: u32,
    /// Hashes of the parts of screens that actions changed while the agent stayed on its
    /// page.
    seen: HashSet<u64>,
    /// Distinct sights per part of a page.
    counts: HashMap<(PageId, i32, i32), u32>,
}

impl LocalNovelty {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            cap: config.region_sights,
            seen: HashSet::new(),
            counts: HashMap::new(),
        }
    }

    /// Whether a part of the screen that `prev`'s action changed shows, `after` it,
    /// something not seen there before.
    pub fn first_sight(&mut self, prev: &Pending, after: &ScreenPrint) -> bool {
        let left: Vec<Rect> = prev.left.map(grown).into_iter().collect();
        let mut new = false;
        for part in prev.before.changed_parts(after, &left) {
            let region = match prev.target {
                Some((t, _)) if inside(part, t) => grown(t),
                _ => part,
            };
            if self.seen.insert(after.coarse_hash_within(region)) {
                let count = self
                    .counts
                    .entry((prev.page, region.x.div_euclid(16), region.y.div_euclid(16)))
                    .or_insert(0);
                *count += 1;
                tracing::trace!(
                    page = prev.page.0,
                    x = region.x,
                    y = region.y,
                    width = region.width,
                    height = region.height,
                    sights = *count,
                    "sight"
                );
                new |= self.cap == 0 || *count <= self.cap;
            }
        }
        new
    }
}

impl Plugin for LocalNovelty {
    fn name(&self) -> &'static str {
        "local-novelty"
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if !step.resize && step.page == step.prev.page {
            step.novel = step.changed && self.first_sight(step.prev, step.screen);
        }
        Ok(())
    }
}

/// Plug-in `idle-reward`: a step whose action changed nothing on the screen but its own
/// widget's hover or press tint ([`had_effect`](crate::had_effect)), or resized the window
/// onto a page seen before, is paid [`idle_reward`](AgentConfig::idle_reward) in place of
/// Eq. 1. Eq. 1 pays a step by how unexplored the next page is, so a right click that does
/// nothing on a fresh page earns as much as a click that opens a dialog, and nothing
/// teaches the network to stop making it.
#[derive(Debug)]
pub(crate) struct IdleReward {
    reward: f64,
}

impl IdleReward {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            reward: config.idle_reward.unwrap_or(0.0),
        }
    }
}

impl Plugin for IdleReward {
    fn name(&self) -> &'static str {
        "idle-reward"
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if !step.changed {
            step.reward = Some(self.reward);
        }
        Ok(())
    }
}
