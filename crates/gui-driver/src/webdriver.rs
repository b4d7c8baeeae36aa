//! A browser behind any W3C WebDriver endpoint as a [`Device`]: chromedriver on this
//! machine, a Selenium Grid hub or a cloud grid elsewhere.
//!
//! WebDriver is JSON over plain HTTP, one request per command, so the client is a few
//! functions over the blocking `ureq` agent the workspace already has rather than
//! fantoccini: fantoccini is async and would bring tokio into a crate whose devices are
//! all synchronous, each call bounded by its own timeout ([`Device`] docs); here every
//! command carries its timeout, and a command that outlives it is a hung device. The
//! agent speaks `https://` (cloud grids) when ureq's `rustls` feature is on, as it is in
//! the workspace's binaries through gui-llm's `tls` feature; gui-driver alone speaks
//! plain HTTP.
//!
//! The standard gives screenshots, input (the Actions API), history, window sizes and
//! script execution. Two things it lacks come from Chromium's extensions when the
//! endpoint offers them, probed once per session:
//! - console errors and uncaught exceptions from the browser log (`goog:loggingPrefs` and
//!   `POST /session/{id}/se/log`); without it, from a collector script the device puts
//!   into the page (`error`, `unhandledrejection`, `console.error`);
//! - JS precise coverage, the network switch and permissions through chromedriver's
//!   DevTools passthrough (`POST /session/{id}/goog/cdp/execute`); without it
//!   [`Device::coverage`] is `None` and the access and network actions are not offered.
//!   The passthrough runs commands but delivers no events, so crashes show up as failed
//!   commands, and dialogs, new tabs and pages outside the app are looked for after every
//!   action and before every screenshot (the `policy` module).
//!
//! Actions are those of Table 3's web column, as on [`crate::ChromiumDevice`]: the clicks
//! are pointer button presses at the target; `input` clicks it and types the text key by
//! key (a newline is the Enter key); `drag` moves the pressed left button in six steps;
//! `swipe` scrolls the wheel by 0.6 viewport heights (up scrolls the content down);
//! `window_size` and `split_screen` resize the window so that the page gets the new inner
//! size; `return` goes back in history but not out of the app; `back_switch` opens a
//! tab, shows it for 50 ms and closes it; the access actions and the network switch are
//! DevTools commands. Long click, orientation switch and phone interrupt are mobile
//! actions and refused.

mod chromedriver;
mod client;
mod policy;
mod signals;

use std::time::Duration;

use base64::Engine as _;
use gui_core::{
    Action, ActionKind, CoverageSnapshot, DeviceEvent, Platform, Point, Rect, Screenshot, Signal,
    SignalKind, Size, UiHierarchy,
};
use serde_json::{Value, json};

pub use chromedriver::{ChromeDriver, find_chromedriver};
use client::{Client, Verb};
use policy::Upkeep;

use crate::{AppOrigins, Device, DialogPolicy, Error, JsCoverage, Result};

/// Settings of [`WebDriverDevice`].
#[derive(Debug, Clone)]
pub struct WebDriverConfig {
    /// The WebDriver endpoint: `http://127.0.0.1:9515` for a local chromedriver, a
    /// grid's `http://host:4444/wd/hub` (Selenium Grid 4 also answers at its root).
    pub endpoint: String,
    /// The URL every run starts from. A remote browser must be able to reach it.
    pub start_url: String,
    /// Viewport (the page's inner size) in CSS pixels at the start of every run.
    pub viewport: Size,
    pub headless: bool,
    /// The `browserName` capability. `chrome` gets Chromium options (flags, and the local
    /// Chromium binary when the endpoint is on this machine); other browsers only what
    /// the standard and `extra_capabilities` say.
    pub browser: String,
    /// Bound on one command; a browser that does not answer in time is taken for hung
    /// and gets a new session on [`Device::restart`].
    pub call_timeout: Duration,
    /// Bound on loading a page (the session's `pageLoad` timeout). A page not loaded by
    /// then is used as it is when its document answers, and recorded
    /// ([`gui_core::DeviceEventKind::LoadIncomplete`]).
    pub load_timeout: Duration,
    /// Merged into the `alwaysMatch` capabilities: objects key by key, arrays appended
    /// (so `{"goog:chromeOptions": {"args": [...]}}` adds flags), other values replaced.
    pub extra_capabilities: Value,
    /// Read errors from the browser log when the endpoint serves it; `false` always uses
    /// the collector script, which also gives whole stacks but misses errors of a page
    /// that loads without DevTools before the script is in.
    pub browser_log: bool,
    /// How native dialogs are answered.
    pub dialogs: DialogPolicy,
    /// Origins (or URLs of them) that count as the app besides the start URL's: pages
    /// there are not left for the app again.
    pub allowed_origins: Vec<String>,
}

impl Default for WebDriverConfig {
    fn default() -> Self {
        Self {
            endpoint: "http://127.0.0.1:9515".into(),
            start_url: "about:blank".into(),
            viewport: Size::new(1280, 800),
            headless: true,
            browser: "chrome".into(),
            call_timeout: Duration::from_secs(30),
            load_timeout: Duration::from_secs(20),
            extra_capabilities: json!({}),
            browser_log: true,
            dialogs: DialogPolicy::default(),
            allowed_origins: Vec::new(),
        }
    }
}

impl WebDriverConfig {
    /// Defaults for testing `start_url` through `endpoint`.
    pub fn new(endpoint: impl Into<String>, start_url: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            start_url: start_url.into(),
            ..Self::default()
        }
    }

    /// The capabilities of a new session.
    fn capabilities(&self) -> Value {
        let mut caps = json!({
            "browserName": self.browser,
            // Every dialog is left to the device, which answers it as the policy says and
            // records it (the `policy` module): with `accept` or `dismiss` chromedriver
            // would answer it inside the next command (the release of the click that
            // opened it), unseen, and a prompt would get its default value; with the
            // "and notify" forms likewise, failing that command. With `ignore` commands
            // fail with "unexpected alert open" until the device has answered.
            "unhandledPromptBehavior": "ignore",
            "timeouts": {
                "pageLoad": self.load_timeout.as_millis() as u64,
                "script": self.call_timeout.as_millis() as u64,
            },
        });
        if is_chrome(&self.browser) {
            let mut args: Vec<String> = crate::chromium::CHROMIUM_FLAGS
                .iter()
                .map(|f| (*f).to_owned())
                .collect();
            if self.headless {
                args.push("--headless=new".into());
            }
            let local = is_local(&self.endpoint);
            // Chromium refuses to run as root with its sandbox. Only known for a browser on
            // this machine; a grid's nodes have their own settings.
            if local && running_as_root() {
                args.push("--no-sandbox".into());
            }
            args.push(format!(
                "--window-size={},{}",
                self.viewport.width, self.viewport.height
            ));
            let mut options = json!({ "args": args });
            // Debian's real binary, not the wrapper script chromedriver would find first.
            if local && let Ok(binary) = crate::find_chromium() {
                options["binary"] = json!(binary.display().to_string());
            }
            caps["goog:chromeOptions"] = options;
            caps["goog:loggingPrefs"] = json!({ "browser": "ALL" });
        } else if self.browser == "firefox" && self.headless {
            caps["moz:firefoxOptions"] = json!({ "args": ["-headless"] });
        }
        merge(&mut caps, &self.extra_capabilities);
        caps
    }
}

fn is_chrome(browser: &str) -> bool {
    matches!(browser, "chrome" | "chromium")
}

/// Whether the endpoint's host is this machine.
fn is_local(endpoint: &str) -> bool {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    let host = rest.split('/').next().unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    matches!(host, "127.0.0.1" | "localhost" | "::1")
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `extra` merged into `base`: objects key by key, arrays appended, the rest replaced.
fn merge(base: &mut Value, extra: &Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(b), Value::Array(e)) => b.extend(e.iter().cloned()),
        (b, e) => *b = e.clone(),
    }
}

/// The W3C key value of Enter.
const ENTER: &str = "\u{E007}";

/// One browser session on the endpoint.
#[derive(Debug)]
struct Session {
    id: String,
    browser_name: String,
    browser_version: String,
    /// The window the app runs in.
    window: String,
    /// The endpoint forwards DevTools commands (`goog/cdp/execute`).
    devtools: bool,
    /// The endpoint serves the browser log (`se/log`).
    log_api: bool,
    /// Outer minus inner window size: what a window rect adds around the viewport.
    frame: (i32, i32),
}

/// A web app in a browser behind a W3C WebDriver endpoint.
#[derive(Debug)]
pub struct WebDriverDevice {
    config: WebDriverConfig,
    client: Client,
    /// The start URL's origin: coverage, storage and permissions are its.
    origin: String,
    /// All origins that count as the app.
    origins: AppOrigins,
    session: Option<Session>,
    viewport: Size,
    split: bool,
    offline: bool,
    network_enabled: bool,
    coverage: JsCoverage,
    signals: Vec<Signal>,
    sessions: u32,
    /// Dialogs, tabs, downloads: see the `policy` module.
    upkeep: Upkeep,
}

impl WebDriverDevice {
    /// Opens a session on the endpoint, sizes the window and opens the start URL.
    ///
    /// Fails with [`Error::WebDriver`] naming the endpoint when it cannot be reached or
    /// will not start a browser, and with [`Error::Navigation`] when the URL does not load.
    pub fn connect(config: WebDriverConfig) -> Result<Self> {
        let origin = JsCoverage::origin_of(&config.start_url);
        let upkeep = if is_local(&config.endpoint) {
            Upkeep::local()?
        } else {
            Upkeep::default()
        };
        let mut device = Self {
            client: Client::new(&config.endpoint),
            viewport: config.viewport,
            coverage: JsCoverage::new(origin.clone()),
            origin,
            origins: AppOrigins::new(&config.start_url, &config.allowed_origins),
            upkeep,
            config,
            session: None,
            split: false,
            offline: false,
            network_enabled: false,
            signals: Vec::new(),
            sessions: 0,
        };
        device.open_session()?;
        tracing::info!("started {}", device.describe());
        Ok(device)
    }

    /// The URL every run starts from.
    pub fn start_url(&self) -> &str {
        &self.config.start_url
    }

    /// How many sessions this device has opened (1 + those that replaced lost ones).
    pub fn sessions(&self) -> u32 {
        self.sessions
    }

    /// The current session's id on the endpoint.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_ref().map(|s| s.id.as_str())
    }

    /// Whether the endpoint forwards DevTools commands, which coverage, the network switch
    /// and the access actions need.
    pub fn has_devtools(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.devtools)
    }

    /// Runs a script in the page as the body of a function (`return` gives its value;
    /// `arguments` holds `args`) and returns the value as JSON. For tests and grey-box
    /// analyses; strategies must not depend on it.
    pub fn execute(&mut self, script: &str, args: &[Value]) -> Result<Value> {
        self.command(
            Verb::Post,
            "execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// The viewport box of the first element matching a CSS selector, if it is rendered.
    pub fn element_rect(&mut self, selector: &str) -> Result<Option<Rect>> {
        let v = self.execute(
            "const e = document.querySelector(arguments[0]); if (!e) return null; \
             const r = e.getBoundingClientRect(); return [r.x, r.y, r.width, r.height];",
            &[json!(selector)],
        )?;
        Ok(v.as_array().map(|a| {
            let n = |i: usize| a.get(i).and_then(Value::as_f64).unwrap_or(0.0);
            Rect::new(
                n(0).round() as i32,
                n(1).round() as i32,
                n(2).round() as u32,
                n(3).round() as u32,
            )
        }))
    }

    /// Crashes the app's tab (DevTools `Page.crash` through the passthrough), as a real
    /// renderer crash would: later commands fail with a lost device until
    /// [`Device::restart`], which reports the crash. For testing recovery.
    pub fn crash_tab(&mut self) -> Result<()> {
        let path = format!("/session/{}/goog/cdp/execute", self.session()?.id);
        // The tab dies before it can answer.
        match self.client.send(
            Verb::Post,
            &path,
            Some(&json!({ "cmd": "Page.crash", "params": {} })),
            "Page.crash (WebDriver DevTools passthrough)",
            Duration::from_secs(2),
        ) {
            Ok(_) | Err(Error::Timeout { .. }) => Ok(()),
            Err(e) if e.is_device_lost() => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn session(&self) -> Result<&Session> {
        self.session.as_ref().ok_or_else(|| Error::DeviceLost {
            what: format!("no WebDriver session on {}", self.client.endpoint()),
        })
    }

    /// One command of the current session, `rel` relative to `/session/{id}/`.
    fn command(&mut self, verb: Verb, rel: &str, body: Option<Value>) -> Result<Value> {
        self.command_within(verb, rel, body, self.config.call_timeout)
    }

    fn command_within(
        &mut self,
        verb: Verb,
        rel: &str,
        body: Option<Value>,
        timeout: Duration,
    ) -> Result<Value> {
        let path = format!("/session/{}/{rel}", self.session()?.id);
        let what = format!("WebDriver {} …/{rel}", verb.as_str());
        self.send_answering_dialogs(verb, &path, body.as_ref(), &what, timeout)
    }

    /// Sends a command; one refused because a dialog is open ("unexpected alert open")
    /// is sent again once the dialogs are answered. A few times at most: a page can open
    /// a new dialog from a timer between the answer and the command.
    fn send_answering_dialogs(
        &mut self,
        verb: Verb,
        path: &str,
        body: Option<&Value>,
        what: &str,
        timeout: Duration,
    ) -> Result<Value> {
        const TRIES: usize = 3;
        let mut tries = 0;
        loop {
            match self.client.send(verb, path, body, what, timeout) {
                Err(e) if policy::is_unexpected_alert(&e) && tries < TRIES => {
                    tries += 1;
                    self.answer_dialogs(self.config.dialogs)?;
                }
                r => return r,
            }
        }
    }

    /// A DevTools command through the passthrough.
    fn devtools(&mut self, method: &str, params: Value) -> Result<Value> {
        let path = format!("/session/{}/goog/cdp/execute", self.session()?.id);
        let what = format!("{method} (WebDriver DevTools passthrough)");
        self.send_answering_dialogs(
            Verb::Post,
            &path,
            Some(&json!({ "cmd": method, "params": params })),
            &what,
            self.config.call_timeout,
        )
    }

    /// Ends any old session and opens a new one on the start URL.
    fn open_session(&mut self) -> Result<()> {
        if let Some(old) = self.session.take() {
            // Best effort: a lost session is usually gone already.
            let _ = self.client.send(
                Verb::Delete,
                &format!("/session/{}", old.id),
                None,
                "WebDriver DELETE session",
                Duration::from_secs(2),
            );
        }
        self.split = false;
        self.offline = false;
        self.network_enabled = false;
        self.viewport = self.config.viewport;
        self.upkeep.last_app_url = None;
        let endpoint = self.client.endpoint().to_owned();
        let caps = self.config.capabilities();
        let r = self
            .client
            .send(
                Verb::Post,
                "/session",
                Some(&json!({ "capabilities": { "alwaysMatch": caps, "firstMatch": [{}] } })),
                "WebDriver POST /session",
                // A grid may queue the request until a node is free.
                self.config.call_timeout.max(Duration::from_secs(60)),
            )
            .map_err(|e| Error::WebDriver {
                url: endpoint.clone(),
                reason: match e {
                    // Says "WebDriver endpoint URL unreachable: ..." already.
                    Error::DeviceLost { what } => what
                        .strip_prefix(&format!("WebDriver endpoint {endpoint} "))
                        .unwrap_or(&what)
                        .to_owned(),
                    e => format!("cannot open a session: {e}"),
                },
            })?;
        let id = r["sessionId"].as_str().ok_or_else(|| Error::WebDriver {
            url: endpoint.clone(),
            reason: format!("no sessionId in {}", client::excerpt(&r.to_string())),
        })?;
        let caps = &r["capabilities"];
        self.session = Some(Session {
            id: id.to_owned(),
            browser_name: caps["browserName"]
                .as_str()
                .unwrap_or(&self.config.browser)
                .to_owned(),
            browser_version: caps["browserVersion"]
                .as_str()
                .or(caps["version"].as_str())
                .unwrap_or("?")
                .to_owned(),
            window: String::new(),
            devtools: false,
            log_api: false,
            frame: (0, 0),
        });
        self.sessions += 1;

        let window = self.command(Verb::Get, "window", None)?;
        // Probe the extensions once: anything but a lost session means "not offered".
        let devtools = match self.devtools("Browser.getVersion", json!({})) {
            Ok(_) => true,
            Err(e) if e.is_device_lost() => return Err(e),
            Err(e) => {
                tracing::info!("no DevTools passthrough on {endpoint}: {e}");
                false
            }
        };
        // Reading the log also empties it of anything from before the app.
        let log_api = self.config.browser_log
            && match self.command(Verb::Post, "se/log", Some(json!({ "type": "browser" }))) {
                Ok(v) => v.is_array(),
                Err(e) if e.is_device_lost() => return Err(e),
                Err(e) => {
                    tracing::info!(
                        "no browser log on {endpoint}, collecting errors in the page: {e}"
                    );
                    false
                }
            };
        let s = self.session.as_mut().expect("session just opened");
        s.window = window.as_str().unwrap_or("").to_owned();
        s.devtools = devtools;
        s.log_api = log_api;

        self.prepare_page()?;
        let frame = self.execute(
            "return [outerWidth - innerWidth, outerHeight - innerHeight];",
            &[],
        )?;
        let n = |i: usize| frame[i].as_i64().unwrap_or(0) as i32;
        self.session.as_mut().expect("session").frame = (n(0), n(1));
        self.set_viewport(self.config.viewport)?;
        let url = self.config.start_url.clone();
        self.navigate(&url)
    }

    /// Sets up the current window's page for a run: coverage from its first script, the
    /// error collector and the page hooks in every new document, downloads into the
    /// scratch folder. DevTools commands address one page, so a reopened window needs
    /// this again.
    fn prepare_page(&mut self) -> Result<()> {
        if !self.has_devtools() {
            return Ok(());
        }
        self.devtools("Profiler.enable", json!({}))?;
        // Started before the app loads so its first script is measured from its start.
        self.devtools(
            "Profiler.startPreciseCoverage",
            json!({ "callCount": true, "detailed": true }),
        )?;
        let mut scripts = vec![policy::PAGE_HOOKS];
        if !self.session()?.log_api {
            // Before any script of every new document, so load-time errors are caught.
            scripts.push(signals::COLLECTOR);
        }
        for script in scripts {
            self.devtools(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": format!("(() => {{ {script} }})()") }),
            )?;
        }
        if let Some(dir) = self.upkeep.download_dir() {
            let set = self.devtools(
                "Browser.setDownloadBehavior",
                json!({ "behavior": "allow", "downloadPath": dir.display().to_string() }),
            );
            match set {
                Ok(_) => {}
                Err(e) if e.is_device_lost() => return Err(e),
                Err(e) => tracing::info!("downloads stay where the browser puts them: {e}"),
            }
        }
        Ok(())
    }

    /// Opens `url` in the app's window. A page that does not finish loading in time is
    /// kept when it shows a document ([`gui_core::DeviceEventKind::LoadIncomplete`]).
    fn navigate(&mut self, url: &str) -> Result<()> {
        match self.load_command(Verb::Post, "url", Some(json!({ "url": url })), url) {
            Ok(()) => {}
            Err(e) if e.is_device_lost() => return Err(e),
            Err(e) => {
                return Err(Error::Navigation {
                    url: url.to_owned(),
                    reason: e.to_string(),
                });
            }
        }
        self.install_page_scripts()
    }

    /// Puts the error collector into the page when the browser log is not available, and
    /// the page hooks when DevTools cannot put them into every new document.
    fn install_page_scripts(&mut self) -> Result<()> {
        if !self.has_devtools() {
            self.execute(policy::PAGE_HOOKS, &[])?;
        }
        if self.session()?.log_api {
            return Ok(());
        }
        let records = self.execute(signals::COLLECTOR, &[])?;
        self.add_records(&records);
        Ok(())
    }

    fn add_records(&mut self, records: &Value) {
        for r in records.as_array().into_iter().flatten() {
            if let Some(s) = signals::signal_of_record(r) {
                self.signals.push(s);
            }
        }
    }

    /// Sizes the window so the page's inner size is `size` and records the size reached
    /// (a window manager or a screen may refuse some sizes).
    fn set_viewport(&mut self, size: Size) -> Result<()> {
        let mut inner = Size::new(0, 0);
        // The frame measured at the start can be off (scrollbars, a window manager): one
        // more try with the frame measured after the first.
        for _ in 0..2 {
            let (fx, fy) = self.session()?.frame;
            self.command(
                Verb::Post,
                "window/rect",
                Some(json!({
                    "width": size.width as i32 + fx,
                    "height": size.height as i32 + fy,
                })),
            )?;
            let (reached, frame) = self.settled_size(size)?;
            inner = reached;
            if let Some(s) = self.session.as_mut() {
                s.frame = frame;
            }
            if inner == size {
                break;
            }
        }
        if inner != size {
            tracing::warn!(
                "asked for a {}x{} viewport, the browser gave {}x{}",
                size.width,
                size.height,
                inner.width,
                inner.height
            );
        }
        self.viewport = inner;
        Ok(())
    }

    /// The page's inner size and the window frame once a resize has reached the page:
    /// the window rect command returns before the renderer hears of the new size, so
    /// the size is read until it is `want` or stays the same for a while (at most 1 s).
    fn settled_size(&mut self, want: Size) -> Result<(Size, (i32, i32))> {
        let measure =
            "return [innerWidth, innerHeight, outerWidth - innerWidth, outerHeight - innerHeight];";
        let start = std::time::Instant::now();
        let mut last: Option<Value> = None;
        loop {
            let v = self.execute(measure, &[])?;
            let n = |i: usize| v[i].as_i64().unwrap_or(0);
            let inner = Size::new(n(0).max(1) as u32, n(1).max(1) as u32);
            let frame = (n(2) as i32, n(3) as i32);
            let elapsed = start.elapsed();
            let steady = last.as_ref() == Some(&v) && elapsed > Duration::from_millis(200);
            if inner == want || steady || elapsed > Duration::from_secs(1) {
                return Ok((inner, frame));
            }
            last = Some(v);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Points outside the viewport are refused by the Actions API; actions aim inside it.
    fn clamp(&self, p: Point) -> (i32, i32) {
        let vp = self.viewport;
        (
            p.x.clamp(0, vp.width as i32 - 1),
            p.y.clamp(0, vp.height as i32 - 1),
        )
    }

    /// Performs one Actions API sequence and releases whatever it left pressed.
    fn actions(&mut self, sources: Value) -> Result<()> {
        self.command(Verb::Post, "actions", Some(json!({ "actions": sources })))?;
        self.command(Verb::Delete, "actions", None)?;
        Ok(())
    }

    fn pointer(&mut self, steps: Vec<Value>) -> Result<()> {
        self.actions(json!([{
            "type": "pointer",
            "id": "mouse",
            "parameters": { "pointerType": "mouse" },
            "actions": steps,
        }]))
    }

    /// `clicks` presses of `button` (0 left, 1 middle, 2 right) at `p`.
    fn click(&mut self, p: Point, button: u32, clicks: u32) -> Result<()> {
        let (x, y) = self.clamp(p);
        let mut steps = vec![
            json!({ "type": "pointerMove", "duration": 0, "x": x, "y": y, "origin": "viewport" }),
        ];
        for _ in 0..clicks {
            steps.push(json!({ "type": "pointerDown", "button": button }));
            steps.push(json!({ "type": "pointerUp", "button": button }));
        }
        self.pointer(steps)
    }

    /// Left button down on `from`, moved by (dx, dy) in six steps, released.
    fn drag(&mut self, from: Point, dx: i32, dy: i32) -> Result<()> {
        let (x, y) = self.clamp(from);
        let mut steps = vec![
            json!({ "type": "pointerMove", "duration": 0, "x": x, "y": y, "origin": "viewport" }),
            json!({ "type": "pointerDown", "button": 0 }),
        ];
        const STEPS: i32 = 6;
        for i in 1..=STEPS {
            let (px, py) = self.clamp(Point::new(x + dx * i / STEPS, y + dy * i / STEPS));
            steps.push(
                json!({ "type": "pointerMove", "duration": 16, "x": px, "y": py, "origin": "viewport" }),
            );
        }
        steps.push(json!({ "type": "pointerUp", "button": 0 }));
        self.pointer(steps)
    }

    /// Types `text` key by key into the focused element; each newline is the Enter key.
    fn type_text(&mut self, text: &str) -> Result<()> {
        let keys: Vec<Value> = text
            .chars()
            .flat_map(|c| {
                let key = if c == '\n' {
                    ENTER.to_owned()
                } else {
                    c.to_string()
                };
                [
                    json!({ "type": "keyDown", "value": key }),
                    json!({ "type": "keyUp", "value": key }),
                ]
            })
            .collect();
        if keys.is_empty() {
            return Ok(());
        }
        self.actions(json!([{ "type": "key", "id": "keyboard", "actions": keys }]))
    }

    fn wheel(&mut self, at: Point, delta_y: i32) -> Result<()> {
        let (x, y) = self.clamp(at);
        self.actions(json!([{
            "type": "wheel",
            "id": "wheel",
            "actions": [{ "type": "scroll", "x": x, "y": y, "deltaX": 0, "deltaY": delta_y,
                          "duration": 0, "origin": "viewport" }],
        }]))
    }

    /// `return`: one step back in history, but never out of the app. With DevTools the
    /// history is read first and a step out of the app's origins is not taken, as
    /// Chromium's device does; without, the step is taken and undone when it left the app.
    fn history_back(&mut self) -> Result<()> {
        if self.has_devtools() {
            if self.previous_entry_is_app()? {
                self.load_command(Verb::Post, "back", None, "the previous page")?;
            }
            return Ok(());
        }
        self.load_command(Verb::Post, "back", None, "the previous page")?;
        let url = self.current_url()?;
        if !self.origins.contains(&url) {
            self.load_command(Verb::Post, "forward", None, "the next page")?;
        }
        Ok(())
    }

    /// `back_switch`: another tab takes the front for a moment, then the app's comes
    /// back (Chromium's device does the same with DevTools targets).
    fn back_switch(&mut self) -> Result<()> {
        let own = self.session()?.window.clone();
        let r = self.command(Verb::Post, "window/new", Some(json!({ "type": "tab" })))?;
        let other = r["handle"].as_str().unwrap_or("").to_owned();
        let away = (|| -> Result<()> {
            self.command(Verb::Post, "window", Some(json!({ "handle": other })))?;
            std::thread::sleep(Duration::from_millis(50));
            // Closes the current window, the new tab.
            self.command(Verb::Delete, "window", None)?;
            Ok(())
        })();
        // Whatever happened in between, the app's window is the current one again.
        let back = self.command(Verb::Post, "window", Some(json!({ "handle": own })));
        away.and(back).map(drop)
    }

    fn set_offline(&mut self, offline: bool) -> Result<()> {
        for (method, params) in crate::offline_commands(self.network_enabled, offline) {
            self.devtools(method, params)?;
            self.network_enabled = true;
        }
        self.offline = offline;
        Ok(())
    }

    /// Clears the app's cookies and storage and opens the start URL afresh.
    fn clear_storage_and_reload(&mut self) -> Result<()> {
        let url = self.config.start_url.clone();
        self.upkeep.last_app_url = None;
        if self.has_devtools() {
            self.navigate("about:blank")?;
            let origin = self.origin.clone();
            self.devtools(
                "Storage.clearDataForOrigin",
                json!({ "origin": origin, "storageTypes": "all" }),
            )?;
            return self.navigate(&url);
        }
        // Scripts clear only the storage of the page they run in: clear from the app's
        // page, then reload it (a navigation to the same URL with another fragment would
        // keep the page).
        self.navigate(&url)?;
        self.command(Verb::Delete, "cookie", None)?;
        self.execute(
            "try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} return null;",
            &[],
        )?;
        self.load_command(Verb::Post, "refresh", None, &url)?;
        self.install_page_scripts()
    }

    fn perform_inner(&mut self, action: &Action) -> Result<()> {
        use ActionKind::*;
        if !self.supported_actions().contains(&action.kind) {
            return Err(Error::Unsupported {
                action: action.kind,
                platform: Platform::Web,
            });
        }
        let target = || {
            action.point().ok_or(Error::BadAction {
                action: action.kind,
                what: "a target",
            })
        };
        match action.kind {
            Click => self.click(target()?, 0, 1),
            DoubleClick => self.click(target()?, 0, 2),
            MidClick => self.click(target()?, 1, 1),
            RightClick => self.click(target()?, 2, 1),
            Input => {
                self.click(target()?, 0, 1)?;
                // The keys replace the field's text, as on Chromium; best effort there too.
                let select = format!("return {};", crate::SELECT_FOCUSED_TEXT);
                if let Err(e) = self.execute(&select, &[])
                    && e.is_device_lost()
                {
                    return Err(e);
                }
                let text = crate::typed_text(action);
                self.type_text(text)
            }
            Drag => {
                let (dx, dy) = crate::drag_offset(action, self.viewport);
                self.drag(target()?, dx, dy)
            }
            Swipe => {
                let (at, dy) = crate::wheel_scroll(action, self.viewport);
                self.wheel(at, dy.round() as i32)
            }
            SplitScreen => {
                self.split = !self.split;
                let base = self.config.viewport;
                let size = if self.split {
                    Size::new((base.width / 2).max(1), base.height)
                } else {
                    base
                };
                self.set_viewport(size)
            }
            WindowSize => {
                let size = crate::window_size_for(action, self.config.viewport)?;
                self.split = false;
                self.set_viewport(size)
            }
            Return => self.history_back(),
            BackSwitch => self.back_switch(),
            AccessGrant => {
                let origin = self.origin.clone();
                self.devtools(
                    "Browser.grantPermissions",
                    json!({ "origin": origin, "permissions": crate::chromium::PERMISSIONS }),
                )
                .map(drop)
            }
            AccessDeny => self
                .devtools("Browser.resetPermissions", json!({}))
                .map(drop),
            NetworkSwitch => {
                let off = !self.offline;
                self.set_offline(off)
            }
            LongClick | OrientationSwitch | PhoneInterrupt => {
                unreachable!("not in supported_actions")
            }
        }
    }
}

impl Device for WebDriverDevice {
    fn platform(&self) -> Platform {
        Platform::Web
    }

    fn viewport(&self) -> Size {
        self.viewport
    }

    fn screenshot(&mut self) -> Result<Screenshot> {
        // What happened since the action (a timer's dialog, a popup, a link out of the
        // app) is dealt with before the agent sees it.
        self.settle()?;
        let data = self.command(Verb::Get, "screenshot", None)?;
        let png = data
            .as_str()
            .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok())
            .ok_or_else(|| Error::BadReply {
                method: "WebDriver GET …/screenshot".into(),
                detail: "no base64 PNG in the answer".into(),
            })?;
        Ok(Screenshot::from_png(
            &png,
            "WebDriver screenshot",
            1.0,
            crate::now_ms(),
        )?)
    }

    fn perform(&mut self, action: &Action) -> Result<()> {
        let done = self.perform_inner(action);
        match &done {
            // Nothing was done.
            Err(Error::Unsupported { .. } | Error::BadAction { .. }) => return done,
            // The action closed the app's window (`window.close()`, where the browser
            // allows it): the rest of it (the release of the buttons) had nowhere to go.
            // Not a lost device while the browser is there; the window is opened again.
            Err(e) if policy::is_no_such_window(e) => {
                if self.keep_app_window().is_err() {
                    return done;
                }
                self.settle()?;
                return Ok(());
            }
            // A hang or a crash is the loop's to see, as it is.
            Err(e) if e.is_device_lost() => return done,
            _ => {}
        }
        self.settle()?;
        done
    }

    fn restart(&mut self) -> Result<()> {
        if self.session.is_none() {
            return self.open_session();
        }
        let soft = (|| -> Result<()> {
            // A window the app closed would fail what follows (an open dialog is
            // answered by the first command it fails).
            self.keep_app_window()?;
            // Keep what the old page covered before leaving it.
            self.coverage()?;
            if self.has_devtools() {
                if self.offline {
                    self.set_offline(false)?;
                }
                self.devtools("Browser.resetPermissions", json!({}))?;
            }
            self.split = false;
            self.set_viewport(self.config.viewport)?;
            self.clear_storage_and_reload()
        })();
        match soft {
            Err(e) if e.is_device_lost() => {
                // A hang or a crashed tab is a finding, as on Chromium's device; a session
                // the endpoint dropped (a grid's idle timeout, a restarted driver) is not.
                let crashed = match &e {
                    Error::Timeout { .. } => Some("the page stopped answering (hang)"),
                    Error::DeviceLost { what } if what.contains("crashed") => {
                        Some("the browser tab crashed")
                    }
                    _ => None,
                };
                if let Some(what) = crashed {
                    self.signals.push(Signal::new(
                        SignalKind::Crash,
                        format!("{what}\n{e}"),
                        Vec::new(),
                    ));
                } else {
                    tracing::warn!("WebDriver session lost, opening a new one: {e}");
                }
                self.open_session()
            }
            other => other,
        }
    }

    fn drain_signals(&mut self) -> Result<Vec<Signal>> {
        if let Some(s) = &self.session {
            if s.log_api {
                let entries =
                    self.command(Verb::Post, "se/log", Some(json!({ "type": "browser" })))?;
                for e in entries.as_array().into_iter().flatten() {
                    if let Some(signal) = signals::signal_of_log_entry(e) {
                        self.signals.push(signal);
                    }
                }
            } else {
                let records = self.execute(signals::COLLECTOR, &[])?;
                self.add_records(&records);
            }
        }
        Ok(std::mem::take(&mut self.signals))
    }

    fn coverage(&mut self) -> Result<Option<CoverageSnapshot>> {
        if !self.has_devtools() {
            return Ok(None);
        }
        let r = self.devtools("Profiler.takePreciseCoverage", json!({}))?;
        self.coverage.add_take(&r["result"]);
        Ok(Some(self.coverage.snapshot()))
    }

    fn covered_functions(&mut self) -> Result<Option<Vec<String>>> {
        if !self.has_devtools() {
            return Ok(None);
        }
        Ok(Some(self.coverage.covered_names()))
    }

    fn supported_actions(&self) -> Vec<ActionKind> {
        let devtools = self.has_devtools();
        ActionKind::supported(Platform::Web)
            .filter(|k| {
                devtools
                    || !matches!(
                        k,
                        ActionKind::AccessGrant
                            | ActionKind::AccessDeny
                            | ActionKind::NetworkSwitch
                    )
            })
            .collect()
    }

    fn describe(&self) -> String {
        let (name, version, devtools) = self.session.as_ref().map_or(("?", "?", false), |s| {
            (
                s.browser_name.as_str(),
                s.browser_version.as_str(),
                s.devtools,
            )
        });
        format!(
            "WebDriver {} {name} {version} at {} {}x{}{}",
            crate::redact_userinfo(self.client.endpoint()),
            self.config.start_url,
            self.config.viewport.width,
            self.config.viewport.height,
            if devtools {
                ""
            } else {
                " (no DevTools passthrough: no coverage, network or permission actions)"
            }
        )
    }

    fn drain_events(&mut self) -> Result<Vec<DeviceEvent>> {
        Ok(self.take_events())
    }

    fn ui_hierarchy(&mut self) -> Result<Option<UiHierarchy>> {
        // The script is one expression; WebDriver runs function bodies. Its listener check
        // needs the DevTools console API and quietly finds none here, so only elements
        // that are clickable by their kind, role or `onclick` attribute count as such.
        let script = format!("return (\n{}\n);", crate::dom_hierarchy::SCRIPT);
        let v = self.execute(&script, &[])?;
        crate::dom_hierarchy::parse(v, 1.0, "WebDriver POST …/execute/sync").map(Some)
    }
}

impl Drop for WebDriverDevice {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            // Ends the browser; an endpoint that is gone has nothing left to end.
            let _ = self.client.send(
                Verb::Delete,
                &format!("/session/{}", s.id),
                None,
                "WebDriver DELETE session",
                Duration::from_secs(5),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_endpoints_are_recognised() {
        assert!(is_local("http://127.0.0.1:9515"));
        assert!(is_local("http://localhost:4444/wd/hub"));
        assert!(is_local("http://[::1]:9515/"));
        assert!(!is_local("https://user:key@hub.example.com/wd/hub"));
        assert!(!is_local("http://10.0.0.5:4444"));
    }

    #[test]
    fn extra_capabilities_merge_into_the_defaults() {
        let mut config = WebDriverConfig::new("http://grid.example:4444/wd/hub", "http://app/");
        config.extra_capabilities = json!({
            "goog:chromeOptions": { "args": ["--lang=de"] },
            "platformName": "linux",
        });
        let caps = config.capabilities();
        let args = caps["goog:chromeOptions"]["args"].as_array().unwrap();
        assert!(args.contains(&json!("--headless=new")));
        assert_eq!(args.last(), Some(&json!("--lang=de")));
        assert_eq!(caps["platformName"], "linux");
        // A remote endpoint gets no local binary and no sandbox decision.
        assert!(caps["goog:chromeOptions"].get("binary").is_none());
        assert!(!args.contains(&json!("--no-sandbox")));
        assert_eq!(caps["goog:loggingPrefs"]["browser"], "ALL");
        // Dialogs are the device's to answer, whatever the policy.
        assert_eq!(caps["unhandledPromptBehavior"], "ignore");
    }
}
