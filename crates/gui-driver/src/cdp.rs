//! A small synchronous DevTools-protocol client.
//!
//! Why our own and not chromiumoxide: the exploration loop is synchronous (one action,
//! one screenshot, one coverage take per step), so an async runtime adds nothing but build
//! time (chromiumoxide: 7.5 min release build here, against about a minute for
//! tungstenite) and chromiumoxide's defaults (shared profile dir, 800x600 emulation) fight
//! what we need. The client speaks JSON over one blocking WebSocket to the browser target,
//! with flattened page sessions: a call writes a request and reads until its answer comes,
//! keeping the events that arrive meanwhile for later.

use std::collections::VecDeque;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

use crate::{DialogPolicy, Error, PROMPT_TEXT, Result};

/// An event the browser sent: method, parameters and the session it belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub method: String,
    pub params: Value,
    pub session: Option<String>,
}

/// Only these events are kept; the rest (network, lifecycle chatter) are dropped on arrival
/// so the queue stays small between steps.
const KEPT_EVENTS: &[&str] = &[
    "Runtime.exceptionThrown",
    "Runtime.consoleAPICalled",
    "Inspector.targetCrashed",
    "Target.targetCrashed",
    "Target.detachedFromTarget",
    "Page.loadEventFired",
    "Page.frameNavigated",
    "Page.javascriptDialogOpening",
    "Page.fileChooserOpened",
    "Page.domContentEventFired",
    "Page.frameRequestedNavigation",
    "Page.frameStartedLoading",
    "Target.targetCreated",
    "Browser.downloadWillBegin",
    // Only sent while a screencast runs (`ChromiumDevice::start_screencast`).
    "Page.screencastFrame",
];

/// The key under which a dialog event's parameters keep the answer the autopilot gave.
pub(crate) const ANSWERED: &str = "answeredAccept";

/// How long a command may still take once the page committed a new document during it.
const NAVIGATION_GRACE: Duration = Duration::from_secs(1);

/// Most events kept between two reads of the queue: a page that raises a dialog every
/// few milliseconds while the device waits must not grow it without bound. The oldest
/// are dropped first.
const MAX_QUEUED: usize = 4096;

/// What the client answers by itself the moment an event arrives, inside whatever call is
/// waiting: a native dialog blocks the page (and with it the call that is waiting for the
/// page, such as a click), so its answer cannot wait until that call returns.
#[derive(Debug, Default)]
pub(crate) struct Autopilot {
    /// On until the device has set the rest up.
    pub enabled: bool,
    pub dialogs: DialogPolicy,
    /// Leave a page on `beforeunload` whatever the policy, while the device itself
    /// navigates (a restart, bringing the app back).
    pub leaving: bool,
    /// The app's page. Every other page target is closed as it is created: a new tab or
    /// popup would take the foreground and slow every later step.
    pub own_target: Option<String>,
    /// Page targets the device opened itself and closes itself.
    pub spare_targets: Vec<String>,
    /// The device is opening a page of its own: the page created now is spared.
    pub opening_spare: bool,
    /// The file a file chooser is given.
    pub upload: Option<PathBuf>,
}

#[derive(Debug)]
pub(crate) struct Cdp {
    ws: WebSocket<TcpStream>,
    next_id: u64,
    events: VecDeque<Event>,
    pub call_timeout: Duration,
    pub autopilot: Autopilot,
    /// Sessions whose renderer crashed: calls on them fail at once rather than wait
    /// out their timeout for an answer that cannot come.
    crashed: Vec<String>,
    /// The last call went unanswered past its timeout.
    pub timed_out: bool,
}

impl Cdp {
    pub fn connect(ws_url: &str, call_timeout: Duration) -> Result<Self> {
        let rest = ws_url
            .strip_prefix("ws://")
            .ok_or_else(|| Error::BadReply {
                method: "DevTools endpoint".into(),
                detail: format!("not a ws:// URL: {ws_url}"),
            })?;
        let host = rest.split('/').next().unwrap_or(rest);
        let connect = |e: std::io::Error| Error::io(format!("connect to {ws_url}"), e);
        let addr = host
            .to_socket_addrs()
            .map_err(connect)?
            .next()
            .ok_or_else(|| connect(std::io::ErrorKind::AddrNotAvailable.into()))?;
        // A browser that accepts the connection but never answers the handshake is hung:
        // both the connect and the handshake are bounded by the call timeout.
        let stream = TcpStream::connect_timeout(&addr, call_timeout).map_err(connect)?;
        stream.set_nodelay(true).ok();
        stream
            .set_read_timeout(Some(call_timeout))
            .and_then(|()| stream.set_write_timeout(Some(call_timeout)))
            .map_err(|e| Error::io("set DevTools socket timeout", e))?;
        let (ws, _) =
            tungstenite::client::client(ws_url, stream).map_err(|e| Error::DeviceLost {
                what: format!("WebSocket handshake with {ws_url} failed: {e}"),
            })?;
        Ok(Self {
            ws,
            next_id: 1,
            events: VecDeque::new(),
            call_timeout,
            autopilot: Autopilot::default(),
            crashed: Vec::new(),
            timed_out: false,
        })
    }

    /// Whether the renderer of `session` was reported crashed.
    pub fn renderer_crashed(&self, session: &str) -> bool {
        self.crashed.iter().any(|c| c == session)
    }

    /// Sends a command and returns its id without waiting for the answer; an answer
    /// nobody waits for is read and dropped by whichever call reads next.
    pub fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_owned());
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .map_err(|e| lost(method, &e))?;
        Ok(id)
    }

    /// Answers what must be answered at once (see [`Autopilot`]).
    fn answer_at_once(
        &mut self,
        method: &str,
        params: &mut Value,
        session: Option<&str>,
    ) -> Result<()> {
        if !self.autopilot.enabled {
            return Ok(());
        }
        match method {
            "Page.javascriptDialogOpening" => {
                let accept = self.autopilot.dialogs.accepts()
                    || (self.autopilot.leaving && params["type"] == "beforeunload");
                // Kept with the event, so that what is recorded is what was answered.
                params[ANSWERED] = json!(accept);
                let mut answer = json!({ "accept": accept });
                if accept && params["type"] == "prompt" {
                    answer["promptText"] = json!(PROMPT_TEXT);
                }
                self.send(session, "Page.handleJavaScriptDialog", answer)?;
                Ok(())
            }
            "Target.targetCreated" => {
                let info = &params["targetInfo"];
                let id = info["targetId"].as_str().unwrap_or("");
                let a = &mut self.autopilot;
                if info["type"] != "page" || a.own_target.as_deref().is_none_or(|own| own == id) {
                    return Ok(());
                }
                if a.opening_spare {
                    a.spare_targets.push(id.to_owned());
                } else if !a.spare_targets.iter().any(|t| t == id) {
                    self.send(None, "Target.closeTarget", json!({ "targetId": id }))?;
                }
                Ok(())
            }
            "Page.fileChooserOpened" => {
                match (&self.autopilot.upload, params["backendNodeId"].as_u64()) {
                    (Some(file), Some(node)) => {
                        let file = file.display().to_string();
                        self.send(
                            session,
                            "DOM.setFileInputFiles",
                            json!({ "files": [file], "backendNodeId": node }),
                        )?;
                        Ok(())
                    }
                    // No file to give, or a chooser not tied to an input: left unanswered,
                    // which cancels it.
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Sends a command and waits for its answer within the call timeout.
    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        let timeout = self.call_timeout;
        self.call_within(session, method, params, timeout)
    }

    pub fn call_within(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let id = self.send(session, method, params)?;
        let mut deadline = Instant::now() + timeout;
        // A command in flight when the page's main frame commits a new document (in a
        // new renderer) may never be answered: that is the navigation, not a hang.
        let mut navigated = false;
        loop {
            if let Some(s) = session
                && self.crashed.iter().any(|c| c == s)
            {
                return Err(Error::DeviceLost {
                    what: format!("the page's renderer crashed during {method}"),
                });
            }
            let Some(reply) = self.read_one(deadline, method)? else {
                if navigated {
                    return Err(Error::Protocol {
                        method: method.to_owned(),
                        message: "no answer: the page went to a new document meanwhile".into(),
                    });
                }
                self.timed_out = true;
                return Err(Error::Timeout {
                    method: method.to_owned(),
                    after: timeout,
                });
            };
            if reply.is_null()
                && !navigated
                && self.events.back().is_some_and(|e| {
                    e.method == "Page.frameNavigated"
                        && e.session.as_deref() == session
                        && e.params["frame"]["parentId"].is_null()
                })
            {
                navigated = true;
                deadline = deadline.min(Instant::now() + NAVIGATION_GRACE);
            }
            if reply.get("id").and_then(Value::as_u64) == Some(id) {
                self.timed_out = false;
                if let Some(err) = reply.get("error") {
                    let message = err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown error");
                    let data = err
                        .get("data")
                        .and_then(Value::as_str)
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default();
                    return Err(Error::Protocol {
                        method: method.to_owned(),
                        message: format!("{message}{data}"),
                    });
                }
                return Ok(reply.get("result").cloned().unwrap_or(Value::Null));
            }
        }
    }

    /// Reads whatever arrives within `wait`, keeping the events.
    pub fn pump(&mut self, wait: Duration) -> Result<()> {
        let deadline = Instant::now() + wait;
        while self.read_one(deadline, "event pump")?.is_some() {}
        Ok(())
    }

    /// Waits until an event `method` for `session` arrives (or is already queued) and
    /// removes it; `None` after `timeout`.
    pub fn wait_event(
        &mut self,
        session: Option<&str>,
        method: &str,
        timeout: Duration,
    ) -> Result<Option<Event>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(pos) = self
                .events
                .iter()
                .position(|e| e.method == method && e.session.as_deref() == session)
            {
                return Ok(self.events.remove(pos));
            }
            if self.read_one(deadline, method)?.is_none() {
                return Ok(None);
            }
        }
    }

    /// Whether an event `method` for `session` is queued (it stays queued).
    pub fn has_event(&self, session: Option<&str>, method: &str, frame: Option<&str>) -> bool {
        self.events.iter().any(|e| {
            e.method == method
                && e.session.as_deref() == session
                && frame.is_none_or(|f| e.params["frameId"].as_str() == Some(f))
        })
    }

    /// Takes every queued event.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.events.drain(..).collect()
    }

    /// Reads one message before `deadline`. Events are queued and returned as `Null`
    /// placeholders so callers can loop; answers are returned whole. `None` on timeout.
    fn read_one(&mut self, deadline: Instant, method: &str) -> Result<Option<Value>> {
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        let stream = self.ws.get_mut();
        stream
            .set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))))
            .map_err(|e| Error::io("set DevTools socket timeout", e))?;
        let msg = match self.ws.read() {
            Ok(m) => m,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(lost(method, &e)),
        };
        let text = match msg {
            Message::Text(t) => t,
            Message::Close(_) => {
                return Err(Error::DeviceLost {
                    what: format!("browser closed the DevTools socket during {method}"),
                });
            }
            _ => return Ok(Some(Value::Null)),
        };
        let value: Value = serde_json::from_str(text.as_str()).map_err(|e| Error::BadReply {
            method: method.to_owned(),
            detail: format!("invalid JSON: {e}"),
        })?;
        if value.get("id").is_some() {
            return Ok(Some(value));
        }
        if let Some(m) = value.get("method").and_then(Value::as_str)
            && KEPT_EVENTS.contains(&m)
        {
            let mut params = value.get("params").cloned().unwrap_or(Value::Null);
            let session = value
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned);
            self.answer_at_once(m, &mut params, session.as_deref())?;
            if m == "Inspector.targetCrashed"
                && let Some(s) = &session
            {
                self.crashed.push(s.clone());
            }
            if self.events.len() == MAX_QUEUED {
                self.events.pop_front();
            }
            self.events.push_back(Event {
                method: m.to_owned(),
                params,
                session,
            });
        }
        Ok(Some(Value::Null))
    }
}

fn lost(method: &str, e: &tungstenite::Error) -> Error {
    Error::DeviceLost {
        what: format!("DevTools connection broke during {method}: {e}"),
    }
}
