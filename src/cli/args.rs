//! The options the binaries share, as clap argument groups: [`CommonArgs`] (config file,
//! logging), [`TargetArgs`] (which app on which device) and [`RunArgs`] (budget, seed,
//! throttle, run folder, workers), with the parsers of their values.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{ArgAction, Args, ValueEnum};
use gui_core::Size;
use gui_driver::DialogPolicy;
use gui_explore::{ExploreConfig, ThrottleSpec};

/// Options of every binary: a file of defaults and how much to log.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// TOML file of defaults. Its keys are this command's long flags without the dashes
    /// (`steps = 300`, `throttle = "adat"`, `mobile = true`, lists for repeated flags);
    /// flags given on the command line win over it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Log to stderr: -v what the run is doing (steps, restarts, training), -vv details of
    /// each step, -vvv everything. Hides the progress bar.
    #[arg(short, long, action = ArgAction::Count)]
    pub verbose: u8,
}

impl CommonArgs {
    /// Starts logging at the level `-v` asks for (warnings only without it).
    pub fn init_logging(&self) {
        let level = match self.verbose {
            0 => tracing::Level::WARN,
            1 => tracing::Level::INFO,
            2 => tracing::Level::DEBUG,
            _ => tracing::Level::TRACE,
        };
        // A second call (tests) keeps the first subscriber.
        let _ = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_max_level(level)
            .with_target(self.verbose >= 2)
            .try_init();
    }
}

/// The kinds of device a binary can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceKind {
    /// Headless Chromium over the DevTools protocol.
    Chromium,
    /// The in-process simulated app (no browser; for trying strategies quickly).
    Simulator,
    /// A desktop application under its own Xvfb (`--app-command`; `--viewport` is the
    /// screen size), driven through X11 like a person would.
    Desktop,
    /// An Android device or emulator over adb (`--package`, optional `--serial`,
    /// `--activity`).
    Android,
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
    /// With `--device desktop`: the program to start and its arguments, split at spaces
    /// (e.g. `xcalc`, `galculator`).
    #[arg(long, value_name = "COMMAND")]
    pub app_command: Option<String>,
    /// With `--device android`: the package of the app to test (e.g. `com.example.notes`).
    #[arg(long, value_name = "PACKAGE")]
    pub package: Option<String>,
    /// With `--device android`: the activity to launch (`.MainActivity` or a full class
    /// name). Default: the package's launcher activity.
    #[arg(long, value_name = "ACTIVITY")]
    pub activity: Option<String>,
    /// With `--device android`: the device's serial (`adb devices`). Default: the only
    /// device attached.
    #[arg(long, value_name = "SERIAL")]
    pub serial: Option<String>,
    /// With `--device android`: the adb program. Default: $ANDROID_HOME/platform-tools/adb,
    /// else `adb` on PATH.
    #[arg(long, value_name = "PATH")]
    pub adb: Option<PathBuf>,
    /// With `--device android`: a runtime permission the app declares, granted and
    /// revoked by the access actions (repeatable).
    #[arg(long = "permission", value_name = "PERMISSION")]
    pub permissions: Vec<String>,
    /// Drive the web app in a browser behind this W3C WebDriver endpoint instead of our own
    /// Chromium: a local chromedriver (`http://127.0.0.1:9515`) or a grid
    /// (`http://host:4444/wd/hub`). The browser must be able to reach the app's URL.
    #[arg(
        long,
        value_name = "URL",
        conflicts_with_all = ["mobile", "app_command", "package", "activity", "serial", "adb", "permissions"]
    )]
    pub webdriver: Option<String>,
    /// How web devices answer native dialogs (`alert`, `confirm`, `prompt`,
    /// `beforeunload`): `accept` (OK, and a prompt gets a word) or `dismiss` (Cancel).
    /// Each is answered the moment it opens and recorded as a `dialog` event.
    #[arg(long, value_name = "POLICY", default_value = "accept")]
    pub dialogs: DialogPolicy,
    /// An origin (`https://cdn.example.com`) that counts as the app besides the start
    /// URL's: its pages are explored rather than left for the app again (repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// Seconds a web page may leave a call unanswered before it is taken for hung (a
    /// `hang` crash signal, then a restart). Default: 10 for Chromium, 30 through
    /// --webdriver (a grid adds its own delays).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub hang_after: Option<f64>,
    /// Cap each page's JavaScript heap at this many MiB (Chromium), so that a page that
    /// leaks memory crashes its renderer soon rather than after filling the machine.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u32).range(16..))]
    pub js_heap_mb: Option<u32>,
    /// After the web app's page has loaded, wait this long before the first step: for
    /// apps that draw themselves seconds after the load event (a spreadsheet behind a
    /// "Loading…" spinner). Default 0.
    #[arg(long, value_name = "SECONDS", value_parser = settle_seconds, allow_hyphen_values = true)]
    pub settle: Option<f64>,
}

fn settle_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=600.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds from 0 to 600")),
    }
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
    /// After each event: MS or fixed:MS (a fixed wait), consecutive[:CAP_MS] (until two
    /// screenshots match), adat[:CAP_MS] (until the rendering-state classifier says the
    /// screen is fully rendered); caps default to 1000 ms.
    #[arg(
        long,
        default_value = "200",
        value_name = "POLICY",
        allow_hyphen_values = true
    )]
    pub throttle: ThrottleSpec,
    /// Run folder (default: runs/<strategy>-seed<SEED>-<unix time>).
    #[arg(long, conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Explore with N devices at once (browsers, X servers, simulators), into one run
    /// folder. Monkey workers split the budget; PIRLTest workers share one page store,
    /// memory and Q-network. With --webdriver, each worker opens its own session on the
    /// endpoint (a Selenium Grid spreads them over its nodes).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: u32,
    /// Continue the run in this folder (killed, failed or finished) with its own settings,
    /// its counters and what its strategy had learnt; flags given with it win (e.g. a
    /// larger --steps).
    #[arg(long, value_name = "RUN_DIR")]
    pub resume: Option<PathBuf>,
}

/// `WIDTHxHEIGHT` with each side in 64..=8192 (`--viewport`, `greybox --screen`).
pub fn parse_size(s: &str) -> Result<Size, String> {
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
            "size {w}x{h} out of range: each side must be 64..=8192"
        ));
    }
    Ok(Size::new(w, h))
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.5..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds in 0.5..=3600")),
    }
}

/// A positive number of minutes (`--minutes` and the tools' phase budgets).
pub fn parse_minutes(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 => Ok(m),
        _ => Err(format!("`{s}` is not a positive number of minutes")),
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

    /// Refuses `--workers` and `--resume` for a tool that cannot honour them, saying why.
    pub fn single_run_only(&self, tool: &str, why: &str) -> Result<()> {
        if self.workers > 1 {
            bail!("{tool} runs one device: --workers is not supported ({why})");
        }
        if self.resume.is_some() {
            bail!("{tool} cannot continue a run: --resume is not supported ({why})");
        }
        Ok(())
    }

    /// Refuses `--workers` with a device that cannot have one per worker. Called before
    /// any device starts or any run folder is touched.
    pub fn check_workers(&self, target: &TargetArgs) -> Result<()> {
        if self.workers > 1 && target.device == DeviceKind::Android {
            bail!(
                "--workers {} needs a device per worker; --device android drives the one device of --serial",
                self.workers
            );
        }
        Ok(())
    }
}
