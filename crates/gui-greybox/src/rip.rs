//! The GUI ripper (Sections 4.1 and 4.2): depth-first over the GUI, recording each
//! window's events and which events are enabled right after each one, which is the
//! event-flow graph.
//!
//! A rip can be long on a real app (every event costs a restart of the app and the replay
//! of the path to it), so it is done one event at a time ([`Ripper::step`]): the caller
//! sees each event as it is ripped, can save the [`RipState`] between two events, and a
//! rip cut by its time budget, or killed, continues from the saved state
//! ([`Ripper::resume`]) exactly where it stopped.
//!
//! # Ripping apps with hundreds of events
//!
//! [`RipConfig::scaled`] turns on two departures from firing every event from a restarted
//! app in depth-first order, both off in [`RipConfig::default`] (the paper's way):
//!
//! * **Equivalent events** ([`RipConfig::group_equivalent`], [`equivalence_class`]): one
//!   representative of each class is fired first; the others come after every event not
//!   equivalent to a fired one, those of classes whose representative found new events
//!   first, and in each of these tiers events of the state the app is in, then those of
//!   states with shorter paths (a shorter replay after a restart), then events that do not
//!   repeat in their state (a toolbar, a menu) before repeated ones (a list's rows). An equivalent event the budget leaves unfired is reported with its
//!   representative ([`RipState::equivalents`]) and takes the representative's successors
//!   in the EFG the rip gives ([`RipState::efg_with_equivalents`]).
//! * **The cheap way back** ([`RipConfig::cheap_return`]): after an event, the ripper
//!   returns to the state it was fired in without a restart when it can verify it did:
//!   the event left the page as it was, or [`GreyboxApp::step_back`] (Escape, a dialog's
//!   close button, history back) brought it back, and the events on offer (ids and
//!   places) and the [`GreyboxApp::fingerprint`] (document, URL, text, field values) are
//!   those before the event. As state the page does not show (a variable) can still
//!   differ, the next event is fired in place only when the last one's handlers write no
//!   field the handlers of the state's remaining events read (Algorithm 1's R and W, via
//!   [`GreyboxApp::handler_read_write`]): in Listing 1, e1 writes `enabled`, which e3
//!   reads, so e3 is fired after a restart and still opens the dialog. An event that leads
//!   to a state not seen before is followed by that state's events, in place. Otherwise,
//!   and whenever the check fails, the app is restarted and the path replayed. A way back
//!   that fails at least five times and works less than one time in five is not tried
//!   again in that rip.
//!
//! Where the time goes is counted in [`RipTiming`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use gui_core::{Point, Signal};
use serde::{Deserialize, Serialize};

use crate::timing::{SettleClock, TimeBreakdown, largest_first, share_line};
use crate::{Efg, Event, GreyboxApp, LiveEvent, ReadWrite, Result, equivalence_class};

/// Limits of a rip.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RipConfig {
    /// Stop after firing this many distinct events.
    pub max_events: usize,
    /// Do not explore states more than this many events away from the start.
    pub max_depth: usize,
    /// Text typed into input fields.
    pub input: String,
    /// Reset the app before every event (the default). Without it, when an event leaves
    /// the enabled events unchanged the next event of the same state is fired in place,
    /// which is faster but sees the state the previous event left behind (in the paper's
    /// example, e3 after e1 no longer opens the dialog, so e4 is never found).
    pub fresh_per_event: bool,
    /// Stop ripping once this much time has passed since the ripper was made (none: no
    /// limit). The event being ripped when it runs out is left for a later resume.
    #[serde(default)]
    pub budget: Option<Duration>,
    /// Fire one event of each class of equivalent events before the others (see the
    /// module documentation); off: every event in depth-first order, as the paper.
    #[serde(default)]
    pub group_equivalent: bool,
    /// Come back to an event's state without a restart when that is verifiably possible
    /// (see the module documentation); off: a restart before every event (unless
    /// `fresh_per_event` is off), as the paper's test-case precondition.
    #[serde(default)]
    pub cheap_return: bool,
}

impl RipConfig {
    /// The configuration for apps with hundreds of events: equivalent events grouped and
    /// the cheap way back taken where it verifiably works.
    pub fn scaled() -> RipConfig {
        RipConfig {
            group_equivalent: true,
            cheap_return: true,
            ..RipConfig::default()
        }
    }
}

impl Default for RipConfig {
    fn default() -> Self {
        RipConfig {
            max_events: 400,
            max_depth: 8,
            input: "test".into(),
            fresh_per_event: true,
            budget: None,
            group_equivalent: false,
            cheap_return: false,
        }
    }
}

/// The result of a rip.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ripped {
    pub efg: Efg,
    /// Distinct GUI states seen (sets of enabled events).
    pub states: usize,
    /// Events fired, reaching steps included.
    pub fired: usize,
    /// Reaching paths that could not be replayed (the GUI did not offer a recorded event).
    pub broken_paths: usize,
    /// Events whose firing failed (the app hung or died), with the error.
    pub failed: Vec<String>,
    pub duration_ms: u64,
    /// Why the rip stopped before it had fired every event it found (`None`: it had,
    /// within `max_depth`).
    #[serde(default)]
    pub cut: Option<RipCut>,
    /// Events found (enabled in some state the rip saw) but never fired: the rip was cut,
    /// or they are only offered deeper than `max_depth`. They are in the EFG without
    /// successors, unless they are equivalent to an event that was fired.
    #[serde(default)]
    pub unripped: Vec<String>,
    /// Events not fired that are equivalent to one that was, with that one
    /// ([`RipConfig::group_equivalent`]); their successors in `efg` are its successors.
    #[serde(default)]
    pub equivalent: Vec<(String, String)>,
    /// Where the rip's time went.
    #[serde(default)]
    pub timing: RipTiming,
    /// Crashes and errors the rip itself ran into: bugs found for free.
    #[serde(skip)]
    pub signals: Vec<Signal>,
}

/// Why a rip stopped with work left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RipCut {
    /// [`RipConfig::budget`] ran out.
    Budget,
    /// [`RipConfig::max_events`] events were fired.
    MaxEvents,
}

impl RipCut {
    pub fn name(self) -> &'static str {
        match self {
            RipCut::Budget => "time budget",
            RipCut::MaxEvents => "max events",
        }
    }
}

/// A GUI state still to rip: the events leading to it from the start, and the events it
/// offers (with where they were when it was first seen).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frontier {
    pub path: Vec<String>,
    pub offered: Vec<OfferedEvent>,
}

/// An event of a [`Frontier`] state, as the GUI offered it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferedEvent {
    pub event: Event,
    pub at: Point,
}

impl From<&LiveEvent> for OfferedEvent {
    fn from(l: &LiveEvent) -> Self {
        OfferedEvent {
            event: l.event.clone(),
            at: l.at,
        }
    }
}

impl From<&OfferedEvent> for LiveEvent {
    fn from(o: &OfferedEvent) -> Self {
        LiveEvent {
            event: o.event.clone(),
            at: o.at,
        }
    }
}

/// Everything a rip has learnt so far, enough to continue it: the EFG, the events already
/// tried, and the states still to rip. Saved between events (`rip.json` of a `greybox`
/// run folder), it is what [`Ripper::resume`] continues from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RipState {
    pub efg: Efg,
    /// Ids of the events fired (or tried: their path broke, or firing failed).
    pub done: BTreeSet<String>,
    /// The state being ripped: its events not in `done` are next.
    pub working: Option<Frontier>,
    /// States still to rip, the last one first.
    pub stack: Vec<Frontier>,
    /// GUI states seen, as their sets of enabled event ids.
    pub seen_states: BTreeSet<BTreeSet<String>>,
    /// Events fired, reaching steps included.
    pub fired: usize,
    pub broken_paths: usize,
    pub failed: Vec<String>,
    /// Time spent ripping, over every run that worked on this state.
    pub elapsed_ms: u64,
    /// Whether the app was launched and its initial events recorded.
    pub started: bool,
    /// Why the last run on this state stopped with work left.
    pub cut: Option<RipCut>,
    /// Per class of equivalent events, the event fired for it.
    #[serde(default)]
    pub groups: BTreeMap<String, RipGroup>,
    /// Where the time went, over every run that worked on this state.
    #[serde(default)]
    pub timing: RipTiming,
}

/// The representative of a class of equivalent events: the first fired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RipGroup {
    pub representative: String,
    /// Whether firing it showed events never seen before: the others of its class are
    /// then fired before those of classes whose representative showed none.
    pub found_new: bool,
}

/// Where a rip's time went, in milliseconds. The parts do not overlap: waiting for the
/// app to settle is counted in `wait_ms` only, wherever it happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RipTiming {
    /// App restarts, without their settle.
    pub restart_ms: u64,
    pub restarts: usize,
    /// Replaying the path to an event's state after a restart.
    pub replay_ms: u64,
    /// Firing the events ripped.
    pub fire_ms: u64,
    /// Waiting for the app to settle after launches, events and ways back.
    pub wait_ms: u64,
    /// Reading the events on offer and the state's fingerprint (the DOM, the listeners,
    /// the handlers' locations).
    pub listing_ms: u64,
    /// Watching what events run (coverage before and after) and reading handlers' reads
    /// and writes: the rip's analysis.
    pub analysis_ms: u64,
    /// Cheap ways back (Escape, a close button, history back), without their settle.
    pub return_ms: u64,
    /// Events fired in the state the last one left verifiably unchanged.
    pub in_place: usize,
    /// Cheap ways back that restored the state.
    pub returned: usize,
    /// Cheap ways back that did not (a restart followed).
    pub return_failed: usize,
}

impl RipTiming {
    /// The named parts, largest first.
    pub fn parts(&self) -> Vec<(&'static str, u64)> {
        largest_first(vec![
            ("restarts", self.restart_ms),
            ("path replay", self.replay_ms),
            ("firing", self.fire_ms),
            ("waiting", self.wait_ms),
            ("listing", self.listing_ms),
            ("analysis", self.analysis_ms),
            ("ways back", self.return_ms),
        ])
    }

    /// One line: each part's share of `total_ms`, largest first, and the counts.
    pub fn summary(&self, total_ms: u64) -> String {
        format!(
            "{}; {} restarts, {} events fired in place, {} ways back ({} failed)",
            share_line(&self.parts(), total_ms),
            self.restarts,
            self.in_place,
            self.returned,
            self.return_failed
        )
    }
}

impl TimeBreakdown for RipTiming {
    fn waits(&mut self) -> &mut u64 {
        &mut self.wait_ms
    }
}

impl RipState {
    /// Events found so far.
    pub fn known(&self) -> usize {
        self.efg.len()
    }

    /// Events fired (or tried) so far.
    pub fn ripped(&self) -> usize {
        self.done.len()
    }

    /// Whether states are left to rip (whatever the limits say).
    pub fn has_work(&self) -> bool {
        !self.started
            || self
                .working
                .iter()
                .chain(&self.stack)
                .any(|f| f.offered.iter().any(|o| !self.done.contains(&o.event.id)))
    }

    /// Events not fired that are equivalent to one that was (see
    /// [`RipConfig::group_equivalent`]), each with that one, in EFG order.
    pub fn equivalents(&self) -> Vec<(String, String)> {
        if self.groups.is_empty() {
            return Vec::new();
        }
        self.efg
            .events
            .iter()
            .filter(|e| !self.done.contains(&e.id))
            .filter_map(|e| {
                let g = self.groups.get(&equivalence_class(e))?;
                Some((e.id.clone(), g.representative.clone()))
            })
            .collect()
    }

    /// The EFG, with each unfired event that is equivalent to a fired one given that one's
    /// successors.
    pub fn efg_with_equivalents(&self) -> Efg {
        let mut efg = self.efg.clone();
        for (event, representative) in self.equivalents() {
            if let (Some(e), Some(r)) = (efg.index_of(&event), efg.index_of(&representative)) {
                efg.follows[e] = efg.follows[r].clone();
            }
        }
        efg
    }

    /// Found events not fired, in EFG order.
    pub fn unripped(&self) -> Vec<String> {
        self.efg
            .events
            .iter()
            .filter(|e| !self.done.contains(&e.id))
            .map(|e| e.id.clone())
            .collect()
    }
}

/// What one [`Ripper::step`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct RipStep {
    /// The event ripped.
    pub event: String,
    pub outcome: RipOutcome,
    /// Events fired for it (reaching steps included).
    pub fired: usize,
    pub duration_ms: u64,
}

/// How ripping one event went.
#[derive(Debug, Clone, PartialEq)]
pub enum RipOutcome {
    /// Fired; `successors` events were enabled after it, `new` of them never seen before.
    Fired { successors: usize, new: usize },
    /// The path to its state no longer played (the GUI did not offer a recorded event).
    BrokenPath,
    /// Firing it failed (the app hung or died).
    Failed(String),
}

/// A rip in progress. Each [`step`](Self::step) rips one event: the app is reset, the path
/// of events that led to the event's state is replayed, the event is fired, and the events
/// enabled afterwards become its successors in the EFG. What the app reports it saw the
/// event execute ([`GreyboxApp::observed_effects`]) goes to [`Efg::effects`]. A state not
/// seen before is ripped in turn (depth first).
#[derive(Debug)]
pub struct Ripper {
    config: RipConfig,
    state: RipState,
    started: Instant,
    /// `state.elapsed_ms` when this ripper was made.
    elapsed_before: u64,
    deadline: Option<Instant>,
    /// The state the app is in right now, if it is one on the stack.
    current: Option<(Vec<String>, BTreeSet<String>)>,
    /// Handlers' reads and writes, by event id ([`GreyboxApp::handler_read_write`]).
    read_write: HashMap<String, Option<ReadWrite>>,
    signals: Vec<Signal>,
}

impl Ripper {
    /// A rip from scratch.
    pub fn new(config: &RipConfig) -> Ripper {
        Ripper::resume(config, RipState::default())
    }

    /// Continues a rip from a saved state (its cut forgotten: this ripper has its own
    /// budget). `config` may differ from the first run's (a larger `max_events`).
    pub fn resume(config: &RipConfig, mut state: RipState) -> Ripper {
        let started = Instant::now();
        state.cut = None;
        Ripper {
            deadline: config.budget.map(|b| started + b),
            config: config.clone(),
            elapsed_before: state.elapsed_ms,
            state,
            started,
            current: None,
            read_write: HashMap::new(),
            signals: Vec::new(),
        }
    }

    /// The rip so far.
    pub fn state(&self) -> &RipState {
        &self.state
    }

    /// Time left of the budget.
    pub fn time_left(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn tick(&mut self) {
        self.state.elapsed_ms = self.elapsed_before + self.started.elapsed().as_millis() as u64;
    }

    /// Rips the next event; `None` when the rip is over (everything found was fired, or a
    /// limit was reached: see [`RipState::cut`]).
    pub fn step(&mut self, app: &mut dyn GreyboxApp) -> Result<Option<RipStep>> {
        let step_started = Instant::now();
        let fired_before = self.state.fired;
        if !self.state.started {
            self.launch(app)?;
        }
        let next = if self.config.group_equivalent {
            self.pick_informative()
        } else {
            self.pick_depth_first()
        };
        let Some(next) = next else {
            self.tick();
            return Ok(None);
        };
        let s = &mut self.state;
        if s.done.len() >= self.config.max_events {
            s.cut = Some(RipCut::MaxEvents);
            self.tick();
            return Ok(None);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            s.cut = Some(RipCut::Budget);
            self.tick();
            return Ok(None);
        }
        let work = s.working.as_ref().expect("picked from the working state");
        let path = work.path.clone();
        let offered: Vec<LiveEvent> = work.offered.iter().map(LiveEvent::from).collect();
        let outcome = self.rip_one(app, &path, &LiveEvent::from(&next), &offered)?;
        self.tick();
        let Some(outcome) = outcome else {
            // The budget ran out on the way to the event: it is left for a resume.
            self.state.cut = Some(RipCut::Budget);
            return Ok(None);
        };
        Ok(Some(RipStep {
            event: next.event.id,
            outcome,
            fired: self.state.fired - fired_before,
            duration_ms: step_started.elapsed().as_millis() as u64,
        }))
    }

    /// The paper's order: the working state's events in the order offered, then the state
    /// found last.
    fn pick_depth_first(&mut self) -> Option<OfferedEvent> {
        let s = &mut self.state;
        loop {
            if s.working.is_none() {
                s.working = s.stack.pop();
            }
            let work = s.working.as_ref()?;
            match work.offered.iter().find(|o| !s.done.contains(&o.event.id)) {
                Some(next) => return Some(next.clone()),
                None => s.working = None,
            }
        }
    }

    /// The most informative event left (see the module documentation), whose state becomes
    /// the working one.
    fn pick_informative(&mut self) -> Option<OfferedEvent> {
        let s = &mut self.state;
        if let Some(w) = s.working.take() {
            s.stack.push(w);
        }
        let done = &s.done;
        s.stack
            .retain(|f| f.offered.iter().any(|o| !done.contains(&o.event.id)));
        // (tier, not the app's state, path length, repeated in its state, depth-first
        // rank, place): a shorter path is a shorter replay after a restart.
        let mut best: Option<(Rank, usize)> = None;
        for (fi, f) in s.stack.iter().enumerate() {
            let here = self.current.as_ref().is_some_and(|(p, k)| {
                *p == f.path && k.len() == f.offered.len() && *k == key_of(&f.offered)
            });
            let classes: Vec<String> = f
                .offered
                .iter()
                .map(|o| equivalence_class(&o.event))
                .collect();
            let mut in_state: HashMap<&str, usize> = HashMap::new();
            for c in &classes {
                *in_state.entry(c).or_default() += 1;
            }
            for (oi, o) in f.offered.iter().enumerate() {
                if done.contains(&o.event.id) {
                    continue;
                }
                let tier = match s.groups.get(&classes[oi]) {
                    None => 0,
                    Some(g) if g.found_new => 1,
                    Some(_) => 2,
                };
                let rank = (
                    tier,
                    !here,
                    f.path.len(),
                    in_state[classes[oi].as_str()] > 1,
                    s.stack.len() - fi,
                    oi,
                );
                if best.as_ref().is_none_or(|(b, _)| rank < *b) {
                    best = Some((rank, fi));
                }
            }
        }
        let ((.., oi), fi) = best?;
        let work = s.stack.remove(fi);
        let next = work.offered[oi].clone();
        s.working = Some(work);
        Some(next)
    }

    /// Launches the app and records its initial events I.
    fn launch(&mut self, app: &mut dyn GreyboxApp) -> Result<()> {
        let clock = SettleClock::start(app);
        app.reset()?;
        self.state.timing.restarts += 1;
        clock.stop(app, &mut self.state.timing, |t| &mut t.restart_ms);
        self.signals.extend(app.device().drain_signals()?);
        let clock = SettleClock::start(app);
        let start = app.available()?;
        clock.stop(app, &mut self.state.timing, |t| &mut t.listing_ms);
        let s = &mut self.state;
        for live in &start {
            let i = s.efg.add_event(live.event.clone());
            s.efg.initial.insert(i);
        }
        s.seen_states = BTreeSet::from([key(&start)]);
        s.stack = vec![Frontier {
            path: Vec::new(),
            offered: start.iter().map(OfferedEvent::from).collect(),
        }];
        s.started = true;
        self.current = Some((Vec::new(), key(&start)));
        Ok(())
    }

    /// Rips `live`, offered in the state `offered` reached by `path`. `None` when the
    /// budget ran out before the event was fired (it is then not marked done).
    fn rip_one(
        &mut self,
        app: &mut dyn GreyboxApp,
        path: &[String],
        live: &LiveEvent,
        offered: &[LiveEvent],
    ) -> Result<Option<RipOutcome>> {
        let here = key(offered);
        let may_stay = !self.config.fresh_per_event || self.config.cheap_return;
        let in_place = may_stay
            && self
                .current
                .as_ref()
                .is_some_and(|(p, k)| p == path && *k == here);
        let target = if in_place {
            self.state.timing.in_place += usize::from(self.config.cheap_return);
            offered
                .iter()
                .find(|l| l.event.id == live.event.id)
                .cloned()
        } else {
            let clock = SettleClock::start(app);
            app.reset()?;
            self.state.timing.restarts += 1;
            clock.stop(app, &mut self.state.timing, |t| &mut t.restart_ms);
            let clock = SettleClock::start(app);
            let played = self.replay_path(app, path)?;
            clock.stop(app, &mut self.state.timing, |t| &mut t.replay_ms);
            match played {
                PathPlayed::Yes => {
                    let clock = SettleClock::start(app);
                    let now = app.available()?;
                    clock.stop(app, &mut self.state.timing, |t| &mut t.listing_ms);
                    now.into_iter().find(|l| l.event.id == live.event.id)
                }
                PathPlayed::Broken => None,
                PathPlayed::OutOfTime => {
                    self.current = None;
                    return Ok(None);
                }
            }
        };
        self.state.done.insert(live.event.id.clone());
        let Some(target) = target else {
            self.state.broken_paths += 1;
            self.current = None;
            return Ok(Some(RipOutcome::BrokenPath));
        };
        let before = if self.config.cheap_return {
            let clock = SettleClock::start(app);
            let print = app.fingerprint()?;
            clock.stop(app, &mut self.state.timing, |t| &mut t.listing_ms);
            print
        } else {
            None
        };
        // Watching is a refinement: when it fails, the event simply has no effects.
        let clock = SettleClock::start(app);
        if let Err(e) = app.start_observing() {
            tracing::warn!("watching {}: {e}", target.event.id);
        }
        clock.stop(app, &mut self.state.timing, |t| &mut t.analysis_ms);
        let clock = SettleClock::start(app);
        let fired = app.fire(&target, &self.config.input);
        clock.stop(app, &mut self.state.timing, |t| &mut t.fire_ms);
        let s = &mut self.state;
        if let Err(e) = fired {
            // The event hung or killed the app: it stays in the EFG with no successors,
            // and the next event starts from a reset app.
            tracing::warn!("ripping {}: {e}", target.event.id);
            s.efg.add_event(target.event.clone());
            s.failed.push(format!("{}: {e}", target.event.id));
            self.current = None;
            return Ok(Some(RipOutcome::Failed(e.to_string())));
        }
        s.fired += 1;
        let clock = SettleClock::start(app);
        let effects = app.observed_effects().unwrap_or_else(|e| {
            tracing::warn!("watching {}: {e}", target.event.id);
            None
        });
        clock.stop(app, &mut self.state.timing, |t| &mut t.analysis_ms);
        self.signals.extend(app.device().drain_signals()?);
        let clock = SettleClock::start(app);
        let after = app.available()?;
        clock.stop(app, &mut self.state.timing, |t| &mut t.listing_ms);
        let s = &mut self.state;
        let from = s.efg.add_event(target.event.clone());
        if let Some(effects) = effects {
            s.efg.effects.entry(from).or_default().merge(&effects);
        }
        let known = s.efg.len();
        for next in &after {
            let to = s.efg.add_event(next.event.clone());
            s.efg.follows[from].insert(to);
        }
        let new = s.efg.len() - known;
        if self.config.group_equivalent {
            s.groups
                .entry(equivalence_class(&target.event))
                .or_insert_with(|| RipGroup {
                    representative: target.event.id.clone(),
                    found_new: new > 0,
                });
        }
        let after_key = key(&after);
        self.current = Some((path.to_vec(), after_key.clone()));
        let mut deeper = None;
        if after_key != here
            && path.len() < self.config.max_depth
            && s.seen_states.insert(after_key.clone())
        {
            let mut p = path.to_vec();
            p.push(target.event.id.clone());
            s.stack.push(Frontier {
                path: p.clone(),
                offered: after.iter().map(OfferedEvent::from).collect(),
            });
            deeper = Some(p);
        }
        if self.config.cheap_return {
            self.current = match deeper {
                // The state just found is ripped next, from where the app is.
                Some(p) => before.is_some().then_some((p, after_key)),
                None => self
                    .come_back(app, &target.event, offered, &after, before.as_deref())?
                    .then(|| (path.to_vec(), here)),
            };
        }
        Ok(Some(RipOutcome::Fired {
            successors: after.len(),
            new,
        }))
    }

    /// After `event`, fired in the state that offered `offered` and had the fingerprint
    /// `before`, and left the app offering `after`: whether the app is verifiably back in
    /// that state, by staying or by a cheap way back (see the module documentation).
    fn come_back(
        &mut self,
        app: &mut dyn GreyboxApp,
        event: &Event,
        offered: &[LiveEvent],
        after: &[LiveEvent],
        before: Option<&str>,
    ) -> Result<bool> {
        let Some(before) = before else {
            return Ok(false);
        };
        // Nothing left to fire there: no need to go back.
        if offered
            .iter()
            .all(|l| self.state.done.contains(&l.event.id))
            || !self.independent_of_rest(app, event, offered)
        {
            return Ok(false);
        }
        let clock = SettleClock::start(app);
        let print = app.fingerprint()?;
        clock.stop(app, &mut self.state.timing, |t| &mut t.listing_ms);
        if after == offered && print.as_deref() == Some(before) {
            return Ok(true);
        }
        // A way back that keeps failing on this app (its dialogs leave traces, say) costs
        // settles for nothing: after five tries with fewer than one in five working, the
        // ripper restarts straight away.
        let t = &self.state.timing;
        if t.return_failed >= 5 && t.returned * 4 < t.return_failed {
            return Ok(false);
        }
        let clock = SettleClock::start(app);
        let tried = app.step_back(offered);
        clock.stop(app, &mut self.state.timing, |t| &mut t.return_ms);
        if !tried? {
            return Ok(false);
        }
        let clock = SettleClock::start(app);
        let now = app.available()?;
        let print = app.fingerprint()?;
        clock.stop(app, &mut self.state.timing, |t| &mut t.listing_ms);
        self.signals.extend(app.device().drain_signals()?);
        let back = now == offered && print.as_deref() == Some(before);
        if !back {
            tracing::debug!(
                "no way back after {}: {}",
                event.id,
                if now != offered {
                    let then = key(offered);
                    let gone = then.difference(&key(&now)).count();
                    let new = key(&now).difference(&then).count();
                    format!("the events on offer differ ({gone} gone, {new} new, or moved)")
                } else {
                    "the page's text or fields differ".to_owned()
                }
            );
        }
        if back {
            self.state.timing.returned += 1;
        } else {
            self.state.timing.return_failed += 1;
        }
        Ok(back)
    }

    /// Whether `event`'s handlers write no field that the handlers of the events `offered`
    /// still to rip read, so that firing those in place sees what a restart would show.
    /// An app that cannot say what handlers read and write gets `false`.
    fn independent_of_rest(
        &mut self,
        app: &dyn GreyboxApp,
        event: &Event,
        offered: &[LiveEvent],
    ) -> bool {
        let started = Instant::now();
        let mut rw = |e: &Event| -> Option<ReadWrite> {
            self.read_write
                .entry(e.id.clone())
                .or_insert_with(|| app.handler_read_write(e))
                .clone()
        };
        let independent = match rw(event) {
            None => false,
            Some(w) if w.writes.is_empty() => true,
            Some(w) => offered
                .iter()
                .filter(|l| !self.state.done.contains(&l.event.id))
                .all(|l| rw(&l.event).is_some_and(|r| r.reads.is_disjoint(&w.writes))),
        };
        self.state.timing.analysis_ms += started.elapsed().as_millis() as u64;
        independent
    }

    /// Replays a reaching path from the current state.
    fn replay_path(&mut self, app: &mut dyn GreyboxApp, path: &[String]) -> Result<PathPlayed> {
        for id in path {
            if self.out_of_time() {
                return Ok(PathPlayed::OutOfTime);
            }
            let Some(live) = app.available()?.into_iter().find(|l| l.event.id == *id) else {
                return Ok(PathPlayed::Broken);
            };
            app.fire(&live, &self.config.input)?;
            self.state.fired += 1;
        }
        Ok(PathPlayed::Yes)
    }

    /// Ends the rip: what it found.
    pub fn finish(mut self) -> Ripped {
        self.tick();
        let s = self.state;
        Ripped {
            states: s.seen_states.len(),
            unripped: s.unripped(),
            equivalent: s.equivalents(),
            efg: s.efg_with_equivalents(),
            timing: s.timing,
            cut: s.cut,
            fired: s.fired,
            broken_paths: s.broken_paths,
            failed: s.failed,
            duration_ms: s.elapsed_ms,
            signals: self.signals,
        }
    }
}

enum PathPlayed {
    Yes,
    Broken,
    OutOfTime,
}

/// Rips `app` to the end (or to a limit of `config`); see [`Ripper`].
pub fn rip(app: &mut dyn GreyboxApp, config: &RipConfig) -> Result<Ripped> {
    let mut ripper = Ripper::new(config);
    while ripper.step(app)?.is_some() {}
    Ok(ripper.finish())
}

fn key(events: &[LiveEvent]) -> BTreeSet<String> {
    events.iter().map(|l| l.event.id.clone()).collect()
}

/// How informative an event is to rip next, smaller first (see
/// [`Ripper::pick_informative`]).
type Rank = (u8, bool, usize, bool, usize, usize);

fn key_of(events: &[OfferedEvent]) -> BTreeSet<String> {
    events.iter().map(|o| o.event.id.clone()).collect()
}
