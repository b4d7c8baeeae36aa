//! Command-line options every strategy binary shares: which app, which device, which
//! budget, where the run goes; `--config` files, `-v` logging and progress bars.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::error::ErrorKind;
use clap::{ArgAction, Args, Parser, ValueEnum};
use gui_core::{Action, Size, Transition};
use gui_driver::{
    AndroidConfig, AndroidDevice, ChromiumConfig, ChromiumDevice, DesktopConfig, DesktopDevice,
    Device, DialogPolicy, SimApp, Simulator, StaticServer, WebDriverConfig, WebDriverDevice,
};
use gui_explore::{
    ExploreConfig, Insight, Observation, RenderJudge, RunRecorder, Strategy, Summary, Throttle,
    ThrottleSpec, Worker, WorkerParts,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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

/// Parses the process's command line as [`parse_from`] does; on an error prints it and
/// exits with code 2.
pub fn parse<C: Parser>() -> C {
    parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// Parses `args` (program name first) into `C`, reading `--config FILE` first: the file's
/// keys become flags placed before the command line's own, and a flag given twice takes
/// its last value, so the command line wins.
pub fn parse_from<C: Parser>(args: impl IntoIterator<Item = OsString>) -> Result<C, clap::Error> {
    let args: Vec<OsString> = args.into_iter().collect();
    let mut command = C::command().args_override_self(true);
    let mut from_config = Vec::new();
    if let Some(path) = config_path(&args) {
        let flags: BTreeSet<String> = command
            .get_arguments()
            .filter(|a| a.get_id() != "config")
            .filter_map(|a| a.get_long().map(str::to_owned))
            .collect();
        from_config = config_flags(&path, &flags).map_err(|message| {
            command.error(
                ErrorKind::InvalidValue,
                format!("--config {}: {message}", path.display()),
            )
        })?;
    }
    let mut full = Vec::with_capacity(args.len());
    full.extend(args.first().cloned());
    if let Some(dir) = flag_value(&args, "resume") {
        // The run's own settings first; anything given now (-v, a larger --steps) wins.
        let given: Vec<OsString> = from_config
            .iter()
            .chain(args.iter().skip(1))
            .cloned()
            .collect();
        let stored = recorded_argv(&dir)
            .and_then(|stored| refuse_launchers_from_folder(&stored, &given).map(|()| stored))
            .map_err(|message| {
                command.error(
                    ErrorKind::InvalidValue,
                    format!("--resume {}: {message}", dir.display()),
                )
            })?;
        full.extend(stored.into_iter().map(OsString::from));
    }
    full.extend(from_config);
    full.extend(args.into_iter().skip(1));
    let _ = ARGV.set(replayable(&full[1.min(full.len())..]));
    let matches = command.try_get_matches_from_mut(full)?;
    C::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// The command line of this process as [`parse_from`] saw it, with `--config` files
/// expanded and without `--config`, `--resume` and `--out`, and with the user and
/// password of URLs hidden: what `run.json` keeps so that `--resume` can start the same
/// run again (give a `--webdriver` URL with credentials again with `--resume`).
static ARGV: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// The command line [`parse_from`] saw (see [`ARGV`]), for tools that write `run.json`
/// themselves and still want `--resume` to work.
pub fn recorded_command_line() -> Option<&'static [String]> {
    ARGV.get().map(Vec::as_slice)
}

fn replayable(args: &[OsString]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        if ["--config", "--resume", "--out"].contains(&a.as_str()) {
            it.next();
        } else if !["--config=", "--resume=", "--out="]
            .iter()
            .any(|p| a.starts_with(p))
        {
            out.push(gui_driver::redact_userinfo(&a));
        }
    }
    out
}

/// The command line recorded in the `run.json` of the run folder `dir`.
fn recorded_argv(dir: &Path) -> Result<Vec<String>, String> {
    let path = dir.join("run.json");
    let text = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let run: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let argv = run["meta"]["argv"].as_array().ok_or_else(|| {
        format!(
            "{} records no command line (it was written by a tool that could not resume runs)",
            path.display()
        )
    })?;
    argv.iter()
        .map(|a| {
            a.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{}: meta.argv holds a non-string", path.display()))
        })
        .collect()
}

/// Flags whose value names a program the tool starts, on this machine or on the attached
/// device: the desktop app (`--app-command`), adb (`--adb`), the Android app and activity
/// it launches (`--package`, `--activity`), and the Java app that `greybox` compiles and
/// runs (`--java-classpath`, `--java-sources`, `--java-main`). Chromium and chromedriver
/// are found through the environment (`GUI_CHROMIUM`, `GUI_CHROMEDRIVER`), not flags.
const LAUNCHING_FLAGS: &[&str] = &[
    "app-command",
    "adb",
    "package",
    "activity",
    "java-classpath",
    "java-sources",
    "java-main",
];

/// Refuses a recorded command line (`stored`, read from a run folder for `--resume`) that
/// would start a program the user did not name again in `given` (the flags given now,
/// `--config` files expanded): anyone who can write a run folder could otherwise make
/// `--resume` run anything.
fn refuse_launchers_from_folder(stored: &[String], given: &[OsString]) -> Result<(), String> {
    let given: Vec<String> = given
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .take_while(|a| a != "--")
        .collect();
    for flag in LAUNCHING_FLAGS {
        let theirs = flag_values(stored, flag);
        let ours = flag_values(&given, flag);
        if let Some(value) = theirs.iter().find(|v| !ours.contains(v)) {
            return Err(format!(
                "the run's recorded command line starts a program with --{flag} {}, and a run \
                 folder's settings never start programs by themselves; to run it, give \
                 `--{flag} {}` again with --resume",
                shell_quote(value),
                shell_quote(value)
            ));
        }
    }
    Ok(())
}

/// Every value of `--NAME VALUE` and `--NAME=VALUE` in `args`.
fn flag_values(args: &[String], name: &str) -> Vec<String> {
    let flag = format!("--{name}");
    let with_value = format!("--{name}=");
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == flag {
            // A flag without its value still names the flag: never match it silently.
            out.push(it.next().cloned().unwrap_or_default());
        } else if let Some(v) = a.strip_prefix(&with_value) {
            out.push(v.to_owned());
        }
    }
    out
}

/// `value` as one shell word.
fn shell_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if plain {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

/// The value of the last `--config FILE` or `--config=FILE`, before any `--`.
fn config_path(args: &[OsString]) -> Option<PathBuf> {
    flag_value(args, "config")
}

/// The value of the last `--NAME VALUE` or `--NAME=VALUE`, before any `--`.
fn flag_value(args: &[OsString], name: &str) -> Option<PathBuf> {
    let flag = format!("--{name}");
    let with_value = format!("--{name}=");
    let mut found = None;
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let a = a.to_string_lossy();
        if a == "--" {
            break;
        } else if a == flag {
            found = it.next().map(PathBuf::from);
        } else if let Some(v) = a.strip_prefix(&with_value) {
            found = Some(PathBuf::from(v));
        }
    }
    found
}

/// The flags a TOML file stands for, checked against the command's long flags.
fn config_flags(path: &Path, known: &BTreeSet<String>) -> Result<Vec<OsString>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let mut out = Vec::new();
    for (key, value) in table {
        let flag = key.replace('_', "-");
        if !known.contains(&flag) {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            return Err(format!(
                "unknown key `{key}`; the keys are the long flags: {}",
                known.join(", ")
            ));
        }
        let values = match value {
            toml::Value::Array(items) => items,
            one => vec![one],
        };
        for v in values {
            let text = match v {
                // A switch: on when true, left at its default when false.
                toml::Value::Boolean(true) => {
                    out.push(format!("--{flag}").into());
                    continue;
                }
                toml::Value::Boolean(false) => continue,
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                other => {
                    return Err(format!(
                        "`{key}`: a {} cannot be a flag's value",
                        other.type_str()
                    ));
                }
            };
            out.push(format!("--{flag}={text}").into());
        }
    }
    Ok(out)
}

/// A strategy behind a progress bar on stderr: steps done, pages seen (for strategies
/// that report pages) and bugs found. The bar only draws on a terminal.
pub struct WithProgress<'a> {
    inner: &'a mut dyn Strategy,
    bar: ProgressBar,
    pages: BTreeSet<u64>,
    bugs: usize,
}

impl std::fmt::Debug for WithProgress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithProgress")
            .field("strategy", &self.inner.name())
            .field("pages", &self.pages.len())
            .field("bugs", &self.bugs)
            .finish()
    }
}

impl<'a> WithProgress<'a> {
    /// A bar for `steps` steps (a spinner when the budget is time), hidden when `hidden`
    /// (logging to stderr with `-v`).
    pub fn new(inner: &'a mut dyn Strategy, steps: Option<u64>, hidden: bool) -> Self {
        let target = if hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(steps, target);
        let template = if steps.is_some() {
            "{elapsed_precise} [{wide_bar}] {pos}/{len} steps, {msg} (eta {eta})"
        } else {
            "{elapsed_precise} {spinner} {pos} steps, {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self {
            inner,
            bar,
            pages: BTreeSet::new(),
            bugs: 0,
        }
    }

    /// Clears the bar (before the closing lines are printed).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Strategy for WithProgress<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn choose(&mut self, observation: &Observation<'_>) -> Action {
        self.inner.choose(observation)
    }

    fn learn(&mut self, transition: &Transition) {
        self.inner.learn(transition);
        if let Some(page) = self.inner.insight().and_then(|i| i.page) {
            self.pages.insert(page);
        }
        self.bugs += transition.new_signals.len();
        let pages = if self.pages.is_empty() {
            String::new()
        } else {
            format!("{} pages, ", self.pages.len())
        };
        self.bar.set_message(format!("{pages}{} bugs", self.bugs));
        self.bar.inc(1);
    }

    fn on_restart(&mut self) {
        self.inner.on_restart();
    }

    fn insight(&self) -> Option<Insight> {
        self.inner.insight()
    }

    fn wants_ui(&self) -> bool {
        self.inner.wants_ui()
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

/// A started device plus what keeps its app served.
pub struct Target {
    pub device: Box<dyn Device + Send>,
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
        if let Some(endpoint) = &self.webdriver {
            return self.start_webdriver(endpoint);
        }
        if self.device == DeviceKind::Simulator {
            let sim = Simulator::new(SimApp::demo());
            return Ok(Target {
                url: sim.describe(),
                device: Box::new(sim),
                _server: None,
            });
        }
        let android_only = self.package.is_some()
            || self.activity.is_some()
            || self.serial.is_some()
            || self.adb.is_some()
            || !self.permissions.is_empty();
        if self.device == DeviceKind::Android {
            let Some(package) = self.package.clone() else {
                bail!(
                    "--device android needs --package, the app to test (e.g. com.example.notes); \
                     `adb shell pm list packages -3` lists the installed ones"
                );
            };
            if self.url.is_some() || self.app_dir.is_some() || self.mobile {
                bail!(
                    "--device android tests an installed app: --url, --app-dir and --mobile are for web apps"
                );
            }
            let config = AndroidConfig {
                adb: self.adb.clone(),
                serial: self.serial.clone(),
                activity: self.activity.clone(),
                permissions: self.permissions.clone(),
                ..AndroidConfig::new(package.clone())
            };
            let device = AndroidDevice::connect(config)
                .with_context(|| format!("starting {package} on Android over adb"))?;
            return Ok(Target {
                url: format!("android: {package}"),
                device: Box::new(device),
                _server: None,
            });
        }
        if android_only {
            bail!("--package, --activity, --serial, --adb and --permission need --device android");
        }
        if self.device == DeviceKind::Desktop {
            let command: Vec<&str> = self
                .app_command
                .as_deref()
                .unwrap_or_default()
                .split_whitespace()
                .collect();
            if command.is_empty() {
                bail!("--device desktop needs --app-command, the program to test (e.g. xcalc)");
            }
            if self.url.is_some() || self.app_dir.is_some() || self.mobile {
                bail!(
                    "--device desktop tests a program: --url, --app-dir and --mobile are for web apps"
                );
            }
            let mut config = DesktopConfig::new(command.iter().copied());
            config.xvfb.size = self.viewport;
            let device = DesktopDevice::launch(config)
                .with_context(|| format!("starting `{}` under Xvfb", command.join(" ")))?;
            return Ok(Target {
                url: format!("desktop: {}", command.join(" ")),
                device: Box::new(device),
                _server: None,
            });
        }
        if self.app_command.is_some() {
            bail!("--app-command needs --device desktop");
        }
        let (device, url, server) = self.start_chromium()?;
        Ok(Target {
            device: Box::new(device),
            url,
            _server: server,
        })
    }

    /// Serves the app if needed and starts Chromium on it (refusing any other `--device`
    /// and `--webdriver`): for tools that need the browser itself, such as the grey-box
    /// ripper, which reads the DOM.
    pub fn start_chromium(&self) -> Result<(ChromiumDevice, String, Option<StaticServer>)> {
        if self.webdriver.is_some() {
            bail!(
                "this tool needs Chromium's DevTools protocol itself; --webdriver is not supported here"
            );
        }
        if self.device != DeviceKind::Chromium {
            // The grey-box and Monkey++ tools read the page's scripts and DOM; other
            // platforms come in through their own options (--java-classpath, --model).
            bail!(
                "this tool analyses a web app in Chromium; --device {} is not supported here",
                format!("{:?}", self.device).to_lowercase()
            );
        }
        let (url, server) = self.serve_app()?;
        let mut config = if self.mobile {
            ChromiumConfig::mobile()
        } else {
            ChromiumConfig::default()
        };
        if !self.mobile || self.viewport != Size::new(1280, 800) {
            config.viewport = self.viewport;
        }
        config.dialogs = self.dialogs;
        config.allowed_origins.clone_from(&self.allow_origins);
        if let Some(s) = self.hang_after {
            config.call_timeout = Duration::from_secs_f64(s);
        }
        if let Some(mb) = self.js_heap_mb {
            config
                .extra_args
                .push(format!("--js-flags=--max-old-space-size={mb}"));
        }
        let device = ChromiumDevice::launch(&url, config)
            .with_context(|| format!("starting Chromium on {url}"))?;
        self.wait_settle();
        Ok((device, url, server))
    }

    /// Starts a browser session on `--webdriver` and opens the app in it.
    fn start_webdriver(&self, endpoint: &str) -> Result<Target> {
        if self.device != DeviceKind::Chromium {
            bail!(
                "--webdriver drives a web app in the endpoint's browser; it does not go with --device {:?}",
                self.device
            );
        }
        let (url, server) = self.serve_app()?;
        let mut config = WebDriverConfig {
            viewport: self.viewport,
            dialogs: self.dialogs,
            allowed_origins: self.allow_origins.clone(),
            ..WebDriverConfig::new(endpoint, url.clone())
        };
        if let Some(s) = self.hang_after {
            config.call_timeout = Duration::from_secs_f64(s);
        }
        if self.js_heap_mb.is_some() {
            bail!("--js-heap-mb sets a flag of our own Chromium; it does not go with --webdriver");
        }
        let device = WebDriverDevice::connect(config)
            .with_context(|| format!("starting a WebDriver session on {endpoint} for {url}"))?;
        self.wait_settle();
        Ok(Target {
            device: Box::new(device),
            url,
            _server: server,
        })
    }

    /// Waits `--settle` seconds, if given.
    fn wait_settle(&self) {
        if let Some(s) = self.settle.filter(|s| *s > 0.0) {
            std::thread::sleep(Duration::from_secs_f64(s));
        }
    }

    /// The app's URL: `--url`, `--app-dir` served on 127.0.0.1, or the bundled demo app.
    fn serve_app(&self) -> Result<(String, Option<StaticServer>)> {
        Ok(match (&self.url, &self.app_dir) {
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

    /// The `--throttle` policy; `adat` loads the shipped rendering-state classifier.
    pub fn throttle(&self) -> Result<Box<dyn Throttle>> {
        let judge = if self.throttle.needs_judge() {
            Some(adat_judge()?)
        } else {
            None
        };
        self.throttle
            .build(judge)
            .with_context(|| format!("--throttle {}", self.throttle))
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
            "throttle": self.throttle.to_string(),
            "workers": self.workers,
            "argv": ARGV.get(),
        });
        if let (Some(m), serde_json::Value::Object(extra)) = (meta.as_object_mut(), extra) {
            m.extend(extra);
        }
        meta
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

/// Explores `target` with `strategy` behind a progress bar (hidden when `verbose`): the
/// one-worker run of every strategy binary.
pub fn explore_one(
    target: &mut Target,
    strategy: &mut dyn Strategy,
    run: &RunArgs,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
    verbose: bool,
) -> Result<Summary> {
    let mut throttle = run.throttle()?;
    let mut progress = WithProgress::new(strategy, config.steps, verbose);
    let outcome = gui_explore::explore(
        target.device.as_mut(),
        &mut progress,
        &mut throttle,
        recorder,
        config,
    );
    progress.finish();
    Ok(outcome?)
}

/// The seed of worker `worker` of a parallel run: the run's own for worker 0 (so one
/// worker is the plain run), a well-mixed other one for the rest.
pub fn worker_seed(seed: u64, worker: u32) -> u64 {
    seed ^ u64::from(worker).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One worker of a parallel run: its device (and the server of its app) and strategy.
struct CliWorker {
    target: Target,
    strategy: Box<dyn Strategy>,
    throttle: Box<dyn Throttle>,
}

impl Worker for CliWorker {
    fn parts(&mut self) -> WorkerParts<'_> {
        WorkerParts {
            device: self.target.device.as_mut(),
            strategy: self.strategy.as_mut(),
            throttle: self.throttle.as_mut(),
        }
    }
}

/// Explores with `--workers` workers into `recorder`: worker 0 on `first`, each other one
/// on a device it starts on its own thread (a browser with its own server of the app, an
/// X server, a WebDriver session); `strategy(i)` makes worker `i`'s strategy there.
pub fn explore_workers(
    target: &TargetArgs,
    run: &RunArgs,
    first: Target,
    recorder: &mut RunRecorder,
    config: &ExploreConfig,
    strategy: &(dyn Fn(u32) -> Result<Box<dyn Strategy>> + Sync),
) -> Result<Summary> {
    run.check_workers(target)?;
    let first = std::sync::Mutex::new(Some(first));
    let build = |i: u32| -> gui_explore::Result<CliWorker> {
        let start = || -> Result<CliWorker> {
            let taken = if i == 0 {
                first.lock().map_or(None, |mut f| f.take())
            } else {
                None
            };
            let target = match taken {
                Some(t) => t,
                None => target.start()?,
            };
            Ok(CliWorker {
                target,
                strategy: strategy(i)?,
                throttle: run.throttle()?,
            })
        };
        start().map_err(|e| gui_explore::Error::WorkerStart {
            worker: i,
            message: format!("{e:#}"),
        })
    };
    Ok(gui_explore::explore_parallel(
        run.workers,
        build,
        recorder,
        config,
    )?)
}

/// AdaT's judge: the rendering-state classifier shipped with gui-vision.
pub fn adat_judge() -> Result<Box<dyn RenderJudge>> {
    let net = gui_vision::render::RenderNet::shipped()
        .context("loading AdaT's rendering-state classifier")?;
    Ok(Box::new(VisionJudge(net)))
}

/// A gui-vision rendering-state classifier as the loop's throttle judge.
struct VisionJudge<J>(J);

impl<J: gui_vision::render::RenderJudge> RenderJudge for VisionJudge<J> {
    fn fully_rendered(
        &mut self,
        shot: &gui_core::Screenshot,
    ) -> std::result::Result<bool, gui_explore::JudgeError> {
        Ok(self.0.fully_rendered(shot)?)
    }

    fn name(&self) -> String {
        self.0.name().to_owned()
    }
}

/// Writes `report.html` (see gui-report) into a finished run folder and returns its path;
/// files the report had to leave out are named on stderr.
pub fn write_report(run_dir: &std::path::Path) -> Result<PathBuf> {
    let runs = [gui_report::RunFolder::load(run_dir)?];
    for warning in &runs[0].warnings {
        eprintln!("report: warning: {warning}");
    }
    let html = gui_report::render_html(&runs, &gui_report::HtmlOptions::default())?;
    let path = run_dir.join("report.html");
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Coverage for summary lines: `F/T functions, B% of bytes`, or `n/a`.
pub fn coverage_text(coverage: Option<gui_core::CoverageSnapshot>) -> String {
    coverage.map_or_else(
        || "n/a".to_owned(),
        |c| {
            format!(
                "{}/{} functions, {:.1}% of bytes",
                c.functions_covered,
                c.functions_total,
                100.0 * c.byte_ratio()
            )
        },
    )
}

/// The closing line of a run: `NAME: steps, time, coverage, unique signals, median step`,
/// then `extra` (", 5 pages" and the like).
pub fn summary_line(strategy: &str, summary: &Summary, extra: &str) -> String {
    let cov = coverage_text(summary.coverage);
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

    #[derive(Debug, Parser)]
    struct Demo {
        #[command(flatten)]
        common: CommonArgs,
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        target: TargetArgs,
        #[arg(long, value_delimiter = ',')]
        only: Vec<u64>,
    }

    fn demo(config: &str, args: &[&str]) -> Result<Demo, clap::Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.toml");
        std::fs::write(&path, config).unwrap();
        let mut argv: Vec<OsString> = vec!["demo".into(), "--config".into(), path.into()];
        argv.extend(args.iter().map(OsString::from));
        parse_from(argv)
    }

    #[test]
    fn config_keys_are_flags_and_the_command_line_wins() {
        let d = demo(
            "steps = 300\nseed = 7\nmobile = true\nviewport = \"400x800\"\nonly = [1, 2]\n",
            &["--seed", "9"],
        )
        .unwrap();
        assert_eq!(d.run.steps, Some(300));
        assert_eq!(d.run.seed, 9, "the command line wins");
        assert!(d.target.mobile);
        assert_eq!(d.target.viewport, Size::new(400, 800));
        assert_eq!(d.only, vec![1, 2]);
        // Snake or kebab case, and a switch left off.
        let d = demo("app-dir = \"x\"\nmobile = false\n", &[]).unwrap();
        assert_eq!(d.target.app_dir, Some(PathBuf::from("x")));
        assert!(!d.target.mobile);
    }

    #[test]
    fn settle_takes_seconds_and_refuses_others_by_value() {
        assert_eq!(
            demo("", &["--settle", "2.5"]).unwrap().target.settle,
            Some(2.5)
        );
        assert_eq!(demo("", &[]).unwrap().target.settle, None);
        for bad in ["-1", "soon", "601"] {
            let e = demo("", &["--settle", bad]).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("--settle"), "{e}");
        }
    }

    #[test]
    fn bad_config_files_are_named_with_the_problem() {
        let e = demo("stepz = 3\n", &[]).unwrap_err().to_string();
        assert!(
            e.contains("run.toml") && e.contains("unknown key `stepz`"),
            "{e}"
        );
        assert!(e.contains("steps"), "the known keys are listed: {e}");
        let e = demo("steps = [\n", &[]).unwrap_err().to_string();
        assert!(e.contains("run.toml"), "{e}");
        let e = demo("steps = 0\n", &[]).unwrap_err().to_string();
        assert!(e.contains("--steps"), "{e}");
        let e = demo("[run]\nsteps = 1\n", &[]).unwrap_err().to_string();
        assert!(e.contains("unknown key `run`"), "{e}");
        let e = parse_from::<Demo>(["demo", "--config", "/no/such.toml"].map(OsString::from))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/no/such.toml"), "{e}");
    }

    /// A run folder of `strategy` recording the command line `argv`, finished, with a
    /// step line torn by a kill after it.
    fn recorded_run(strategy: &str, argv: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let meta = serde_json::json!({"strategy": strategy, "workers": 1, "argv": argv});
        let mut recorder = RunRecorder::create(&dir, &meta).unwrap();
        recorder.finish(&serde_json::json!({"steps": 0})).unwrap();
        drop(recorder);
        let mut steps = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join("steps.jsonl"))
            .unwrap();
        std::io::Write::write_all(&mut steps, br#"{"step":1,"ac"#).unwrap();
        (tmp, dir)
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

    fn resume(dir: &Path, args: &[&str]) -> Result<Demo, clap::Error> {
        let mut argv: Vec<OsString> = vec!["demo".into(), "--resume".into(), dir.into()];
        argv.extend(args.iter().map(OsString::from));
        parse_from(argv)
    }

    #[test]
    fn resume_with_another_strategy_leaves_the_folder_untouched() {
        let (_tmp, dir) = recorded_run("monkey", &["--device", "simulator"]);
        let before = snapshot(&dir);
        let d = resume(&dir, &[]).unwrap();
        let err = d
            .run
            .recorder("pirltest", &serde_json::json!({}))
            .unwrap_err();
        assert!(format!("{err:#}").contains("holds a monkey run"), "{err:#}");
        assert_eq!(
            snapshot(&dir),
            before,
            "summary.json, the torn line, no lock"
        );

        // The right strategy resumes it: the summary goes, to be written at the end.
        let recorder = d.run.recorder("monkey", &serde_json::json!({})).unwrap();
        assert!(!dir.join("summary.json").exists());
        drop(recorder);
    }

    #[test]
    fn a_run_folder_being_written_is_refused_naming_the_process() {
        let (_tmp, dir) = recorded_run("monkey", &["--device", "simulator"]);
        let d = resume(&dir, &[]).unwrap();
        let first = d.run.recorder("monkey", &serde_json::json!({})).unwrap();
        let err = format!(
            "{:#}",
            d.run
                .recorder("monkey", &serde_json::json!({}))
                .unwrap_err()
        );
        assert!(err.contains(&dir.display().to_string()), "{err}");
        assert!(
            err.contains(&format!("process {}", std::process::id())),
            "{err}"
        );
        drop(first);
        d.run.recorder("monkey", &serde_json::json!({})).unwrap();
    }

    #[test]
    fn resume_refuses_a_program_named_only_by_the_run_folder() {
        let (_tmp, dir) = recorded_run(
            "monkey",
            &[
                "--device",
                "desktop",
                "--app-command",
                "sh -c evil",
                "--seed",
                "3",
            ],
        );
        let e = resume(&dir, &[]).unwrap_err().to_string();
        assert!(e.contains("--app-command 'sh -c evil'"), "{e}");
        assert!(e.contains("again with --resume"), "{e}");
        let e = resume(&dir, &["--app-command", "xcalc"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--app-command"),
            "another value is no consent: {e}"
        );

        // Named again, with the same value: the run goes on with its settings.
        let d = resume(&dir, &["--app-command=sh -c evil"]).unwrap();
        assert_eq!(d.target.app_command.as_deref(), Some("sh -c evil"));
        assert_eq!(d.run.seed, 3);

        // Recorded from a config file (`--flag=value`), and the other launching flags.
        let (_tmp, dir) = recorded_run("monkey", &["--device=android", "--adb=/tmp/adb"]);
        let e = resume(&dir, &[]).unwrap_err().to_string();
        assert!(e.contains("--adb /tmp/adb"), "{e}");
        let (_tmp, dir) = recorded_run("monkey", &["--package", "com.example"]);
        let e = resume(&dir, &[]).unwrap_err().to_string();
        assert!(e.contains("--package com.example"), "{e}");
        // A config file given now counts as naming it again.
        let cfg = dir.parent().unwrap().join("android.toml");
        std::fs::write(&cfg, "package = \"com.example\"\n").unwrap();
        let d = resume(&dir, &["--config", cfg.to_str().unwrap()]).unwrap();
        assert_eq!(d.target.package.as_deref(), Some("com.example"));
    }

    #[test]
    fn viewport_values_are_checked() {
        assert_eq!(parse_size("412x915").unwrap(), Size::new(412, 915));
        assert!(parse_size("0x10").unwrap_err().contains("out of range"));
        assert!(parse_size("wide").unwrap_err().contains("WIDTHxHEIGHT"));
        assert!(parse_minutes("-1").is_err());
    }
}
