//! Everything this workspace added to the paper's agent, each behind one trait,
//! [`Plugin`], and all listed in one registry, [`PLUGINS`].
//!
//! The paper's agent ([`PirlAgent`](crate::PirlAgent) with
//! [`AgentConfig::paper`](crate::AgentConfig::paper)) reads a screen, finds its page,
//! pays the step that led there by Eq. 1, remembers it, and chooses by Boltzmann over
//! Q-values. A plug-in comes in at one or more points of that step, in registry order:
//!
//! 1. [`see`](Plugin::see), before the page store is asked: narrow the screen to a dialog,
//!    or name its page without a lookup.
//! 2. [`same_widget`](Plugin::same_widget), when a widget matches no known widget of its
//!    page by IoU.
//! 3. [`shape`](Plugin::shape), once the page's candidates are known: withhold some of
//!    them from this decision (they still count in `m` of Eq. 1).
//! 4. [`observe`](Plugin::observe), when the step in flight is closed: judge whether it
//!    showed something new, pay it otherwise than Eq. 1, learn from it.
//! 5. [`weigh`](Plugin::weigh), before the Boltzmann choice: weigh each candidate's
//!    softmax term, change the Q-values it sees, or pick the action outright.
//!
//! Some plug-ins share what they learn in [`Shared`]: the effect prior (which actions
//! showed something new) and the frontier (where actions led). Two registry entries are
//! settings of the paper's parts rather than trait objects: `target-network` (of the
//! Q-network's training) and `spread-scale` (of the Boltzmann policy); three refine
//! another plug-in (`region-sights`, `fields-first`, `settings-recheck`).

use std::sync::Arc;

use gui_core::{Rect, Size, Widget};
use rand_chacha::ChaCha8Rng;

use crate::known::{Candidates, KnownWidget};
use crate::{
    ActionKey, AgentConfig, AgentStats, Aim, EffectPrior, Frontier, PageId, PageStore, PageView,
    Result, ScreenPrint,
};

pub(crate) mod code;
pub(crate) mod commands;
pub(crate) mod dialog;
pub(crate) mod novelty;
pub(crate) mod orders;
pub(crate) mod pages;
pub(crate) mod prior;
mod registry;
pub(crate) mod resize;
pub(crate) mod routes;
pub(crate) mod values;

pub use registry::{PLUGINS, PluginInfo, Role, plugin};

/// The step in flight: where it started and what it did.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub page: PageId,
    pub key: ActionKey,
    /// The chosen candidate's place among the decision's candidates.
    pub index: usize,
    pub embedding: Arc<[f32]>,
    /// The screen the action was chosen on, and what it was aimed at.
    pub before: Arc<ScreenPrint>,
    pub kind: gui_core::ActionKind,
    pub target: Option<(Rect, gui_core::WidgetKind)>,
    /// The widget the pointer left to make the action: its hover tint goes away.
    pub left: Option<Rect>,
    /// What the effect prior keeps the action's record by.
    pub aim: Aim,
    /// Each candidate's chance of showing something new, as the effect prior weighed it
    /// (`None` without the prior, `Some(None)` for resizes).
    pub chances: Option<Vec<Option<f64>>>,
    /// Which candidates had run on the page before (empty under the uniform choice).
    pub tried: Vec<bool>,
    /// Whether the step ran code the run had not run ([`code::CoverageMark::raise`]);
    /// `None` until the device reports its coverage after the step
    /// ([`PirlAgent::observe_coverage`](crate::PirlAgent::observe_coverage)).
    pub new_code: Option<bool>,
}

/// What the plug-ins learn together during a run. The paper's agent keeps neither map.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Which actions showed something new (plug-in `effect-prior`).
    pub prior: EffectPrior,
    /// Where actions led and what each page still promises (plug-in `frontier`).
    pub frontier: Frontier,
    /// The command each worker's next action comes right after, with its page
    /// (plug-in `command-states`; the effect prior then reads the pair's record).
    after_command: Vec<Option<(PageId, ActionKey)>>,
    /// The most code the run had covered (plug-in `code-novelty`).
    pub coverage: code::CoverageMark,
}

impl Shared {
    /// The command `worker`'s next action on `page` comes right after.
    pub fn after_command(&self, worker: usize, page: PageId) -> Option<ActionKey> {
        self.after_command
            .get(worker)
            .copied()
            .flatten()
            .filter(|(p, _)| *p == page)
            .map(|(_, c)| c)
    }

    pub fn set_after_command(&mut self, worker: usize, command: Option<(PageId, ActionKey)>) {
        *slot(&mut self.after_command, worker) = command;
    }

    /// `worker`'s app was restarted.
    pub fn restart(&mut self, worker: usize) {
        if let Some(c) = self.after_command.get_mut(worker) {
            *c = None;
        }
    }
}

/// A screen before its page is found ([`Plugin::see`]).
pub(crate) struct Sight<'a> {
    pub worker: usize,
    pub screen: &'a Arc<ScreenPrint>,
    pub size: Size,
    /// The widgets, embeddings and layout tree the page is found by.
    pub view: PageView,
    /// The worker's step in flight, whose outcome this screen is.
    pub prev: Option<&'a Pending>,
    pub store: &'a mut PageStore,
    /// The dialog open over a backdrop, if a plug-in found one.
    pub dialog: Option<Rect>,
    /// The page offers no resize (they would lose an open dialog).
    pub no_resizes: bool,
    /// The page, if a plug-in named it; else the page store finds it.
    pub page: Option<PageId>,
}

/// A decision's candidates before it is made ([`Plugin::shape`]).
pub(crate) struct Shaping<'a> {
    pub candidates: &'a mut Candidates,
    /// The window's size now and at the worker's first screen.
    pub size: (u32, u32),
    pub start: (u32, u32),
    pub stats: &'a AgentStats,
}

/// The step in flight, closed by the screen it led to ([`Plugin::observe`]).
pub(crate) struct FinishedStep<'a> {
    pub worker: usize,
    pub prev: &'a Pending,
    /// The page it led to.
    pub page: PageId,
    /// The screen it led to and that screen's candidates.
    pub screen: &'a ScreenPrint,
    pub now: &'a Candidates,
    /// Whether the action resized the window: pixels cannot tell what it did.
    pub resize: bool,
    /// Whether the action changed the screen beyond its own widget's tint
    /// ([`had_effect`](crate::had_effect)).
    pub changed: bool,
    /// Whether it showed something the run had not seen: by default a screen not seen
    /// before (a resize: a new page).
    pub novel: bool,
    /// Whether it counts as idle in [`AgentStats::idle_steps`]: by default when it did
    /// not [`change`](Self::changed) the screen.
    pub idle: bool,
    /// A reward in place of Eq. 1's.
    pub reward: Option<f64>,
    pub store: &'a mut PageStore,
    pub shared: &'a mut Shared,
}

/// A decision's candidates as the Boltzmann policy will weigh them ([`Plugin::weigh`]).
pub(crate) struct Weighing<'a> {
    pub worker: usize,
    pub page: PageId,
    pub candidates: &'a Candidates,
    pub screen: &'a ScreenPrint,
    /// Which candidates ran on this page before.
    pub tried: &'a [bool],
    /// The network's Q-values of the candidates.
    pub q: &'a mut [f32],
    /// Each candidate's chance of showing something new (plug-in `effect-prior`), `None`
    /// for resizes.
    pub chances: Option<Vec<Option<f64>>>,
    /// Each candidate's softmax term is multiplied by its weight; `None` weighs all 1.
    pub weights: Option<Vec<f64>>,
    /// The candidate to take without a draw.
    pub pick: Option<usize>,
    pub rng: &'a mut ChaCha8Rng,
    pub stats: &'a mut AgentStats,
    pub shared: &'a mut Shared,
}

/// One addition to the paper's agent. Each hook does nothing unless a plug-in needs it.
pub(crate) trait Plugin: Send {
    /// Its name in [`PLUGINS`].
    fn name(&self) -> &'static str;

    /// Before the page store is asked for the screen's page.
    fn see(&mut self, _sight: &mut Sight<'_>) -> Result<()> {
        Ok(())
    }

    /// The known widget not yet `taken` on this screen that `widget` is, when none
    /// matches it by IoU.
    fn same_widget(
        &self,
        _known: &[KnownWidget],
        _widget: &Widget,
        _taken: &[bool],
    ) -> Option<usize> {
        None
    }

    /// Withholds candidates from this decision.
    fn shape(&mut self, _shaping: &mut Shaping<'_>) {}

    /// When the step in flight is closed, before its reward is paid.
    fn observe(&mut self, _step: &mut FinishedStep<'_>) -> Result<()> {
        Ok(())
    }

    /// Before the Boltzmann choice.
    fn weigh(&mut self, _weighing: &mut Weighing<'_>) -> Result<()> {
        Ok(())
    }

    /// `worker`'s app was restarted: its next screen follows no step.
    fn restart(&mut self, _worker: usize) {}
}

/// The plug-ins `config` has in effect, in registry order.
pub(crate) fn build(config: &AgentConfig) -> Vec<Box<dyn Plugin>> {
    let on = config.plugins_on();
    PLUGINS
        .iter()
        .filter(|p| on.contains(&p.name))
        .filter_map(|p| {
            let plugin = p.build.map(|build| build(config))?;
            debug_assert_eq!(plugin.name(), p.name, "the registry builds another plug-in");
            Some(plugin)
        })
        .collect()
}

/// `worker`'s entry of a per-worker list, grown with `None`s to reach it.
pub(crate) fn slot<T>(list: &mut Vec<Option<T>>, worker: usize) -> &mut Option<T> {
    if list.len() <= worker {
        list.resize_with(worker + 1, || None);
    }
    &mut list[worker]
}
