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
//! [`read_steps`] ignores a torn last line.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use gui_core::{Action, CoverageSnapshot, Screenshot, Signal, SignalKind, Size, StackFrame};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Error, Result, ThrottleOutcome};

/// Name and version of the folder layout, stored in `run.json`.
pub const FORMAT: &str = "gui-testing-run";
pub const FORMAT_VERSION: u32 = 1;

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
}

impl RunRecorder {
    /// Creates `dir` (and parents) and writes `run.json` with `meta`; refuses a folder that
    /// already holds a run.
    pub fn create(dir: &Path, meta: &Value) -> Result<Self> {
        if dir.join("run.json").exists() {
            return Err(Error::RunFolderExists { path: dir.into() });
        }
        std::fs::create_dir_all(dir.join("screenshots")).map_err(|e| Error::io(dir, e))?;
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
        Self::open(dir, None)
    }

    /// A recorder appending to the JSON-lines files of `dir` (created when missing).
    fn open(dir: &Path, prior: Option<Prior>) -> Result<Self> {
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
        })
    }

    /// Reopens the run folder `dir` to continue its run: reads what it holds (see
    /// [`Prior`]; [`explore`](crate::explore) takes it with [`take_prior`](Self::take_prior)),
    /// cuts a line torn by a kill off the end of each JSON-lines file, drops signals first
    /// seen in a step whose line was never written, and removes `summary.json`, which the
    /// continued run writes again when it ends.
    pub fn resume(dir: &Path) -> Result<Self> {
        let run_path = dir.join("run.json");
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
        for name in ["steps.jsonl", "signals.jsonl", "events.jsonl"] {
            cut_torn_line(&dir.join(name))?;
        }
        let steps = read_steps(dir)?;
        let last = steps.last().map_or(0, |s| s.step);
        let mut signals: Vec<SignalRecord> = read_lines(&dir.join("signals.jsonl"))?;
        if signals.iter().any(|s| s.first_step > last) {
            signals.retain(|s| s.first_step <= last);
            let mut text = Vec::new();
            for s in &signals {
                text.extend(serde_json::to_vec(s).expect("records serialise"));
                text.push(b'\n');
            }
            write_atomic(&dir.join("signals.jsonl"), &text)?;
        }
        let events = read_lines(&dir.join("events.jsonl"))?;
        let summary = dir.join("summary.json");
        if summary.exists() {
            std::fs::remove_file(&summary).map_err(|e| Error::io(&summary, e))?;
        }
        std::fs::create_dir_all(dir.join("screenshots")).map_err(|e| Error::io(dir, e))?;
        let prior = Prior {
            meta: run["meta"].clone(),
            steps,
            signals,
            events,
        };
        Self::open(dir, Some(prior))
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

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    f.write_all(bytes).map_err(|e| Error::io(&tmp, e))?;
    f.sync_all().map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// Reads `steps.jsonl` of a run folder. A last line without its newline (the tool was
/// killed while writing it) is skipped; any other malformed line is an error naming it.
pub fn read_steps(dir: &Path) -> Result<Vec<StepRecord>> {
    read_lines(&dir.join("steps.jsonl"))
}

/// Reads the JSON lines of `path` with [`read_steps`]'s rule for a torn last line.
fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
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
        out.push(rec);
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

    #[test]
    fn a_folder_holding_a_run_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        RunRecorder::create(dir.path(), &json!({})).unwrap();
        let err = RunRecorder::create(dir.path(), &json!({})).unwrap_err();
        assert!(matches!(err, Error::RunFolderExists { .. }));
    }
}
