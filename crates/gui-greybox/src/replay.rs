//! The replayer (Section 4.5): for each test case, establish the precondition (a fresh
//! app), fire the sequence's events, and let the crash monitor judge. A step whose event
//! the GUI does not offer breaks the sequence, and broken sequences are counted as in
//! Table 4.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use gui_core::{CoverageSnapshot, Signal};
use gui_explore::{RunRecorder, StepRecord, StepTimings};
use serde::{Deserialize, Serialize};

use crate::{Efg, Error, Executable, GreyboxApp, Result};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayConfig {
    /// Text typed into input fields (the test case's input data).
    pub input: String,
    /// Start no test case once this much time has passed since the replay began (none:
    /// replay them all). The cases not replayed are counted in
    /// [`ReplayOutcome::not_replayed`].
    #[serde(default)]
    pub budget: Option<Duration>,
    /// The number of the first step written to the recorder, less one: a resumed run
    /// folder already holds steps up to it.
    #[serde(default)]
    pub steps_before: u64,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        ReplayConfig {
            input: "test".into(),
            budget: None,
            steps_before: 0,
        }
    }
}

/// How one test case went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseOutcome {
    /// Index into the replayed sequences.
    pub sequence: usize,
    /// Events fired.
    pub fired: usize,
    /// Position of the first event the GUI did not offer, if the sequence broke there.
    pub broken_at: Option<usize>,
    /// Why the case ended early when the device was lost (the app hung or died); its
    /// crash, if any, is among `signals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<String>,
    /// Keys of the signals (crashes, uncaught exceptions, console errors) seen in this
    /// test case, first occurrence order, each once.
    pub signals: Vec<String>,
    pub duration_ms: u64,
}

/// What a replay of many test cases found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ReplayOutcome {
    pub cases: Vec<CaseOutcome>,
    /// Test cases that broke.
    pub broken: usize,
    /// Every distinct signal, by key, with the first test case that raised it.
    pub signals: BTreeMap<String, (usize, Signal)>,
    /// Cumulative coverage after the last test case, where the device measures it.
    pub coverage: Option<CoverageSnapshot>,
    /// Events fired in all test cases.
    pub steps: u64,
    pub duration_ms: u64,
    /// Test cases not replayed because [`ReplayConfig::budget`] ran out.
    #[serde(default)]
    pub not_replayed: usize,
}

/// Replays `sequences` on `app`, one test case each. With a recorder, every fired event
/// is written as a step of the run folder (the screenshot after the test case stands for
/// all its steps, so a long replay does not spend its time encoding pictures), restarts
/// go to `events.jsonl` and each new signal to `signals.jsonl`.
pub fn replay(
    app: &mut dyn GreyboxApp,
    efg: &Efg,
    sequences: &[Executable],
    recorder: Option<&mut RunRecorder>,
    config: &ReplayConfig,
) -> Result<ReplayOutcome> {
    replay_watched(app, efg, sequences, recorder, config, &mut |_, _| {})
}

/// [`replay`], calling `watch` after each test case with the case and the outcome so far
/// (for progress reports).
pub fn replay_watched(
    app: &mut dyn GreyboxApp,
    efg: &Efg,
    sequences: &[Executable],
    mut recorder: Option<&mut RunRecorder>,
    config: &ReplayConfig,
    watch: &mut dyn FnMut(&CaseOutcome, &ReplayOutcome),
) -> Result<ReplayOutcome> {
    let started = Instant::now();
    let deadline = config.budget.map(|b| started + b);
    let mut out = ReplayOutcome {
        steps: config.steps_before,
        ..ReplayOutcome::default()
    };
    let mut seen: HashSet<String> = HashSet::new();
    // The start screen is step 0's picture; a resumed folder has its own.
    if let Some(rec) = recorder.as_deref_mut()
        && config.steps_before == 0
    {
        app.reset()?;
        let shot = app.device().screenshot()?;
        rec.save_screenshot(0, &shot)?;
    }
    for (index, seq) in sequences.iter().enumerate() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            out.not_replayed = sequences.len() - index;
            break;
        }
        let case_start = Instant::now();
        app.reset()?;
        let mut case = CaseOutcome {
            sequence: index,
            fired: 0,
            broken_at: None,
            lost: None,
            signals: Vec::new(),
            duration_ms: 0,
        };
        let mut pending: Vec<StepRecord> = Vec::new();
        let mut new_signals: Vec<Signal> = Vec::new();
        let mut note =
            |device_signals: Vec<Signal>, case: &mut CaseOutcome, fresh: &mut Vec<String>| {
                for s in device_signals {
                    if !case.signals.contains(&s.key) {
                        case.signals.push(s.key.clone());
                    }
                    if seen.insert(s.key.clone()) {
                        fresh.push(s.key.clone());
                        out.signals.insert(s.key.clone(), (index, s.clone()));
                        new_signals.push(s);
                    }
                }
            };
        let mut fresh = Vec::new();
        note(app.device().drain_signals()?, &mut case, &mut fresh);
        for (pos, &e) in seq.events.iter().enumerate() {
            let id = &efg.events[e].id;
            let step_start = Instant::now();
            let live = match app.available() {
                Ok(events) => events.into_iter().find(|l| l.event.id == *id),
                Err(e) if is_lost(&e) => {
                    case.lost = Some(e.to_string());
                    break;
                }
                Err(e) => return Err(e),
            };
            let Some(live) = live else {
                case.broken_at = Some(pos);
                break;
            };
            let action = live.action(&config.input);
            let t = Instant::now();
            let error = app.fire(&live, &config.input).err();
            let action_ms = t.elapsed().as_secs_f64() * 1e3;
            // An action the device refused stays in the step's `error` and the case goes
            // on; a lost device (the app hung or died) ends the case, and the next one
            // restarts the app.
            if let Some(e) = &error
                && is_lost(e)
            {
                case.lost = Some(e.to_string());
            }
            let mut fresh = Vec::new();
            note(app.device().drain_signals()?, &mut case, &mut fresh);
            case.fired += 1;
            out.steps += 1;
            pending.push(StepRecord {
                step: out.steps,
                action,
                screenshot: String::new(),
                viewport: app.device().viewport(),
                coverage: None,
                new_signals: fresh,
                signals_observed: case.signals.len() as u32,
                error: error.map(|e| e.to_string()),
                timings: StepTimings {
                    action_ms,
                    round_trip_ms: step_start.elapsed().as_secs_f64() * 1e3,
                    ..StepTimings::default()
                },
                elapsed_ms: started.elapsed().as_millis() as u64,
                seen: None,
                worker: None,
                signal_keys: Vec::new(),
                new_functions: Vec::new(),
            });
            if case.lost.is_some() {
                break;
            }
        }
        if case.broken_at.is_some() {
            out.broken += 1;
        }
        if case.lost.is_none() {
            match app.finish() {
                Ok(()) => {
                    let mut late = Vec::new();
                    note(app.device().drain_signals()?, &mut case, &mut late);
                    if let Some(step) = pending.last_mut() {
                        step.new_signals.extend(late);
                        step.signals_observed = case.signals.len() as u32;
                    }
                }
                Err(e) if is_lost(&e) => case.lost = Some(e.to_string()),
                Err(e) => return Err(e),
            }
        }
        if case.lost.is_some() {
            // Bring the app back for the coverage and the picture; a crash report the
            // device kept comes with it.
            app.reset()?;
            let mut fresh = Vec::new();
            note(app.device().drain_signals()?, &mut case, &mut fresh);
        }
        let coverage = app.device().coverage()?;
        if coverage.is_some() {
            out.coverage = coverage;
        }
        if let Some(rec) = recorder.as_deref_mut() {
            let last = out.steps.max(1);
            let shot = app.device().screenshot()?;
            let rel = rec.save_screenshot(last, &shot)?;
            if let Some(step) = pending.last_mut() {
                step.coverage = out.coverage;
            }
            for mut step in pending {
                step.screenshot = rel.clone();
                rec.append_step(&step)?;
            }
            for s in &new_signals {
                rec.append_signal(s, last, &rel)?;
            }
            let detail = match (&case.broken_at, &case.lost) {
                (Some(p), _) => format!("test case {index} broke at event {p}"),
                (None, Some(e)) => format!("test case {index} ended, device lost: {e}"),
                (None, None) => format!("test case {index} done"),
            };
            rec.append_event(last, "test_case", &detail)?;
        }
        case.duration_ms = case_start.elapsed().as_millis() as u64;
        out.cases.push(case);
        watch(out.cases.last().expect("just pushed"), &out);
    }
    out.steps -= config.steps_before;
    out.duration_ms = started.elapsed().as_millis() as u64;
    Ok(out)
}

fn is_lost(e: &Error) -> bool {
    matches!(e, Error::Device(d) if d.is_device_lost())
}
