//! The run folder: everything a run produced, written as it happens.
//!
//! ```text
//! RUN/
//!   run.json          format name and version, tool version, start time, the caller's
//!                     metadata (strategy, config, seed, device)
//!   steps.jsonl       one StepRecord per finished step, appended and synced
//!   signals.jsonl     one SignalRecord per distinct signal key, at its first occurrence
//!   events.jsonl      device restarts and other things that happened between steps
//!   screenshots/      step-000000.png (start screen), step-000001.png (after step 1), ...
//!   summary.json      written at the end (atomically); absent if the tool was killed
//!   run.lock          the process id of the recorder writing the folder, while it does
//! ```
//!
//! In a parallel run (several workers, each with its own device) every line of
//! `steps.jsonl` names its worker, step numbers count the steps of all workers in the
//! order they were recorded, and worker `w`'s start screen is `start-000000-w<w>.png`
//! (worker 0 keeps `step-000000.png`). A resumed run ([`RunRecorder::resume`]) appends
//! to the same files; each resumption saves the fresh start screens as
//! `start-<step>-w<w>.png` and notes a `resumed` event after the last recorded step.
//!
//! A step's screenshot is written before its line, and lines are appended whole and synced,
//! so whatever kills the tool, every line in `steps.jsonl` refers to a complete step.
//! [`read_steps`] ignores a torn last line. Whole files (`run.json`, `summary.json` and the
//! files strategies add, such as `agent.json`) go through [`write_atomic`], so a reader
//! finds either the old content or the new.
//!
//! One recorder writes a folder at a time: [`RunRecorder::create`] and
//! [`RunRecorder::reopen`] take `run.lock` and refuse a folder another live process holds;
//! a lock left by a process that died (a `kill -9`) is taken over.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gui_core::{Action, CoverageSnapshot, Screenshot, Signal, SignalKind, Size, StackFrame};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Error, Result, ThrottleOutcome};

/// Name and version of the folder layout, stored in `run.json`.
pub const FORMAT: &str = "gui-testing-run";
pub const FORMAT_VERSION: u32 = 1;

/// The most workers a run folder may record. A worker number read from the folder sizes a
/// per-worker table (8 bytes a worker), so it is bounded by the recorded count, and the
/// recorded count by this, far beyond the devices one machine can drive.
pub(crate) const MAX_WORKERS: u32 = 1 << 16;

/// The lock file of a folder being written.
const LOCK_FILE: &str = "run.lock";

/// Milliseconds each part of a step took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTimings {
    pub choose_ms: f64,
    pub action_ms: f64,
    pub throttle_ms: f64,
    pub screenshot_ms: f64,
    pub coverage_ms: f64,
    /// Action + throttle + screenshot + coverage + signals: the device round trip.
    pub round_trip_ms: f64,
    /// What the throttle did: frames polled, whether it hit its cap. Absent in run
    /// folders written before adaptive throttles, and for steps whose device was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<ThrottleOutcome>,
}

/// One finished step, a line of `steps.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: u64,
    pub action: Action,
    /// Screenshot after the action, relative to the run folder.
    pub screenshot: String,
    pub viewport: Size,
    #[serde(default)]
    pub coverage: Option<CoverageSnapshot>,
    /// Keys of signals first seen in this step.
    #[serde(default)]
    pub new_signals: Vec<String>,
    /// Signals of any key observed in this step (repeats included).
    #[serde(default)]
    pub signals_observed: u32,
    /// Why the action could not be performed, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub timings: StepTimings,
    /// Milliseconds since the run started.
    pub elapsed_ms: u64,
    /// The strategy's view of the screen it chose the action on (page, widgets), if it
    /// has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<crate::Insight>,
    /// The worker that ran the step, in a parallel run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<u32>,
    /// Keys of every signal observed in this step, repeats included (the counts of a
    /// resumed run are rebuilt from them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signal_keys: Vec<String>,
    /// Functions of the run first covered in this step, by the names of
    /// `Device::covered_functions`, where the device gives them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_functions: Vec<String>,
}

/// A line of `events.jsonl`: something that happened between steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// The number of the last step recorded when it happened.
    pub after_step: u64,
    /// `device_lost`, `device_restarted`, `restart_failed`, `resumed`, ...
    pub event: String,
    pub detail: String,
    /// The worker it happened to, in a parallel run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<u32>,
}

/// What a run folder held when it was reopened by [`RunRecorder::resume`].
#[derive(Debug, Clone, Default)]
pub struct Prior {
    /// The caller's metadata from `run.json`.
    pub meta: Value,
    pub steps: Vec<StepRecord>,
    pub signals: Vec<SignalRecord>,
    pub events: Vec<EventRecord>,
}

impl Prior {
    /// The number of the last recorded step (0 when none was).
    pub fn last_step(&self) -> u64 {
        self.steps.last().map_or(0, |s| s.step)
    }

    /// The steps after which the run was resumed before, from its `resumed` events.
    pub fn resumed_at(&self) -> Vec<u64> {
        self.events
            .iter()
            .filter(|e| e.event == "resumed")
            .map(|e| e.after_step)
            .collect()
    }

    /// The worker count the caller recorded in `run.json`'s `meta.workers`, when it is
    /// one (from 1 to 65,536).
    pub fn recorded_workers(&self) -> Option<u32> {
        recorded_workers(&self.meta)
    }
}

fn recorded_workers(meta: &Value) -> Option<u32> {
    meta["workers"]
        .as_u64()
        .filter(|n| (1..=u64::from(MAX_WORKERS)).contains(n))
        .map(|n| n as u32)
}

/// A distinct signal, a line of `signals.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalRecord {
    pub key: String,
    pub kind: SignalKind,
    pub message: String,
    pub stack: Vec<StackFrame>,
    pub first_step: u64,
    pub screenshot: String,
}

/// Writes a run folder.
#[derive(Debug)]
pub struct RunRecorder {
    dir: PathBuf,
    steps: File,
    signals: File,
    events: File,
    /// Sync every write to disk (on by default; off only for throwaway runs).
    pub durable: bool,
    /// What the folder held, when it was reopened to continue a run.
    prior: Option<Prior>,
    /// Held while the recorder lives.
    _lock: RunLock,
}

impl RunRecorder {
    /// Creates `dir` (and parents) and writes `run.json` with `meta`; refuses a folder that
    /// already holds a run.
    pub fn create(dir: &Path, meta: &Value) -> Result<Self> {
        if dir.join("run.json").exists() {
            return Err(Error::RunFolderExists { path: dir.into() });
        }
        std::fs::create_dir_all(dir.join("screenshots")).map_err(|e| Error::io(dir, e))?;
        let lock = RunLock::acquire(dir)?;
        // Checked again under the lock: another process may have created the run since.
        if dir.join("run.json").exists() {
            return Err(Error::RunFolderExists { path: dir.into() });
        }
        let run = json!({
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "tool_version": env!("CARGO_PKG_VERSION"),
            "started_at_ms": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            "meta": meta,
        });
        write_atomic(
            &dir.join("run.json"),
            &serde_json::to_vec_pretty(&run).expect("json"),
        )?;
        Self::open(dir, None, lock)
    }

    /// A recorder appending to the JSON-lines files of `dir` (created when missing).
    fn open(dir: &Path, prior: Option<Prior>, lock: RunLock) -> Result<Self> {
        let open = |name: &str| {
            let path = dir.join(name);
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| Error::io(path, e))
        };
        Ok(Self {
            steps: open("steps.jsonl")?,
            signals: open("signals.jsonl")?,
            events: open("events.jsonl")?,
            dir: dir.into(),
            durable: true,
            prior,
            _lock: lock,
        })
    }

    /// Reopens the run folder `dir` to continue its run: [`reopen`](Self::reopen) and
    /// [`ReopenedRun::resume`] in one, for a caller with nothing to check in between.
    pub fn resume(dir: &Path) -> Result<Self> {
        Self::reopen(dir)?.resume()
    }

    /// Locks the run folder `dir` and reads what it holds (see [`Prior`]) without changing
    /// anything in it, so that the caller can check whose run it is and with which
    /// settings before [`ReopenedRun::resume`] prepares it to be continued. A folder that
    /// is refused (by this or by the caller) is left as it was.
    ///
    /// A line torn by a kill at the end of a JSON-lines file is left out; a worker number
    /// in `steps.jsonl` must be below the `workers` the caller recorded in `run.json`'s
    /// meta, when it recorded them.
    pub fn reopen(dir: &Path) -> Result<ReopenedRun> {
        let run_path = dir.join("run.json");
        if !run_path.exists() {
            return Err(Error::NotARun { path: dir.into() });
        }
        let lock = RunLock::acquire(dir)?;
        let run: Value = match std::fs::read(&run_path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::BadRecord {
                path: run_path.clone(),
                line: e.line(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotARun { path: dir.into() });
            }
            Err(e) => return Err(Error::io(&run_path, e)),
        };
        if run["format"] != FORMAT || run["format_version"].as_u64() != Some(1) {
            return Err(Error::BadRecord {
                path: run_path,
                line: 1,
                message: format!("not a `{FORMAT}` version {FORMAT_VERSION} run folder"),
            });
        }
        let meta = run["meta"].clone();
        let workers = recorded_workers(&meta);
        if workers.is_none() && !meta["workers"].is_null() {
            return Err(Error::BadRecord {
                path: run_path,
                line: 1,
                message: format!(
                    "meta.workers is {}; a run has from 1 to {MAX_WORKERS} workers",
                    meta["workers"]
                ),
            });
        }
        let steps_path = dir.join("steps.jsonl");
        let numbered: Vec<(usize, StepRecord)> = read_numbered_lines(&steps_path, true)?;
        if let Some(n) = workers {
            let beyond = numbered
                .iter()
                .find(|(_, s)| s.worker.is_some_and(|w| w >= n));
            if let Some((line, s)) = beyond {
                return Err(Error::BadRecord {
                    path: steps_path,
                    line: *line,
                    message: format!(
                        "step {} names worker {}, but run.json records {n} workers",
                        s.step,
                        s.worker.unwrap_or_default()
                    ),
                });
            }
        }
        let steps: Vec<StepRecord> = numbered.into_iter().map(|(_, s)| s).collect();
        let last = steps.last().map_or(0, |s| s.step);
        let mut signals: Vec<SignalRecord> = read_lines_or_empty(&dir.join("signals.jsonl"))?;
        let recorded_signals = signals.len();
        signals.retain(|s| s.first_step <= last);
        let events = read_lines_or_empty(&dir.join("events.jsonl"))?;
        Ok(ReopenedRun {
            dir: dir.into(),
            orphan_signals: signals.len() < recorded_signals,
            prior: Prior {
                meta,
                steps,
                signals,
                events,
            },
            lock,
        })
    }

    /// What the folder held when [`resume`](Self::resume) reopened it (once).
    pub fn take_prior(&mut self) -> Option<Prior> {
        self.prior.take()
    }

    /// What the folder held when [`resume`](Self::resume) reopened it, until the loop takes
    /// it.
    pub fn prior(&self) -> Option<&Prior> {
        self.prior.as_ref()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the screenshot of a step (0 = the start screen) and returns its relative path.
    pub fn save_screenshot(&mut self, step: u64, shot: &Screenshot) -> Result<String> {
        let rel = step_screenshot(step);
        let png = encode(&self.dir.join(&rel), shot)?;
        self.save_png(&rel, &png)?;
        Ok(rel)
    }

    /// Writes an encoded screenshot at `rel`, a path inside the run folder.
    pub fn save_png(&mut self, rel: &str, png: &[u8]) -> Result<()> {
        write_file(&self.dir.join(rel), png, self.durable)
    }

    pub fn append_step(&mut self, record: &StepRecord) -> Result<()> {
        let path = self.dir.join("steps.jsonl");
        append_line(&mut self.steps, &path, record, self.durable)
    }

    /// [`append_step`](Self::append_step) without the sync, which the caller does with a
    /// [`steps_syncer`](Self::steps_syncer) once it no longer holds up other writers.
    pub(crate) fn append_step_unsynced(&mut self, record: &StepRecord) -> Result<()> {
        let path = self.dir.join("steps.jsonl");
        append_line(&mut self.steps, &path, record, false)
    }

    /// A second handle on `steps.jsonl` that syncs it, when the recorder is durable.
    pub(crate) fn steps_syncer(&self) -> Result<Option<File>> {
        if !self.durable {
            return Ok(None);
        }
        let path = self.dir.join("steps.jsonl");
        self.steps
            .try_clone()
            .map(Some)
            .map_err(|e| Error::io(path, e))
    }

    pub fn append_signal(
        &mut self,
        signal: &Signal,
        first_step: u64,
        screenshot: &str,
    ) -> Result<()> {
        let rec = SignalRecord {
            key: signal.key.clone(),
            kind: signal.kind,
            message: signal.message.clone(),
            stack: signal.stack.clone(),
            first_step,
            screenshot: screenshot.to_owned(),
        };
        let path = self.dir.join("signals.jsonl");
        append_line(&mut self.signals, &path, &rec, self.durable)
    }

    /// Notes something that happened between steps (a device restart, a lost action).
    pub fn append_event(&mut self, after_step: u64, what: &str, detail: &str) -> Result<()> {
        self.append_event_of(after_step, None, what, detail)
    }

    /// [`append_event`](Self::append_event) for one worker of a parallel run.
    pub fn append_event_of(
        &mut self,
        after_step: u64,
        worker: Option<u32>,
        what: &str,
        detail: &str,
    ) -> Result<()> {
        let path = self.dir.join("events.jsonl");
        let ev = EventRecord {
            after_step,
            event: what.to_owned(),
            detail: detail.to_owned(),
            worker,
        };
        append_line(&mut self.events, &path, &ev, self.durable)
    }

    /// Writes `summary.json` atomically.
    pub fn finish(&mut self, summary: &impl Serialize) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(summary).expect("summary serialises");
        write_atomic(&self.dir.join("summary.json"), &bytes)
    }
}

/// A run folder locked and read by [`RunRecorder::reopen`], not yet changed. Dropping it
/// releases the lock and leaves the folder as it was.
#[derive(Debug)]
pub struct ReopenedRun {
    dir: PathBuf,
    prior: Prior,
    /// Whether `signals.jsonl` holds signals first seen in a step whose line was never
    /// written (the tool was killed in between); they are left out of `prior`.
    orphan_signals: bool,
    lock: RunLock,
}

impl ReopenedRun {
    /// What the folder holds.
    pub fn prior(&self) -> &Prior {
        &self.prior
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Prepares the folder to be continued and returns its recorder: cuts a line torn by
    /// a kill off the end of each JSON-lines file, drops signals first seen in a step whose
    /// line was never written, and removes `summary.json`, which the continued run writes
    /// again when it ends. [`explore`](crate::explore) takes the prior with
    /// [`RunRecorder::take_prior`].
    pub fn resume(self) -> Result<RunRecorder> {
        let dir = self.dir.as_path();
        for name in ["steps.jsonl", "signals.jsonl", "events.jsonl"] {
            cut_torn_line(&dir.join(name))?;
        }
        if self.orphan_signals {
            let mut text = Vec::new();
            for s in &self.prior.signals {
                text.extend(serde_json::to_vec(s).expect("records serialise"));
                text.push(b'\n');
            }
            write_atomic(&dir.join("signals.jsonl"), &text)?;
        }
        let summary = dir.join("summary.json");
        match std::fs::remove_file(&summary) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&summary, e)),
        }
        std::fs::create_dir_all(dir.join("screenshots")).map_err(|e| Error::io(dir, e))?;
        RunRecorder::open(dir, Some(self.prior), self.lock)
    }
}

/// The claim of one recorder on a run folder: `run.lock`, holding the writer's process id,
/// removed when dropped.
///
/// The lock file is written in full under another name and hard-linked into place, which
/// fails when `run.lock` exists: a reader never sees a lock without its process id. A lock
/// whose process is gone is stale; it is moved aside under a name of this process's before
/// it is deleted, so that of two processes taking over the same stale lock only one does.
#[derive(Debug)]
struct RunLock {
    path: PathBuf,
    pid: u32,
}

impl RunLock {
    fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join(LOCK_FILE);
        let pid = std::process::id();
        let staged = unique_sibling(&path, "new");
        write_file(&staged, format!("{pid}\n").as_bytes(), true)?;
        let taken = Self::link(dir, &staged, &path);
        let _ = std::fs::remove_file(&staged);
        taken.map(|()| Self { path, pid })
    }

    /// Links `staged` as `lock`, taking over a stale lock on the way.
    fn link(dir: &Path, staged: &Path, lock: &Path) -> Result<()> {
        // Each round either takes the lock, finds a live holder, or clears a stale lock
        // that another process may then take first; a few rounds settle it.
        for _ in 0..8 {
            match std::fs::hard_link(staged, lock) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(lock, e)),
            }
            let holder = match std::fs::read_to_string(lock) {
                Ok(text) => text,
                // Released or taken over since the link failed: try again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(lock, e)),
            };
            if let Some(pid) = parse_pid(&holder).filter(|p| process_alive(*p)) {
                return Err(Error::RunFolderLocked {
                    path: dir.into(),
                    pid,
                });
            }
            let aside = unique_sibling(lock, "stale");
            match std::fs::rename(lock, &aside) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(lock, e)),
            }
            // Between reading the stale lock and moving it, another process may have taken
            // it over and put its own in place: give that one back.
            let moved = std::fs::read_to_string(&aside).unwrap_or_default();
            if moved != holder {
                let _ = std::fs::hard_link(&aside, lock);
            }
            let _ = std::fs::remove_file(&aside);
        }
        Err(Error::io(
            lock,
            std::io::Error::other("other processes kept taking the lock; try again"),
        ))
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Only a lock that is still this recorder's: one taken over while this process
        // was thought dead belongs to its new holder.
        let ours = std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| parse_pid(&t))
            == Some(self.pid);
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn parse_pid(text: &str) -> Option<u32> {
    text.trim().parse().ok().filter(|p| *p != 0)
}

/// Whether process `pid` is running: a recorder of this process, or another live process.
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(target_os = "linux")]
    {
        // A zombie (killed, not yet reaped by its parent) writes nothing any more.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next())
                .is_some_and(|state| matches!(state, 'Z' | 'X')),
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        }
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        std::process::Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_or(true, |s| s.success())
    }
    #[cfg(not(unix))]
    {
        // No portable way to ask: a lock is only ever released by its holder or by hand.
        true
    }
}

/// A name beside `path` that no other writer uses: `.<name>.<tag>.<pid>-<n>`.
fn unique_sibling(path: &Path, tag: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{tag}.{}-{n}", std::process::id()))
}

/// The relative path of a step's screenshot.
pub(crate) fn step_screenshot(step: u64) -> String {
    format!("screenshots/step-{step:06}.png")
}

/// The relative path of a worker's start screen: the run's first for worker 0 at step 0,
/// else `start-<after_step>-w<worker>.png`.
pub(crate) fn start_screenshot(after_step: u64, worker: u32) -> String {
    if after_step == 0 && worker == 0 {
        step_screenshot(0)
    } else {
        format!("screenshots/start-{after_step:06}-w{worker}.png")
    }
}

/// Writes `bytes` to `path`, synced when `durable`.
pub(crate) fn write_file(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let mut f = File::create(path).map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))?;
    if durable {
        f.sync_data().map_err(|e| Error::io(path, e))?;
    }
    Ok(())
}

/// PNG bytes of a screenshot that is to be written at `path`.
pub(crate) fn encode(path: &Path, shot: &Screenshot) -> Result<Vec<u8>> {
    shot.to_png()
        .map_err(|e| Error::io(path, std::io::Error::other(e)))
}

/// Cuts a last line without its newline (a write torn by a kill) off `path`, so that
/// appending goes on from a whole line.
fn cut_torn_line(path: &Path) -> Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            File::create(path).map_err(|e| Error::io(path, e))?;
            return Ok(());
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    f.set_len(keep as u64).map_err(|e| Error::io(path, e))?;
    f.sync_all().map_err(|e| Error::io(path, e))
}

fn append_line(file: &mut File, path: &Path, value: &impl Serialize, durable: bool) -> Result<()> {
    let mut line = serde_json::to_vec(value).expect("records serialise");
    line.push(b'\n');
    // One write call per line: a kill between calls can tear at most the last line.
    file.write_all(&line).map_err(|e| Error::io(path, e))?;
    if durable {
        file.sync_data().map_err(|e| Error::io(path, e))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` so that a reader, or the folder after a crash or power cut,
/// holds either the old content or the new, never part of it: the bytes go to a
/// temporary file in the same folder, which is synced and renamed over `path`, and the
/// folder is synced so the rename itself is on disk.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = unique_sibling(path, "tmp");
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    sync_dir(dir)
}

/// Makes the entries of `dir` (a rename into it) durable.
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(dir, e))
    }
    #[cfg(not(unix))]
    {
        // std cannot open a folder to sync it on other systems.
        let _ = dir;
        Ok(())
    }
}

/// Reads `steps.jsonl` of a run folder. A last line without its newline (the tool was
/// killed while writing it) is skipped; any other malformed line is an error naming it.
pub fn read_steps(dir: &Path) -> Result<Vec<StepRecord>> {
    read_lines(&dir.join("steps.jsonl"))
}

/// Reads the JSON lines of `path` with [`read_steps`]'s rule for a torn last line.
fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    Ok(read_numbered_lines(path, false)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// [`read_lines`], with a missing file read as empty.
fn read_lines_or_empty<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    Ok(read_numbered_lines(path, true)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// The records of `path` with their line numbers (from 1); a missing file is empty when
/// `missing_is_empty`.
fn read_numbered_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
    missing_is_empty: bool,
) -> Result<Vec<(usize, T)>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if missing_is_empty && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut reader = BufReader::new(file);
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = reader.read_line(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if !buf.ends_with('\n') {
            break;
        }
        if buf.trim().is_empty() {
            continue;
        }
        let rec = serde_json::from_str(buf.trim_end()).map_err(|e| Error::BadRecord {
            path: path.into(),
            line: line_no,
            message: e.to_string(),
        })?;
        out.push((line_no, rec));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gui_core::ActionKind;

    fn record(step: u64) -> StepRecord {
        StepRecord {
            step,
            action: Action::new(ActionKind::Return),
            screenshot: format!("screenshots/step-{step:06}.png"),
            viewport: Size::new(10, 10),
            coverage: None,
            new_signals: vec![],
            signals_observed: 0,
            error: None,
            timings: StepTimings::default(),
            elapsed_ms: step,
            seen: None,
            worker: None,
            signal_keys: vec![],
            new_functions: vec![],
        }
    }

    #[test]
    fn torn_last_line_is_skipped_and_bad_lines_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("r");
        let mut rec = RunRecorder::create(&run, &json!({})).unwrap();
        rec.append_step(&record(1)).unwrap();
        rec.append_step(&record(2)).unwrap();
        // Simulate a kill in the middle of the third line.
        rec.steps.write_all(br#"{"step":3,"act"#).unwrap();
        let steps = read_steps(&run).unwrap();
        assert_eq!(steps.iter().map(|s| s.step).collect::<Vec<_>>(), vec![1, 2]);

        std::fs::write(run.join("steps.jsonl"), "{\"step\":1}\n").unwrap();
        let err = read_steps(&run).unwrap_err().to_string();
        assert!(err.contains("steps.jsonl:1"), "{err}");
    }

    /// Every file under `dir` with its bytes.
    fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
        let mut out = std::collections::BTreeMap::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    todo.push(path);
                } else {
                    out.insert(path.clone(), std::fs::read(&path).unwrap());
                }
            }
        }
        out
    }

    /// A finished two-step run whose folder also holds what a kill leaves behind: a torn
    /// step line and a signal of a step that was never written.
    fn killed_run(dir: &Path, meta: &Value) {
        let mut rec = RunRecorder::create(dir, meta).unwrap();
        rec.append_step(&record(1)).unwrap();
        rec.append_step(&record(2)).unwrap();
        let signal = Signal::new(SignalKind::ConsoleError, "m", vec![]);
        rec.append_signal(&signal, 3, "screenshots/step-000003.png")
            .unwrap();
        rec.finish(&json!({"steps": 2})).unwrap();
        rec.steps.write_all(br#"{"step":3,"act"#).unwrap();
    }

    #[test]
    fn a_reopened_folder_is_unchanged_until_it_is_resumed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("r");
        killed_run(&dir, &json!({"strategy": "monkey"}));
        let before = snapshot(&dir);

        let reopened = RunRecorder::reopen(&dir).unwrap();
        assert_eq!(reopened.prior().meta["strategy"], "monkey");
        assert_eq!(reopened.prior().last_step(), 2);
        assert!(
            reopened.prior().signals.is_empty(),
            "step 3 was never written"
        );
        // The caller refuses the folder: nothing in it changed, and the lock is gone.
        drop(reopened);
        assert_eq!(snapshot(&dir), before);

        let rec = RunRecorder::reopen(&dir).unwrap().resume().unwrap();
        assert!(!dir.join("summary.json").exists());
        assert!(
            std::fs::read(dir.join("steps.jsonl"))
                .unwrap()
                .ends_with(b"\n")
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("signals.jsonl")).unwrap(),
            ""
        );
        drop(rec);
    }

    #[test]
    fn a_second_recorder_of_a_folder_is_refused_naming_the_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("r");
        let first = RunRecorder::create(&dir, &json!({})).unwrap();
        let err = RunRecorder::resume(&dir).unwrap_err();
        let me = std::process::id();
        assert!(
            matches!(err, Error::RunFolderLocked { pid, .. } if pid == me),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains(&dir.display().to_string()), "{text}");
        assert!(text.contains(&format!("process {me}")), "{text}");
        drop(first);

        // Another live process holds it.
        let mut other = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("`sleep` (coreutils) stands in for another process holding the lock");
        std::fs::write(dir.join(LOCK_FILE), format!("{}\n", other.id())).unwrap();
        let err = RunRecorder::resume(&dir).unwrap_err().to_string();
        other.kill().unwrap();
        other.wait().unwrap();
        assert!(err.contains(&format!("process {}", other.id())), "{err}");
    }

    #[test]
    fn a_lock_left_by_a_dead_process_is_taken_over_and_released_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("r");
        drop(RunRecorder::create(&dir, &json!({})).unwrap());
        assert!(
            !dir.join(LOCK_FILE).exists(),
            "dropping the recorder releases it"
        );

        let mut gone = std::process::Command::new("true")
            .spawn()
            .expect("`true` (coreutils) stands in for a process that died");
        gone.wait().unwrap();
        std::fs::write(dir.join(LOCK_FILE), format!("{}\n", gone.id())).unwrap();
        let rec = RunRecorder::resume(&dir).unwrap();
        let held = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert_eq!(held.trim(), std::process::id().to_string());
        drop(rec);
        assert!(!dir.join(LOCK_FILE).exists());
        // Nothing of the takeover is left beside it.
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn a_worker_beyond_the_recorded_workers_is_refused_naming_the_line() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("r");
        let mut rec = RunRecorder::create(&dir, &json!({"workers": 2})).unwrap();
        let mut one = record(1);
        one.worker = Some(1);
        let mut two = record(2);
        two.worker = Some(4_000_000_000);
        rec.append_step(&one).unwrap();
        rec.append_step(&two).unwrap();
        drop(rec);
        let before = snapshot(&dir);
        let err = RunRecorder::resume(&dir).unwrap_err().to_string();
        assert!(err.contains("steps.jsonl:2"), "{err}");
        assert!(err.contains("step 2 names worker 4000000000"), "{err}");
        assert_eq!(snapshot(&dir), before);

        // The recorded count is bounded too: it would size the same table.
        std::fs::write(
            dir.join("run.json"),
            json!({"format": FORMAT, "format_version": 1, "meta": {"workers": 1u64 << 40}})
                .to_string(),
        )
        .unwrap();
        let err = RunRecorder::resume(&dir).unwrap_err().to_string();
        assert!(
            err.contains("run.json") && err.contains("meta.workers"),
            "{err}"
        );
    }

    #[test]
    fn whole_files_are_replaced_atomically_without_leftovers() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.json");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("agent.json")]);
        let err = write_atomic(&tmp.path().join("no/such/dir/x.json"), b"x").unwrap_err();
        assert!(err.to_string().contains("no/such/dir"), "{err}");
    }

    #[test]
    fn a_folder_holding_a_run_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        RunRecorder::create(dir.path(), &json!({})).unwrap();
        let err = RunRecorder::create(dir.path(), &json!({})).unwrap_err();
        assert!(matches!(err, Error::RunFolderExists { .. }));
    }
}
