//! What the WebDriver device does when a page does what a person's browser would handle
//! ([`crate::web_policy`]): native dialogs, new tabs and popups, the app closing its own
//! window, leaving the app's origins, file inputs and downloads. Each is handled between
//! actions ([`WebDriverDevice::settle`], run after every action and before every
//! screenshot) and recorded as a [`DeviceEvent`].
//!
//! WebDriver reports none of these as events (chromedriver's DevTools passthrough runs
//! commands but delivers no events), so the device looks for them:
//! - dialogs: the session leaves them open (`unhandledPromptBehavior: ignore`), so every
//!   command fails with "unexpected alert open" while one is; the device then reads its
//!   message (`GET …/alert/text`), answers it (`POST …/alert/accept|dismiss`, with
//!   [`PROMPT_TEXT`] typed into a prompt when accepting) and sends the command again.
//!   With `accept` or `dismiss` chromedriver would answer the dialog inside the next
//!   command (the release of the click that opened it), unseen, and a prompt would get
//!   its default value. Which kind of dialog it was comes from [`PAGE_HOOKS`], a script
//!   that notes each `alert`, `confirm` and `prompt` call and its result; dialogs it did
//!   not see (`beforeunload` in browsers that show one, a page without the script) are
//!   recorded as `dialog`, or `prompt` when it took the text;
//! - tabs: `GET …/window/handles`; every window but the app's is closed, and the app's is
//!   opened again on the last in-app URL when it is gone. (Chromium refuses
//!   `window.close()` on a window no script opened, so there the app cannot close its
//!   own; other browsers and windows closed from outside can.)
//! - leaving: the page's URL against [`crate::AppOrigins`]; back in history when that is
//!   the app, else the last in-app URL;
//! - file inputs: [`PAGE_HOOKS`] notes a click that would open a file chooser (headless
//!   Chromium opens none and does not block, and WebDriver could not answer a native
//!   one); the device then gives the input the upload file through
//!   `POST …/element/{id}/value`, as WebDriver uploads files. Only for an endpoint on this
//!   machine, where the file is; elsewhere the chooser is recorded as cancelled;
//! - downloads: with the passthrough, `Browser.setDownloadBehavior` sends them to a
//!   temporary folder, which is read for finished files. Only on this machine, too. The
//!   folder gives names but not the URLs they came from.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gui_core::{DeviceEvent, DeviceEventKind};
use serde_json::{Value, json};

use super::WebDriverDevice;
use super::client::Verb;
use crate::web_policy::{UPLOAD_NAME, dialog_event};
use crate::{DialogPolicy, Error, PROMPT_TEXT, Result};

/// Dialogs answered in one go at most: a page that opens one from each answer's handler
/// would keep the device answering forever. The next call goes on where this one stopped.
const MAX_DIALOGS: usize = 50;

/// Most device events kept between two drains, as on the Chromium device.
const MAX_EVENTS: usize = 1000;

/// Rounds of "close tabs, answer dialogs" per settle: an answer can open a tab, a tab's
/// closing can raise a dialog.
const SETTLE_ROUNDS: usize = 4;

/// How long a new tab's first page gets to commit, so that its URL can be recorded.
const TAB_URL_WAIT: Duration = Duration::from_millis(500);

/// The key of a web element reference in W3C answers.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Notes native dialogs and file-chooser clicks in `window.__guiTestingHooks`, once per
/// document. Put into every new document through the passthrough
/// (`Page.addScriptToEvaluateOnNewDocument`), else into the pages the device opens itself.
/// A dialog is noted before it opens (its kind and message) and its result after it
/// closes, so the record says what the page got, whoever answered.
pub(super) const PAGE_HOOKS: &str = r#"
const w = window;
if (!w.__guiTestingHooks) {
  const hooks = w.__guiTestingHooks = { dialogs: [], file: null };
  for (const type of ['alert', 'confirm', 'prompt']) {
    const original = w[type];
    if (typeof original !== 'function') continue;
    w[type] = function (...args) {
      const entry = { type, message: args.length && args[0] !== undefined ? String(args[0]) : '' };
      if (hooks.dialogs.length < 200) hooks.dialogs.push(entry);
      const result = original.apply(w, args);
      entry.result = result === undefined ? null : result;
      entry.closed = true;
      return result;
    };
  }
  // The click itself is kept, so that one the page cancels later opens no chooser here.
  w.addEventListener('click', ev => {
    const t = ev.target;
    if (t instanceof HTMLInputElement && t.type === 'file' && !t.disabled) {
      hooks.file = { input: t, event: ev };
    }
  }, true);
}
"#;

/// The page's URL and, handed over and forgotten, what [`PAGE_HOOKS`] noted:
/// `{href, hooks: {dialogs, file}}`, `file` the input whose chooser would have opened,
/// as an element reference; `hooks` is `null` in a page without them.
const TAKE_HOOKS: &str = r#"
const hooks = window.__guiTestingHooks;
if (!hooks) return { href: location.href, hooks: null };
let file = null;
if (hooks.file) {
  const { input, event } = hooks.file;
  if (!event.defaultPrevented && input.isConnected) file = input;
  hooks.file = null;
}
return { href: location.href,
         hooks: { dialogs: hooks.dialogs.splice(0), file, fileMultiple: !!(file && file.multiple) } };
"#;

/// A dialog the device answered itself, waiting for [`PAGE_HOOKS`]'s record of its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AnsweredDialog {
    pub message: String,
    pub accepted: bool,
    /// The dialog took [`PROMPT_TEXT`]: only a prompt does.
    pub typed: bool,
}

impl AnsweredDialog {
    /// Its event when no page record says more.
    fn event(&self) -> DeviceEvent {
        let kind = if self.typed { "prompt" } else { "dialog" };
        dialog_event(kind, &self.message, self.accepted)
    }
}

/// The events of the dialogs the device answered (`answered`), in order, each with its
/// kind and the page's result from the first of the page's `records` ([`TAKE_HOOKS`])
/// with its message. Records of no answered dialog are of dialogs recorded before (read
/// late) and are dropped.
pub(super) fn dialog_events(records: &[Value], answered: &[AnsweredDialog]) -> Vec<DeviceEvent> {
    let mut unmatched: Vec<&Value> = records.iter().collect();
    answered
        .iter()
        .map(|a| {
            let Some(i) = unmatched
                .iter()
                .position(|r| r["message"].as_str() == Some(a.message.as_str()))
            else {
                return a.event();
            };
            let r = unmatched.remove(i);
            let kind = r["type"].as_str().unwrap_or("dialog");
            // What the page got, where the record has it.
            let accepted = match (kind, r["closed"].as_bool(), &r["result"]) {
                ("confirm", Some(true), Value::Bool(got)) => *got,
                ("prompt", Some(true), Value::String(_)) => true,
                ("prompt", Some(true), Value::Null) => false,
                _ => a.accepted,
            };
            dialog_event(kind, &a.message, accepted)
        })
        .collect()
}

/// What the device keeps for [`settle`](WebDriverDevice::settle) between calls.
#[derive(Debug, Default)]
pub(super) struct Upkeep {
    /// Events not yet drained.
    pub events: Vec<DeviceEvent>,
    /// Dialogs answered since the page's records were last read.
    pub answered: Vec<AnsweredDialog>,
    /// Dialogs answered in all.
    pub dialogs_answered: u64,
    /// The last URL seen inside the app's origins: where the app is brought back to.
    pub last_app_url: Option<String>,
    /// Downloads go here (`downloads/`), and the upload file lives here. Only for an
    /// endpoint on this machine.
    pub scratch: Option<tempfile::TempDir>,
    pub upload: Option<PathBuf>,
    /// Downloads already recorded.
    pub downloads_seen: BTreeSet<String>,
}

impl Upkeep {
    /// A scratch folder with the upload file, for a browser on this machine.
    pub fn local() -> Result<Self> {
        let scratch = tempfile::Builder::new()
            .prefix("gui-testing-webdriver-")
            .tempdir()
            .map_err(|e| Error::io("create a folder for downloads and uploads", e))?;
        let downloads = scratch.path().join("downloads");
        std::fs::create_dir(&downloads)
            .map_err(|e| Error::io(format!("create {}", downloads.display()), e))?;
        let upload = crate::web_policy::upload_file(scratch.path())?;
        Ok(Self {
            scratch: Some(scratch),
            upload: Some(upload),
            ..Self::default()
        })
    }

    pub fn download_dir(&self) -> Option<PathBuf> {
        self.scratch.as_ref().map(|s| s.path().join("downloads"))
    }

    fn push(&mut self, kind: DeviceEventKind, detail: impl AsRef<str>) {
        self.extend([DeviceEvent::new(kind, detail)]);
    }

    /// Keeps events for [`Device::drain_events`](crate::Device::drain_events), up to
    /// [`MAX_EVENTS`] between two drains (a page can open dialogs without end).
    fn extend(&mut self, events: impl IntoIterator<Item = DeviceEvent>) {
        let room = MAX_EVENTS.saturating_sub(self.events.len());
        self.events.extend(events.into_iter().take(room));
    }
}

/// Whether `e` is a command refused because a dialog is open.
pub(super) fn is_unexpected_alert(e: &Error) -> bool {
    matches!(e, Error::Protocol { message, .. } if message.starts_with("unexpected alert open"))
}

/// Whether `e` says the window a command addressed is gone (not the whole browser).
pub(super) fn is_no_such_window(e: &Error) -> bool {
    matches!(e, Error::DeviceLost { what } if what.contains("no such window"))
}

impl WebDriverDevice {
    /// Leaves the session with the app's page on show and nothing pending: dialogs
    /// answered, other tabs closed, the app's window open and inside the app's origins, a
    /// file chooser answered, downloads noted. Run after every action and before every
    /// screenshot.
    ///
    /// Two commands when nothing happened: the window handles and one script that reads
    /// the URL and the page's notes. A dialog open meanwhile fails that script, and is
    /// answered before it runs again ([`send_answering_dialogs`]), so no command asks
    /// for dialogs (`GET …/alert/text` alone takes longer than both).
    ///
    /// [`send_answering_dialogs`]: WebDriverDevice::send_answering_dialogs
    pub(super) fn settle(&mut self) -> Result<()> {
        let mut url = String::new();
        for _ in 0..SETTLE_ROUNDS {
            let windows = self.keep_app_window()?;
            let answered = self.upkeep.dialogs_answered;
            url = self.look_at_page()?;
            if !windows && self.upkeep.dialogs_answered == answered {
                break;
            }
        }
        self.stay_in_app(url)?;
        self.flush_answered(&[]);
        self.note_downloads();
        Ok(())
    }

    /// The events since the last call, dialogs still waiting for their records included.
    pub(super) fn take_events(&mut self) -> Vec<DeviceEvent> {
        if !self.upkeep.answered.is_empty() && self.session.is_some() {
            // Dialogs answered since the last settle (inside another command): their
            // kinds are in the page.
            if let Err(e) = self.look_at_page() {
                tracing::debug!("could not read the page's dialog notes: {e}");
            }
        }
        self.flush_answered(&[]);
        std::mem::take(&mut self.upkeep.events)
    }

    /// One dialog command, sent as is: these are the commands that find a dialog open
    /// rather than fail on it, so they must not go through the retry of
    /// [`command_within`](Self::command_within).
    fn alert_command(&mut self, verb: Verb, rel: &str, body: Option<Value>) -> Result<Value> {
        let path = format!("/session/{}/{rel}", self.session()?.id);
        let what = format!("WebDriver {} …/{rel}", verb.as_str());
        self.client
            .send(verb, &path, body.as_ref(), &what, self.config.call_timeout)
    }

    /// Answers the dialogs open in the current window, one after the other, as `policy`
    /// says; returns how many.
    pub(super) fn answer_dialogs(&mut self, policy: DialogPolicy) -> Result<usize> {
        let mut n = 0;
        while n < MAX_DIALOGS {
            let message = match self.alert_command(Verb::Get, "alert/text", None) {
                Ok(v) => v.as_str().unwrap_or("").to_owned(),
                Err(e) if e.is_device_lost() => return Err(e),
                // "no such alert"
                Err(_) => break,
            };
            let accepted = policy.accepts();
            // Only a prompt takes text; the others refuse it, which tells them apart.
            let typed = accepted
                && match self.alert_command(
                    Verb::Post,
                    "alert/text",
                    Some(json!({ "text": PROMPT_TEXT })),
                ) {
                    Ok(_) => true,
                    Err(e) if e.is_device_lost() => return Err(e),
                    Err(_) => false,
                };
            let answer = if accepted {
                "alert/accept"
            } else {
                "alert/dismiss"
            };
            match self.alert_command(Verb::Post, answer, None) {
                Ok(_) => {}
                Err(e) if e.is_device_lost() => return Err(e),
                // Closed in between (the page navigated away): nothing left to answer.
                Err(e) => tracing::debug!("dialog {message:?} closed before its answer: {e}"),
            }
            self.upkeep.answered.push(AnsweredDialog {
                message,
                accepted,
                typed,
            });
            self.upkeep.dialogs_answered += 1;
            n += 1;
        }
        if n == MAX_DIALOGS {
            tracing::warn!("answered {MAX_DIALOGS} dialogs in a row; the page keeps opening more");
        }
        Ok(n)
    }

    /// Records the answered dialogs, with their kinds from the page's `records`.
    fn flush_answered(&mut self, records: &[Value]) {
        let answered = std::mem::take(&mut self.upkeep.answered);
        self.upkeep.extend(dialog_events(records, &answered));
    }

    /// Reads the page's URL and [`PAGE_HOOKS`]'s notes: records the dialogs, and answers
    /// a file chooser of the app's. Returns the URL.
    fn look_at_page(&mut self) -> Result<String> {
        let v = match self.execute(TAKE_HOOKS, &[]) {
            Ok(v) => v,
            Err(e) if e.is_device_lost() => return Err(e),
            // A document being replaced, or one that runs no scripts: its notes are
            // lost, the run goes on.
            Err(e) => {
                tracing::debug!("could not read the page's notes: {e}");
                return self.current_url();
            }
        };
        let url = v["href"].as_str().unwrap_or("").to_owned();
        let hooks = &v["hooks"];
        if hooks.is_null() {
            return Ok(url);
        }
        let records = hooks["dialogs"].as_array().cloned().unwrap_or_default();
        self.flush_answered(&records);
        if let Some(id) = hooks["file"][ELEMENT_KEY].as_str()
            && self.origins.contains(&url)
        {
            let multiple = hooks["fileMultiple"].as_bool().unwrap_or(false);
            self.choose_file(id, multiple)?;
        }
        Ok(url)
    }

    /// Gives the upload file to the file input `element`, as a person picking a file in
    /// the chooser would: the input's files change and it fires `input` and `change`.
    /// Details read as the Chromium device's: the chooser's mode, then what it got.
    fn choose_file(&mut self, element: &str, multiple: bool) -> Result<()> {
        let mode = if multiple {
            "selectMultiple"
        } else {
            "selectSingle"
        };
        let Some(upload) = self.upkeep.upload.clone() else {
            // A remote browser cannot read this machine's file.
            self.upkeep.push(
                DeviceEventKind::FileChooser,
                format!("{mode}: cancelled (the browser is on another machine)"),
            );
            return Ok(());
        };
        match self.command(
            Verb::Post,
            &format!("element/{element}/value"),
            Some(json!({ "text": upload.display().to_string() })),
        ) {
            Ok(_) => self.upkeep.push(
                DeviceEventKind::FileChooser,
                format!("{mode}: gave {UPLOAD_NAME}"),
            ),
            Err(e) if e.is_device_lost() => return Err(e),
            Err(e) => self.upkeep.push(
                DeviceEventKind::FileChooser,
                format!("{mode}: cancelled ({e})"),
            ),
        }
        Ok(())
    }

    /// Records each file that finished downloading since the last call.
    fn note_downloads(&mut self) {
        let Some(dir) = self.upkeep.download_dir() else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut done: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            // Chromium writes into NAME.crdownload and renames it when done.
            .filter(|n| !n.ends_with(".crdownload"))
            .filter(|n| !self.upkeep.downloads_seen.contains(n))
            .collect();
        done.sort();
        for name in done {
            self.upkeep.downloads_seen.insert(name.clone());
            self.upkeep.push(DeviceEventKind::Download, name);
        }
    }

    /// Closes every window but the app's, and opens the app's again if the app closed
    /// it. Returns whether anything was done.
    pub(super) fn keep_app_window(&mut self) -> Result<bool> {
        let handles = self.command(Verb::Get, "window/handles", None)?;
        let handles: Vec<String> = handles
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h.as_str().map(str::to_owned))
            .collect();
        let own = self.session()?.window.clone();
        let mut changed = false;
        if !handles.contains(&own) {
            self.reopen_app_window(&handles)?;
            changed = true;
        }
        let own = self.session()?.window.clone();
        let others: Vec<&String> = handles.iter().filter(|h| **h != own).collect();
        if others.is_empty() {
            return Ok(changed);
        }
        let urls = self.tab_urls(&others)?;
        for handle in others {
            let closed = self.close_other_window(handle, urls.get(handle.as_str()).cloned());
            // Whatever happened there, the app's window is the current one again.
            let back = self.command(Verb::Post, "window", Some(json!({ "handle": own })));
            match closed {
                Ok(Some(url)) => self.upkeep.push(DeviceEventKind::TabClosed, url),
                Ok(None) => {}
                Err(e) => return Err(e),
            }
            back?;
        }
        Ok(true)
    }

    /// The URLs of the windows `handles` as DevTools knows them (chromedriver's window
    /// handles are DevTools target ids), without waiting for their pages to load as
    /// `GET …/url` does: a tab on a host that never answers would hold the step up for
    /// the whole page-load timeout. A new tab has no URL until its first page commits,
    /// which is waited for a moment. Empty without the passthrough.
    fn tab_urls(&mut self, handles: &[&String]) -> Result<HashMap<String, String>> {
        let mut urls = HashMap::new();
        if !self.has_devtools() {
            return Ok(urls);
        }
        let deadline = Instant::now() + TAB_URL_WAIT;
        loop {
            let targets = match self.devtools("Target.getTargets", json!({})) {
                Ok(t) => t,
                Err(e) if e.is_device_lost() => return Err(e),
                Err(e) => {
                    tracing::debug!("no target list: {e}");
                    return Ok(urls);
                }
            };
            for t in targets["targetInfos"].as_array().into_iter().flatten() {
                let (Some(id), Some(url)) = (t["targetId"].as_str(), t["url"].as_str()) else {
                    continue;
                };
                if !url.is_empty() && handles.iter().any(|h| h.as_str() == id) {
                    urls.insert(id.to_owned(), url.to_owned());
                }
            }
            if urls.len() == handles.len() || Instant::now() >= deadline {
                return Ok(urls);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the window `handle` (not the app's) and returns its URL (`url` when known
    /// already); `None` when it had gone already.
    fn close_other_window(&mut self, handle: &str, url: Option<String>) -> Result<Option<String>> {
        match self.command(Verb::Post, "window", Some(json!({ "handle": handle }))) {
            Ok(_) => {}
            Err(e) if is_no_such_window(&e) => return Ok(None),
            Err(e) => return Err(e),
        }
        let url = match url {
            Some(url) => url,
            // Without DevTools, or a tab whose first page has not committed yet: with
            // DevTools it is closed now, else its URL is read once the page loaded
            // (chromedriver waits for it), and it is closed all the same if it does not.
            None if self.has_devtools() => "a new tab without a URL yet".to_owned(),
            None => match self.command(Verb::Get, "url", None) {
                Ok(v) => v.as_str().unwrap_or("").to_owned(),
                Err(e) if is_no_such_window(&e) => return Ok(None),
                Err(Error::DeviceLost { what }) => return Err(Error::DeviceLost { what }),
                Err(e) => {
                    tracing::debug!("could not read the URL of tab {handle}: {e}");
                    "a new tab whose URL could not be read".to_owned()
                }
            },
        };
        match self.command(Verb::Delete, "window", None) {
            Ok(_) => Ok(Some(url)),
            Err(e) if is_no_such_window(&e) => Ok(Some(url)),
            Err(e) => Err(e),
        }
    }

    /// The app closed its own window (`window.close()`): a new one, set up as the old
    /// one was, on the last in-app URL. `handles` are the windows left (one at least:
    /// closing the last one ends the session).
    fn reopen_app_window(&mut self, handles: &[String]) -> Result<()> {
        // chromedriver opens a window only from a current window that is still there.
        if let Some(any) = handles.first() {
            self.command(Verb::Post, "window", Some(json!({ "handle": any })))?;
        }
        let r = self.command(Verb::Post, "window/new", Some(json!({ "type": "tab" })))?;
        let handle = r["handle"].as_str().unwrap_or("").to_owned();
        self.command(Verb::Post, "window", Some(json!({ "handle": handle })))?;
        if let Some(s) = self.session.as_mut() {
            s.window = handle;
        }
        // Coverage, the collector, the hooks and the network state belong to the old
        // window's page.
        self.prepare_page()?;
        if self.offline {
            self.network_enabled = false;
            self.set_offline(true)?;
        }
        self.set_viewport(self.viewport)?;
        let url = self.app_url();
        self.navigate(&url)?;
        self.upkeep.push(DeviceEventKind::WindowReopened, url);
        Ok(())
    }

    /// Where the app is brought back to: the last in-app URL seen, else the start URL.
    fn app_url(&self) -> String {
        self.upkeep
            .last_app_url
            .clone()
            .unwrap_or_else(|| self.config.start_url.clone())
    }

    /// Brings the page, now at `url`, back into the app's origins when it left them (a
    /// link out, an unreachable host): back in history when that is the app, else the
    /// last in-app URL.
    fn stay_in_app(&mut self, url: String) -> Result<()> {
        if self.origins.contains(&url) {
            self.upkeep.last_app_url = Some(url);
            return Ok(());
        }
        // An app outside any origin (`about:blank`, `data:`) is never left; a page that
        // has not shown the app yet (its first load failed) is not brought anywhere.
        if !self.origins.contains(&self.config.start_url) || self.upkeep.last_app_url.is_none() {
            return Ok(());
        }
        let history = self.history()?;
        // An error page shows `chrome-error://…`; its history entry has the URL that
        // failed, which is what the Chromium device records.
        let left = match &history {
            Some((current, _)) if url.starts_with("chrome-error:") && !current.is_empty() => {
                current.clone()
            }
            _ => url,
        };
        if let Some((_, previous)) = history {
            if previous.is_some_and(|p| self.origins.contains(&p)) {
                self.load_command(Verb::Post, "back", None, "the previous page")?;
            } else {
                let to = self.app_url();
                self.navigate(&to)?;
            }
        } else {
            // Without the history, the step back shows whether it was the app's.
            self.load_command(Verb::Post, "back", None, "the previous page")?;
            let now = self.current_url()?;
            if !self.origins.contains(&now) {
                let to = self.app_url();
                self.navigate(&to)?;
            }
        }
        self.upkeep.push(DeviceEventKind::LeftApp, left);
        let now = self.current_url()?;
        if self.origins.contains(&now) {
            self.upkeep.last_app_url = Some(now);
        }
        Ok(())
    }

    /// The URLs of the current and the previous history entries (DevTools only).
    fn history(&mut self) -> Result<Option<(String, Option<String>)>> {
        if !self.has_devtools() {
            return Ok(None);
        }
        let h = self.devtools("Page.getNavigationHistory", json!({}))?;
        let current = h["currentIndex"].as_u64().unwrap_or(0) as usize;
        let url_at = |i: usize| {
            h["entries"]
                .get(i)
                .and_then(|e| e["url"].as_str())
                .map(str::to_owned)
        };
        let previous = current.checked_sub(1).and_then(url_at);
        Ok(Some((url_at(current).unwrap_or_default(), previous)))
    }

    /// Whether one step back in history shows the app; `false` when unknown (no DevTools).
    pub(super) fn previous_entry_is_app(&mut self) -> Result<bool> {
        Ok(self
            .history()?
            .and_then(|(_, previous)| previous)
            .is_some_and(|u| self.origins.contains(&u)))
    }

    pub(super) fn current_url(&mut self) -> Result<String> {
        let url = self.command(Verb::Get, "url", None)?;
        Ok(url.as_str().unwrap_or("").to_owned())
    }

    /// A command that loads a page (`url`, `back`, `refresh`). A page that does not
    /// finish loading in time is recorded ([`DeviceEventKind::LoadIncomplete`]) and kept
    /// when its document answers, as a person would use a page whose last image never
    /// came; a browser that does not answer at all is a hang. `target` names the page in
    /// the event when its URL cannot be read.
    pub(super) fn load_command(
        &mut self,
        verb: Verb,
        rel: &str,
        body: Option<Value>,
        target: &str,
    ) -> Result<()> {
        let timeout = self.config.load_timeout + self.config.call_timeout;
        match self.command_within(verb, rel, body, timeout) {
            Ok(_) => Ok(()),
            Err(e @ Error::Timeout { .. }) => {
                // chromedriver stops the load when its page-load timeout fires; what
                // arrived by then is the page.
                if self.document_answers()? {
                    let url = self.current_url().unwrap_or_else(|_| target.to_owned());
                    self.upkeep.push(
                        DeviceEventKind::LoadIncomplete,
                        format!("{url}: not loaded within {:?}", self.config.load_timeout),
                    );
                    Ok(())
                } else {
                    Err(e)
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the page's document runs scripts within a few seconds: a page still
    /// loading does, a hung renderer does not.
    fn document_answers(&mut self) -> Result<bool> {
        let probe = self.command_within(
            Verb::Post,
            "execute/sync",
            Some(json!({ "script": "return document.readyState;", "args": [] })),
            PROBE_TIMEOUT,
        );
        match probe {
            Ok(_) => Ok(true),
            Err(Error::Timeout { .. }) => Ok(false),
            Err(e) if e.is_device_lost() => Err(e),
            // An error page or a page that refuses scripts still shows a document.
            Err(_) => Ok(true),
        }
    }
}

/// How long a page that did not finish loading gets to show it still runs scripts.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(message: &str, accepted: bool, typed: bool) -> AnsweredDialog {
        AnsweredDialog {
            message: message.into(),
            accepted,
            typed,
        }
    }

    fn details(events: &[DeviceEvent]) -> Vec<&str> {
        events.iter().map(|e| e.detail.as_str()).collect()
    }

    #[test]
    fn page_records_give_the_dialogs_kinds_and_what_the_page_got() {
        let records = vec![
            json!({ "type": "confirm", "message": "Delete?", "result": true, "closed": true }),
            json!({ "type": "prompt", "message": "Name?", "result": "test", "closed": true }),
            // Recorded before, read late.
            json!({ "type": "alert", "message": "Saved", "result": null, "closed": true }),
        ];
        let mine = vec![
            answered("Name?", true, true),
            answered("Delete?", true, false),
            // Not the page's script: a beforeunload.
            answered("", true, false),
        ];
        let events = dialog_events(&records, &mine);
        assert!(events.iter().all(|e| e.kind == DeviceEventKind::Dialog));
        assert_eq!(
            details(&events),
            [
                r#"prompt "Name?" accepted"#,
                r#"confirm "Delete?" accepted"#,
                r#"dialog "" accepted"#,
            ]
        );
    }

    #[test]
    fn without_page_records_answers_still_say_what_they_can() {
        let events = dialog_events(
            &[],
            &[
                answered("Name?", true, true),
                answered("Sure?", false, false),
            ],
        );
        assert_eq!(
            details(&events),
            [r#"prompt "Name?" accepted"#, r#"dialog "Sure?" dismissed"#]
        );
        // Two dialogs with one message take one record each; a record without a result
        // (its page went on before reading it) leaves the answer given.
        let records = vec![
            json!({ "type": "confirm", "message": "Sure?", "result": false, "closed": true }),
            json!({ "type": "confirm", "message": "Sure?" }),
        ];
        let mine = [
            answered("Sure?", false, false),
            answered("Sure?", false, false),
        ];
        assert_eq!(
            details(&dialog_events(&records, &mine)),
            [
                r#"confirm "Sure?" dismissed"#,
                r#"confirm "Sure?" dismissed"#
            ]
        );
    }

    #[test]
    fn only_dialog_refusals_count_as_unexpected_alerts() {
        let alert = Error::Protocol {
            method: "WebDriver POST …/actions".into(),
            message: "unexpected alert open: HTTP 500: unexpected alert open: {Alert text : x}"
                .into(),
        };
        assert!(is_unexpected_alert(&alert));
        let other = Error::Protocol {
            method: "x".into(),
            message: "no such alert: HTTP 404: no such alert".into(),
        };
        assert!(!is_unexpected_alert(&other));
        assert!(is_no_such_window(&Error::DeviceLost {
            what: "WebDriver GET …/url: no such window: target window already closed".into()
        }));
    }
}
