use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use gui_core::{
    Action, ActionKind, CoverageSnapshot, DeviceEvent, DeviceEventKind, Platform, Screenshot,
    Signal, Size, Transition, UiHierarchy,
};
use gui_device::Device;
use serde::{Deserialize, Serialize};

use crate::record::{Prior, encode, start_screenshot, step_screenshot, write_file};
use crate::{Error, Result, RunRecorder, SignalRecord, StepRecord, StepTimings, Throttle};

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

    /// Why the strategy can choose no more actions worth taking, once that is so: the
    /// model endpoint it asks stopped answering, say. Asked after every finished step;
    /// the run then ends early with [`StopReason::Strategy`] and this text in
    /// [`Summary::stop_note`], rather than spending its budget on actions chosen blind.
    fn stop_request(&self) -> Option<String> {
        None
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
    /// The strategy asked to stop ([`Strategy::stop_request`]).
    Strategy,
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
    /// Workers that explored at once (1 unless `--workers`).
    #[serde(default = "one")]
    pub workers: u32,
    /// Steps each worker took, in a parallel run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_by_worker: Vec<u64>,
    /// The steps after which the run was resumed, if it was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_at: Vec<u64>,
    /// Why the run ended before its budget, when the strategy asked it to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_note: Option<String>,
}

fn one() -> u32 {
    1
}

/// Runs `strategy` on `device` until the budget is spent, recording every step.
///
/// A device that is lost (browser killed, renderer crashed, call timed out), or that fails
/// to show the screen after an action, is restarted:
/// the step in flight is recorded with the error, the restarted start screen and the
/// signals the device kept (a crash report), and the run continues. The run
/// fails only when the device cannot be restarted `max_restarts` times in a row.
///
/// When `recorder` was reopened by [`RunRecorder::resume`], the run continues where the
/// folder ends: see [`explore_parallel`].
pub fn explore(
    device: &mut dyn Device,
    strategy: &mut dyn Strategy,
    throttle: &mut dyn Throttle,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
) -> Result<Summary> {
    let prior = recorder.take_prior();
    let shared = Shared::new(recorder, config, prior, 1)?;
    tracing::info!(
        strategy = strategy.name(),
        device = %device.describe(),
        throttle = %throttle.name(),
        "exploring into {}",
        shared.dir.display()
    );
    let mut parts = WorkerParts {
        device,
        strategy,
        throttle,
    };
    let outcome = run_worker(&shared, &mut parts, 0);
    shared.finish(outcome, &[Done::of(&parts)])
}

/// The device, strategy and throttle of one worker of [`explore_parallel`].
pub struct WorkerParts<'a> {
    pub device: &'a mut dyn Device,
    pub strategy: &'a mut dyn Strategy,
    pub throttle: &'a mut dyn Throttle,
}

impl std::fmt::Debug for WorkerParts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerParts")
            .field("device", &self.device.describe())
            .field("strategy", &self.strategy.name())
            .field("throttle", &self.throttle.name())
            .finish()
    }
}

/// A worker of [`explore_parallel`], built on its own thread.
pub trait Worker {
    fn parts(&mut self) -> WorkerParts<'_>;
}

/// Runs `workers` workers at once, each on its own thread with the device, strategy and
/// throttle that `build(i)` makes there, into one run folder, until the budget (shared by
/// all workers) is spent.
///
/// Steps are numbered across workers in the order they are recorded; each line of
/// `steps.jsonl` names its worker. A signal is new the first time any worker sees it.
/// Each step records the functions it covered first ([`Device::covered_functions`]), and
/// with several workers (or in a resumed run) a step's coverage counts the functions any
/// worker has covered so far (the byte counts are the largest of one worker). A worker whose device cannot be brought back stops the
/// others after their current step, and the run fails with its error.
///
/// **Resuming**: when `recorder` was reopened by [`RunRecorder::resume`], the counters
/// (steps, signals, restarts, failed actions, coverage, elapsed time) continue from the
/// folder, each worker's strategy is first replayed through that worker's recorded steps
/// (their screenshots and actions, no device involved) so that it continues with what it
/// had learnt, and each device starts afresh (as after a restart). A strategy that chooses
/// differently during the replay than it did in the run is noted as a
/// `replay_diverged` event; deterministic strategies (Monkey, PIRLTest with one worker)
/// replay exactly.
pub fn explore_parallel<W, F>(
    workers: u32,
    build: F,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
) -> Result<Summary>
where
    W: Worker,
    F: Fn(u32) -> Result<W> + Sync,
{
    if workers == 0 {
        return Err(Error::Config("--workers must be at least 1".into()));
    }
    let prior = recorder.take_prior();
    let shared = Shared::new(recorder, config, prior, workers)?;
    tracing::info!(workers, "exploring into {}", shared.dir.display());
    let results: Vec<Result<(Option<Done>, Result<()>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|i| {
                let shared = &shared;
                let build = &build;
                std::thread::Builder::new()
                    .name(format!("worker-{i}"))
                    .spawn_scoped(scope, move || {
                        // A worker that panics stops the others, which would otherwise
                        // wait for its step's line.
                        let _guard = StopOnPanic(&shared.stop);
                        let mut worker = match build(i) {
                            Ok(w) => w,
                            Err(e) => {
                                shared.stop.store(true, Ordering::SeqCst);
                                return Ok((None, Err(e)));
                            }
                        };
                        let mut parts = worker.parts();
                        let outcome = run_worker(shared, &mut parts, i);
                        if outcome.is_err() {
                            shared.stop.store(true, Ordering::SeqCst);
                        }
                        Ok((Some(Done::of(&parts)), outcome))
                    })
                    .map_err(|e| Error::Config(format!("starting worker {i}: {e}")))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(Error::Config("a worker thread panicked".to_owned()))),
                Err(e) => Err(e),
            })
            .collect()
    });
    let mut done = Vec::new();
    let mut first_error = None;
    for r in results {
        match r {
            Ok((d, outcome)) => {
                done.extend(d);
                if let Err(e) = outcome {
                    first_error.get_or_insert(e);
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let outcome = first_error.map_or(Ok(()), Err);
    shared.finish(outcome, &done)
}

/// Sets the flag when dropped during a panic.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

/// What the summary needs of a worker once its thread is done.
struct Done {
    strategy: String,
    device: String,
    throttle: String,
}

impl Done {
    fn of(parts: &WorkerParts<'_>) -> Self {
        Self {
            strategy: parts.strategy.name().to_owned(),
            device: parts.device.describe(),
            throttle: parts.throttle.name(),
        }
    }
}

/// Counters and the recorder, shared by the workers of a run.
struct Shared<'r> {
    config: &'r ExploreConfig,
    dir: std::path::PathBuf,
    workers: u32,
    /// When the run started, moved back by the time a resumed run had already taken.
    started: Instant,
    /// Steps handed out to workers (a worker takes one before choosing its action).
    claimed: AtomicU64,
    /// Set when a worker failed for good: the others stop after their current step.
    stop: AtomicBool,
    /// Merge coverage by function name: several workers, or a run that was resumed.
    merge: bool,
    /// What each worker replays first when the run is resumed.
    prior: Option<Prior>,
    /// Whether files are synced (the recorder's `durable`).
    durable: bool,
    /// Syncs `steps.jsonl` after a line is written, outside the lock (when durable).
    steps_sync: Option<std::fs::File>,
    state: Mutex<State<'r>>,
    /// Signalled when a step's line is written: the next step's worker may write its own.
    turn: Condvar,
}

struct State<'r> {
    recorder: &'r mut RunRecorder,
    /// Steps numbered so far, and steps whose line is written (all up to this one).
    step: u64,
    committed: u64,
    seen: HashMap<String, u64>,
    restarts: u32,
    failed_actions: u64,
    round_trips: Vec<f64>,
    coverage: Option<CoverageSnapshot>,
    covered: HashSet<String>,
    steps_by_worker: Vec<u64>,
    resumed_at: Vec<u64>,
    /// The first stop request of a strategy: no worker takes another step.
    stop_note: Option<String>,
}

impl<'r> Shared<'r> {
    fn new(
        recorder: &'r mut RunRecorder,
        config: &'r ExploreConfig,
        prior: Option<Prior>,
        workers: u32,
    ) -> Result<Self> {
        if config.steps.is_none() && config.duration.is_none() {
            return Err(Error::Config(
                "give a step budget, a time budget or both".into(),
            ));
        }
        let mut state = State {
            step: 0,
            committed: 0,
            seen: HashMap::new(),
            restarts: 0,
            failed_actions: 0,
            round_trips: Vec::new(),
            coverage: None,
            covered: HashSet::new(),
            steps_by_worker: vec![0; workers as usize],
            resumed_at: Vec::new(),
            stop_note: None,
            recorder,
        };
        let mut elapsed = Duration::ZERO;
        if let Some(prior) = &prior {
            // A worker number read from steps.jsonl indexes `steps_by_worker`: it must be
            // one of the workers the run recorded (RunRecorder::reopen checked the steps
            // against them) or, when it recorded none, of the workers now, so that a
            // corrupt line is an error rather than a table of billions of counters.
            let workers_known = prior.recorded_workers().unwrap_or(0).max(workers);
            for s in &prior.steps {
                state.step = s.step;
                state.failed_actions += u64::from(s.error.is_some());
                if !s
                    .error
                    .as_deref()
                    .is_some_and(|e| e.starts_with("device lost"))
                {
                    state.round_trips.push(s.timings.round_trip_ms);
                }
                for k in &s.signal_keys {
                    *state.seen.entry(k.clone()).or_insert(0) += 1;
                }
                state.covered.extend(s.new_functions.iter().cloned());
                if s.coverage.is_some() {
                    state.coverage = s.coverage;
                }
                let w = s.worker.unwrap_or(0);
                if w >= workers_known {
                    return Err(Error::WorkerOutOfRange {
                        path: state.recorder.dir().join("steps.jsonl"),
                        step: s.step,
                        worker: w,
                        workers: workers_known,
                    });
                }
                let w = w as usize;
                if w >= state.steps_by_worker.len() {
                    state.steps_by_worker.resize(w + 1, 0);
                }
                state.steps_by_worker[w] += 1;
                elapsed = Duration::from_millis(s.elapsed_ms);
            }
            for sig in &prior.signals {
                state.seen.entry(sig.key.clone()).or_insert(1);
            }
            state.restarts = prior
                .events
                .iter()
                .filter(|e| e.event == "device_restarted" || e.event == "restart_failed")
                .count() as u32;
            state.resumed_at = prior.resumed_at();
            state.resumed_at.push(state.step);
            state.committed = state.step;
            let last = state.step;
            state.recorder.append_event(
                last,
                "resumed",
                &format!("{} steps recorded before", prior.steps.len()),
            )?;
            tracing::info!(
                "resuming after step {last} ({:.1} s into the run)",
                elapsed.as_secs_f64()
            );
        }
        let started = Instant::now()
            .checked_sub(elapsed)
            .unwrap_or_else(Instant::now);
        Ok(Self {
            config,
            dir: state.recorder.dir().to_owned(),
            workers,
            started,
            claimed: AtomicU64::new(state.step),
            stop: AtomicBool::new(false),
            merge: workers > 1 || prior.is_some(),
            prior,
            durable: state.recorder.durable,
            steps_sync: state.recorder.steps_syncer()?,
            state: Mutex::new(state),
            turn: Condvar::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<'r>> {
        // A worker that panicked while holding the lock left whole lines behind: every
        // write is one call.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn worker_id(&self, worker: u32) -> Option<u32> {
        (self.workers > 1).then_some(worker)
    }

    fn event(&self, worker: u32, what: &str, detail: &str) -> Result<()> {
        let mut st = self.lock();
        let step = st.step;
        st.recorder
            .append_event_of(step, self.worker_id(worker), what, detail)
    }

    /// Takes the next step of the budget; `None` when the run is over.
    fn claim(&self) -> Option<u64> {
        if self.stop.load(Ordering::SeqCst) || self.lock().stop_note.is_some() {
            return None;
        }
        if self
            .config
            .duration
            .is_some_and(|d| self.started.elapsed() >= d)
        {
            return None;
        }
        let n = self.claimed.fetch_add(1, Ordering::SeqCst);
        if self.config.steps.is_some_and(|max| n >= max) {
            return None;
        }
        Some(n + 1)
    }

    fn finish(&self, outcome: Result<()>, done: &[Done]) -> Result<Summary> {
        outcome?;
        let mut st = self.lock();
        let stopped_because = if st.stop_note.is_some() {
            StopReason::Strategy
        } else if self.config.steps.is_some_and(|n| st.step >= n) {
            StopReason::Steps
        } else {
            StopReason::Time
        };
        let first = done.first();
        let mut devices: Vec<String> = done.iter().map(|d| d.device.clone()).collect();
        devices.dedup();
        let summary = Summary {
            strategy: first.map(|d| d.strategy.clone()).unwrap_or_default(),
            device: devices.join("; "),
            throttle: first.map(|d| d.throttle.clone()).unwrap_or_default(),
            steps: st.step,
            duration_ms: self.started.elapsed().as_millis() as u64,
            stopped_because,
            coverage: st.coverage,
            unique_signals: st.seen.len(),
            signal_counts: st.seen.clone(),
            device_restarts: st.restarts,
            failed_actions: st.failed_actions,
            median_round_trip_ms: median(&mut st.round_trips),
            workers: self.workers,
            steps_by_worker: if self.workers > 1 {
                st.steps_by_worker.clone()
            } else {
                Vec::new()
            },
            resumed_at: st.resumed_at.clone(),
            stop_note: st.stop_note.clone(),
        };
        st.recorder.finish(&summary)?;
        tracing::info!(
            steps = summary.steps,
            unique_signals = summary.unique_signals,
            restarts = summary.device_restarts,
            "run finished after {:.1} s",
            summary.duration_ms as f64 / 1000.0
        );
        Ok(summary)
    }
}

/// One worker's loop: replay what it recorded before a resumption, then take steps until
/// the shared budget is spent.
fn run_worker(shared: &Shared<'_>, parts: &mut WorkerParts<'_>, worker: u32) -> Result<()> {
    let WorkerParts {
        device,
        strategy,
        throttle,
    } = parts;
    let (device, strategy, throttle): (&mut dyn Device, &mut dyn Strategy, &mut dyn Throttle) =
        (&mut **device, &mut **strategy, &mut **throttle);
    if let Some(prior) = &shared.prior {
        replay(shared, device, strategy, prior, worker)?;
    }
    let resumed_after = shared.prior.as_ref().map(Prior::last_step);
    let mut before = match device.screenshot() {
        Ok(shot) => shot,
        Err(e) if e.is_device_lost() => recover(shared, device, strategy, worker, &e.to_string())?,
        Err(e) => return Err(e.into()),
    };
    let start = start_screenshot(resumed_after.unwrap_or(0), worker);
    let png = encode(&shared.dir.join(&start), &before)?;
    shared.lock().recorder.save_png(&start, &png)?;
    if resumed_after.is_some() {
        // The app starts afresh: the strategy's last screen is not this one.
        strategy.on_restart();
    }

    // The device's covered-function count at the last listing of names: coverage only
    // grows, so an unchanged count means no new names and no listing is needed.
    let mut listed_at = None;
    while let Some(claimed) = shared.claim() {
        let actions = device.supported_actions();
        let t = Instant::now();
        let ui = if strategy.wants_ui() {
            // A hierarchy that cannot be read leaves the strategy with the pixels; a lost
            // device shows itself again at the action.
            device.ui_hierarchy().unwrap_or_else(|e| {
                tracing::warn!(step = claimed, "no view hierarchy: {e}");
                None
            })
        } else {
            None
        };
        let action = strategy.choose(&Observation {
            step: claimed,
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
                shared.event(worker, "device_lost", &format!("{action}: {e}"))?;
                let after = recover(shared, device, strategy, worker, &e.to_string())?;
                let outcome = StepOutcome {
                    after,
                    coverage: device.coverage().ok().flatten(),
                    signals: device.drain_signals().unwrap_or_default(),
                    device_events: fold_repeats(device.drain_events().unwrap_or_default()),
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
        outcome.timings.choose_ms = choose_ms;
        // Recorded in every run, so that a run resumed later can merge its coverage.
        let count = outcome.coverage.map(|c| c.functions_covered);
        let functions = if count.is_some() && count != listed_at {
            listed_at = count;
            device.covered_functions().ok().flatten()
        } else {
            None
        };
        // Encoding is the slow part of saving: done before taking any lock.
        let png = encode(&shared.dir.join("screenshots"), &outcome.after)?;

        // The step takes its number, writes its screenshot outside the lock (other workers
        // record meanwhile), then waits for the lines of the steps before it, so that file
        // order stays step order.
        let step = {
            let mut st = shared.lock();
            st.step += 1;
            st.step
        };
        let shot_rel = step_screenshot(step);
        let written = write_file(&shared.dir.join(&shot_rel), &png, shared.durable);
        let mut st = shared.lock();
        while st.committed + 1 != step {
            if shared.stop.load(Ordering::SeqCst) {
                // The worker of an earlier step died without writing its line.
                return Err(Error::Config(format!(
                    "worker {worker}: step {step} cannot be recorded after a failed worker"
                )));
            }
            st = shared
                .turn
                .wait_timeout(st, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let recorded = written.and_then(|()| {
            commit(
                &mut st,
                shared,
                Finished {
                    worker,
                    step,
                    screenshot: shot_rel,
                    outcome: &outcome,
                    lost,
                    action: &action,
                    insight,
                    functions,
                    viewport: device.viewport(),
                },
            )
        });
        st.committed = step;
        drop(st);
        shared.turn.notify_all();
        let (new_signals, coverage) = recorded?;
        // The line is on its way to the disk before the next step starts; other workers
        // write theirs meanwhile, and one sync may carry several lines.
        if let Some(file) = &shared.steps_sync {
            file.sync_data()
                .map_err(|e| Error::io(shared.dir.join("steps.jsonl"), e))?;
        }
        let transition = Transition {
            step,
            before,
            action,
            after: outcome.after,
            new_signals,
            coverage,
            device_events: outcome.device_events,
        };
        strategy.learn(&transition);
        before = transition.after;
        if let Some(why) = strategy.stop_request() {
            tracing::warn!(worker, "the strategy asked to stop: {why}");
            shared.lock().stop_note.get_or_insert(why);
        }
    }
    Ok(())
}

/// A step whose screenshot is written, waiting for [`commit`].
struct Finished<'a> {
    worker: u32,
    step: u64,
    screenshot: String,
    outcome: &'a StepOutcome,
    lost: bool,
    action: &'a Action,
    insight: Option<Insight>,
    functions: Option<Vec<String>>,
    viewport: Size,
}

/// Records a finished step in its turn: counters, signals first seen, merged coverage and
/// its line. Returns the new signals and the coverage recorded.
fn commit(
    st: &mut State<'_>,
    shared: &Shared<'_>,
    f: Finished<'_>,
) -> Result<(Vec<Signal>, Option<CoverageSnapshot>)> {
    let Finished {
        worker,
        step,
        screenshot,
        outcome,
        lost,
        action,
        insight,
        functions,
        viewport,
    } = f;
    st.steps_by_worker[worker as usize] += 1;
    st.failed_actions += u64::from(outcome.error.is_some());
    if !lost {
        st.round_trips.push(outcome.timings.round_trip_ms);
    }
    let mut new_signals = Vec::new();
    for sig in &outcome.signals {
        let count = st.seen.entry(sig.key.clone()).or_insert(0);
        *count += 1;
        if *count == 1 {
            new_signals.push(sig.clone());
        }
    }
    for sig in &new_signals {
        st.recorder.append_signal(sig, step, &screenshot)?;
    }
    let mut new_functions = Vec::new();
    for name in functions.into_iter().flatten() {
        if !st.covered.contains(&name) {
            st.covered.insert(name.clone());
            new_functions.push(name);
        }
    }
    let coverage = match outcome.coverage {
        Some(mut c) if shared.merge => {
            // The union of every worker's (and every earlier segment's) functions;
            // bytes cannot be merged from counts, so they are the best single one.
            let best = st.coverage.unwrap_or_default();
            c.functions_covered = (st.covered.len() as u64).max(c.functions_covered);
            c.functions_total = c.functions_total.max(best.functions_total);
            c.bytes_covered = c.bytes_covered.max(best.bytes_covered);
            c.bytes_total = c.bytes_total.max(best.bytes_total);
            c.scripts = c.scripts.max(best.scripts);
            Some(c)
        }
        other => other,
    };
    if coverage.is_some() {
        st.coverage = coverage;
    }
    tracing::debug!(
        step,
        worker,
        round_trip_ms = outcome.timings.round_trip_ms,
        throttle_ms = outcome.timings.throttle_ms,
        error = outcome.error.as_deref(),
        "{action}"
    );
    for sig in &new_signals {
        tracing::info!(step, "new signal: {}", sig.key);
    }
    st.recorder.append_step_unsynced(&StepRecord {
        step,
        action: action.clone(),
        screenshot,
        viewport,
        coverage,
        new_signals: new_signals.iter().map(|s| s.key.clone()).collect(),
        signals_observed: outcome.signals.len() as u32,
        error: outcome.error.clone(),
        timings: outcome.timings,
        elapsed_ms: shared.started.elapsed().as_millis() as u64,
        seen: insight,
        worker: shared.worker_id(worker),
        signal_keys: outcome.signals.iter().map(|s| s.key.clone()).collect(),
        new_functions,
    })?;
    // Recorded with the step that caused them (`after_step` is this step), so that a
    // resumed run hands them to the strategy again.
    for ev in &outcome.device_events {
        st.recorder
            .append_event_of(step, shared.worker_id(worker), ev.kind.name(), &ev.detail)?;
    }
    Ok((new_signals, coverage))
}

/// Feeds a worker's strategy the steps it recorded before the run was resumed: each
/// recorded screen to [`Strategy::choose`] and each recorded transition to
/// [`Strategy::learn`], with the restarts where they happened.
fn replay(
    shared: &Shared<'_>,
    device: &mut dyn Device,
    strategy: &mut dyn Strategy,
    prior: &Prior,
    worker: u32,
) -> Result<()> {
    let dir = &shared.dir;
    let mine: Vec<&StepRecord> = prior
        .steps
        .iter()
        .filter(|s| s.worker.unwrap_or(0) == worker)
        .collect();
    if mine.is_empty() {
        return Ok(());
    }
    let t = Instant::now();
    let signals: HashMap<&str, &SignalRecord> =
        prior.signals.iter().map(|s| (s.key.as_str(), s)).collect();
    // Earlier resumptions: the worker's steps after each began on a fresh start screen.
    let mut starts: Vec<u64> = vec![0];
    starts.extend(prior.resumed_at());
    let actions = device.supported_actions();
    let platform = device.platform();
    // The device is fresh: its viewport is the one every segment started with.
    let start_viewport = device.viewport();
    let mut viewport = start_viewport;
    let mut before: Option<Screenshot> = None;
    let mut segment = None;
    let mut diverged = None;
    for rec in mine {
        let seg = starts.iter().rev().find(|k| **k < rec.step).copied();
        if seg != segment {
            segment = seg;
            let rel = start_screenshot(seg.unwrap_or(0), worker);
            before = Some(load_screenshot(dir, &rel, start_viewport)?);
            viewport = start_viewport;
            strategy.on_restart();
        }
        let shown = before.take().expect("set at each segment start");
        let chosen = strategy.choose(&Observation {
            step: rec.step,
            screenshot: &shown,
            viewport,
            platform,
            actions: &actions,
            ui: None,
        });
        if chosen != rec.action && diverged.is_none() {
            diverged = Some((rec.step, chosen));
        }
        if rec
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("device lost"))
        {
            strategy.on_restart();
        }
        let after = load_screenshot(dir, &rec.screenshot, rec.viewport)?;
        let new_signals = rec
            .new_signals
            .iter()
            .filter_map(|k| signals.get(k.as_str()))
            .map(|s| Signal {
                kind: s.kind,
                message: s.message.clone(),
                stack: s.stack.clone(),
                key: s.key.clone(),
            })
            .collect();
        let device_events = prior
            .events
            .iter()
            .filter(|e| e.after_step == rec.step && e.worker.unwrap_or(0) == worker)
            .filter_map(|e| {
                DeviceEventKind::from_name(&e.event).map(|kind| DeviceEvent {
                    kind,
                    detail: e.detail.clone(),
                })
            })
            .collect();
        let transition = Transition {
            step: rec.step,
            before: shown,
            action: rec.action.clone(),
            after,
            new_signals,
            coverage: rec.coverage,
            device_events,
        };
        strategy.learn(&transition);
        before = Some(transition.after);
        viewport = rec.viewport;
    }
    if let Some((step, chosen)) = diverged {
        tracing::warn!(
            worker,
            "replaying the recorded run, the strategy chose {chosen} at step {step}, not what it chose then"
        );
        shared.event(
            worker,
            "replay_diverged",
            &format!("step {step}: chose {chosen} this time"),
        )?;
    }
    tracing::info!(
        worker,
        "replayed the recorded steps in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn load_screenshot(dir: &Path, rel: &str, viewport: Size) -> Result<Screenshot> {
    let path = dir.join(rel);
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    let probe = Screenshot::from_png(&bytes, rel, 1.0, 0)
        .map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
    let scale = probe.width() as f32 / viewport.width.max(1) as f32;
    Screenshot::from_png(&bytes, rel, scale, 0)
        .map_err(|e| Error::io(&path, std::io::Error::other(e)))
}

struct StepOutcome {
    after: Screenshot,
    coverage: Option<CoverageSnapshot>,
    signals: Vec<Signal>,
    /// What the device handled for the app during the step, repeats folded.
    device_events: Vec<DeviceEvent>,
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
    let device_events = fold_repeats(device.drain_events()?);
    let round_trip_ms = ms(t0);
    Ok(StepOutcome {
        after,
        coverage,
        signals,
        device_events,
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
    shared: &Shared<'_>,
    device: &mut dyn Device,
    strategy: &mut dyn Strategy,
    worker: u32,
    why: &str,
) -> Result<Screenshot> {
    let mut last = why.to_owned();
    let tries = shared.config.max_restarts.max(1);
    for _ in 0..tries {
        shared.lock().restarts += 1;
        let attempt = device.restart().and_then(|()| device.screenshot());
        match attempt {
            Ok(shot) => {
                tracing::warn!(worker, "device restarted after: {last}");
                shared.event(worker, "device_restarted", &last)?;
                strategy.on_restart();
                return Ok(shot);
            }
            Err(e) => {
                tracing::warn!(worker, "restart failed: {e}");
                shared.event(worker, "restart_failed", &e.to_string())?;
                last = e.to_string();
            }
        }
    }
    Err(Error::DeviceGone {
        attempts: tries,
        last,
    })
}

/// Folds repeats of one event within a step into one, its detail ending in `(×N)`: a
/// page that raises a dialog every few milliseconds would otherwise write thousands of
/// lines a step.
fn fold_repeats(events: Vec<DeviceEvent>) -> Vec<DeviceEvent> {
    let mut folded: Vec<(DeviceEvent, u64)> = Vec::new();
    for ev in events {
        match folded.iter_mut().find(|(e, _)| *e == ev) {
            Some((_, n)) => *n += 1,
            None => folded.push((ev, 1)),
        }
    }
    folded
        .into_iter()
        .map(|(mut ev, n)| {
            if n > 1 {
                ev.detail = format!("{} (×{n})", ev.detail);
            }
            ev
        })
        .collect()
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
