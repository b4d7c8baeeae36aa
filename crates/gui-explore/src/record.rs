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
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the screenshot of a step (0 = the start screen) and returns its relative path.
    pub fn save_screenshot(&mut self, step: u64, shot: &Screenshot) -> Result<String> {
        let rel = format!("screenshots/step-{step:06}.png");
        let path = self.dir.join(&rel);
        let png = shot
            .to_png()
            .map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
        let mut f = File::create(&path).map_err(|e| Error::io(&path, e))?;
        f.write_all(&png).map_err(|e| Error::io(&path, e))?;
        if self.durable {
            f.sync_data().map_err(|e| Error::io(&path, e))?;
        }
        Ok(rel)
    }

    pub fn append_step(&mut self, record: &StepRecord) -> Result<()> {
        let path = self.dir.join("steps.jsonl");
        append_line(&mut self.steps, &path, record, self.durable)
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
        let path = self.dir.join("events.jsonl");
        let ev = json!({ "after_step": after_step, "event": what, "detail": detail });
        append_line(&mut self.events, &path, &ev, self.durable)
    }

    /// Writes `summary.json` atomically.
    pub fn finish(&mut self, summary: &impl Serialize) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(summary).expect("summary serialises");
        write_atomic(&self.dir.join("summary.json"), &bytes)
    }
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
    let path = dir.join("steps.jsonl");
    let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
    let mut reader = BufReader::new(file);
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = reader
            .read_line(&mut buf)
            .map_err(|e| Error::io(&path, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if !buf.ends_with('\n') {
            break;
        }
        let rec = serde_json::from_str(buf.trim_end()).map_err(|e| Error::BadRecord {
            path: path.clone(),
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
