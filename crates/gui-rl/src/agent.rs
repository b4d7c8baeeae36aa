//! The PIRLTest agent (Fig. 3), as the paper has it: screenshot → widgets and layout →
//! page state → candidate actions → Q-values → Boltzmann choice, and after every step
//! the reward of Eq. 1, a memory entry and a retraining of the Q-network.
//!
//! One call, [`PirlAgent::decide`], closes the previous step (the screen it gets is the
//! outcome of the last action) and chooses the next action:
//!
//! 1. The screen's page (Section 3.3): the page store finds the known page whose widget
//!    and layout similarity reach the threshold, or adds a new one.
//! 2. Its candidates (Section 3.2): the actions that apply to each widget's kind, then
//!    the page and system actions. Their number is `m` of Eq. 1.
//! 3. The step in flight is closed: the page store counts the transition (`N`, `n` of
//!    Eq. 1), the step is paid by Eq. 1 and goes into the exploration memory with the new
//!    page's candidates (Section 3.4.2, for Eq. 3's `max`).
//! 4. The choice (Sections 3.4, 3.4.3): Q-values of the candidates, system actions'
//!    weighted by 0.5, softmax, one draw from the seeded RNG.
//! 5. A retraining on the memory (Section 3.4.2) starts on another thread while the device
//!    carries out the action ([`learner`](crate::learner)).
//!
//! Everything this workspace added comes in at these points as a plug-in
//! ([`plugins`](crate::plugins), registry [`PLUGINS`](crate::PLUGINS)); with none, as in
//! [`AgentConfig::paper`], this is the paper's algorithm.
//!
//! The agent sees only pixels, and where the device measures it, the app's code coverage
//! after each step ([`PirlAgent::observe_coverage`]). Several workers, each with its own device, can share one
//! agent: each reads its screens with its own [`ScreenReader`] (the costly part) and calls
//! [`PirlAgent::decide_read`] with its worker number. Each worker's step in flight is kept
//! apart; pages, memory, network and choices are shared.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use gui_action::ActionEmbedding;
use gui_core::{Action, ActionKind, CoverageSnapshot, Platform, Rect, Screenshot, Widget};
use gui_layout::LayoutEmbedder;
use gui_vision::{Vision, VisionConfig, WidgetCnn};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::known::{Candidates, KnownPages, KnownWidget, resizes};
use crate::learner::Learner;
use crate::plugins::{FinishedStep, Pending, Plugin, Shaping, Shared, Sight, Weighing, slot};
use crate::reader::{ms, vision_error};
use crate::{
    AgentConfig, AgentStats, Aim, BoltzmannPolicy, Choice, Error, ExplorationMemory, MemoryEntry,
    PageId, PageStore, QNetwork, QNetworkConfig, Result, ScreenPrint, ScreenRead, ScreenReader,
    SharedEntry, had_effect,
};

/// The PIRLTest exploration agent.
pub struct PirlAgent {
    config: AgentConfig,
    /// Reads the screens of [`decide`](Self::decide).
    reader: ScreenReader,
    /// Page identity and the counters of Eq. 1.
    store: PageStore,
    /// Each page's state vector and embedded candidates.
    known: KnownPages,
    memory: ExplorationMemory<Arc<[f32]>, Arc<[f32]>>,
    learner: Learner,
    policy: BoltzmannPolicy,
    rng: ChaCha8Rng,
    plugins: Vec<Box<dyn Plugin>>,
    shared: Shared,
    /// Coarse hashes of every screen seen ([`ScreenPrint::coarse_hash`]), to tell whether
    /// a step showed something new.
    screens_seen: HashSet<u64>,
    /// Each worker's step in flight, by worker number (grown on demand).
    pending: Vec<Option<Pending>>,
    /// The widget under each worker's pointer: the target of its last widget action,
    /// `None` after a swipe (the wheel turns at the screen's centre) or before any.
    pointer: Vec<Option<Rect>>,
    /// The size of each worker's first screen.
    start_size: Vec<Option<(u32, u32)>>,
    /// The page and widgets of the screen of each worker's last decision.
    last_seen: Vec<Option<(PageId, Vec<Widget>)>>,
    stats: AgentStats,
}

impl std::fmt::Debug for PirlAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PirlAgent")
            .field("config", &self.config)
            .field("plugins", &self.config.plugins_on())
            .field("stats", &self.stats)
            .finish()
    }
}

impl PirlAgent {
    /// An agent with the widget CNN and layout LSTM that ship with gui-vision and
    /// gui-layout, and a new Q-network.
    pub fn new(config: AgentConfig) -> Result<Self> {
        config.validate()?;
        let layout = LayoutEmbedder::shipped().map_err(|e| Error::Input {
            what: "layout embedder",
            message: e.to_string(),
        })?;
        let cnn = Arc::new(WidgetCnn::shipped().map_err(vision_error)?);
        let probe = VisionConfig {
            embed: config.embed,
            ..VisionConfig::default()
        };
        let widget_dim = Vision::new(probe, cnn.clone())
            .map_err(vision_error)?
            .embedding_dim();
        let embedding = ActionEmbedding::new(widget_dim);
        let state_dim = widget_dim + layout.config().out_dim;
        let network = QNetwork::new(QNetworkConfig {
            hidden: config.hidden.clone(),
            learning_rate: config.learning_rate,
            batch_size: config.batch_size,
            epochs: config.epochs,
            seed: config.seed,
            target_every: config.target_every,
            ..QNetworkConfig::new(state_dim, embedding.dim())
        })?;
        let policy = BoltzmannPolicy::new(config.temperature)?
            .with_system_weight(config.system_weight)?
            .with_spread_scale(config.spread_scale);
        let learner = Learner::new(
            network,
            config.train_async,
            config.train_every,
            config.train_samples,
            config.gamma,
        )?;
        let known = KnownPages::new(
            embedding,
            layout,
            config.actions.clone(),
            config.pages.match_iou,
        );
        Ok(Self {
            store: PageStore::new(config.pages)?,
            memory: ExplorationMemory::new(config.memory)?,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            reader: ScreenReader::new(cnn, &config),
            plugins: crate::plugins::build(&config),
            config,
            known,
            learner,
            policy,
            shared: Shared::default(),
            screens_seen: HashSet::new(),
            pending: Vec::new(),
            pointer: Vec::new(),
            start_size: Vec::new(),
            last_seen: Vec::new(),
            stats: AgentStats::default(),
        })
    }

    /// Replaces the Q-network by one learnt before (see [`QNetwork::load`]); its input
    /// sizes must match this agent's.
    pub fn with_network(mut self, network: QNetwork) -> Result<Self> {
        let mine = self.learner.network(&mut self.stats)?.config();
        let theirs = network.config();
        if (mine.state_dim, mine.action_dim) != (theirs.state_dim, theirs.action_dim) {
            return Err(Error::Input {
                what: "network",
                message: format!(
                    "takes state {} + action {}, this agent gives {} + {}",
                    theirs.state_dim, theirs.action_dim, mine.state_dim, mine.action_dim
                ),
            });
        }
        self.learner.replace(network, &mut self.stats)?;
        Ok(self)
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The Q-network, once any retraining in flight has finished.
    pub fn network(&mut self) -> Result<&QNetwork> {
        self.learner.network(&mut self.stats)
    }

    pub fn pages(&self) -> &PageStore {
        &self.store
    }

    pub fn stats(&self) -> AgentStats {
        AgentStats {
            pages: self.store.len(),
            known_widgets: self.known.known_widgets(),
            memory: self.memory.len(),
            ..self.stats
        }
    }

    /// A new reader with this agent's widget CNN and settings, for a worker that reads
    /// its screens on its own thread before [`decide_read`](Self::decide_read).
    pub fn reader(&self) -> ScreenReader {
        self.reader.fresh()
    }

    /// The abstract page and the detected widgets of the screen of the last
    /// [`decide`](Self::decide) (none before the first): worker 0's.
    pub fn last_seen(&self) -> Option<(PageId, &[Widget])> {
        self.last_seen_of(0)
    }

    /// The abstract page and the detected widgets of the screen of `worker`'s last
    /// decision (none before its first).
    pub fn last_seen_of(&self, worker: usize) -> Option<(PageId, &[Widget])> {
        self.last_seen
            .get(worker)?
            .as_ref()
            .map(|(p, w)| (*p, &w[..]))
    }

    /// Saves the Q-network so that a later run can start from it.
    pub fn save_network(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.network()?.save(path)
    }

    /// The app was restarted: the next screen starts afresh rather than being the outcome
    /// of the last action. Worker 0's app; see [`reset_episode_of`](Self::reset_episode_of).
    pub fn reset_episode(&mut self) {
        self.reset_episode_of(0);
    }

    /// `worker`'s app was restarted: its next screen starts afresh.
    pub fn reset_episode_of(&mut self, worker: usize) {
        if let Some(p) = self.pending.get_mut(worker) {
            *p = None;
        }
        if let Some(p) = self.pointer.get_mut(worker) {
            *p = None;
        }
        self.shared.restart(worker);
        for p in &mut self.plugins {
            p.restart(worker);
        }
    }

    /// The app's code coverage after `worker`'s last action, as the device measured it
    /// ([`gui_core::Transition::coverage`]; cumulative over the run). It tells whether
    /// that step, which the worker's next decision closes, ran code the run had not run
    /// before: [`AgentStats::code_steps`](crate::AgentStats::code_steps) counts such
    /// steps, and plug-in `code-novelty` judges novelty by it. Devices that measure no
    /// coverage never call this, and nothing changes.
    pub fn observe_coverage(&mut self, worker: usize, coverage: &CoverageSnapshot) {
        let new = self.shared.coverage.raise(coverage);
        // A step no decision will close (the first screen after a restart) still raises
        // the mark, so that its code is not credited to the next step.
        if let Some(prev) = self.pending.get_mut(worker).and_then(Option::as_mut) {
            prev.new_code = new;
            self.stats.code_steps += u64::from(new == Some(true));
        }
    }

    /// Closes the previous step with `screen` as its outcome (page counters, reward,
    /// memory, retraining) and chooses the next action among those the platform and the
    /// device support. The same as reading `screen` with a [`ScreenReader`] and calling
    /// [`decide_read`](Self::decide_read) as worker 0.
    pub fn decide(
        &mut self,
        screen: &Screenshot,
        platform: Platform,
        supported: &[ActionKind],
    ) -> Result<Action> {
        let read = match self.reader.read(screen) {
            Ok(read) => read,
            Err(e) => {
                *slot(&mut self.last_seen, 0) = None;
                return Err(e);
            }
        };
        self.decide_read(0, read, platform, supported)
    }

    /// [`decide`](Self::decide) on a screen read before, for `worker`: closes that
    /// worker's previous step with `read` as its outcome and chooses its next action.
    /// Workers are numbered from 0; each has its own step in flight, while pages, memory,
    /// network and the random choices are shared. The read's times join
    /// [`AgentTimings`](crate::AgentTimings).
    pub fn decide_read(
        &mut self,
        worker: usize,
        read: ScreenRead,
        platform: Platform,
        supported: &[ActionKind],
    ) -> Result<Action> {
        self.stats.timings.vision_ms += read.vision_ms;
        self.stats.timings.layout_ms += read.layout_ms;
        *slot(&mut self.last_seen, worker) = None;
        let screen = Arc::new(read.print);
        let known = self.store.len();

        // 1. The screen's page: a plug-in may narrow the screen or name its page; else
        //    the page store finds it (Section 3.3).
        let t = Instant::now();
        let mut sight = Sight {
            worker,
            screen: &screen,
            size: read.size,
            view: read.view,
            prev: self.pending.get(worker).and_then(Option::as_ref),
            store: &mut self.store,
            dialog: None,
            no_resizes: false,
            page: None,
        };
        for p in &mut self.plugins {
            p.see(&mut sight)?;
        }
        let Sight {
            view,
            dialog,
            no_resizes,
            page,
            ..
        } = sight;
        let hash = dialog.map_or_else(|| screen.coarse_hash(), |d| screen.coarse_hash_within(d));
        let first_sight = self.screens_seen.insert(hash);
        let page = match page {
            Some(page) => page,
            None => self.store.lookup_or_insert(view.clone())?,
        };
        self.stats.timings.pages_ms += ms(t);

        // 2. Its candidates (Section 3.2); their number is `m` of Eq. 1.
        let t = Instant::now();
        let space = self.known.space_for(platform, supported)?;
        if page.0 == self.known.len() {
            self.known.add(&view, &space)?;
        }
        let plugins = &self.plugins;
        let same_widget = |known: &[KnownWidget], widget: &Widget, taken: &[bool]| {
            plugins
                .iter()
                .find_map(|p| p.same_widget(known, widget, taken))
        };
        let mut candidates = self.known.candidates(page, &view, &space, &same_widget)?;
        if no_resizes {
            candidates.retain(|a, _| !resizes(a.kind));
        }
        self.store.set_executable(page, candidates.actions.len())?;
        *slot(&mut self.last_seen, worker) = Some((page, view.widgets().to_vec()));
        self.stats.timings.layout_ms += ms(t);
        let size = screen.size();
        let start = *slot(&mut self.start_size, worker).get_or_insert(size);
        self.stats.away_steps += u64::from(size != start);
        self.stats.dialog_steps += u64::from(dialog.is_some());
        let mut shaping = Shaping {
            candidates: &mut candidates,
            size,
            start,
            stats: &self.stats,
        };
        for p in &mut self.plugins {
            p.shape(&mut shaping);
        }

        // 3. The step in flight, closed by this screen.
        let train = match slot(&mut self.pending, worker).take() {
            Some(prev) => {
                let new_page = page.0 >= known;
                self.close_step(
                    worker,
                    &prev,
                    page,
                    new_page,
                    first_sight,
                    &screen,
                    &candidates,
                )?
            }
            None => {
                self.store.record_visit(page)?;
                false
            }
        };

        // 4. The choice, with the network of the last retraining.
        self.learner.before_decision(&mut self.stats)?;
        let t = Instant::now();
        let action = self.choose(worker, page, screen, &candidates)?;
        self.stats.timings.choose_ms += ms(t);
        self.stats.decisions += 1;

        // 5. A retraining while the device acts.
        self.learner
            .after_decision(train, &self.memory, &mut self.rng, &mut self.stats)?;
        Ok(action)
    }

    /// Counters, reward (Eq. 1, unless a plug-in pays the step otherwise) and memory
    /// entry of the step `prev`, which led to `page`; whether a retraining is due.
    #[allow(clippy::too_many_arguments)]
    fn close_step(
        &mut self,
        worker: usize,
        prev: &Pending,
        page: PageId,
        new_page: bool,
        first_sight: bool,
        screen: &ScreenPrint,
        now: &Candidates,
    ) -> Result<bool> {
        // `N` of the next page and `n` of this one (Eq. 1).
        self.store.record_transition(prev.page, prev.key, page)?;
        // A resize changes every pixel, so pixels cannot tell whether it showed anything
        // new; it counts as a change when it led to a page not seen before.
        let resize = resizes(prev.kind);
        let changed = if resize {
            new_page
        } else {
            had_effect(&prev.before, screen, prev.kind, prev.target, prev.left)
        };
        let mut step = FinishedStep {
            worker,
            prev,
            page,
            screen,
            now,
            resize,
            changed,
            novel: if resize {
                new_page
            } else {
                changed && first_sight
            },
            idle: !changed,
            reward: None,
            store: &mut self.store,
            shared: &mut self.shared,
        };
        for p in &mut self.plugins {
            p.observe(&mut step)?;
        }
        let (novel, idle, reward) = (step.novel, step.idle, step.reward);
        self.stats.novel_steps += u64::from(novel);
        self.stats.idle_steps += u64::from(idle);
        tracing::debug!(
            from = prev.page.0,
            to = page.0,
            changed,
            novel,
            new_code = prev.new_code,
            "closed"
        );
        let reward = match reward {
            Some(r) => r,
            None => self.store.transition_reward(prev.page, page)?,
        };
        self.stats.last_reward = reward;
        if self.config.choice == Choice::Uniform {
            // Nothing learns: no memory entry, no retraining.
            return Ok(false);
        }
        let entry: SharedEntry = MemoryEntry {
            state: self.known.state(prev.page).clone(),
            action: prev.embedding.clone(),
            reward,
            next_state: self.known.state(page).clone(),
            next_actions: now.embeddings.clone(),
        };
        self.memory.push(entry);
        Ok(self.learner.step_closed())
    }

    /// Chooses among `candidates` of `page` and makes the choice the worker's step in
    /// flight: by Boltzmann over the Q-values as the plug-ins weigh them, or uniformly.
    fn choose(
        &mut self,
        worker: usize,
        page: PageId,
        screen: Arc<ScreenPrint>,
        candidates: &Candidates,
    ) -> Result<Action> {
        if candidates.actions.is_empty() {
            // Nothing detected and no page or system action enabled: going back is the
            // one move every platform has.
            return Ok(Action::new(ActionKind::Return));
        }
        if self.config.choice == Choice::Uniform {
            let i = self.rng.random_range(0..candidates.actions.len());
            return Ok(self.commit(worker, page, candidates, i, screen, None, Vec::new()));
        }
        let embeddings: Vec<&[f32]> = candidates.embeddings.iter().map(|e| &e[..]).collect();
        let mut q = self
            .learner
            .acting()
            .q_values(self.known.state(page), &embeddings)?;
        let kinds: Vec<ActionKind> = candidates.actions.iter().map(|a| a.kind).collect();
        let executed = self.store.stats(page)?;
        let tried: Vec<bool> = candidates
            .keys
            .iter()
            .map(|k| executed.was_executed(k))
            .collect();
        let mut w = Weighing {
            worker,
            page,
            candidates,
            screen: &screen,
            tried: &tried,
            q: &mut q,
            chances: None,
            weights: None,
            pick: None,
            rng: &mut self.rng,
            stats: &mut self.stats,
            shared: &mut self.shared,
        };
        for p in &mut self.plugins {
            p.weigh(&mut w)?;
        }
        let Weighing {
            chances,
            weights,
            pick,
            ..
        } = w;
        // Sections 3.4 and 3.4.3: `p_i ∝ weight_i · exp(w_i · Q_i / T)`.
        let p = self
            .policy
            .probabilities_with(&q, &kinds, weights.as_deref())?;
        let i = match pick {
            Some(i) => i,
            None => BoltzmannPolicy::draw(&p, &mut self.rng)?,
        };
        trace_choice(page, candidates, &q, weights.as_deref(), &p, i, &self.stats);
        Ok(self.commit(worker, page, candidates, i, screen, chances, tried))
    }

    /// Makes candidate `i` the worker's step in flight and returns its action.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &mut self,
        worker: usize,
        page: PageId,
        candidates: &Candidates,
        i: usize,
        screen: Arc<ScreenPrint>,
        chances: Option<Vec<Option<f64>>>,
        tried: Vec<bool>,
    ) -> Action {
        let action = candidates.actions[i].clone();
        self.known.count_typing(page, candidates.keys[i]);
        let target = action.widget().map(|w| (w.rect, w.kind));
        // A widget action or a swipe moves the pointer; the widget it was over loses
        // its hover tint.
        let left = if target.is_some() || action.kind == ActionKind::Swipe {
            let pointer = slot(&mut self.pointer, worker);
            std::mem::replace(pointer, target.map(|(r, _)| r))
                .filter(|r| target.is_none_or(|(t, _)| t != *r))
        } else {
            None
        };
        *slot(&mut self.pending, worker) = Some(Pending {
            page,
            key: candidates.keys[i],
            index: i,
            embedding: candidates.embeddings[i].clone(),
            aim: Aim::of(&action, &screen),
            before: screen,
            kind: action.kind,
            target,
            left,
            chances,
            tried,
            new_code: None,
        });
        action
    }
}

/// The decision at debug level, and every candidate, most probable first, at trace level
/// (`-vvv`).
fn trace_choice(
    page: PageId,
    candidates: &Candidates,
    q: &[f32],
    weights: Option<&[f64]>,
    p: &[f64],
    i: usize,
    stats: &AgentStats,
) {
    if tracing::enabled!(tracing::Level::DEBUG) {
        let (lo, hi) = q
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            });
        tracing::debug!(
            page = page.0,
            candidates = q.len(),
            q_min = lo,
            q_max = hi,
            chosen = ?candidates.actions[i].kind,
            target = ?candidates.actions[i].widget().map(|w| w.rect),
            q = q[i],
            prior = weights.map(|w| w[i]),
            p = p[i],
            reward = stats.last_reward,
            sequence = stats.sequence_steps,
            "decision"
        );
    }
    if tracing::enabled!(tracing::Level::TRACE) {
        let mut order: Vec<usize> = (0..p.len()).collect();
        order.sort_by(|&a, &b| p[b].total_cmp(&p[a]));
        for j in order {
            tracing::trace!(
                page = page.0,
                kind = ?candidates.actions[j].kind,
                target = ?candidates.actions[j].widget().map(|w| (w.rect, w.kind)),
                q = q[j],
                weight = weights.map(|w| w[j]),
                p = p[j],
                "candidate"
            );
        }
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
