//! The GUI ripper (Sections 4.1 and 4.2): depth-first over the GUI, recording each
//! window's events and which events are enabled right after each one, which is the
//! event-flow graph.

use std::collections::{BTreeSet, HashSet};
use std::time::Instant;

use gui_core::Signal;
use serde::{Deserialize, Serialize};

use crate::{Efg, GreyboxApp, LiveEvent, Result};

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
}

impl Default for RipConfig {
    fn default() -> Self {
        RipConfig {
            max_events: 400,
            max_depth: 8,
            input: "test".into(),
            fresh_per_event: true,
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
    /// Crashes and errors the rip itself ran into: bugs found for free.
    #[serde(skip)]
    pub signals: Vec<Signal>,
}

/// Rips `app`. Each event is fired once, from the first state that offers it: the app is
/// reset, the path to that state is replayed, the event is fired, and the events enabled
/// afterwards become its successors in the EFG. What the app reports it saw the event
/// execute ([`GreyboxApp::observed_effects`]) goes to [`Efg::effects`]. A state not seen
/// before is explored in turn (depth first).
pub fn rip(app: &mut dyn GreyboxApp, config: &RipConfig) -> Result<Ripped> {
    let started = Instant::now();
    let mut efg = Efg::default();
    let mut signals = Vec::new();
    let mut fired = 0;
    let mut broken_paths = 0;
    let mut failed = Vec::new();

    app.reset()?;
    signals.extend(app.device().drain_signals()?);
    let start = app.available()?;
    for live in &start {
        let i = efg.add_event(live.event.clone());
        efg.initial.insert(i);
    }
    let mut seen_states: HashSet<BTreeSet<String>> = HashSet::from([key(&start)]);
    let mut done: HashSet<String> = HashSet::new();
    // (path of event ids, the events that state offers)
    let mut stack: Vec<(Vec<String>, Vec<LiveEvent>)> = vec![(Vec::new(), start.clone())];
    // The state the app is in right now, if it is one on the stack.
    let mut current: Option<(Vec<String>, BTreeSet<String>)> = Some((Vec::new(), key(&start)));

    while let Some((path, offered)) = stack.pop() {
        let here = key(&offered);
        for live in &offered {
            if done.len() >= config.max_events {
                break;
            }
            if !done.insert(live.event.id.clone()) {
                continue;
            }
            let in_place = !config.fresh_per_event
                && current
                    .as_ref()
                    .is_some_and(|(p, k)| *p == path && *k == here);
            let target = if in_place {
                Some(live.clone())
            } else {
                app.reset()?;
                match replay_path(app, &path, &config.input, &mut fired)? {
                    true => app
                        .available()?
                        .into_iter()
                        .find(|l| l.event.id == live.event.id),
                    false => None,
                }
            };
            let Some(target) = target else {
                broken_paths += 1;
                current = None;
                continue;
            };
            // Watching is a refinement: when it fails, the event simply has no effects.
            if let Err(e) = app.start_observing() {
                tracing::warn!("watching {}: {e}", target.event.id);
            }
            if let Err(e) = app.fire(&target, &config.input) {
                // The event hung or killed the app: it stays in the EFG with no
                // successors, and the next event starts from a reset app.
                tracing::warn!("ripping {}: {e}", target.event.id);
                efg.add_event(target.event.clone());
                failed.push(format!("{}: {e}", target.event.id));
                current = None;
                continue;
            }
            fired += 1;
            let effects = app.observed_effects().unwrap_or_else(|e| {
                tracing::warn!("watching {}: {e}", target.event.id);
                None
            });
            signals.extend(app.device().drain_signals()?);
            let after = app.available()?;
            let from = efg.add_event(target.event.clone());
            if let Some(effects) = effects {
                efg.effects.entry(from).or_default().merge(&effects);
            }
            for next in &after {
                let to = efg.add_event(next.event.clone());
                efg.follows[from].insert(to);
            }
            let after_key = key(&after);
            current = Some((path.clone(), after_key.clone()));
            if after_key != here && path.len() < config.max_depth && seen_states.insert(after_key) {
                let mut deeper = path.clone();
                deeper.push(target.event.id.clone());
                stack.push((deeper, after));
            }
        }
    }
    Ok(Ripped {
        states: seen_states.len(),
        efg,
        fired,
        broken_paths,
        failed,
        duration_ms: started.elapsed().as_millis() as u64,
        signals,
    })
}

/// Replays a reaching path from the current state; false when an event is missing.
fn replay_path(
    app: &mut dyn GreyboxApp,
    path: &[String],
    input: &str,
    fired: &mut usize,
) -> Result<bool> {
    for id in path {
        let Some(live) = app.available()?.into_iter().find(|l| l.event.id == *id) else {
            return Ok(false);
        };
        app.fire(&live, input)?;
        *fired += 1;
    }
    Ok(true)
}

fn key(events: &[LiveEvent]) -> BTreeSet<String> {
    events.iter().map(|l| l.event.id.clone()).collect()
}
