//! Run folders from the command line: what `run.json` records, a new folder or the one of
//! `--resume` (checked and locked), and the default name of a new one.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use gui_explore::{ExploreConfig, RunRecorder};

use super::{RunArgs, Target, recorded_command_line};

impl RunArgs {
    /// The settings every run folder records (`run.json`), plus the strategy's own
    /// (`extra`, a JSON object).
    pub fn meta(
        &self,
        strategy: &str,
        target: &Target,
        explore: &ExploreConfig,
        extra: serde_json::Value,
    ) -> serde_json::Value {
        let mut meta = serde_json::json!({
            "strategy": strategy,
            "seed": self.seed,
            "url": target.url,
            "device": target.device.describe(),
            "explore": explore,
            "throttle": self.throttle.to_string(),
            "workers": self.workers,
            "argv": recorded_command_line(),
        });
        if let (Some(m), serde_json::Value::Object(extra)) = (meta.as_object_mut(), extra) {
            m.extend(extra);
        }
        meta
    }

    /// The run folder of `strategy` opened ([`RunArgs::recorder`]) with the settings of
    /// [`RunArgs::meta`], `extra` among them.
    pub fn open_run(
        &self,
        strategy: &str,
        target: &Target,
        explore: &ExploreConfig,
        extra: serde_json::Value,
    ) -> Result<RunRecorder> {
        self.recorder(strategy, &self.meta(strategy, target, explore, extra))
    }

    /// Creates the run folder, or reopens the one of `--resume` (which must hold a run of
    /// the same strategy). Either way the folder is locked while the recorder lives; a
    /// folder refused for `--resume` is left as it was.
    pub fn recorder(&self, strategy: &str, meta: &serde_json::Value) -> Result<RunRecorder> {
        if let Some(dir) = &self.resume {
            // Everything is checked on the folder as read, before resuming changes it.
            return reopen_run(dir, strategy)?
                .resume()
                .with_context(|| format!("--resume {}", dir.display()));
        }
        let dir = self
            .out
            .clone()
            .unwrap_or_else(|| default_run_dir(&format!("{strategy}-seed{}", self.seed)));
        RunRecorder::create(&dir, meta)
            .with_context(|| format!("creating run folder {}", dir.display()))
    }
}

/// A new run's folder when `--out` is not given: `runs/<name>-<unix time>`.
pub fn default_run_dir(name: &str) -> PathBuf {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from("runs").join(format!("{name}-{t}"))
}

/// Locks and reads the run folder `dir` given to `--resume`, which must hold a run of
/// `strategy`; a folder refused is left as it was.
pub fn reopen_run(dir: &Path, strategy: &str) -> Result<gui_explore::ReopenedRun> {
    let reopened =
        RunRecorder::reopen(dir).with_context(|| format!("--resume {}", dir.display()))?;
    let theirs = reopened.prior().meta["strategy"]
        .as_str()
        .unwrap_or("unknown");
    if theirs != strategy {
        bail!(
            "--resume {}: the folder holds a {theirs} run; continue it with `{theirs} --resume`",
            dir.display()
        );
    }
    Ok(reopened)
}

/// Refuses a new run's folder `dir` that already holds a run.
pub fn refuse_existing_run(dir: &Path) -> Result<()> {
    if dir.join("run.json").exists() {
        bail!(
            "{} already holds a run; choose another --out",
            dir.display()
        );
    }
    Ok(())
}
