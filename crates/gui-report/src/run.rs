use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use gui_core::CoverageSnapshot;
use gui_explore::{EventRecord, Minimised, SignalRecord, StepRecord, Summary};
use serde_json::Value;

use crate::{Error, Result};

/// The folder layout this crate reads: the name and newest version `RunRecorder` writes
/// into `run.json` (gui-explore keeps its constants private, so they are repeated here).
const FORMAT: &str = "gui-testing-run";
const FORMAT_VERSION: u64 = 1;

/// Everything one run folder holds that a report needs, read once.
#[derive(Debug, Clone)]
pub struct RunFolder {
    pub dir: PathBuf,
    /// `run.json` as written: format, tool version, start time and the caller's `meta`.
    pub run: Value,
    pub steps: Vec<StepRecord>,
    /// One record per distinct signal key, in the order they were first seen.
    pub signals: Vec<SignalRecord>,
    /// `events.jsonl`, in the order written: what the device handled for the app (named
    /// by `gui_core::DeviceEventKind`, see [`device_events`](Self::device_events); none of
    /// them a bug) and the loop's own events (a device lost and restarted, a resumed run,
    /// see [`loop_events`](Self::loop_events)). Empty for folders of older tools.
    pub events: Vec<EventRecord>,
    /// `None` when the tool was killed before the run ended.
    pub summary: Option<Summary>,
    /// `agent.json`, written by strategies that learn (`pirltest`): `{"stats": {...}, ...}`.
    pub agent: Option<Value>,
    /// `minimised.json`, written by `replay --minimise`: each reproduced bug's steps cut
    /// down to those it needs.
    pub minimised: Vec<Minimised>,
    /// `greybox.json`, written by the `greybox` binary: its configuration, test cases,
    /// broken ones, generation and execution time, and the test case behind each bug.
    pub greybox: Option<Value>,
    /// `monkeypp.json`, written by the `monkeypp` binary: the model's size, the plan's
    /// interactions against the breadth-first bound, and interface coverage.
    pub monkeypp: Option<Value>,
    /// `visiondroid.json`, written by the `visiondroid` binary: the tested functions, the
    /// sub-sequences the history was cut into, the suspected non-crash bugs with the
    /// model's reasoning, and the model calls' accounting.
    pub visiondroid: Option<Value>,
    /// Problems that left part of the folder out of the report, each naming its file: an
    /// optional file (`agent.json`, `minimised.json`, `greybox.json`, `monkeypp.json`,
    /// `visiondroid.json`) that does not parse is skipped rather than failing the report,
    /// and so is a line of `events.jsonl` that does not parse or was torn by a kill.
    pub warnings: Vec<String>,
}

impl RunFolder {
    /// Reads a run folder. A torn last line of `steps.jsonl` or `signals.jsonl` (the tool
    /// was killed while writing it) is skipped; an optional file a strategy adds that
    /// cannot be read, or a line of `events.jsonl` that cannot, is left out with a warning
    /// (see [`warnings`](Self::warnings)); every other problem is an error naming the
    /// file, and the line for JSON-lines files.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(Error::MissingFolder { path: dir.into() });
        }
        let run_path = dir.join("run.json");
        if !run_path.is_file() {
            return Err(Error::NotARunFolder { path: dir.into() });
        }
        let run: Value = read_json(&run_path)?;
        let format = run["format"].as_str().unwrap_or_default();
        let version = run["format_version"].as_u64().unwrap_or(0);
        if format != FORMAT || !(1..=FORMAT_VERSION).contains(&version) {
            return Err(Error::UnsupportedFormat {
                path: run_path,
                format: format.to_owned(),
                version,
            });
        }
        let steps = gui_explore::read_steps(dir).map_err(|e| match e {
            gui_explore::Error::Io { path, source } => Error::Io { path, source },
            gui_explore::Error::BadRecord {
                path,
                line,
                message,
            } => Error::BadJson {
                path,
                line,
                message,
            },
            other => Error::io(
                dir.join("steps.jsonl"),
                std::io::Error::other(other.to_string()),
            ),
        })?;
        let signals = read_json_lines(&dir.join("signals.jsonl"))?;
        let summary = read_optional_json(&dir.join("summary.json"))?;
        // What strategies add beside the run: the report is still worth having without
        // one of them, e.g. a file cut short by a full disk or written by an older tool.
        let mut warnings = Vec::new();
        let events = read_events(&dir.join("events.jsonl"), &mut warnings);
        let mut extra = |name: &str| -> Option<Value> {
            let path = dir.join(name);
            read_optional_json(&path).unwrap_or_else(|e| {
                warnings.push(format!("{e}; the report leaves {name} out"));
                None
            })
        };
        let agent = extra("agent.json");
        let minimised = extra("minimised.json");
        let greybox = extra("greybox.json");
        let monkeypp = extra("monkeypp.json");
        let visiondroid = extra("visiondroid.json");
        let minimised = match minimised.map(serde_json::from_value::<Vec<Minimised>>) {
            None => Vec::new(),
            Some(Ok(m)) => m,
            Some(Err(e)) => {
                let path = dir.join("minimised.json");
                warnings.push(format!(
                    "{}: {e}; the report leaves minimised.json out",
                    path.display()
                ));
                Vec::new()
            }
        };
        Ok(Self {
            dir: dir.into(),
            run,
            steps,
            signals,
            events,
            summary,
            agent,
            minimised,
            greybox,
            monkeypp,
            visiondroid,
            warnings,
        })
    }

    /// The strategy that ran: from `run.json`'s meta, else from the summary.
    pub fn strategy(&self) -> &str {
        self.run["meta"]["strategy"]
            .as_str()
            .or(self.summary.as_ref().map(|s| s.strategy.as_str()))
            .unwrap_or("unknown")
    }

    pub fn seed(&self) -> Option<u64> {
        self.run["meta"]["seed"].as_u64()
    }

    /// "strategy seed N", the run's name in reports.
    pub fn name(&self) -> String {
        match self.seed() {
            Some(seed) => format!("{} seed {seed}", self.strategy()),
            None => self.strategy().to_owned(),
        }
    }

    /// Whether the run ended normally (it wrote `summary.json`).
    pub fn is_complete(&self) -> bool {
        self.summary.is_some()
    }

    /// Finished steps: the summary's count, else the steps that made it to disk.
    pub fn step_count(&self) -> u64 {
        match &self.summary {
            Some(s) => s.steps,
            None => self.steps.last().map_or(0, |s| s.step),
        }
    }

    /// Wall time of the run, up to the last finished step if it was killed.
    pub fn duration_ms(&self) -> u64 {
        match &self.summary {
            Some(s) => s.duration_ms,
            None => self.steps.last().map_or(0, |s| s.elapsed_ms),
        }
    }

    /// Final cumulative coverage, if the device measures any.
    pub fn coverage(&self) -> Option<CoverageSnapshot> {
        self.summary
            .as_ref()
            .and_then(|s| s.coverage)
            .or_else(|| self.steps.iter().rev().find_map(|s| s.coverage))
    }

    /// Distinct pages the agent found (`agent.json`'s `stats.pages`), when there is one.
    pub fn pages(&self) -> Option<u64> {
        self.agent.as_ref()?["stats"]["pages"].as_u64()
    }

    /// How many times a signal occurred in the run; known only from `summary.json`.
    pub fn occurrences(&self, key: &str) -> Option<u64> {
        Some(*self.summary.as_ref()?.signal_counts.get(key)?)
    }

    /// Whether the run found a bug: any distinct signal at all.
    pub fn has_bugs(&self) -> bool {
        !self.signals.is_empty()
    }

    /// The screenshot shown after `step`, relative to the folder (step 0 is the start
    /// screen, which has no line in `steps.jsonl`).
    pub fn screenshot_after(&self, step: u64) -> Option<String> {
        if step == 0 {
            return Some("screenshots/step-000000.png".to_owned());
        }
        self.steps
            .iter()
            .find(|s| s.step == step)
            .map(|s| s.screenshot.clone())
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::BadJson {
        path: path.into(),
        line: 0,
        message: e.to_string(),
    })
}

fn read_optional_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    if path.exists() {
        read_json(path).map(Some)
    } else {
        Ok(None)
    }
}

/// Reads a JSON-lines file with `read_steps`'s rule: a last line without its newline was
/// torn by a kill and is skipped.
fn read_json_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for_each_line(file, path, |line, text| {
        out.push(serde_json::from_str(text).map_err(|e| Error::BadJson {
            path: path.into(),
            line,
            message: e.to_string(),
        })?);
        Ok(())
    })?;
    Ok(out)
}

/// Reads `events.jsonl`. The events only add to a report, so unlike the steps and signals
/// nothing in this file fails it: a missing file has no events, and a file that cannot
/// be read, lines that do not parse and a last line torn by a kill are left out with a
/// warning naming the file and line.
fn read_events(path: &Path, warnings: &mut Vec<String>) -> Vec<EventRecord> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            warnings.push(format!(
                "{}; the report leaves events.jsonl out",
                Error::io(path, e)
            ));
            return Vec::new();
        }
    };
    let mut events = Vec::new();
    // The first line that does not parse, and how many do not.
    let mut bad: Option<(usize, String)> = None;
    let mut bad_lines = 0;
    let read = for_each_line(file, path, |line, text| {
        match serde_json::from_str(text) {
            Ok(e) => events.push(e),
            Err(e) => {
                bad_lines += 1;
                bad.get_or_insert((line, e.to_string()));
            }
        }
        Ok(())
    });
    match read {
        Ok(None) => {}
        Ok(Some(line)) => warnings.push(format!(
            "{}:{line}: the last line was cut short (the tool was killed while writing it); \
             the report leaves that event out",
            path.display()
        )),
        Err(e) => warnings.push(format!(
            "{e}; the report leaves the rest of events.jsonl out"
        )),
    }
    if let Some((line, message)) = bad {
        let more = match bad_lines {
            1 => String::new(),
            n => format!(" (and {} more lines)", n - 1),
        };
        warnings.push(format!(
            "{}:{line}: {message}{more}; the report leaves {} out",
            path.display(),
            if bad_lines == 1 {
                "that event"
            } else {
                "those events"
            }
        ));
    }
    events
}

/// Calls `each` with the number (from 1) and text of every complete, non-blank line of
/// `file`, and returns the number of a last line without its newline: the writers put a
/// line and its newline in one write, so such a line was torn by a kill.
fn for_each_line(
    file: File,
    path: &Path,
    mut each: impl FnMut(usize, &str) -> Result<()>,
) -> Result<Option<usize>> {
    let mut reader = BufReader::new(file);
    let mut buf = String::new();
    let mut line = 0;
    loop {
        buf.clear();
        if reader.read_line(&mut buf).map_err(|e| Error::io(path, e))? == 0 {
            return Ok(None);
        }
        line += 1;
        if !buf.ends_with('\n') {
            return Ok((!buf.trim().is_empty()).then_some(line));
        }
        if !buf.trim().is_empty() {
            each(line, &buf)?;
        }
    }
}
