//! Web applications in Chromium: the grey box looks into the DOM for the events that are
//! enabled now and into the page's scripts for the code their handlers run.
//!
//! # Which elements are events
//!
//! An element is an event when it is rendered inside the viewport, not disabled, is the
//! element (or contains the element) a click at its centre hits, and either is a native
//! control (button, link, input, select, text area, summary, content-editable), has a
//! control role, or has its own listener for a click-like event. Text fields (and text
//! areas, content-editable elements) are `Input` events: the replayer types the run's
//! input text and presses Enter. Everything else is a `Click`.
//!
//! The window of an event is the open dialog it sits in (`dialog[open]`, `role=dialog`,
//! `aria-modal`), otherwise the page's URL path and hash.
//!
//! # Which code handles an event
//!
//! The listeners the DevTools command-line API reports for the element and for each of its
//! ancestors up to `document` and `window` (delegation), of the event types the kind
//! triggers (a click also triggers `change`, `input` and a form's `submit`; typing stops
//! below `document`, whose key listeners are the page's keyboard shortcuts), plus jQuery's
//! own handler table (`jQuery._data(el, "events")`, delegated entries only when the
//! element matches their selector). Each listener function's source text is looked up in
//! the page's scripts (fetched once from the page's origin), which gives its script and
//! position, and [`JsAnalysis::function_at`] gives the analysed function. Bound and native
//! functions have no source text and are skipped. When none of an element's listeners
//! could be located (bound functions, framework dispatchers), the static registrations of
//! [`JsAnalysis::handlers`] whose selector the element matches are used instead.
//!
//! # What navigation sets off
//!
//! A click that changes the URL's hash (a link to `#/list`, a handler assigning
//! `location.hash`) returns before the page reacts: the browser then fires `hashchange`
//! (and `popstate`), and the app's router leaves the old screen and enters the new one.
//! No field flows from the click handler into the router, so the static analysis alone
//! never sees that leaving the list screen clears its selection. Following the router
//! statically does not help either: it reaches every screen's code, and every navigation
//! would depend on every event. The ripper instead watches each event it fires (V8's
//! per-function call counts between two coverage takes): when the page's URL changed
//! while the event was handled (the page stayed, only its hash or history entry moved),
//! the event's observed effects are the reads and writes the app's code executed. Each
//! access the analysis found in a function that ran counts when V8's block coverage of
//! that take says the code around it ran. That is the router, the one screen it left and
//! the one it entered, and only the branches taken (`closeHelp` on a screen without help
//! open reads `state.helpOpen` and returns). A click that loads another document has no
//! such effects: the new page starts from its own scripts.

use std::collections::HashMap;
use std::time::Duration;

use gui_core::Point;
use gui_driver::{ChromiumDevice, Device, RanFunction};
use serde::Deserialize;
use serde_json::Value;

use crate::js::{JsAnalysis, JsConfig, LineIndex, Script, ScriptError};
use crate::{Error, Event, EventKind, GreyboxApp, HandlerRef, LiveEvent, ReadWrite, Result};

/// How long to wait for the page to settle after an event.
#[derive(Debug, Clone, Copy)]
pub struct WebSettle {
    /// The DOM must stay unchanged this long.
    pub quiet: Duration,
    /// Give up waiting after this long.
    pub cap: Duration,
    /// At the end of a test case, the DOM must stay unchanged this long, and every
    /// timeout the app set that is due within `end_cap` must have run: timers and loads
    /// the last events started (the demo's feed shows its cards 700 ms after it opens,
    /// with no DOM change in between) run, and their errors reach the oracle, before the
    /// next test case restarts the app.
    pub end_quiet: Duration,
    /// The longest wait at the end of a test case.
    pub end_cap: Duration,
}

impl Default for WebSettle {
    fn default() -> Self {
        WebSettle {
            quiet: Duration::from_millis(120),
            cap: Duration::from_millis(1000),
            end_quiet: Duration::from_millis(400),
            end_cap: Duration::from_millis(2000),
        }
    }
}

/// A web application in Chromium, seen as a grey box.
#[derive(Debug)]
pub struct WebApp {
    device: ChromiumDevice,
    scripts: Vec<Script>,
    analysis: JsAnalysis,
    settle: WebSettle,
    /// Listener source text -> where it is defined.
    located: HashMap<String, Option<HandlerRef>>,
    /// Static registrations with a selector, and the function each registers.
    statics: Vec<(String, HandlerRef)>,
    /// `statics`' selectors as a JSON array, handed to the page.
    statics_json: String,
    /// The page's document and URL when [`GreyboxApp::start_observing`] was called.
    url_before: Option<String>,
    /// Per script name, its lines as the analysis counts them (V8 coverage gives
    /// offsets, [`JsAnalysis::function_at`] takes lines and columns).
    lines: HashMap<String, LineIndex>,
    /// Per script name with non-ASCII text, the UTF-16 offset of each byte offset (V8
    /// counts UTF-16 units, the analysis bytes); ASCII scripts count both alike.
    utf16_at: HashMap<String, Vec<u32>>,
    /// Time spent waiting for the page to settle.
    waited: Duration,
    /// The page's document and URL at the last [`GreyboxApp::fingerprint`].
    fingerprinted_at: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Found {
    events: Vec<FoundEvent>,
    fns: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct FoundEvent {
    id: String,
    label: String,
    window: String,
    input: bool,
    x: f64,
    y: f64,
    fns: Vec<usize>,
    #[serde(default)]
    statics: Vec<usize>,
}

impl WebApp {
    /// Reads the page's scripts and analyses them. `device` shows the app's start page.
    pub fn new(mut device: ChromiumDevice, js: &JsConfig) -> Result<WebApp> {
        let scripts = fetch_scripts(&mut device)?;
        let analysis = JsAnalysis::analyse(&scripts, js);
        for e in analysis.errors() {
            tracing::warn!("{e}");
        }
        let statics: Vec<(String, HandlerRef)> = analysis
            .handlers()
            .iter()
            .filter_map(|h| {
                let f = &analysis.functions()[h.function?];
                Some((
                    h.selector.clone()?,
                    HandlerRef::Js {
                        script: f.script.clone(),
                        line: f.line,
                        column: f.column,
                    },
                ))
            })
            .collect();
        let statics_json =
            serde_json::to_string(&statics.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>())
                .expect("strings serialise");
        let lines = scripts
            .iter()
            .map(|s| (s.name.clone(), LineIndex::new(&s.source)))
            .collect();
        let utf16_at = scripts
            .iter()
            .filter(|s| !s.source.is_ascii())
            .map(|s| (s.name.clone(), utf16_offsets(&s.source)))
            .collect();
        Ok(WebApp {
            device,
            scripts,
            analysis,
            settle: WebSettle::default(),
            located: HashMap::new(),
            statics,
            statics_json,
            url_before: None,
            lines,
            utf16_at,
            waited: Duration::ZERO,
            fingerprinted_at: None,
        })
    }

    /// The analysed function a V8 coverage range starting at UTF-16 `offset` of `script`
    /// is.
    fn function_at_offset(&self, script: &str, offset: u64) -> Option<usize> {
        let lines = self.lines.get(script)?;
        let source = &self.scripts.iter().find(|s| s.name == script)?.source;
        let byte = byte_offset(self.utf16_at.get(script), offset);
        let (line, column) = lines.position(source, u32::try_from(byte).ok()?);
        self.analysis.function_at(script, line, column)
    }

    pub fn with_settle(mut self, settle: WebSettle) -> WebApp {
        self.settle = settle;
        self
    }

    /// How the app waits after events now.
    pub fn settle_times(&self) -> WebSettle {
        self.settle
    }

    /// Changes how the app waits after events (a survey that only reads where a control
    /// leads can wait less than a test case that needs every effect).
    pub fn set_settle(&mut self, settle: WebSettle) {
        self.settle = settle;
    }

    pub fn analysis(&self) -> &JsAnalysis {
        &self.analysis
    }

    pub fn scripts(&self) -> &[Script] {
        &self.scripts
    }

    pub fn script_errors(&self) -> &[ScriptError] {
        self.analysis.errors()
    }

    pub fn chromium(&mut self) -> &mut ChromiumDevice {
        &mut self.device
    }

    pub fn into_device(self) -> ChromiumDevice {
        self.device
    }

    /// What the handlers of `event` read and write, calls followed (Algorithm 1's
    /// `getFieldsRead`/`getFieldsWritten`).
    ///
    /// Typing is itself a write: an `Input` event on `#x` writes `#x.value`, which the
    /// handlers that read the field (`byId('x').value`) depend on.
    pub fn read_write(&self, event: &Event) -> ReadWrite {
        let mut rw = ReadWrite::default();
        if event.kind == EventKind::Input
            && let Some(selector) = event.id.strip_suffix(" type")
            && selector.starts_with('#')
            && !selector.contains([' ', '>'])
        {
            rw.writes.insert(format!("{selector}.value"));
        }
        for f in event
            .handlers
            .iter()
            .filter_map(|h| self.analysis.handler_function(h))
        {
            rw.merge(&self.analysis.read_write(f));
        }
        rw
    }

    fn locate(&mut self, source: &str) -> Option<HandlerRef> {
        if let Some(found) = self.located.get(source) {
            return found.clone();
        }
        let found = if source.contains("[native code]") {
            None
        } else {
            self.scripts.iter().find_map(|s| {
                let at = s.source.find(source)?;
                let before = &s.source[..at];
                let line = before.matches('\n').count() as u32;
                // Columns count UTF-16 units, as DevTools and `function_at` do.
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                let column = before[line_start..].encode_utf16().count() as u32;
                Some(HandlerRef::Js {
                    script: s.name.clone(),
                    line,
                    column,
                })
            })
        };
        self.located.insert(source.to_owned(), found.clone());
        found
    }
}

impl GreyboxApp for WebApp {
    fn device(&mut self) -> &mut dyn Device {
        &mut self.device
    }

    fn available(&mut self) -> Result<Vec<LiveEvent>> {
        let expr = FIND_EVENTS.replace("STATIC_SELECTORS", &self.statics_json);
        let value = self.device.evaluate_with_command_line_api(&expr)?;
        let found: Found = serde_json::from_value(value).map_err(|e| Error::BadModel {
            what: format!("the page's event list did not parse: {e}"),
        })?;
        let located: Vec<Option<HandlerRef>> =
            found.fns.iter().map(|src| self.locate(src)).collect();
        let mut out = Vec::with_capacity(found.events.len());
        for f in found.events {
            let mut handlers: Vec<HandlerRef> = f
                .fns
                .iter()
                .filter_map(|&i| located.get(i).cloned().flatten())
                .collect();
            if handlers.is_empty() {
                handlers.extend(
                    f.statics
                        .iter()
                        .filter_map(|&i| self.statics.get(i).map(|(_, h)| h.clone())),
                );
            }
            handlers.sort();
            handlers.dedup();
            out.push(LiveEvent {
                event: Event {
                    id: f.id,
                    label: f.label,
                    window: f.window,
                    kind: if f.input {
                        EventKind::Input
                    } else {
                        EventKind::Click
                    },
                    handlers,
                },
                at: Point::new(f.x.round() as i32, f.y.round() as i32),
            });
        }
        Ok(out)
    }

    /// Restarts the app, waits for it to settle, and starts counting the page's pending
    /// timers (see [`finish`](Self::finish)).
    fn reset(&mut self) -> Result<()> {
        self.device.restart()?;
        self.settle()?;
        match self.device.evaluate(TIMER_TRACKER) {
            // A page that cannot take the tracker (it is navigating away) is still reset;
            // `finish` then waits for a quiet DOM alone.
            Err(e) if e.is_device_lost() => Err(e.into()),
            _ => Ok(()),
        }
    }

    fn settle(&mut self) -> Result<()> {
        self.wait_quiet(self.settle.quiet, self.settle.cap, false)
    }

    fn start_observing(&mut self) -> Result<()> {
        self.device.functions_run()?;
        self.url_before = Some(self.location()?);
        Ok(())
    }

    /// When the event changed the page's URL within the page, the reads and writes the
    /// app's functions executed (see the module documentation); otherwise `None`.
    fn observed_effects(&mut self) -> Result<Option<ReadWrite>> {
        let Some(ran) = self.device.functions_run()? else {
            return Ok(None);
        };
        let before = self.url_before.take();
        let after = self.location()?;
        // The same document (same time origin) at another URL.
        let moved = before.is_some_and(|b| {
            b != after && b.split_once(' ').map(|x| x.0) == after.split_once(' ').map(|x| x.0)
        });
        if !moved {
            return Ok(None);
        }
        let ran: Vec<(usize, &RanFunction)> = ran
            .iter()
            .filter_map(|r| Some((self.function_at_offset(&r.url, r.start())?, r)))
            .collect();
        let mut rw = ReadWrite::default();
        for (f, run) in ran {
            let function = &self.analysis.functions()[f];
            let utf16 = self.utf16_at.get(&function.script);
            for access in &function.accesses {
                let at = utf16.map_or(access.offset, |t| {
                    t.get(access.offset as usize).copied().unwrap_or(u32::MAX)
                });
                if run.executed(u64::from(at)) {
                    rw.record(&access.path, access.write);
                }
            }
        }
        Ok(Some(rw))
    }

    fn finish(&mut self) -> Result<()> {
        self.wait_quiet(self.settle.end_quiet, self.settle.end_cap, true)
    }

    /// The document and URL, and a hash of the page's visible text and of its fields'
    /// values and check marks: what an event may change without changing the events on
    /// offer.
    fn fingerprint(&mut self) -> Result<Option<String>> {
        let v = self.device.evaluate(FINGERPRINT)?;
        let Some(print) = v.as_str() else {
            return Ok(None);
        };
        self.fingerprinted_at = print.rsplit_once(' ').map(|(at, _)| at.to_owned());
        Ok(Some(print.to_owned()))
    }

    /// Back to the page as it was at the last fingerprint, the way a person goes back: the
    /// browser's history back when the event moved the page to another URL of the same
    /// document, otherwise Escape (which closes dialogs, menus and pop-ups), and then the
    /// close button of a dialog still open that `before` did not show. A page that loaded
    /// another document has no cheap way back: going back would load the app again, as a
    /// restart does.
    fn step_back(&mut self, before: &[LiveEvent]) -> Result<bool> {
        let Some(then) = self.fingerprinted_at.clone() else {
            return Ok(false);
        };
        let now = self.location()?;
        let document = |at: &str| at.split_once(' ').map(|x| x.0.to_owned());
        if document(&then) != document(&now) {
            return Ok(false);
        }
        if then != now {
            self.history_back()?;
            return Ok(true);
        }
        self.escape()?;
        let windows: std::collections::HashSet<&str> =
            before.iter().map(|l| l.event.window.as_str()).collect();
        let close = self
            .available()?
            .into_iter()
            .find(|l| !windows.contains(l.event.window.as_str()) && is_close_label(&l.event.label));
        if let Some(close) = close {
            self.fire(&close, "")?;
        }
        Ok(true)
    }

    fn handler_read_write(&self, event: &Event) -> Option<ReadWrite> {
        Some(self.read_write(event))
    }

    fn time_waited(&self) -> Duration {
        self.waited
    }
}

/// Whether a control's label says it closes what it is in.
fn is_close_label(label: &str) -> bool {
    let l = label.trim().to_lowercase();
    ["close", "cancel", "×", "✕", "x", "dismiss"].contains(&l.as_str()) || l.starts_with("close ")
}

/// See [`GreyboxApp::fingerprint`]: `<time origin> <url> <hash>:<length>`.
const FINGERPRINT: &str = r#"(() => {
  const parts = [document.body ? document.body.innerText : ''];
  for (const el of document.querySelectorAll('input, textarea, select')) {
    parts.push(el.type === 'checkbox' || el.type === 'radio' ? String(el.checked) : String(el.value));
  }
  const s = parts.join('\u0001');
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
  return String(performance.timeOrigin) + ' ' + location.href + ' ' + (h >>> 0).toString(16) + ':' + s.length;
})()"#;

impl WebApp {
    /// The browser's history back, then a settle.
    pub fn history_back(&mut self) -> Result<()> {
        self.device
            .perform(&gui_core::Action::new(gui_core::ActionKind::Return))?;
        self.settle()
    }

    /// Escape, which a page takes to close its dialog, menu or pop-up, then a settle.
    pub fn escape(&mut self) -> Result<()> {
        self.device.press_key("Escape", 27)?;
        self.settle()
    }

    /// The page's document (its time origin) and URL now, as `origin url`.
    fn location(&mut self) -> Result<String> {
        let v = self
            .device
            .evaluate("String(performance.timeOrigin) + ' ' + location.href")?;
        Ok(v.as_str().unwrap_or_default().to_owned())
    }

    /// Waits until the DOM has not changed for `quiet`, at most `cap`. With `timers`, also
    /// until no timeout the app set since the last reset is due before the cap.
    fn wait_quiet(&mut self, quiet: Duration, cap: Duration, timers: bool) -> Result<()> {
        let expr = format!(
            "new Promise(done => {{ let last = performance.now(); const start = last; \
             const later = window.__guiSetTimeout || setTimeout; \
             const pending = {timers} && window.__guiPending ? window.__guiPending : new Map(); \
             const obs = new MutationObserver(() => {{ last = performance.now(); }}); \
             obs.observe(document, {{subtree: true, childList: true, attributes: true, characterData: true}}); \
             const tick = () => {{ const now = performance.now(); \
               const waiting = [...pending.values()].some(due => due < start + {cap}); \
               if ((now - last >= {quiet} && !waiting) || now - start >= {cap}) {{ obs.disconnect(); done(true); }} \
               else later(tick, 10); }}; later(tick, 10); }})",
            quiet = quiet.as_millis(),
            cap = cap.as_millis()
        );
        let started = std::time::Instant::now();
        let waited = self.device.evaluate(&expr);
        self.waited += started.elapsed();
        match waited {
            Ok(_) => Ok(()),
            // A page that navigates while we wait destroys the promise: it has changed, and
            // the next call finds the new page.
            Err(e) if !e.is_device_lost() => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Counts the page's pending timeouts: `setTimeout` and `clearTimeout` are wrapped so
/// that `window.__guiPending` maps each pending id to when it is due. Intervals and string
/// handlers are left alone. The tool's own waits use the original, `__guiSetTimeout`.
const TIMER_TRACKER: &str = r#"(() => {
  if (window.__guiPending) return true;
  const pending = new Map(), set = window.setTimeout, clear = window.clearTimeout;
  window.__guiPending = pending;
  window.__guiSetTimeout = set.bind(window);
  window.setTimeout = function (fn, ms, ...args) {
    if (typeof fn !== 'function') return set.apply(window, arguments);
    const id = set.call(window, function () { pending.delete(id); return fn.apply(this, arguments); }, ms, ...args);
    pending.set(id, performance.now() + (Number(ms) || 0));
    return id;
  };
  window.clearTimeout = function (id) { pending.delete(id); return clear.call(window, id); };
  return true;
})()"#;

/// The UTF-16 offset of every byte offset of `source` (bytes inside a character get the
/// character's offset), with one entry past the end.
fn utf16_offsets(source: &str) -> Vec<u32> {
    let mut table = Vec::with_capacity(source.len() + 1);
    let mut at = 0u32;
    for c in source.chars() {
        table.extend(std::iter::repeat_n(at, c.len_utf8()));
        at += c.len_utf16() as u32;
    }
    table.push(at);
    table
}

/// The byte offset of UTF-16 `offset`, given the script's [`utf16_offsets`] (none for an
/// ASCII script).
fn byte_offset(utf16_at: Option<&Vec<u32>>, offset: u64) -> usize {
    match utf16_at {
        Some(table) => table.partition_point(|&u| u64::from(u) < offset),
        None => offset as usize,
    }
}

/// The page's own scripts: external ones from the page's origin (fetched by the page
/// itself, so they are exactly what it runs) and inline ones, named `<page>#inline-N`.
/// Script elements of other types (templates) and scripts the server does not have are
/// left out.
fn fetch_scripts(device: &mut ChromiumDevice) -> Result<Vec<Script>> {
    let v = device.evaluate(
        "Promise.all(Array.from(document.scripts).map((s, i) => \
           !['', 'text/javascript', 'application/javascript', 'module'].includes((s.type || '').toLowerCase()) ? null \
           : s.src \
           ? (new URL(s.src).origin === location.origin \
               ? fetch(s.src).then(r => r.ok ? r.text().then(t => [s.src, t]) : null).catch(() => null) \
               : null) \
           : [location.origin + location.pathname + '#inline-' + i, s.textContent]))",
    )?;
    let mut scripts = Vec::new();
    for pair in v.as_array().into_iter().flatten() {
        if let (Some(name), Some(source)) = (
            pair.get(0).and_then(Value::as_str),
            pair.get(1).and_then(Value::as_str),
        ) {
            scripts.push(Script {
                name: name.to_owned(),
                source: source.to_owned(),
            });
        }
    }
    Ok(scripts)
}

/// Lists the enabled, visible events of the page with their listener functions' sources.
const FIND_EVENTS: &str = r#"(() => {
  const CLICK = ['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'change', 'input', 'submit', 'dblclick'];
  const TYPE = ['input', 'change', 'keydown', 'keyup', 'keypress', 'submit', 'click', 'focus'];
  const ROLES = ['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'option', 'switch', 'slider'];
  const TEXT = ['text', 'email', 'password', 'search', 'number', 'url', 'tel', ''];
  const fns = [], fnIndex = new Map();
  const fnId = f => { if (typeof f !== 'function') return -1; if (!fnIndex.has(f)) { fnIndex.set(f, fns.length); fns.push(String(f)); } return fnIndex.get(f); };
  const jq = window.jQuery;
  // Listeners per node, looked up once: the ancestors are shared by many elements.
  const ownSeen = new Map();
  const own = (node) => {
    if (ownSeen.has(node)) return ownSeen.get(node);
    const out = [];
    let ls = {};
    try { ls = getEventListeners(node) || {}; } catch (e) { }
    for (const t in ls) for (const l of ls[t]) out.push({ type: t, fn: l.listener, sel: null });
    if (jq && jq._data) {
      const ev = jq._data(node, 'events');
      if (ev) for (const t in ev) for (const h of ev[t]) out.push({ type: t, fn: h.handler, sel: h.selector || null });
    }
    ownSeen.set(node, out);
    return out;
  };
  // jQuery's delegated selectors may use its own pseudo-classes (jQuery Mobile's
  // `:jqmData(..)`), which the DOM's `matches` refuses.
  const matches = (el, sel) => { try { return el.matches(sel); } catch (e) { try { return !!(jq && jq(el).is(sel)); } catch (e2) { return false; } } };
  const isText = el => (el.tagName === 'INPUT' && TEXT.includes((el.getAttribute('type') || '').toLowerCase()))
    || el.tagName === 'TEXTAREA' || el.isContentEditable;
  const native = el => ['BUTTON', 'SELECT', 'TEXTAREA', 'SUMMARY'].includes(el.tagName)
    || (el.tagName === 'A' && el.hasAttribute('href'))
    || (el.tagName === 'INPUT' && el.type !== 'hidden') || el.isContentEditable;
  const winOf = el => {
    const d = el.closest('dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true]');
    if (d) return 'dialog ' + (d.id ? '#' + d.id : (d.getAttribute('aria-label') || d.tagName.toLowerCase()));
    return location.pathname + location.hash;
  };
  const selectorOf = el => {
    if (el.id && document.querySelectorAll('#' + CSS.escape(el.id)).length === 1) return '#' + CSS.escape(el.id);
    const parts = [];
    let n = el;
    while (n && n.nodeType === 1 && n !== document.documentElement) {
      if (n.id && document.querySelectorAll('#' + CSS.escape(n.id)).length === 1) { parts.unshift('#' + CSS.escape(n.id)); break; }
      let i = 1, s = n;
      while ((s = s.previousElementSibling)) if (s.tagName === n.tagName) i++;
      parts.unshift(n.tagName.toLowerCase() + ':nth-of-type(' + i + ')');
      n = n.parentElement;
    }
    return parts.join(' > ');
  };
  const labelOf = el => {
    const t = (el.getAttribute('aria-label') || el.innerText || el.value || el.placeholder || el.title || el.name || el.id || el.tagName).toString();
    return t.replace(/\s+/g, ' ').trim().slice(0, 60);
  };
  const STATICS = STATIC_SELECTORS;
  const W = innerWidth, H = innerHeight;
  const events = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.disabled || el.closest('[inert]')) continue;
    const ownLs = own(el);
    const role = (el.getAttribute('role') || '').toLowerCase();
    const input = isText(el);
    const kinds = input ? TYPE : CLICK;
    if (!native(el) && !ROLES.includes(role) && !ownLs.some(l => kinds.includes(l.type))) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= W || y >= H) continue;
    const st = getComputedStyle(el);
    if (st.visibility === 'hidden' || st.pointerEvents === 'none') continue;
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(hit === el || el.contains(hit) || (el.labels && [...el.labels].some(l => l.contains(hit))))) continue;
    const ids = [];
    // Typing runs the field's and its form's listeners; listeners on document and window
    // for key events are the page's keyboard shortcuts, other events than typing text.
    for (let n = el; n && !(input && (n === document || n === document.documentElement)); n = n.parentNode) {
      for (const l of (n === el ? ownLs : own(n))) {
        if (!kinds.includes(l.type)) continue;
        if (l.sel && !(n !== el && matches(el, l.sel))) continue;
        ids.push(fnId(l.fn));
      }
      if (n === document && !input) { for (const l of own(window)) if (kinds.includes(l.type)) ids.push(fnId(l.fn)); }
    }
    events.push({ id: selectorOf(el) + (input ? ' type' : ' click'), label: labelOf(el), window: winOf(el),
      input, x, y, fns: [...new Set(ids.filter(i => i >= 0))],
      statics: STATICS.map((sel, i) => { try { return el.matches(sel) || el.matches(sel + ' *') ? i : -1; } catch (e) { return -1; } }).filter(i => i >= 0) });
  }
  return { events, fns };
})()"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_offsets_map_back_to_bytes() {
        // 'é' is 2 bytes and 1 unit, '😀' 4 bytes and 2 units.
        let source = "é😀f";
        let table = utf16_offsets(source);
        assert_eq!(table, [0, 0, 1, 1, 1, 1, 3, 4]);
        assert_eq!(byte_offset(Some(&table), 3), source.find('f').unwrap());
        assert_eq!(byte_offset(Some(&table), 1), source.find('😀').unwrap());
        assert_eq!(byte_offset(None, 7), 7);
    }
}
