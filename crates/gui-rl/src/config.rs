//! Settings of a [`PirlAgent`](crate::PirlAgent).
//!
//! One flat struct, so that a run's `run.json` shows every setting under its own name.
//! The fields that switch a plug-in on or off are listed with their plug-in in the
//! registry [`PLUGINS`](crate::PLUGINS); [`AgentConfig::paper`] switches them all off,
//! and `docs/pirltest.md` says what each one changes and why it is there.

use gui_action::ActionSpaceConfig;
use gui_layout::LayoutConfig;
use gui_vision::{EmbedConfig, ExtractConfig};
use serde::{Deserialize, Serialize};

use crate::effect::BACKDROP_MIN_CHANGED;
use crate::{Choice, Error, MemoryConfig, PageStoreConfig, QNetworkConfig, Result};

/// Settings of a [`PirlAgent`](crate::PirlAgent). [`Default`] is the `default` preset:
/// the paper's agent with the plug-ins marked `in_default` in
/// [`PLUGINS`](crate::PLUGINS); [`AgentConfig::paper`] is the paper's alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// Seed of the network's initial weights, the batch draws and the action choices.
    pub seed: u64,
    /// Discount `γ` of Eq. 3. The paper does not state it; 0.9 is the usual choice of
    /// the DQN work it follows.
    pub gamma: f64,
    /// Softmax temperature of the policy. Rewards lie in `[0, 1]`, so Q-values differ by
    /// fractions; 0.1 lets a difference of 0.1 count e-fold. The paper's SoftMax has
    /// none (1).
    pub temperature: f64,
    /// Divide each choice's Q-values by their spread over the candidates, so that
    /// `temperature` is in units of that spread
    /// ([`BoltzmannPolicy::with_spread_scale`](crate::BoltzmannPolicy::with_spread_scale)).
    /// Plug-in `spread-scale`.
    pub spread_scale: bool,
    /// Weight of system actions' Q-values (0.5, Section 3.4.3).
    pub system_weight: f64,
    /// Boltzmann over Q-values (the paper), or uniform without learning
    /// ([`AgentConfig::random`]).
    pub choice: Choice,
    /// Reward of a step whose action changed nothing on the screen but its own widget's
    /// hover or press tint ([`had_effect`](crate::had_effect)), or resized the window
    /// onto a page seen before, in place of Eq. 1. `None` keeps Eq. 1 for every step, as
    /// the paper does. Plug-in `idle-reward`: Eq. 1 pays such a step as much as one that
    /// changes the page, so nothing teaches the network to stop making it.
    pub idle_reward: Option<f64>,
    /// Plug-in `effect-prior`: weigh each candidate's softmax term by the chance, learnt
    /// during the run, that it shows something new ([`EffectPrior`](crate::EffectPrior)).
    pub effect_prior: bool,
    /// Plug-in `modal-focus`: while a dialog is open over a dimmed backdrop, the screen's
    /// page is the dialog, and the page behind it offers no candidates.
    pub modal_focus: bool,
    /// Plug-in `frontier`: an action that led to another page weighs at least the best
    /// chance reachable through it ([`Frontier`](crate::Frontier)).
    pub frontier: bool,
    /// Plug-in `frontier-mass`: a route also weighs the untried mass of where it leads,
    /// less that of the page the agent is on ([`Frontier::boost_by_mass`](crate::Frontier::boost_by_mass)).
    pub frontier_mass: bool,
    /// Plug-in `state-refresh`: an action that shows something new and stays on its page
    /// puts the page in a new state, where its actions that once showed something new
    /// count as untried ([`EffectPrior::state_changed`](crate::EffectPrior::state_changed)).
    pub state_refresh: bool,
    /// Plug-in `resize-budget`: the largest share of the decisions made at a window size
    /// other than the one the run started at. Once spent, no resize is a candidate at the
    /// start size, and elsewhere only those that lead back. 1 sets no limit (off); the
    /// `default` preset has 0.1. At another size every page is new once, so Eq. 1 and
    /// the effect prior would otherwise make staying there pay.
    pub resize_budget: f64,
    /// Plug-in `local-novelty`: when an action leaves the agent on its page, whether it
    /// showed something new is judged by the part of the screen it changed, not the
    /// whole screen, whose combinations of field values never repeat.
    pub local_novelty: bool,
    /// Plug-in `local-page`: an action that changes at most this share of the screen (in
    /// 4-pixel cells, the widget the pointer left aside) leaves the agent on the page it
    /// acted on, without a page-store lookup. 0 looks every screen up (off); the
    /// `default` preset has 0.03, below [`BACKDROP_MIN_CHANGED`] so that a dialog coming
    /// over a backdrop is never a small change. Typed text, a tick or a one-line message
    /// move the layout tree enough to make a new page at the store's threshold.
    pub local_page: f64,
    /// Plug-in `command-states`: right after a command (a button that changed the screen
    /// and left the agent on its page), each action keeps a record of its own for that
    /// pair, and the command weighs at least [`Frontier::DECAY`](crate::Frontier::DECAY)
    /// times the best chance still untried right after it.
    pub command_states: bool,
    /// Plug-in `command-sequences`: at most this many steps per screen go to running its
    /// commands back to back in orders not yet run ([`CommandSequences`](crate::CommandSequences));
    /// 0 is off (the `default` preset: on the corpus's tune split the group lowered the
    /// median gain), 30 when switched on. Some faults need commands in one order (Select all, Archive, Undo),
    /// which no per-action record asks for once each has shown what it shows.
    pub sequence_budget: u32,
    /// Plug-in `fields-first` (needs `command-sequences`): while a run of commands is under
    /// way, a text field nothing was typed into yet is typed into before the next
    /// command, once per field, since what a command does often depends on the fields.
    pub fields_first: bool,
    /// Plug-in `settings-recheck` (needs `command-sequences`): after a setting changed (a
    /// box ticked, a switch turned, a choice made), the lone command of each other screen
    /// is clicked once more when that screen is next shown
    /// ([`CommandSequences::setting_changed`](crate::CommandSequences::setting_changed)),
    /// since a setting may change what other screens do.
    pub settings_recheck: bool,
    /// Plug-in `fresh-exits` (needs `frontier-mass`): an untried action the prior thinks
    /// likely weighs at least its chance times what a page not seen yet offers
    /// ([`Frontier::fresh_mass`](crate::Frontier::fresh_mass)), less the page's own
    /// untried mass, so that routes to known pages do not outweigh untried buttons that
    /// may lead to unknown ones.
    pub fresh_exits: bool,
    /// Plug-in `state-reward` (needs `state-refresh`): when an action puts its page in a
    /// new state, the page's executed count `n` of Eq. 1 starts again from zero.
    pub state_reward: bool,
    /// Plug-in `optimistic`: actions not yet executed on their page take the page's best
    /// Q-value instead of the network's guess (optimistic initial values), those the
    /// prior weighs at least half as much as the page's best.
    pub optimistic: bool,
    /// Plug-in `stall-reset`: after this many decisions in a row whose actions showed
    /// nothing new, the Q-values stop ranking the candidates (the prior and frontier
    /// alone choose) until an action shows something new again. 0 is off. Eq. 1 pays
    /// every return to a page with many unexecuted actions, so two such pages can feed
    /// each other's values and hold the agent in a loop.
    pub stall_steps: u32,
    /// Plug-in `region-sights` (needs `local-novelty`): a part of a page (keyed by its
    /// page and the 16-px cell of its top left corner) counts as showing something new
    /// for at most this many distinct sights; later ones are values changing in place (a
    /// slider's readout, a counter). 0 sets no limit (off).
    pub region_sights: u32,
    /// Plug-in `anchor-match`: a widget that matches no known widget of its page by IoU
    /// is still the known one of its kind with the same left edge, top edge and height
    /// (within 4 px), whatever its width: a slider's track, a field's text.
    pub anchor_match: bool,
    /// Plug-in `print-pages`: a screen that the page store would make a new page, but that
    /// differs from a kept screen of a known page (outside a dialog, at the same size) in
    /// at most [`local_page`](Self::local_page) of its cells, is that page.
    pub print_pages: bool,
    /// Plug-in `code-novelty`: on a device that measures the app's code coverage, a step
    /// showed something new when it ran code the run had not run, not when it showed new
    /// pixels, and such a step is paid what Eq. 1 pays a first arrival on a fresh page
    /// ([`PirlAgent::observe_coverage`](crate::PirlAgent::observe_coverage)). New screens
    /// and new behaviour part ways on the web: tooltips and hover menus show new pixels
    /// and run nothing, a validating handler runs new code and shows nothing.
    pub code_novelty: bool,
    /// Retrain the network after this many steps (the paper retrains "constantly").
    pub train_every: usize,
    /// Decide without waiting for a retraining in flight. A decision then uses the
    /// network of the last retraining that has finished, and the next one starts once
    /// that one is done and [`train_every`](Self::train_every) steps have passed, so
    /// the device never waits for learning. Which network a decision sees then
    /// depends on timing: a run is no longer fixed by its seed. Default `false`.
    pub train_async: bool,
    /// Memory entries per retraining: the newest half and a random half of the rest
    /// (Section 3.4.2). 64, one batch of the paper's size.
    pub train_samples: usize,
    /// Hidden layers, learning rate, batch and epochs of the Q-network (the paper's
    /// 4x512, 0.01, 64, 5).
    pub hidden: Vec<usize>,
    pub learning_rate: f64,
    pub batch_size: usize,
    pub epochs: usize,
    /// Plug-in `target-network`: Eq. 3's targets from a frozen copy of the network
    /// refreshed every this many retrainings ([`QNetworkConfig::target_every`]). 0 takes
    /// them from the network as it is, as the paper does (off); the `default` preset has
    /// 10. A copy keeps the error of the network's largest output over the candidates
    /// from feeding straight back into the next targets.
    pub target_every: usize,
    pub memory: MemoryConfig,
    /// Page identity. The paper's thresholds (`PageStoreConfig::default`); the `default`
    /// preset has `same_page` 0.95 instead of 0.75, because the paper's 0.75 goes with
    /// its VGG-16 widget features, and with ours it merges distinct screens of the demo
    /// app into one page (`docs/pirltest.md`).
    pub pages: PageStoreConfig,
    /// Widget extraction; `None` picks [`ExtractConfig::mobile`] for screens narrower
    /// than 600 pixels and [`ExtractConfig::web`] otherwise.
    pub extract: Option<ExtractConfig>,
    /// Parts of a widget vector: [`EmbedConfig::default`] (CNN feature ‖ 16×16 location
    /// mask ‖ kind), or [`EmbedConfig::paper`] (the location through the CNN too).
    pub embed: EmbedConfig,
    pub layout: LayoutConfig,
    pub actions: ActionSpaceConfig,
}

impl Default for AgentConfig {
    fn default() -> Self {
        let q = QNetworkConfig::new(1, 1);
        Self {
            seed: 0,
            gamma: 0.9,
            temperature: 0.1,
            spread_scale: false,
            system_weight: 0.5,
            choice: Choice::Boltzmann,
            idle_reward: Some(0.0),
            effect_prior: true,
            modal_focus: true,
            frontier: true,
            frontier_mass: true,
            state_refresh: true,
            resize_budget: 0.1,
            local_novelty: true,
            local_page: 0.03,
            command_states: false,
            sequence_budget: 0,
            fields_first: false,
            settings_recheck: false,
            fresh_exits: true,
            state_reward: false,
            optimistic: true,
            stall_steps: 20,
            region_sights: 4,
            anchor_match: true,
            print_pages: false,
            code_novelty: false,
            train_every: 1,
            train_async: false,
            train_samples: 64,
            hidden: q.hidden,
            learning_rate: q.learning_rate,
            batch_size: q.batch_size,
            epochs: q.epochs,
            target_every: 10,
            memory: MemoryConfig::default(),
            pages: PageStoreConfig {
                same_page: 0.95,
                ..PageStoreConfig::default()
            },
            extract: None,
            embed: EmbedConfig::default(),
            layout: LayoutConfig::default(),
            actions: ActionSpaceConfig::default(),
        }
    }
}

impl AgentConfig {
    pub(crate) fn validate(&self) -> Result<()> {
        let fail = |field, message: String| Err(Error::Config { field, message });
        if !(0.0..=1.0).contains(&self.gamma) {
            return fail("gamma", format!("must be in [0, 1], got {}", self.gamma));
        }
        if !(0.0..=1.0).contains(&self.resize_budget) {
            return fail(
                "resize_budget",
                format!("must be in [0, 1], got {}", self.resize_budget),
            );
        }
        if !(0.0..BACKDROP_MIN_CHANGED).contains(&self.local_page) {
            return fail(
                "local_page",
                format!(
                    "must be at least 0 and below {BACKDROP_MIN_CHANGED} (the change a \
                     dialog's backdrop makes), got {}",
                    self.local_page
                ),
            );
        }
        if self.train_every == 0 {
            return fail("train_every", "must be at least 1".to_owned());
        }
        if self.train_samples == 0 {
            return fail("train_samples", "must be at least 1".to_owned());
        }
        if let Some(r) = self.idle_reward
            && !r.is_finite()
        {
            return fail("idle_reward", format!("must be a finite number, got {r}"));
        }
        self.validate_plugins()
    }
}
