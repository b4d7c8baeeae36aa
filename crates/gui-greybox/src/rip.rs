//! The GUI ripper (Sections 4.1 and 4.2): depth-first over the GUI, recording each
//! window's events and which events are enabled right after each one, which is the
//! event-flow graph.
//!
//! A rip can be long on a real app (every event costs a restart of the app and the replay
//! of the path to it), so it is done one event at a time ([`Ripper::step`]): the caller
//! sees each event as it is ripped, can save the [`RipState`] between two events, and a
//! rip cut by its time budget, or killed, continues from the saved state
//! ([`Ripper::resume`]) exactly where it stopped.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use gui_core::{Point, Signal};
use serde::{Deserialize, Serialize};

use crate::{Efg, Event, GreyboxApp, LiveEvent, Result};

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
}

impl Default for RipConfig {
    fn default() -> Self {
        RipConfig {
            max_events: 400,
            max_depth: 8,
            input: "test".into(),
            fresh_per_event: true,
            budget: None,
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
    /// successors.
    #[serde(default)]
    pub unripped: Vec<String>,
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
        let s = &mut self.state;
        loop {
            if s.working.is_none() {
                s.working = s.stack.pop();
            }
            let Some(work) = &s.working else {
                self.tick();
                return Ok(None);
            };
            let next = work
                .offered
                .iter()
                .find(|o| !s.done.contains(&o.event.id))
                .cloned();
            let Some(next) = next else {
                s.working = None;
                continue;
            };
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
            let path = work.path.clone();
            let here: BTreeSet<String> = work.offered.iter().map(|o| o.event.id.clone()).collect();
            let offered: Vec<LiveEvent> = work.offered.iter().map(LiveEvent::from).collect();
            let outcome = self.rip_one(app, &path, &here, &LiveEvent::from(&next), &offered)?;
            self.tick();
            let Some(outcome) = outcome else {
                // The budget ran out on the way to the event: it is left for a resume.
                self.state.cut = Some(RipCut::Budget);
                return Ok(None);
            };
            return Ok(Some(RipStep {
                event: next.event.id,
                outcome,
                fired: self.state.fired - fired_before,
                duration_ms: step_started.elapsed().as_millis() as u64,
            }));
        }
    }

    /// Launches the app and records its initial events I.
    fn launch(&mut self, app: &mut dyn GreyboxApp) -> Result<()> {
        app.reset()?;
        self.signals.extend(app.device().drain_signals()?);
        let start = app.available()?;
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

    /// Rips `live`, offered in the state `here` reached by `path`. `None` when the budget
    /// ran out before the event was fired (it is then not marked done).
    fn rip_one(
        &mut self,
        app: &mut dyn GreyboxApp,
        path: &[String],
        here: &BTreeSet<String>,
        live: &LiveEvent,
        offered: &[LiveEvent],
    ) -> Result<Option<RipOutcome>> {
        let in_place = !self.config.fresh_per_event
            && self
                .current
                .as_ref()
                .is_some_and(|(p, k)| p == path && k == here);
        let target = if in_place {
            offered
                .iter()
                .find(|l| l.event.id == live.event.id)
                .cloned()
        } else {
            app.reset()?;
            match self.replay_path(app, path)? {
                PathPlayed::Yes => app
                    .available()?
                    .into_iter()
                    .find(|l| l.event.id == live.event.id),
                PathPlayed::Broken => None,
                PathPlayed::OutOfTime => {
                    self.current = None;
                    return Ok(None);
                }
            }
        };
        let s = &mut self.state;
        s.done.insert(live.event.id.clone());
        let Some(target) = target else {
            s.broken_paths += 1;
            self.current = None;
            return Ok(Some(RipOutcome::BrokenPath));
        };
        // Watching is a refinement: when it fails, the event simply has no effects.
        if let Err(e) = app.start_observing() {
            tracing::warn!("watching {}: {e}", target.event.id);
        }
        if let Err(e) = app.fire(&target, &self.config.input) {
            // The event hung or killed the app: it stays in the EFG with no successors,
            // and the next event starts from a reset app.
            tracing::warn!("ripping {}: {e}", target.event.id);
            s.efg.add_event(target.event.clone());
            s.failed.push(format!("{}: {e}", target.event.id));
            self.current = None;
            return Ok(Some(RipOutcome::Failed(e.to_string())));
        }
        s.fired += 1;
        let effects = app.observed_effects().unwrap_or_else(|e| {
            tracing::warn!("watching {}: {e}", target.event.id);
            None
        });
        self.signals.extend(app.device().drain_signals()?);
        let after = app.available()?;
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
        let after_key = key(&after);
        self.current = Some((path.to_vec(), after_key.clone()));
        if after_key != *here
            && path.len() < self.config.max_depth
            && s.seen_states.insert(after_key)
        {
            let mut deeper = path.to_vec();
            deeper.push(target.event.id.clone());
            s.stack.push(Frontier {
                path: deeper,
                offered: after.iter().map(OfferedEvent::from).collect(),
            });
        }
        Ok(Some(RipOutcome::Fired {
            successors: after.len(),
            new,
        }))
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
            cut: s.cut,
            efg: s.efg,
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
