use std::collections::HashMap;
use std::time::{Duration, Instant};

use gui_core::{
    Action, ActionKind, CoverageSnapshot, Platform, Screenshot, Signal, Size, Transition,
    UiHierarchy,
};
use gui_driver::Device;
use serde::{Deserialize, Serialize};

use crate::{Error, Result, RunRecorder, StepRecord, StepTimings, Throttle};

/// What a strategy sees before choosing: the screen and what the device can do.
#[derive(Debug)]
pub struct Observation<'a> {
    /// The number the chosen action will get (1 for the first).
    pub step: u64,
    pub screenshot: &'a Screenshot,
    pub viewport: Size,
    pub platform: Platform,
    /// Actions the device supports, in [`ActionKind::ALL`] order.
    pub actions: &'a [ActionKind],
    /// The screen's view hierarchy, read only for strategies that ask for it
    /// ([`Strategy::wants_ui`]) and only where the device has one.
    pub ui: Option<&'a UiHierarchy>,
}

/// Chooses actions and learns from their outcome. Every technique (Monkey, PIRLTest,
/// Monkey++, grey-box replay, VisionDroid) sits behind this one interface.
pub trait Strategy {
    fn name(&self) -> &str;

    fn choose(&mut self, observation: &Observation<'_>) -> Action;

    /// Called after every finished step.
    fn learn(&mut self, _transition: &Transition) {}

    /// Called when the device was restarted and the app is back at its start screen.
    fn on_restart(&mut self) {}

    /// What the strategy saw on the screen of its last [`choose`](Self::choose): the
    /// abstract page and the widgets it detected. Recorded with the step for reports;
    /// strategies without a model of the screen have none.
    fn insight(&self) -> Option<Insight> {
        None
    }

    /// Whether [`Observation::ui`] should be filled (reading the hierarchy costs a
    /// device round trip, so pixel-only strategies say no).
    fn wants_ui(&self) -> bool {
        false
    }
}

/// The strategy's view of the screen an action was chosen on (see [`Strategy::insight`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Insight {
    /// The abstract page the screen belongs to, numbered by the strategy from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// Widgets detected on the screen, in screenshot pixels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widgets: Vec<gui_core::Widget>,
}

/// Budget and recovery settings of one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExploreConfig {
    /// Stop after this many steps.
    pub steps: Option<u64>,
    /// Stop after this much time.
    pub duration: Option<Duration>,
    /// Consecutive failed restarts after which the run gives up.
    pub max_restarts: u32,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        Self {
            steps: Some(100),
            duration: None,
            max_restarts: 3,
        }
    }
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Steps,
    Time,
}

/// What `summary.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub strategy: String,
    pub device: String,
    pub throttle: String,
    pub steps: u64,
    pub duration_ms: u64,
    pub stopped_because: StopReason,
    pub coverage: Option<CoverageSnapshot>,
    pub unique_signals: usize,
    /// Occurrences per signal key.
    pub signal_counts: HashMap<String, u64>,
    /// Device restarts after the device was lost.
    pub device_restarts: u32,
    /// Steps whose action failed (unsupported, bad target).
    pub failed_actions: u64,
    pub median_round_trip_ms: f64,
}

/// Runs `strategy` on `device` until the budget is spent, recording every step.
///
/// A device that is lost (browser killed, renderer crashed, call timed out), or that fails
/// to show the screen after an action, is restarted:
/// the step in flight is recorded with the error, the restarted start screen and the
/// signals the device kept (a crash report), and the run continues. The run
/// fails only when the device cannot be restarted `max_restarts` times in a row.
pub fn explore(
    device: &mut dyn Device,
    strategy: &mut dyn Strategy,
    throttle: &mut dyn Throttle,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
) -> Result<Summary> {
    if config.steps.is_none() && config.duration.is_none() {
        return Err(Error::Config(
            "give a step budget, a time budget or both".into(),
        ));
    }
    let started = Instant::now();
    tracing::info!(
        strategy = strategy.name(),
        device = %device.describe(),
        throttle = %throttle.name(),
        "exploring into {}",
        recorder.dir().display()
    );
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut restarts = 0;
    let mut failed_actions = 0;
    let mut round_trips = Vec::new();
    let mut coverage = None;
    let mut step = 0;
    let mut before = match device.screenshot() {
        Ok(shot) => shot,
        Err(e) if e.is_device_lost() => recover(
            device,
            strategy,
            recorder,
            config,
            0,
            &e.to_string(),
            &mut restarts,
        )?,
        Err(e) => return Err(e.into()),
    };
    recorder.save_screenshot(0, &before)?;

    let stopped_because = loop {
        if config.steps.is_some_and(|n| step >= n) {
            break StopReason::Steps;
        }
        if config.duration.is_some_and(|d| started.elapsed() >= d) {
            break StopReason::Time;
        }
        let actions = device.supported_actions();
        let t = Instant::now();
        let ui = if strategy.wants_ui() {
            // A hierarchy that cannot be read leaves the strategy with the pixels; a lost
            // device shows itself again at the action.
            device.ui_hierarchy().unwrap_or_else(|e| {
                tracing::warn!(step = step + 1, "no view hierarchy: {e}");
                None
            })
        } else {
            None
        };
        let action = strategy.choose(&Observation {
            step: step + 1,
            screenshot: &before,
            viewport: device.viewport(),
            platform: device.platform(),
            actions: &actions,
            ui: ui.as_ref(),
        });
        let choose_ms = ms(t);
        let insight = strategy.insight();

        let t0 = Instant::now();
        let (mut outcome, lost) = match run_step(device, throttle, &action) {
            Ok(o) => (o, false),
            // Once the action is done, any failure to observe the screen (a lost device, a
            // protocol error, an undecodable screenshot) is cured the same way: restart.
            Err(Error::Device(e)) => {
                // The step ends on the restarted app's start screen, and what the app
                // reported before it died (a crash) stays with the action that caused it.
                recorder.append_event(step, "device_lost", &format!("{action}: {e}"))?;
                let after = recover(
                    device,
                    strategy,
                    recorder,
                    config,
                    step,
                    &e.to_string(),
                    &mut restarts,
                )?;
                let outcome = StepOutcome {
                    after,
                    coverage: device.coverage().ok().flatten(),
                    signals: device.drain_signals().unwrap_or_default(),
                    error: Some(format!("device lost: {e}")),
                    timings: StepTimings {
                        round_trip_ms: ms(t0),
                        ..StepTimings::default()
                    },
                };
                (outcome, true)
            }
            // A fault of the tool itself (a rendering judge that fails): restarting the
            // app would not cure it.
            Err(e) => return Err(e),
        };
        step += 1;
        outcome.timings.choose_ms = choose_ms;
        failed_actions += u64::from(outcome.error.is_some());
        if !lost {
            round_trips.push(outcome.timings.round_trip_ms);
        }
        let shot_rel = recorder.save_screenshot(step, &outcome.after)?;
        let mut new_signals = Vec::new();
        for sig in &outcome.signals {
            let count = seen.entry(sig.key.clone()).or_insert(0);
            if *count == 0 {
                recorder.append_signal(sig, step, &shot_rel)?;
                new_signals.push(sig.clone());
            }
            *count += 1;
        }
        if outcome.coverage.is_some() {
            coverage = outcome.coverage;
        }
        tracing::debug!(
            step,
            round_trip_ms = outcome.timings.round_trip_ms,
            throttle_ms = outcome.timings.throttle_ms,
            error = outcome.error.as_deref(),
            "{action}"
        );
        for sig in &new_signals {
            tracing::info!(step, "new signal: {}", sig.key);
        }
        recorder.append_step(&StepRecord {
            step,
            action: action.clone(),
            screenshot: shot_rel,
            viewport: device.viewport(),
            coverage: outcome.coverage,
            new_signals: new_signals.iter().map(|s| s.key.clone()).collect(),
            signals_observed: outcome.signals.len() as u32,
            error: outcome.error,
            timings: outcome.timings,
            elapsed_ms: started.elapsed().as_millis() as u64,
            seen: insight,
        })?;
        let transition = Transition {
            step,
            before,
            action,
            after: outcome.after,
            new_signals,
            coverage: outcome.coverage,
        };
        strategy.learn(&transition);
        before = transition.after;
    };

    let summary = Summary {
        strategy: strategy.name().to_owned(),
        device: device.describe(),
        throttle: throttle.name(),
        steps: step,
        duration_ms: started.elapsed().as_millis() as u64,
        stopped_because,
        coverage,
        unique_signals: seen.len(),
        signal_counts: seen.into_iter().collect(),
        device_restarts: restarts,
        failed_actions,
        median_round_trip_ms: median(&mut round_trips),
    };
    recorder.finish(&summary)?;
    tracing::info!(
        steps = summary.steps,
        unique_signals = summary.unique_signals,
        restarts = summary.device_restarts,
        "run finished after {:.1} s",
        summary.duration_ms as f64 / 1000.0
    );
    Ok(summary)
}

struct StepOutcome {
    after: Screenshot,
    coverage: Option<CoverageSnapshot>,
    signals: Vec<Signal>,
    error: Option<String>,
    timings: StepTimings,
}

fn run_step(
    device: &mut dyn Device,
    throttle: &mut dyn Throttle,
    action: &Action,
) -> Result<StepOutcome> {
    let t0 = Instant::now();
    let error = match device.perform(action) {
        Ok(()) => None,
        Err(e) if e.is_device_lost() => return Err(e.into()),
        // The action itself was impossible; the step still counts, with its reason.
        Err(e) => Some(e.to_string()),
    };
    let action_ms = ms(t0);
    let waited = throttle.wait(device)?;
    let t = Instant::now();
    // A polling throttle's last frame is the screen it judged settled: no second capture.
    let (after, screenshot_ms) = match waited.frame {
        Some(frame) => (frame, 0.0),
        None => (device.screenshot()?, ms(t)),
    };
    let t = Instant::now();
    let coverage = device.coverage()?;
    let coverage_ms = ms(t);
    let signals = device.drain_signals()?;
    let round_trip_ms = ms(t0);
    Ok(StepOutcome {
        after,
        coverage,
        signals,
        error,
        timings: StepTimings {
            choose_ms: 0.0,
            action_ms,
            throttle_ms: waited.outcome.waited_ms,
            screenshot_ms,
            coverage_ms,
            round_trip_ms,
            throttle: Some(waited.outcome),
        },
    })
}

/// Restarts a lost device (up to `max_restarts` tries in a row) and returns its first
/// screenshot.
fn recover(
    device: &mut dyn Device,
    strategy: &mut dyn Strategy,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
    step: u64,
    why: &str,
    restarts: &mut u32,
) -> Result<Screenshot> {
    let mut last = why.to_owned();
    for _ in 0..config.max_restarts.max(1) {
        *restarts += 1;
        let attempt = device.restart().and_then(|()| device.screenshot());
        match attempt {
            Ok(shot) => {
                tracing::warn!(step, "device restarted after: {last}");
                recorder.append_event(step, "device_restarted", &last)?;
                strategy.on_restart();
                return Ok(shot);
            }
            Err(e) => {
                tracing::warn!(step, "restart failed: {e}");
                recorder.append_event(step, "restart_failed", &e.to_string())?;
                last = e.to_string();
            }
        }
    }
    Err(Error::DeviceGone {
        attempts: config.max_restarts.max(1),
        last,
    })
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
