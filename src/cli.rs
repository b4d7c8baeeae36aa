//! Command-line options every strategy binary shares: which app, which device, which
//! budget, where the run goes.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use gui_core::Size;
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, SimApp, Simulator, StaticServer};
use gui_explore::{ExploreConfig, FixedThrottle, RunRecorder, Summary};

/// The kinds of device a binary can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceKind {
    /// Headless Chromium over the DevTools protocol.
    Chromium,
    /// The in-process simulated app (no browser; for trying strategies quickly).
    Simulator,
}

/// Which app to test and on what.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// URL of the web app. Default: the bundled demo app, served on 127.0.0.1.
    #[arg(long, conflicts_with = "app_dir")]
    pub url: Option<String>,
    /// Serve this folder on 127.0.0.1 and test it (with --entry as the start page).
    #[arg(long, value_name = "DIR")]
    pub app_dir: Option<PathBuf>,
    /// Start page inside --app-dir.
    #[arg(long, default_value = "index.html", requires = "app_dir")]
    pub entry: String,
    /// Device to drive.
    #[arg(long, value_enum, default_value = "chromium")]
    pub device: DeviceKind,
    /// Viewport in CSS pixels, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size, default_value = "1280x800")]
    pub viewport: Size,
    /// Emulate a phone (412x915 unless --viewport says otherwise).
    #[arg(long)]
    pub mobile: bool,
}

/// Budget, seed and output of a run.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Stop after this many steps (default 100 when --minutes is not given).
    #[arg(long, allow_hyphen_values = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: Option<u64>,
    /// Stop after this many minutes.
    #[arg(long, allow_hyphen_values = true, value_parser = parse_minutes)]
    pub minutes: Option<f64>,
    /// Seed of every random choice: same seed and app, same run.
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub seed: u64,
    /// Milliseconds to wait after each event before looking at the screen.
    #[arg(
        long,
        default_value_t = 200,
        value_name = "MS",
        allow_hyphen_values = true
    )]
    pub throttle: u64,
    /// Run folder (default: runs/<strategy>-seed<SEED>-<unix time>).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn parse_size(s: &str) -> Result<Size, String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{s}` is not WIDTHxHEIGHT, e.g. 1280x800"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{s}` is not WIDTHxHEIGHT, e.g. 1280x800"))
    };
    let (w, h) = (parse(w)?, parse(h)?);
    if !(64..=8192).contains(&w) || !(64..=8192).contains(&h) {
        return Err(format!(
            "viewport {w}x{h} out of range: each side must be 64..=8192"
        ));
    }
    Ok(Size::new(w, h))
}

fn parse_minutes(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 => Ok(m),
        _ => Err(format!("`{s}` is not a positive number of minutes")),
    }
}

/// A started device plus what keeps its app served.
pub struct Target {
    pub device: Box<dyn Device>,
    pub url: String,
    _server: Option<StaticServer>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("device", &self.device.describe())
            .field("url", &self.url)
            .finish()
    }
}

impl TargetArgs {
    /// Serves the app if needed and starts the device on it.
    pub fn start(&self) -> Result<Target> {
        if self.device == DeviceKind::Simulator {
            let sim = Simulator::new(SimApp::demo());
            return Ok(Target {
                url: sim.describe(),
                device: Box::new(sim),
                _server: None,
            });
        }
        let (url, server) = match (&self.url, &self.app_dir) {
            (Some(u), _) => {
                if !(u.starts_with("http://")
                    || u.starts_with("https://")
                    || u.starts_with("file://"))
                {
                    bail!("--url {u}: expected an http://, https:// or file:// URL");
                }
                (u.clone(), None)
            }
            (None, Some(dir)) => {
                let s = StaticServer::folder(dir, &self.entry)
                    .with_context(|| format!("--app-dir {}", dir.display()))?;
                (s.url(), Some(s))
            }
            (None, None) => {
                let s = StaticServer::demo().context("serving the bundled demo app")?;
                (s.url(), Some(s))
            }
        };
        let mut config = if self.mobile {
            ChromiumConfig::mobile()
        } else {
            ChromiumConfig::default()
        };
        if !self.mobile || self.viewport != Size::new(1280, 800) {
            config.viewport = self.viewport;
        }
        let device = ChromiumDevice::launch(&url, config)
            .with_context(|| format!("starting Chromium on {url}"))?;
        Ok(Target {
            device: Box::new(device),
            url,
            _server: server,
        })
    }
}

impl RunArgs {
    pub fn explore_config(&self) -> ExploreConfig {
        let duration = self.minutes.map(|m| Duration::from_secs_f64(m * 60.0));
        let steps = match (self.steps, duration) {
            (None, None) => Some(100),
            (s, _) => s,
        };
        ExploreConfig {
            steps,
            duration,
            ..ExploreConfig::default()
        }
    }

    pub fn throttle(&self) -> FixedThrottle {
        FixedThrottle::ms(self.throttle)
    }

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
            "throttle_ms": self.throttle,
        });
        if let (Some(m), serde_json::Value::Object(extra)) = (meta.as_object_mut(), extra) {
            m.extend(extra);
        }
        meta
    }

    /// Creates the run folder.
    pub fn recorder(&self, strategy: &str, meta: &serde_json::Value) -> Result<RunRecorder> {
        let dir = self.out.clone().unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            PathBuf::from("runs").join(format!("{strategy}-seed{}-{t}", self.seed))
        });
        RunRecorder::create(&dir, meta)
            .with_context(|| format!("creating run folder {}", dir.display()))
    }
}

/// Writes `report.html` (see gui-report) into a finished run folder and returns its path.
pub fn write_report(run_dir: &std::path::Path) -> Result<PathBuf> {
    let runs = [gui_report::RunFolder::load(run_dir)?];
    let html = gui_report::render_html(&runs, &gui_report::HtmlOptions::default())?;
    let path = run_dir.join("report.html");
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The closing line of a run: `NAME: steps, time, coverage, unique signals, median step`,
/// then `extra` (", 5 pages" and the like).
pub fn summary_line(strategy: &str, summary: &Summary, extra: &str) -> String {
    let cov = summary.coverage.map_or_else(
        || "n/a".to_owned(),
        |c| {
            format!(
                "{}/{} functions, {:.1}% of bytes",
                c.functions_covered,
                c.functions_total,
                100.0 * c.byte_ratio()
            )
        },
    );
    format!(
        "{strategy}: {} steps in {:.1} s, coverage {cov}, {} unique signals, median step {:.1} ms{extra}",
        summary.steps,
        summary.duration_ms as f64 / 1e3,
        summary.unique_signals,
        summary.median_round_trip_ms
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewport_values_are_checked() {
        assert_eq!(parse_size("412x915").unwrap(), Size::new(412, 915));
        assert!(parse_size("0x10").unwrap_err().contains("out of range"));
        assert!(parse_size("wide").unwrap_err().contains("WIDTHxHEIGHT"));
        assert!(parse_minutes("-1").is_err());
    }
}
