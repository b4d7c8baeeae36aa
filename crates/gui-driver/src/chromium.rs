//! Headless Debian Chromium as a [`Device`], over the DevTools protocol.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use gui_core::{
    Action, ActionKind, ActionParam, CoverageSnapshot, DeviceEvent, DeviceEventKind, Platform,
    Point, Rect, Screenshot, Signal, SignalKind, Size, StackFrame, SwipeDirection, UiHierarchy,
};
use serde_json::{Value, json};

use crate::cdp::{Cdp, Event};
use crate::{AppOrigins, Device, DialogPolicy, Error, JsCoverage, Result};

/// Where Debian installs the real binary; `/usr/bin/chromium` is a wrapper script that adds
/// flags and prints noise, so it comes last.
const CANDIDATES: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
];

/// Finds the Chromium binary: `GUI_CHROMIUM` if set (and only it), else the Debian locations.
pub fn find_chromium() -> Result<PathBuf> {
    let mut tried = Vec::new();
    if let Some(p) = std::env::var_os("GUI_CHROMIUM") {
        // An explicit choice is never silently replaced by another browser.
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(Error::BrowserNotFound {
            tried: format!("GUI_CHROMIUM={}", p.display()),
        });
    }
    for c in CANDIDATES {
        if std::path::Path::new(c).is_file() {
            return Ok(PathBuf::from(c));
        }
        tried.push((*c).to_owned());
    }
    Err(Error::BrowserNotFound {
        tried: tried.join(", "),
    })
}

/// How to start and drive Chromium.
#[derive(Debug, Clone)]
pub struct ChromiumConfig {
    /// Viewport in CSS pixels at the start of every run.
    pub viewport: Size,
    /// Emulate a mobile device (honours `<meta name=viewport>`, mobile scrollbars).
    pub mobile: bool,
    /// Device pixels per CSS pixel.
    pub device_scale: f32,
    /// Chromium binary; `None` searches with [`find_chromium`].
    pub executable: Option<PathBuf>,
    /// Bound on one DevTools call; a browser that does not answer in time is treated as
    /// hung and relaunched by [`Device::restart`].
    pub call_timeout: Duration,
    /// How long to wait for the load event after a navigation.
    pub load_timeout: Duration,
    /// How long Chromium may take to print its DevTools endpoint.
    pub launch_timeout: Duration,
    /// Measure JS precise coverage of the app's own scripts.
    pub coverage: bool,
    /// More command-line flags.
    pub extra_args: Vec<String>,
    /// Chromium's sandbox: `None` keeps it on unless the tool runs as root (Chromium
    /// refuses to sandbox root); `Some(false)` turns it off, `Some(true)` insists on it.
    /// With `None`, a sandbox that cannot start (no user namespaces) is turned off with
    /// a warning rather than failing the run.
    pub sandbox: Option<bool>,
    /// How native dialogs are answered (each the moment it opens).
    pub dialogs: DialogPolicy,
    /// Origins besides the start URL's that count as the app (`--allow-origin`): pages
    /// there are explored, not left.
    pub allowed_origins: Vec<String>,
}

impl Default for ChromiumConfig {
    fn default() -> Self {
        Self {
            viewport: Size::new(1280, 800),
            mobile: false,
            device_scale: 1.0,
            executable: None,
            call_timeout: Duration::from_secs(10),
            load_timeout: Duration::from_secs(10),
            launch_timeout: Duration::from_secs(20),
            coverage: true,
            extra_args: Vec::new(),
            sandbox: None,
            dialogs: DialogPolicy::default(),
            allowed_origins: Vec::new(),
        }
    }
}

impl ChromiumConfig {
    /// A 412x915 phone viewport (a common Android size) with mobile emulation.
    pub fn mobile() -> Self {
        Self {
            viewport: Size::new(412, 915),
            mobile: true,
            ..Self::default()
        }
    }
}

/// Permissions granted by `access_grant` and reset by `access_deny`; the WebDriver device
/// grants the same through its session's DevTools.
pub(crate) const PERMISSIONS: &[&str] = &[
    "geolocation",
    "notifications",
    "videoCapture",
    "audioCapture",
    "clipboardReadWrite",
    "clipboardSanitizedWrite",
];

/// One running browser process with its page session.
#[derive(Debug)]
struct Browser {
    child: Child,
    cdp: Cdp,
    session: String,
    target_id: String,
    version: String,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    // Dropped after the process is gone, taking the profile with it.
    _profile: tempfile::TempDir,
}

/// The flags every Chromium the tool starts gets, directly or through a WebDriver
/// endpoint (see the Chromium section of docs/devices.md for why each).
pub(crate) const CHROMIUM_FLAGS: &[&str] = &[
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
    // Keeps the last handler's coverage counts across navigations (MACHINE.md).
    "--disable-features=BackForwardCache,RenderDocument",
];

/// Whether this process runs as root (the owner of `/proc/self` is uid 0).
pub(crate) fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

impl Browser {
    /// Starts Chromium, with its sandbox unless the configuration or root says otherwise.
    /// Returns the browser and whether it is sandboxed.
    fn spawn(path: &std::path::Path, config: &ChromiumConfig) -> Result<(Self, bool)> {
        let sandbox = config.sandbox.unwrap_or(!running_as_root());
        match Self::spawn_with(path, config, sandbox) {
            Err(Error::LaunchTimeout { stderr, .. })
                if sandbox
                    && config.sandbox.is_none()
                    && stderr.to_lowercase().contains("sandbox") =>
            {
                tracing::warn!(
                    "Chromium cannot start its sandbox on this machine; running it without \
                     ({})",
                    stderr
                        .lines()
                        .find(|l| l.to_lowercase().contains("sandbox"))
                        .unwrap_or("")
                );
                Self::spawn_with(path, config, false).map(|b| (b, false))
            }
            other => other.map(|b| (b, sandbox)),
        }
    }

    fn spawn_with(path: &std::path::Path, config: &ChromiumConfig, sandbox: bool) -> Result<Self> {
        let profile = tempfile::Builder::new()
            .prefix("gui-testing-chromium-")
            .tempdir()
            .map_err(|e| Error::io("create Chromium profile dir", e))?;
        let mut cmd = Command::new(path);
        if !sandbox {
            cmd.arg("--no-sandbox");
        }
        cmd.arg("--headless")
            .args(CHROMIUM_FLAGS)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!(
                "--window-size={},{}",
                config.viewport.width, config.viewport.height
            ))
            .args(&config.extra_args)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        crate::die_with_parent(&mut cmd);
        let child = cmd.spawn().map_err(|source| Error::Launch {
            path: path.into(),
            source,
        })?;
        // From here on the child is killed on every error path (`KillOnError` drops it).
        let mut child = KillOnError(Some(child));
        let child_ref = child.0.as_mut().expect("just spawned");

        // Chromium announces its endpoint on stderr and must keep being drained afterwards.
        let stderr = child_ref.stderr.take().expect("stderr is piped");
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, rx) = mpsc::channel();
        let tail2 = tail.clone();
        std::thread::Builder::new()
            .name("chromium-stderr".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                    if let Some(i) = line.find("ws://") {
                        let _ = tx.send(line[i..].trim().to_owned());
                    }
                    let mut t = tail2.lock().expect("tail lock");
                    if t.len() == 40 {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            })
            .map_err(|e| Error::io("spawn stderr reader", e))?;
        let tail_text = |t: &Arc<Mutex<VecDeque<String>>>| {
            t.lock()
                .expect("tail lock")
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        };
        let ws_url = match rx.recv_timeout(config.launch_timeout) {
            Ok(url) => url,
            Err(_) => {
                return Err(Error::LaunchTimeout {
                    path: path.into(),
                    after: config.launch_timeout,
                    stderr: tail_text(&tail),
                });
            }
        };
        let mut cdp = Cdp::connect(&ws_url, config.call_timeout)?;
        let version = cdp.call(None, "Browser.getVersion", json!({}))?;
        let version = version["product"].as_str().unwrap_or("Chromium").to_owned();
        let targets = cdp.call(None, "Target.getTargets", json!({}))?;
        let page = targets["targetInfos"]
            .as_array()
            .and_then(|ts| ts.iter().find(|t| t["type"] == "page"))
            .and_then(|t| t["targetId"].as_str())
            .map(str::to_owned);
        let target_id = match page {
            Some(id) => id,
            None => {
                let r = cdp.call(None, "Target.createTarget", json!({ "url": "about:blank" }))?;
                str_field(&r, "targetId", "Target.createTarget")?
            }
        };
        let r = cdp.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        let session = str_field(&r, "sessionId", "Target.attachToTarget")?;
        Ok(Self {
            child: child.0.take().expect("taken once"),
            cdp,
            session,
            target_id,
            version,
            stderr_tail: tail,
            _profile: profile,
        })
    }

    fn call(&mut self, method: &str, params: Value) -> Result<Value> {
        let session = self.session.clone();
        self.cdp.call(Some(&session), method, params)
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

/// A browser process being set up: killed (and reaped) if setting it up fails, so that
/// no Chromium outlives a launch that returned an error.
struct KillOnError(Option<Child>);

impl Drop for KillOnError {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn str_field(v: &Value, field: &str, method: &str) -> Result<String> {
    v[field]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::BadReply {
            method: method.to_owned(),
            detail: format!("no `{field}` in {v}"),
        })
}

/// A web app in headless Chromium.
#[derive(Debug)]
pub struct ChromiumDevice {
    config: ChromiumConfig,
    executable: PathBuf,
    start_url: String,
    /// The origins that count as the app.
    origins: AppOrigins,
    /// The last URL of the app's own the main frame showed: where the app is brought
    /// back to when it leaves its origins and history cannot take it back.
    last_app_url: String,
    browser: Option<Browser>,
    viewport: Size,
    split: bool,
    offline: bool,
    network_enabled: bool,
    renderer_crashed: bool,
    /// The main frame went to another origin (a link out, a failed load).
    left_app: bool,
    coverage: JsCoverage,
    signals: Vec<Signal>,
    launches: u32,
    /// Whether the running browser has its sandbox.
    sandboxed: bool,
    /// Screencast frames that arrived while another call waited, oldest first.
    frames: VecDeque<Event>,
    /// What the device handled for the app since the last `drain_events`.
    events: Vec<DeviceEvent>,
    /// The app's page target was closed by the app (`window.close()`), not crashed.
    window_closed: bool,
    /// Downloads land here, and the file a file chooser is given lives here.
    scratch: tempfile::TempDir,
}

/// Most device events kept between two `drain_events` calls.
const MAX_EVENTS: usize = 1000;

/// How long a page that left a call unanswered for the whole call timeout has to answer
/// when the device restarts, before it is taken for hung.
const HANG_GRACE: Duration = Duration::from_secs(1);

/// How long a navigation waits for the load event once the document is parsed: images or
/// scripts that never arrive must not stall a restart for the whole load timeout.
const LOAD_AFTER_DOCUMENT: Duration = Duration::from_secs(3);

/// One frame of a DevTools screencast ([`ChromiumDevice::start_screencast`]), as Chromium
/// sent it: PNG bytes, not yet decoded, so a capture keeps up with 60 frames a second.
#[derive(Debug, Clone)]
pub struct ScreencastFrame {
    /// When the compositor produced the frame, milliseconds since the Unix epoch.
    pub timestamp_ms: f64,
    pub png: Vec<u8>,
}

impl ScreencastFrame {
    pub fn decode(&self) -> Result<Screenshot> {
        Ok(Screenshot::from_png(
            &self.png,
            "screencast frame",
            1.0,
            self.timestamp_ms as u64,
        )?)
    }
}

impl ChromiumDevice {
    /// The app's functions that ran since the previous coverage take (of this call or of
    /// [`Device::coverage`]), as [`JsCoverage::ran_in`] gives them; what ran still counts
    /// toward the run's coverage. `None` when coverage is off.
    pub fn functions_run(&mut self) -> Result<Option<Vec<crate::jscov::RanFunction>>> {
        Ok(self
            .take_coverage()?
            .map(|take| self.coverage.ran_in(&take)))
    }

    /// One `Profiler.takePreciseCoverage`, added to the run's coverage; `None` when
    /// coverage is off.
    fn take_coverage(&mut self) -> Result<Option<Value>> {
        if !self.config.coverage {
            return Ok(None);
        }
        let mut r = self
            .browser()?
            .call("Profiler.takePreciseCoverage", json!({}))?;
        let take = r["result"].take();
        self.coverage.add_take(&take);
        Ok(Some(take))
    }

    /// Starts a fresh Chromium with its own profile and opens `url`.
    ///
    /// Fails with [`Error::BrowserNotFound`] when no Chromium is installed and with
    /// [`Error::Navigation`] when the URL cannot be loaded.
    pub fn launch(url: &str, config: ChromiumConfig) -> Result<Self> {
        let executable = match &config.executable {
            Some(p) if p.is_file() => p.clone(),
            Some(p) => {
                return Err(Error::BrowserNotFound {
                    tried: p.display().to_string(),
                });
            }
            None => find_chromium()?,
        };
        let scratch = tempfile::Builder::new()
            .prefix("gui-testing-files-")
            .tempdir()
            .map_err(|e| Error::io("create a folder for downloads and uploads", e))?;
        let origins = AppOrigins::new(url, &config.allowed_origins);
        let mut device = Self {
            viewport: config.viewport,
            executable,
            start_url: url.to_owned(),
            last_app_url: url.to_owned(),
            coverage: JsCoverage::new(origins.primary().to_owned()),
            origins,
            config,
            browser: None,
            split: false,
            offline: false,
            network_enabled: false,
            renderer_crashed: false,
            left_app: false,
            signals: Vec::new(),
            launches: 0,
            sandboxed: false,
            frames: VecDeque::new(),
            events: Vec::new(),
            window_closed: false,
            scratch,
        };
        device.relaunch()?;
        tracing::info!("started {}", device.describe());
        Ok(device)
    }

    /// The URL every run starts from.
    pub fn start_url(&self) -> &str {
        &self.start_url
    }

    /// How many browser processes this device has started (1 + relaunches).
    pub fn launches(&self) -> u32 {
        self.launches
    }

    /// Whether the running browser has Chromium's sandbox (off as root, or where the
    /// machine cannot give it one; see [`ChromiumConfig::sandbox`]).
    pub fn sandboxed(&self) -> bool {
        self.sandboxed
    }

    /// The browser's process id, while it runs.
    pub fn browser_pid(&self) -> Option<u32> {
        self.browser.as_ref().map(|b| b.child.id())
    }

    /// Evaluates a JS expression in the page and returns its JSON value (for tests and
    /// grey-box analyses; strategies must not depend on it).
    pub fn evaluate(&mut self, expression: &str) -> Result<Value> {
        self.evaluate_in(expression, false)
    }

    /// Like [`evaluate`](Self::evaluate), with the DevTools command-line API in scope
    /// (`getEventListeners(node)` and the like), for grey-box analyses of the page.
    pub fn evaluate_with_command_line_api(&mut self, expression: &str) -> Result<Value> {
        self.evaluate_in(expression, true)
    }

    fn evaluate_in(&mut self, expression: &str, command_line_api: bool) -> Result<Value> {
        let r = self.browser()?.call(
            "Runtime.evaluate",
            json!({
                "expression": expression,
                "returnByValue": true,
                "awaitPromise": true,
                "includeCommandLineAPI": command_line_api,
            }),
        )?;
        if let Some(ex) = r.get("exceptionDetails") {
            let text = ex["exception"]["description"]
                .as_str()
                .or(ex["text"].as_str())
                .unwrap_or("exception");
            return Err(Error::Protocol {
                method: "Runtime.evaluate".into(),
                message: text.to_owned(),
            });
        }
        Ok(r["result"]["value"].clone())
    }

    /// Presses and releases one named key (`Escape`, `Tab`, `Enter`, ...), which goes to
    /// the focused element: the web's way to dismiss a dialog, as Back does on Android.
    /// `key_code` is the Windows virtual key code (27 for Escape).
    pub fn press_key(&mut self, key: &str, key_code: u32) -> Result<()> {
        let b = self.browser()?;
        for kind in ["rawKeyDown", "keyUp"] {
            b.call(
                "Input.dispatchKeyEvent",
                json!({
                    "type": kind,
                    "key": key,
                    "code": key,
                    "windowsVirtualKeyCode": key_code,
                    "nativeVirtualKeyCode": key_code,
                }),
            )?;
        }
        Ok(())
    }

    /// The viewport box of the first element matching a CSS selector, if it is rendered.
    pub fn element_rect(&mut self, selector: &str) -> Result<Option<Rect>> {
        let expr = format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return null; \
             const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }})()",
            serde_json::to_string(selector).expect("string")
        );
        let v = self.evaluate(&expr)?;
        Ok(v.as_array().map(|a| {
            let n = |i: usize| a[i].as_f64().unwrap_or(0.0);
            Rect::new(
                n(0).round() as i32,
                n(1).round() as i32,
                n(2).round() as u32,
                n(3).round() as u32,
            )
        }))
    }

    fn browser(&mut self) -> Result<&mut Browser> {
        if self.renderer_crashed {
            return Err(Error::DeviceLost {
                what: "the page's renderer crashed".into(),
            });
        }
        let b = self.browser.as_mut().ok_or_else(|| Error::DeviceLost {
            what: "browser not running".into(),
        })?;
        if !b.alive() {
            return Err(Error::DeviceLost {
                what: format!("Chromium (pid {}) exited", b.child.id()),
            });
        }
        Ok(b)
    }

    /// Kills any old browser, starts a new one and opens the start URL.
    fn relaunch(&mut self) -> Result<()> {
        // Signals still queued in a dying browser cannot be read; drop it first so its
        // process and profile are gone before the next one starts.
        self.browser = None;
        self.renderer_crashed = false;
        self.network_enabled = false;
        self.offline = false;
        self.split = false;
        self.viewport = self.config.viewport;
        let (browser, sandboxed) = Browser::spawn(&self.executable, &self.config)?;
        if !sandboxed && self.launches == 0 {
            tracing::info!("Chromium runs without its sandbox (root, or none available)");
        }
        self.sandboxed = sandboxed;
        self.launches += 1;
        self.window_closed = false;
        self.last_app_url.clone_from(&self.start_url);
        let upload = crate::web_policy::upload_file(self.scratch.path())?;
        let downloads = self.scratch.path().join("downloads");
        std::fs::create_dir_all(&downloads)
            .map_err(|e| Error::io(format!("create {}", downloads.display()), e))?;
        self.browser = Some(browser);
        let dialogs = self.config.dialogs;
        let b = self.browser()?;
        b.cdp.autopilot = crate::cdp::Autopilot {
            enabled: true,
            dialogs,
            leaving: false,
            own_target: Some(b.target_id.clone()),
            spare_targets: Vec::new(),
            opening_spare: false,
            upload: Some(upload),
        };
        // Every new tab or popup is seen (and closed) as it is created.
        b.cdp.call(
            None,
            "Target.setDiscoverTargets",
            json!({ "discover": true }),
        )?;
        b.cdp.call(
            None,
            "Browser.setDownloadBehavior",
            json!({ "behavior": "allow", "downloadPath": downloads.display().to_string(),
                    "eventsEnabled": true }),
        )?;
        self.setup_page()?;
        let url = self.start_url.clone();
        self.navigate(&url)
    }

    /// Opens `url` in the app's page and waits for it to load. A page whose document
    /// arrived but whose load never ends (a resource that never comes) is used as it is,
    /// with a [`DeviceEventKind::LoadIncomplete`] event, [`LOAD_AFTER_DOCUMENT`] after
    /// its document was parsed; only a URL that cannot be opened at all is an error.
    fn navigate(&mut self, url: &str) -> Result<()> {
        let load_timeout = self.config.load_timeout;
        let b = self.browser()?;
        let session = b.session.clone();
        // Forget load events of earlier pages.
        for ev in ["Page.loadEventFired", "Page.domContentEventFired"] {
            while b
                .cdp
                .wait_event(Some(&session), ev, Duration::ZERO)?
                .is_some()
            {}
        }
        // A `beforeunload` handler must not keep the device on the page it leaves.
        b.cdp.autopilot.leaving = true;
        let r = b.call("Page.navigate", json!({ "url": url }));
        b.cdp.autopilot.leaving = false;
        let r = r?;
        if let Some(err) = r.get("errorText").and_then(Value::as_str) {
            return Err(Error::Navigation {
                url: url.to_owned(),
                reason: err.to_owned(),
            });
        }
        let deadline = Instant::now() + load_timeout;
        let mut document_at = None;
        loop {
            let now = Instant::now();
            let until = match document_at {
                Some(t) => deadline.min(t + LOAD_AFTER_DOCUMENT),
                None => deadline,
            };
            if now >= until {
                break;
            }
            if b.cdp
                .wait_event(Some(&session), "Page.loadEventFired", Duration::ZERO)?
                .is_some()
            {
                return Ok(());
            }
            if document_at.is_none()
                && b.cdp
                    .wait_event(Some(&session), "Page.domContentEventFired", Duration::ZERO)?
                    .is_some()
            {
                document_at = Some(now);
            }
            b.cdp.pump((until - now).min(Duration::from_millis(50)))?;
        }
        if document_at.is_none() {
            return Err(Error::Navigation {
                url: url.to_owned(),
                reason: format!("no document within {load_timeout:?}"),
            });
        }
        self.note(
            DeviceEventKind::LoadIncomplete,
            format!("{url}: not loaded {LOAD_AFTER_DOCUMENT:?} after its document"),
        );
        Ok(())
    }

    fn apply_viewport(&mut self) -> Result<()> {
        let (vp, scale, mobile) = (self.viewport, self.config.device_scale, self.config.mobile);
        let landscape = vp.width > vp.height;
        self.browser()?.call(
            "Emulation.setDeviceMetricsOverride",
            json!({
                "width": vp.width, "height": vp.height, "deviceScaleFactor": scale, "mobile": mobile,
                "screenOrientation": { "type": if landscape { "landscapePrimary" } else { "portraitPrimary" },
                                       "angle": if landscape { 90 } else { 0 } },
            }),
        )?;
        if mobile {
            // A phone has a touch screen: pages see touch support and get touch events.
            self.browser()?.call(
                "Emulation.setTouchEmulationEnabled",
                json!({ "enabled": true, "maxTouchPoints": 5 }),
            )?;
        }
        Ok(())
    }

    fn mouse(&mut self, p: Point, button: &str, clicks: u32) -> Result<()> {
        let b = self.browser()?;
        let (x, y) = (p.x as f64, p.y as f64);
        b.call(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": x, "y": y }),
        )?;
        let mask = match button {
            "left" => 1,
            "right" => 2,
            _ => 4,
        };
        for count in 1..=clicks {
            b.call(
                "Input.dispatchMouseEvent",
                json!({ "type": "mousePressed", "x": x, "y": y, "button": button, "buttons": mask, "clickCount": count }),
            )?;
            b.call(
                "Input.dispatchMouseEvent",
                json!({ "type": "mouseReleased", "x": x, "y": y, "button": button, "buttons": 0, "clickCount": count }),
            )?;
        }
        Ok(())
    }

    fn drag(&mut self, from: Point, dx: i32, dy: i32) -> Result<()> {
        let b = self.browser()?;
        let ev = |t: &str, p: (f64, f64), buttons: u32| json!({ "type": t, "x": p.0, "y": p.1, "button": "left", "buttons": buttons, "clickCount": 1 });
        let start = (from.x as f64, from.y as f64);
        b.call(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": start.0, "y": start.1 }),
        )?;
        b.call("Input.dispatchMouseEvent", ev("mousePressed", start, 1))?;
        const STEPS: i32 = 6;
        for i in 1..=STEPS {
            let p = (
                start.0 + (dx * i / STEPS) as f64,
                start.1 + (dy * i / STEPS) as f64,
            );
            b.call("Input.dispatchMouseEvent", ev("mouseMoved", p, 1))?;
        }
        let end = (start.0 + dx as f64, start.1 + dy as f64);
        b.call("Input.dispatchMouseEvent", ev("mouseReleased", end, 0))?;
        Ok(())
    }

    /// A finger on `at` for `hold`, then lifted: a tap, or a long press.
    fn touch(&mut self, at: Point, hold: Duration) -> Result<()> {
        let b = self.browser()?;
        let point = json!([{ "x": at.x, "y": at.y }]);
        b.call(
            "Input.dispatchTouchEvent",
            json!({ "type": "touchStart", "touchPoints": point }),
        )?;
        if !hold.is_zero() {
            std::thread::sleep(hold);
        }
        b.call(
            "Input.dispatchTouchEvent",
            json!({ "type": "touchEnd", "touchPoints": [] }),
        )?;
        Ok(())
    }

    /// A finger put down on `from`, moved by (dx, dy) in six steps, and lifted.
    fn touch_drag(&mut self, from: Point, dx: i32, dy: i32) -> Result<()> {
        let b = self.browser()?;
        let at = |i: i32| json!([{ "x": from.x + dx * i / 6, "y": from.y + dy * i / 6 }]);
        b.call(
            "Input.dispatchTouchEvent",
            json!({ "type": "touchStart", "touchPoints": at(0) }),
        )?;
        for i in 1..=6 {
            b.call(
                "Input.dispatchTouchEvent",
                json!({ "type": "touchMove", "touchPoints": at(i) }),
            )?;
        }
        b.call(
            "Input.dispatchTouchEvent",
            json!({ "type": "touchEnd", "touchPoints": [] }),
        )?;
        Ok(())
    }

    /// Where the page is in its history: the current entry's URL when it is in the app,
    /// and the id of the previous entry when that one is in the app.
    fn history_position(&mut self) -> Result<(Option<String>, Option<Value>)> {
        let h = self
            .browser()?
            .call("Page.getNavigationHistory", json!({}))?;
        let current = h["currentIndex"].as_u64().unwrap_or(0) as usize;
        let entries = h["entries"].as_array().cloned().unwrap_or_default();
        let origins = &self.origins;
        let in_app = |e: &Value| e["url"].as_str().is_some_and(|u| origins.contains(u));
        let here = entries
            .get(current)
            .filter(|e| in_app(e))
            .and_then(|e| e["url"].as_str().map(str::to_owned));
        let previous = current
            .checked_sub(1)
            .and_then(|i| entries.get(i))
            .filter(|e| in_app(e))
            .map(|e| e["id"].clone());
        Ok((here, previous))
    }

    /// Whether the main frame's document is from the app's origin (not, say, the
    /// browser's error page).
    fn main_frame_in_app(&mut self) -> Result<bool> {
        let tree = self.browser()?.call("Page.getFrameTree", json!({}))?;
        let frame = &tree["frameTree"]["frame"];
        Ok(frame["unreachableUrl"].is_null()
            && frame["url"]
                .as_str()
                .is_some_and(|u| self.origins.contains(u)))
    }

    /// `return`: one step back in history, but never out of the app (a step back to another
    /// origin, such as about:blank before the first load, is a no-op).
    fn history_back(&mut self) -> Result<()> {
        if let (_, Some(entry)) = self.history_position()? {
            self.browser()?
                .call("Page.navigateToHistoryEntry", json!({ "entryId": entry }))?;
        }
        Ok(())
    }

    /// Brings the page back after it left the app's origin, as Monkey keeps its events
    /// inside one package: one step back in history when that is the app, else the start
    /// URL. When the history entry is the app's but the page shows another document (the
    /// browser's error page for a load that failed), the app's URL is loaded again.
    ///
    /// The network comes back first when `network_switch` had turned it off: offline, the
    /// app's own pages fail to load too, and exploration would stay on the error page for
    /// the rest of the run (seen with TodoMVC, whose sidebar links to pages of its own
    /// origin).
    fn return_to_app(&mut self) -> Result<()> {
        if self.offline {
            self.set_offline(false)?;
        }
        match self.history_position()? {
            (Some(_), _) if self.main_frame_in_app()? => Ok(()),
            // An app URL the browser shows an error page for (a failed load, a password
            // challenge nobody answers): loaded again, and if it fails again, the app's
            // last page that did load.
            (Some(url), _) => match self.navigate(&url) {
                Err(Error::Navigation { .. }) => {
                    let last = if self.last_app_url == url {
                        self.start_url.clone()
                    } else {
                        self.last_app_url.clone()
                    };
                    self.navigate(&last)
                }
                other => other,
            },
            (None, Some(entry)) => {
                let timeout = self.config.load_timeout;
                let b = self.browser()?;
                b.cdp.autopilot.leaving = true;
                let r = b.call("Page.navigateToHistoryEntry", json!({ "entryId": entry }));
                let session = b.session.clone();
                let waited = r.and_then(|_| {
                    b.cdp
                        .wait_event(Some(&session), "Page.loadEventFired", timeout)
                });
                b.cdp.autopilot.leaving = false;
                waited.map(drop)
            }
            (None, None) => {
                let url = self.last_app_url.clone();
                self.navigate(&url)
            }
        }
    }

    fn back_switch(&mut self) -> Result<()> {
        let b = self.browser()?;
        // The tab opened here is the device's own: spared, not closed as a popup.
        b.cdp.autopilot.opening_spare = true;
        let r = b
            .cdp
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }));
        b.cdp.autopilot.opening_spare = false;
        let r = r?;
        let other = str_field(&r, "targetId", "Target.createTarget")?;
        b.cdp
            .call(None, "Target.activateTarget", json!({ "targetId": other }))?;
        // The app is hidden for a moment, as when a user looks at another tab.
        std::thread::sleep(Duration::from_millis(50));
        let own = b.target_id.clone();
        b.cdp
            .call(None, "Target.activateTarget", json!({ "targetId": own }))?;
        b.cdp
            .call(None, "Target.closeTarget", json!({ "targetId": other }))?;
        Ok(())
    }

    fn set_offline(&mut self, offline: bool) -> Result<()> {
        for (method, params) in crate::offline_commands(self.network_enabled, offline) {
            self.browser()?.call(method, params)?;
            self.network_enabled = true;
        }
        self.offline = offline;
        Ok(())
    }

    /// Turns queued protocol events into signals and device events. Dialogs, new tabs and
    /// file choosers were already answered when they arrived (`cdp::Autopilot`); here they
    /// are recorded. A page closed by the app itself is opened again.
    fn service_events(&mut self) -> Result<()> {
        let Some(b) = self.browser.as_mut() else {
            return Ok(());
        };
        let session = b.session.clone();
        let own_target = b.target_id.clone();
        let policy = b.cdp.autopilot.dialogs;
        b.cdp.pump(Duration::from_millis(1))?;
        for ev in b.cdp.take_events() {
            if ev.session.as_deref().is_some_and(|s| s != session) {
                continue;
            }
            match ev.method.as_str() {
                "Page.javascriptDialogOpening" => {
                    let kind = ev.params["type"].as_str().unwrap_or("dialog");
                    let message = ev.params["message"].as_str().unwrap_or("");
                    let accepted = ev.params[crate::cdp::ANSWERED]
                        .as_bool()
                        .unwrap_or(policy.accepts());
                    self.keep(crate::web_policy::dialog_event(kind, message, accepted));
                }
                "Target.targetCreated" => {
                    let info = &ev.params["targetInfo"];
                    let id = info["targetId"].as_str().unwrap_or("");
                    let spare = self
                        .browser
                        .as_ref()
                        .is_some_and(|b| b.cdp.autopilot.spare_targets.iter().any(|t| t == id));
                    if info["type"] == "page" && id != own_target && !spare {
                        let url = info["url"].as_str().filter(|u| !u.is_empty());
                        self.note(
                            DeviceEventKind::TabClosed,
                            url.unwrap_or("a new tab without a URL yet"),
                        );
                    }
                }
                "Page.fileChooserOpened" => {
                    let mode = ev.params["mode"].as_str().unwrap_or("selectSingle");
                    let detail = if ev.params["backendNodeId"].is_u64() {
                        format!("{mode}: gave {}", crate::web_policy::UPLOAD_NAME)
                    } else {
                        format!("{mode}: cancelled (not tied to a file input)")
                    };
                    self.note(DeviceEventKind::FileChooser, detail);
                }
                "Browser.downloadWillBegin" => {
                    let name = ev.params["suggestedFilename"].as_str().unwrap_or("");
                    let url = ev.params["url"].as_str().unwrap_or("");
                    self.note(DeviceEventKind::Download, format!("{name} from {url}"));
                }
                "Target.detachedFromTarget" => {
                    if ev.params["sessionId"].as_str() == Some(session.as_str())
                        && !self.renderer_crashed
                    {
                        self.window_closed = true;
                    }
                }
                "Page.frameNavigated" => {
                    let frame = &ev.params["frame"];
                    let url = frame["url"].as_str().unwrap_or("");
                    if frame["parentId"].is_null() && url != "about:blank" {
                        if self.origins.contains(url) && frame["unreachableUrl"].is_null() {
                            url.clone_into(&mut self.last_app_url);
                        } else if !self.left_app {
                            self.left_app = true;
                            let detail = match frame["unreachableUrl"].as_str() {
                                Some(failed) => format!("{failed} (could not be loaded)"),
                                None => url.to_owned(),
                            };
                            self.note(DeviceEventKind::LeftApp, detail);
                        }
                    }
                }
                "Page.screencastFrame" => self.frames.push_back(ev),
                // Another tab's crash, or the second report of this one (the page's
                // session and the browser both tell).
                "Target.targetCrashed" if ev.params["targetId"] != own_target.as_str() => {}
                "Inspector.targetCrashed" | "Target.targetCrashed" if self.renderer_crashed => {}
                "Inspector.targetCrashed" | "Target.targetCrashed" => {
                    self.renderer_crashed = true;
                    self.window_closed = false;
                    self.signals.push(Signal::new(
                        SignalKind::Crash,
                        "the page's renderer process crashed",
                        Vec::new(),
                    ));
                }
                _ => {
                    if let Some(sig) = signal_of(&ev) {
                        self.signals.push(sig);
                    }
                }
            }
        }
        if self.window_closed && !self.renderer_crashed {
            self.reopen_window()?;
        }
        Ok(())
    }

    /// Keeps a device event for [`Device::drain_events`], up to [`MAX_EVENTS`] of them.
    fn note(&mut self, kind: DeviceEventKind, detail: impl AsRef<str>) {
        self.keep(DeviceEvent::new(kind, detail));
    }

    fn keep(&mut self, event: DeviceEvent) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        }
    }

    /// The app closed its own page (`window.close()` on a page it may close): a new page
    /// is opened in the same browser on the app's last URL, as a person would reopen it.
    /// What was covered stays counted.
    fn reopen_window(&mut self) -> Result<()> {
        self.window_closed = false;
        let b = self.browser.as_mut().ok_or_else(|| Error::DeviceLost {
            what: "browser not running".into(),
        })?;
        let r = b
            .cdp
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))?;
        let target_id = str_field(&r, "targetId", "Target.createTarget")?;
        let r = b.cdp.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        b.session = str_field(&r, "sessionId", "Target.attachToTarget")?;
        b.target_id = target_id.clone();
        b.cdp.autopilot.own_target = Some(target_id);
        self.setup_page()?;
        let url = self.last_app_url.clone();
        self.note(DeviceEventKind::WindowReopened, &url);
        self.navigate(&url)
    }

    /// What every page of the app needs from DevTools: its events, coverage from its
    /// first script, file choosers handed to the device, and the viewport.
    fn setup_page(&mut self) -> Result<()> {
        let coverage = self.config.coverage;
        let b = self.browser()?;
        for m in ["Page.enable", "Runtime.enable", "Inspector.enable"] {
            b.call(m, json!({}))?;
        }
        b.call(
            "Page.setInterceptFileChooserDialog",
            json!({ "enabled": true }),
        )?;
        if coverage {
            b.call("Profiler.enable", json!({}))?;
            // Started on about:blank so the app's first script is measured from its start.
            b.call(
                "Profiler.startPreciseCoverage",
                json!({ "callCount": true, "detailed": true }),
            )?;
        }
        self.apply_viewport()
    }

    fn perform_inner(&mut self, action: &Action) -> Result<()> {
        use ActionKind::*;
        let platform = self.platform();
        if !action.kind.supported_on(platform) {
            return Err(Error::Unsupported {
                action: action.kind,
                platform,
            });
        }
        let target = || {
            action.point().ok_or(Error::BadAction {
                action: action.kind,
                what: "a target",
            })
        };
        if self.config.mobile {
            match action.kind {
                Click => return self.touch(target()?, Duration::ZERO),
                // Chrome's long press fires after about half a second.
                LongClick => return self.touch(target()?, Duration::from_millis(800)),
                Drag => {
                    let (dx, dy) = crate::drag_offset(action, self.viewport);
                    return self.touch_drag(target()?, dx, dy);
                }
                Swipe => {
                    // A finger moving up moves the content up: the page scrolls down.
                    let vp = self.viewport;
                    let sign = match action.param {
                        Some(ActionParam::Direction(SwipeDirection::Down)) => 1,
                        _ => -1,
                    };
                    let at = action
                        .point()
                        .unwrap_or(Point::new(vp.width as i32 / 2, vp.height as i32 / 2));
                    return self.touch_drag(at, 0, sign * (vp.height as i32 * 4 / 10));
                }
                OrientationSwitch => {
                    self.viewport = Size::new(self.viewport.height, self.viewport.width);
                    return self.apply_viewport();
                }
                // A call takes the screen for a moment: the page is hidden, then shown.
                PhoneInterrupt => return self.back_switch(),
                _ => {}
            }
        }
        match action.kind {
            Click => self.mouse(target()?, "left", 1)?,
            DoubleClick => self.mouse(target()?, "left", 2)?,
            MidClick => self.mouse(target()?, "middle", 1)?,
            RightClick => self.mouse(target()?, "right", 1)?,
            Input => {
                self.mouse(target()?, "left", 1)?;
                // The text replaces what the field holds, as a person selecting all of it
                // first would: typed after the old text, each input would make a text
                // never shown before, and a field would look new forever.
                // Best effort: a click that navigated leaves no field to select in, and
                // the script then fails with the page it ran in; only a lost browser stops.
                if let Err(e) = self.evaluate(crate::SELECT_FOCUSED_TEXT)
                    && e.is_device_lost()
                {
                    return Err(e);
                }
                // A click that sent the page to another document (a link) leaves nothing to
                // type into, and text sent while the old document is swapped out may
                // never be answered.
                let b = self.browser()?;
                let (session, main_frame) = (b.session.clone(), b.target_id.clone());
                b.cdp.pump(Duration::from_millis(1))?;
                if ["Page.frameRequestedNavigation", "Page.frameStartedLoading"]
                    .iter()
                    .any(|m| b.cdp.has_event(Some(&session), m, Some(&main_frame)))
                {
                    return Ok(());
                }
                let text = crate::typed_text(action).to_owned();
                // A trailing newline is the Enter key: it submits forms and the many
                // single-field inputs (todo lists, search boxes) that act on Enter.
                let (text, enter) = match text.strip_suffix('\n') {
                    Some(t) => (t.to_owned(), true),
                    None => (text, false),
                };
                let b = self.browser()?;
                b.call("Input.insertText", json!({ "text": text }))?;
                if enter {
                    for kind in ["keyDown", "keyUp"] {
                        let mut key = json!({
                            "type": kind,
                            "key": "Enter",
                            "code": "Enter",
                            "windowsVirtualKeyCode": 13,
                            "nativeVirtualKeyCode": 13,
                        });
                        if kind == "keyDown" {
                            key["text"] = json!("\r");
                        }
                        b.call("Input.dispatchKeyEvent", key)?;
                    }
                }
            }
            Drag => {
                let (dx, dy) = crate::drag_offset(action, self.viewport);
                self.drag(target()?, dx, dy)?;
            }
            Swipe => {
                let (at, dy) = crate::wheel_scroll(action, self.viewport);
                self.browser()?.call(
                    "Input.dispatchMouseEvent",
                    json!({ "type": "mouseWheel", "x": at.x, "y": at.y, "deltaX": 0,
                            "deltaY": dy }),
                )?;
            }
            SplitScreen => {
                self.split = !self.split;
                let base = self.config.viewport;
                self.viewport = if self.split {
                    Size::new((base.width / 2).max(1), base.height)
                } else {
                    base
                };
                self.apply_viewport()?;
            }
            WindowSize => {
                self.viewport = crate::window_size_for(action, self.config.viewport)?;
                self.split = false;
                self.apply_viewport()?;
            }
            Return => self.history_back()?,
            BackSwitch => self.back_switch()?,
            AccessGrant => {
                for origin in self.origins.all().to_vec() {
                    self.browser()?.cdp.call(
                        None,
                        "Browser.grantPermissions",
                        json!({ "origin": origin, "permissions": PERMISSIONS }),
                    )?;
                }
            }
            AccessDeny => {
                self.browser()?
                    .cdp
                    .call(None, "Browser.resetPermissions", json!({}))?;
            }
            NetworkSwitch => {
                let off = !self.offline;
                self.set_offline(off)?;
            }
            LongClick | OrientationSwitch | PhoneInterrupt => {
                unreachable!("mobile only, handled above")
            }
        }
        Ok(())
    }
}

/// A signal from a `Runtime.exceptionThrown` or an error-level `Runtime.consoleAPICalled`.
fn signal_of(ev: &Event) -> Option<Signal> {
    let frames = |st: &Value| -> Vec<StackFrame> {
        st["callFrames"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| StackFrame {
                function: f["functionName"].as_str().unwrap_or("").to_owned(),
                url: f["url"].as_str().unwrap_or("").to_owned(),
                line: f["lineNumber"].as_u64().unwrap_or(0) as u32 + 1,
                column: f["columnNumber"].as_u64().unwrap_or(0) as u32 + 1,
            })
            .collect()
    };
    match ev.method.as_str() {
        "Runtime.exceptionThrown" => {
            let d = &ev.params["exceptionDetails"];
            let message = d["exception"]["description"]
                .as_str()
                .and_then(|s| s.lines().next())
                .or_else(|| d["exception"]["value"].as_str())
                .or_else(|| d["text"].as_str())
                .unwrap_or("uncaught exception")
                .to_owned();
            Some(Signal::new(
                SignalKind::UncaughtException,
                message,
                frames(&d["stackTrace"]),
            ))
        }
        "Runtime.consoleAPICalled" if ev.params["type"] == "error" => {
            let message = ev.params["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| match &a["value"] {
                    Value::String(s) => s.clone(),
                    Value::Null => a["description"].as_str().unwrap_or("").to_owned(),
                    v => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ");
            Some(Signal::new(
                SignalKind::ConsoleError,
                message,
                frames(&ev.params["stackTrace"]),
            ))
        }
        _ => None,
    }
}

impl Device for ChromiumDevice {
    /// A page emulating a phone (`ChromiumConfig::mobile`) is a mobile app for the agent:
    /// it takes the paper's mobile action set (`Platform::Android`, Table 1's mobile
    /// column), with touch input.
    fn platform(&self) -> Platform {
        if self.config.mobile {
            Platform::Android
        } else {
            Platform::Web
        }
    }

    fn viewport(&self) -> Size {
        self.viewport
    }

    fn screenshot(&mut self) -> Result<Screenshot> {
        // While the page swaps documents there may be no frame to capture ("Not attached
        // to an active page"), or the request dies with the old renderer and is never
        // answered. Both pass within moments, so retry in short tries until the call
        // timeout is spent; only then is the page taken for hung.
        const TRY: Duration = Duration::from_secs(2);
        let deadline = Instant::now() + self.config.call_timeout;
        let r = loop {
            self.service_events()?;
            if std::mem::take(&mut self.left_app) {
                match self.return_to_app() {
                    // The page is between documents ("Not attached to an active page"):
                    // tried again in a moment, as the capture is.
                    Err(Error::Protocol { .. })
                        if deadline.saturating_duration_since(Instant::now())
                            > Duration::from_millis(100) =>
                    {
                        self.left_app = true;
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    other => other?,
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let b = self.browser()?;
            let session = b.session.clone();
            let r = b.cdp.call_within(
                Some(&session),
                "Page.captureScreenshot",
                json!({ "format": "png", "optimizeForSpeed": true }),
                left.min(TRY),
            );
            match r {
                Err(Error::Protocol { .. } | Error::Timeout { .. })
                    if deadline.saturating_duration_since(Instant::now())
                        > Duration::from_millis(100) =>
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                other => break other?,
            }
        };
        let scale = self.config.device_scale;
        let data = r["data"].as_str().ok_or_else(|| Error::BadReply {
            method: "Page.captureScreenshot".into(),
            detail: "no data".into(),
        })?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| Error::BadReply {
                method: "Page.captureScreenshot".into(),
                detail: format!("invalid base64: {e}"),
            })?;
        Ok(Screenshot::from_png(
            &png,
            "Chromium screenshot",
            scale,
            crate::now_ms(),
        )?)
    }

    fn perform(&mut self, action: &Action) -> Result<()> {
        self.service_events()?;
        self.perform_inner(action)
    }

    fn restart(&mut self) -> Result<()> {
        // A crash report still queued (the call that failed was waiting on the dying
        // renderer) decides how the device comes back.
        if let Err(e) = self.service_events() {
            tracing::debug!("events before a restart: {e}");
        }
        // A browser that died on its own is a finding, like a renderer crash (which
        // `service_events` already reported).
        if !self.renderer_crashed
            && let Some(signal) = self.exit_signal(Duration::ZERO)
        {
            self.signals.push(signal);
            return self.relaunch();
        }
        if self.renderer_crashed || self.browser.is_none() {
            return self.relaunch();
        }
        let soft = (|| -> Result<()> {
            // A page that left the last call unanswered for the whole call timeout gets
            // a short second chance, not a second full timeout, before it is taken for
            // hung: the wait of a true hang is paid once.
            let b = self.browser()?;
            if b.cdp.timed_out {
                let session = b.session.clone();
                b.cdp.call_within(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({ "expression": "1" }),
                    HANG_GRACE,
                )?;
            }
            // Keep what the old page covered before leaving it.
            self.coverage()?;
            if self.offline {
                self.set_offline(false)?;
            }
            self.browser()?
                .cdp
                .call(None, "Browser.resetPermissions", json!({}))?;
            self.viewport = self.config.viewport;
            self.split = false;
            self.apply_viewport()?;
            self.navigate("about:blank")?;
            for origin in self.origins.all().to_vec() {
                self.browser()?.call(
                    "Storage.clearDataForOrigin",
                    json!({ "origin": origin, "storageTypes": "all" }),
                )?;
            }
            let url = self.start_url.clone();
            self.navigate(&url)
        })();
        match soft {
            Err(e) if e.is_device_lost() => {
                // A process killed a moment ago may not be reaped yet: give it a little
                // time before calling the loss a hang or a broken connection.
                let signal = self
                    .exit_signal(Duration::from_millis(500))
                    .unwrap_or_else(|| {
                        let what = match e {
                            // Alive but not answering: an endless loop, say.
                            Error::Timeout { .. } => "the page stopped answering (hang)",
                            _ => "the DevTools connection to Chromium broke",
                        };
                        Signal::new(SignalKind::Crash, format!("{what}\n{e}"), Vec::new())
                    });
                self.signals.push(signal);
                self.relaunch()
            }
            other => other,
        }
    }

    fn drain_signals(&mut self) -> Result<Vec<Signal>> {
        self.service_events()?;
        Ok(std::mem::take(&mut self.signals))
    }

    fn drain_events(&mut self) -> Result<Vec<DeviceEvent>> {
        self.service_events()?;
        Ok(std::mem::take(&mut self.events))
    }

    fn coverage(&mut self) -> Result<Option<CoverageSnapshot>> {
        Ok(self.take_coverage()?.map(|_| self.coverage.snapshot()))
    }

    fn covered_functions(&mut self) -> Result<Option<Vec<String>>> {
        if !self.config.coverage {
            return Ok(None);
        }
        Ok(Some(self.coverage.covered_names()))
    }

    fn describe(&self) -> String {
        let version = self
            .browser
            .as_ref()
            .map_or("Chromium", |b| b.version.as_str());
        format!(
            "{version} ({}) at {} {}x{}{}",
            self.executable.display(),
            self.start_url,
            self.config.viewport.width,
            self.config.viewport.height,
            if self.config.mobile { " mobile" } else { "" }
        ) + if self.sandboxed { "" } else { ", no sandbox" }
    }

    fn ui_hierarchy(&mut self) -> Result<Option<UiHierarchy>> {
        self.service_events()?;
        let v = self.evaluate_with_command_line_api(crate::dom_hierarchy::SCRIPT)?;
        // The DOM measures in CSS pixels; bounds are given in screenshot pixels.
        let scale = f64::from(self.config.device_scale);
        crate::dom_hierarchy::parse(v, scale, "Runtime.evaluate").map(Some)
    }
}

impl ChromiumDevice {
    /// Crashes the page's renderer process (DevTools `Page.crash`), as a real renderer
    /// crash would: the device reports a [`SignalKind::Crash`] and is lost until
    /// [`Device::restart`]. For testing recovery.
    pub fn crash_renderer(&mut self) -> Result<()> {
        let b = self.browser()?;
        let session = b.session.clone();
        // The renderer dies before it can answer; the crash report may end the wait.
        match b.cdp.call_within(
            Some(&session),
            "Page.crash",
            json!({}),
            Duration::from_millis(500),
        ) {
            Ok(_) | Err(Error::Timeout { .. }) => {}
            Err(Error::DeviceLost { .. }) if b.cdp.renderer_crashed(&session) => {}
            Err(e) => return Err(e),
        }
        b.cdp.pump(Duration::from_millis(200))?;
        self.service_events()
    }

    /// Starts a DevTools screencast (`Page.startScreencast`): PNG frames no larger than
    /// `max` (aspect ratio kept), sent whenever the compositor draws a new frame, up to
    /// 60 a second. Read them with [`next_screencast_frame`](Self::next_screencast_frame).
    /// For recording transitions (the AdaT data set); the loop never uses it.
    pub fn start_screencast(&mut self, max: Size) -> Result<()> {
        self.frames.clear();
        self.browser()?.call(
            "Page.startScreencast",
            json!({ "format": "png", "maxWidth": max.width, "maxHeight": max.height,
                    "everyNthFrame": 1 }),
        )?;
        Ok(())
    }

    /// The next screencast frame, acknowledged at once so Chromium sends the one after;
    /// `None` when none arrives within `timeout` (a page that does not change sends none).
    pub fn next_screencast_frame(&mut self, timeout: Duration) -> Result<Option<ScreencastFrame>> {
        let ev = match self.frames.pop_front() {
            Some(ev) => ev,
            None => {
                let b = self.browser()?;
                let session = b.session.clone();
                match b
                    .cdp
                    .wait_event(Some(&session), "Page.screencastFrame", timeout)?
                {
                    Some(ev) => ev,
                    None => return Ok(None),
                }
            }
        };
        let ack = ev.params["sessionId"].clone();
        self.browser()?
            .call("Page.screencastFrameAck", json!({ "sessionId": ack }))?;
        let data = ev.params["data"].as_str().unwrap_or("");
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| Error::BadReply {
                method: "Page.screencastFrame".into(),
                detail: format!("invalid base64: {e}"),
            })?;
        let timestamp_ms = ev.params["metadata"]["timestamp"]
            .as_f64()
            .map_or_else(|| crate::now_ms() as f64, |s| s * 1e3);
        Ok(Some(ScreencastFrame { timestamp_ms, png }))
    }

    /// Stops the screencast and drops frames still queued.
    pub fn stop_screencast(&mut self) -> Result<()> {
        self.browser()?.call("Page.stopScreencast", json!({}))?;
        let b = self.browser()?;
        b.cdp.pump(Duration::from_millis(20))?;
        self.service_events()?;
        self.frames.clear();
        Ok(())
    }

    /// Records the screen for `duration`: every screencast frame no larger than `max`,
    /// with its time in ms since the call. The first frame is the screen as it was.
    pub fn capture_frames(
        &mut self,
        duration: Duration,
        max: Size,
    ) -> Result<Vec<(u32, ScreencastFrame)>> {
        let start = crate::now_ms() as f64;
        let deadline = Instant::now() + duration;
        self.start_screencast(max)?;
        let mut out = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            if let Some(f) = self.next_screencast_frame(left)? {
                out.push(((f.timestamp_ms - start).max(0.0) as u32, f));
            }
        }
        self.stop_screencast()?;
        Ok(out)
    }

    /// A crash signal if the browser process has exited (waiting up to `wait` for it).
    fn exit_signal(&mut self, wait: Duration) -> Option<Signal> {
        let deadline = Instant::now() + wait;
        let status = loop {
            let b = self.browser.as_mut()?;
            if let Ok(Some(status)) = b.child.try_wait() {
                break status;
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let message = format!(
            "Chromium exited unexpectedly\n{status}\n{}",
            self.stderr_tail()
        );
        Some(Signal::new(SignalKind::Crash, message, Vec::new()))
    }

    /// The last lines Chromium printed, for error reports.
    pub fn stderr_tail(&self) -> String {
        self.browser.as_ref().map_or_else(String::new, |b| {
            b.stderr_tail
                .lock()
                .expect("tail lock")
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        })
    }
}
