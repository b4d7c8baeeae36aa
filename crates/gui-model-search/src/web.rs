//! Monkey++ on web apps in Chromium: the app model from the page's scripts and DOM, and
//! the search's interactions carried out on the live page.
//!
//! # How the model is built
//!
//! * **Code** ([`web_code`]): every function of the app's scripts is a method vertex and
//!   its statements are statement vertices, with execution-order and call edges; handlers
//!   of input events are callbacks, handlers of `hashchange`/`popstate`/`load` are
//!   lifecycle methods.
//! * **Controls**: the UI vertices are the events the grey-box DOM listing finds
//!   ([`gui_greybox::web::WebApp`]): visible, enabled controls and elements with click
//!   listeners, each joined to the functions its listeners run (listener edges).
//! * **Screens** are the page's URL path and hash, or an open dialog over it (the same
//!   names the grey-box events carry).
//! * **Where a control leads** is decided at run time on the web (`location.hash = '#/' +
//!   name`, a route read from a `data-` attribute), so the builder *surveys* the app: depth
//!   first from the start page, it fires each control whose code may change the screen
//!   (its listener code reaches a navigation, a history step or a dialog being shown or
//!   hidden, or its code is unknown) once, from a freshly loaded app brought to that
//!   screen, and records the screen that follows as the control's effect. Controls whose
//!   code cannot change the screen are not fired: that is what the static model saves.
//!
//! Static effects are not copied into the statements of the model: they are
//! path-insensitive (the demo's router both shows any screen and redirects to `#/home`),
//! so the observed effect of each control is what the search follows.
//!
//! # Back on the web
//!
//! Back is the browser's history back for a page, and Escape for a dialog, which is what a
//! person (and Android's back button) does to dismiss one.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use gui_core::{Action, ActionKind, CoverageSnapshot, Signal};
use gui_driver::ChromiumDevice;
use gui_explore::{RunRecorder, StepRecord, StepTimings};
use gui_greybox::js::JsAnalysis;
use gui_greybox::web::{WebApp, WebSettle};
use gui_greybox::{EventKind, GreyboxApp, HandlerRef, LiveEvent};
use serde::{Deserialize, Serialize};

use crate::{
    AppModel, Edge, EdgeKind, Effect, Error, Interaction, Locator, MethodRole, ModelRun, Result,
    Reuse, Screen, ScreenKind, SearchPlan, UiEvent, Vertex, VertexKind, WebEffect, web_code,
};

/// Knobs of the web model builder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WebModelConfig {
    /// Text typed into fields when a typing control is surveyed.
    pub input: String,
    /// Screens further than this many controls from the start page are not surveyed.
    pub max_depth: usize,
    /// Stop surveying after this many screens.
    pub max_screens: usize,
    /// Fire every control once, not only those whose code may change the screen.
    pub probe_all: bool,
    /// After a survey probe, how long the DOM must stay unchanged before the screen is
    /// read (the survey only needs the screen a control leads to, not every effect).
    pub quiet_ms: u64,
}

impl Default for WebModelConfig {
    fn default() -> Self {
        WebModelConfig {
            input: "test".into(),
            max_depth: 6,
            max_screens: 60,
            probe_all: false,
            quiet_ms: 10,
        }
    }
}

/// A web app's model and what building it took.
#[derive(Debug, Clone, Serialize)]
pub struct WebModel {
    pub model: AppModel,
    /// Parsing and analysing the scripts into method and statement vertices.
    pub static_ms: f64,
    /// The survey of screens in the browser.
    pub survey_ms: f64,
    /// Controls fired by the survey.
    pub probes: usize,
    /// Controls not fired because their code cannot change the screen.
    pub skipped: usize,
    /// App restarts the survey needed.
    pub resets: usize,
    /// Times the survey came back to a screen with Back instead of a restart.
    pub backs: usize,
    /// Plain links whose destination the survey read from their `href` instead of
    /// following them.
    pub read_links: usize,
    /// Statements that change the screen, by vertex id, as the static analysis sees them.
    pub static_effects: Vec<(String, WebEffect)>,
    /// Crashes and errors the survey ran into.
    #[serde(skip)]
    pub signals: Vec<Signal>,
}

const SCREEN_JS: &str = r#"((origin) => {
  const here = location.protocol === 'file:' ? 'file://' : location.origin;
  if (here !== origin) return OUTSIDE;
  const shown = e => {
    if (e.hidden) return false;
    const s = getComputedStyle(e), r = e.getBoundingClientRect();
    return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0 && r.height > 0;
  };
  const ds = [...document.querySelectorAll('dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true]')].filter(shown);
  const d = ds[ds.length - 1];
  if (d) {
    // Named after the dialog's id, or the id of the overlay holding it, so that two
    // dialogs built from the same markup stay two screens.
    const named = d.id ? d : d.closest('[id]');
    return 'dialog ' + (named ? '#' + named.id : (d.getAttribute('aria-label') || d.tagName.toLowerCase()));
  }
  return location.pathname + location.hash;
})"#;

/// Where each of a list of plain links leads, read without following it: `outside` for
/// another origin, `window` for a link that opens another window (the app's page stays),
/// `null` when it has to be followed to know (a link of the app's own origin, an element
/// that is not a link, a download).
const LINKS_JS: &str = r#"((sels, origin) => sels.map(sel => {
  const el = document.querySelector(sel);
  const a = el && el.closest('a[href], area[href]');
  if (!a || a.hasAttribute('download')) return null;
  let u;
  try { u = new URL(a.href); } catch (e) { return null; }
  if (!['http:', 'https:', 'file:'].includes(u.protocol)) return null;
  const target = (a.target || '').toLowerCase();
  if (target && !['_self', '_top', '_parent'].includes(target)) return 'window';
  const there = u.protocol === 'file:' ? 'file://' : u.origin;
  return there === origin ? null : 'outside';
}))"#;

/// The screen of every page outside the app's origin (an external link, the browser's
/// error page when it cannot be reached): a screen without controls of the app, which
/// Back leaves.
pub const OUTSIDE: &str = "outside the app";

/// The origin (`scheme://host:port`) of a URL.
fn origin_of(url: &str) -> &str {
    match url.find("://") {
        Some(i) => {
            let rest = &url[i + 3..];
            let end = rest.find(['/', '?', '#']).map_or(url.len(), |j| i + 3 + j);
            &url[..end]
        }
        None => url,
    }
}

/// The screen the page shows now: its open dialog, else its URL path and hash, or
/// [`OUTSIDE`] when the page is not on the origin of the app's start page.
pub fn current_screen(device: &mut ChromiumDevice) -> Result<String> {
    let origin = origin_of(device.start_url()).to_owned();
    let expr = format!(
        "{}({})",
        SCREEN_JS.replace("OUTSIDE", &serde_json::to_string(OUTSIDE).expect("string")),
        serde_json::to_string(&origin).expect("string")
    );
    let v = device.evaluate(&expr)?;
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::BadModel {
            what: format!("the page's screen name is not a string: {v}"),
        })
}

/// The page part of a page screen's name: its path without the hash.
fn document_of(screen: &str) -> &str {
    screen.split_once('#').map_or(screen, |(page, _)| page)
}

/// Back on the web, from `screen`: Escape for a dialog, the browser's history back for a
/// page; then waits for the page to settle.
fn back(app: &mut WebApp, screen: &str) -> Result<()> {
    if kind_of(screen) == ScreenKind::Dialog {
        app.chromium().press_key("Escape", 27)?;
    } else {
        app.device().perform(&Action::new(ActionKind::Return))?;
    }
    app.settle()?;
    Ok(())
}

fn kind_of(screen: &str) -> ScreenKind {
    if screen.starts_with("dialog ") {
        ScreenKind::Dialog
    } else {
        ScreenKind::Page
    }
}

#[derive(Debug)]
struct UiRecord {
    label: String,
    event: UiEvent,
    screens: Vec<String>,
    handlers: Vec<HandlerRef>,
    effect: Option<Effect>,
}

struct Survey<'a> {
    app: &'a mut WebApp,
    config: &'a WebModelConfig,
    may_change: &'a dyn Fn(&LiveEvent) -> bool,
    probed: HashSet<String>,
    out: Surveyed,
}

/// The ids of a listing, in order.
fn ids_of(listing: &[LiveEvent]) -> Vec<String> {
    listing.iter().map(|l| l.event.id.clone()).collect()
}

impl Survey<'_> {
    fn record_screen(&mut self, s: &str) {
        if !self.out.screens.iter().any(|x| x == s) {
            self.out.screens.push(s.to_owned());
        }
    }

    fn record_ui(&mut self, screen: &str, live: &LiveEvent) {
        let rec = match self.out.ui.iter_mut().find(|(id, _)| *id == live.event.id) {
            Some((_, r)) => r,
            None => {
                self.out.ui.push((
                    live.event.id.clone(),
                    UiRecord {
                        label: live.event.label.clone(),
                        event: match live.event.kind {
                            EventKind::Click => UiEvent::Click,
                            EventKind::Input => UiEvent::Input,
                        },
                        screens: Vec::new(),
                        handlers: live.event.handlers.clone(),
                        effect: None,
                    },
                ));
                &mut self.out.ui.last_mut().expect("just pushed").1
            }
        };
        if !rec.screens.iter().any(|s| s == screen) {
            rec.screens.push(screen.to_owned());
        }
    }

    /// The controls of `listing` that are plain links whose destination needs no
    /// firing (see [`LINKS_JS`]): to another origin (`Some(OUTSIDE)`), or to another
    /// window, leaving the app's page as it is (`None`).
    ///
    /// Only controls without listeners count: a listener may stop the link or do
    /// something else first. A click on such a link does what its `href` says, so firing
    /// it (a page load of a host that may not answer, then a restart) would only confirm
    /// it.
    fn plain_links(&mut self, listing: &[LiveEvent]) -> Result<HashMap<String, Option<String>>> {
        let ids: Vec<&str> = listing
            .iter()
            .filter(|l| l.event.handlers.is_empty() && l.event.kind == EventKind::Click)
            .filter_map(|l| l.event.id.strip_suffix(" click"))
            .collect();
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let origin = origin_of(self.app.chromium().start_url()).to_owned();
        let expr = format!(
            "{LINKS_JS}({}, {})",
            serde_json::to_string(&ids).expect("strings"),
            serde_json::to_string(&origin).expect("string")
        );
        let value = self.app.chromium().evaluate(&expr)?;
        let kinds = value.as_array().cloned().unwrap_or_default();
        Ok(ids
            .iter()
            .zip(kinds)
            .filter_map(|(id, kind)| {
                let leads = match kind.as_str()? {
                    "outside" => Some(OUTSIDE.to_owned()),
                    _ => None,
                };
                Some((format!("{id} click"), leads))
            })
            .collect())
    }

    fn screen(&mut self) -> Result<String> {
        current_screen(self.app.chromium())
    }

    fn drain(&mut self) -> Result<()> {
        let s = self.app.device().drain_signals()?;
        self.out.signals.extend(s);
        Ok(())
    }

    /// Brings the app back to `screen` showing the controls `here`, and returns its
    /// listing then; `None` when neither way below gets there.
    ///
    /// First with Back, as a person would: history back for a page, Escape for a dialog,
    /// a few times at most, since the probes since `screen` was listed may have gone
    /// deeper. The screen counts as back only when it lists exactly the controls it had,
    /// so a page whose state the probes changed is not mistaken for it. Otherwise a fresh
    /// app is brought there along `path`, which is slower (a page load) but sure.
    ///
    /// A dialog closed by the probe is opened again from the screen under it, by the
    /// control that opened it.
    fn return_to(
        &mut self,
        path: &[String],
        screen: &str,
        parent: Option<&str>,
        here: &[String],
    ) -> Result<Option<Vec<LiveEvent>>> {
        let mut reopened = false;
        // The probes since `screen` was listed may have gone a few screens deeper.
        let mut steps = 3;
        // The page (path and query, no hash) `screen` is on.
        let document = match kind_of(screen) {
            ScreenKind::Page => Some(screen),
            ScreenKind::Dialog => parent.filter(|p| kind_of(p) == ScreenKind::Page),
        }
        .map(document_of);
        loop {
            let now = self.screen()?;
            if now == screen {
                let listing = self.app.available()?;
                if ids_of(&listing) == here {
                    self.out.backs += 1;
                    return Ok(Some(listing));
                }
                break;
            }
            if now == OUTSIDE
                || steps == 0
                || (kind_of(&now) == ScreenKind::Page && Some(document_of(&now)) != document)
            {
                // On another page, going back would load the app again, state and all,
                // as a restart does.
                break;
            }
            steps -= 1;
            if kind_of(screen) == ScreenKind::Dialog && Some(now.as_str()) == parent {
                let opener = match path.last() {
                    Some(id) if !reopened => self
                        .app
                        .available()?
                        .into_iter()
                        .find(|l| l.event.id == *id),
                    _ => None,
                };
                let Some(live) = opener else { break };
                reopened = true;
                self.app.fire(&live, &self.config.input)?;
                continue;
            }
            back(self.app, &now)?;
        }
        self.app.reset()?;
        self.out.resets += 1;
        for id in path {
            let Some(live) = self
                .app
                .available()?
                .into_iter()
                .find(|l| l.event.id == *id)
            else {
                return Ok(None);
            };
            self.app.fire(&live, &self.config.input)?;
        }
        if self.screen()? != screen {
            return Ok(None);
        }
        Ok(Some(self.app.available()?))
    }

    fn visit(&mut self, screen: String, path: Vec<String>, parent: Option<String>) -> Result<()> {
        self.record_screen(&screen);
        let offered = self.app.available()?;
        for live in &offered {
            self.record_ui(&screen, live);
        }
        let here = ids_of(&offered);
        let mut links = self.plain_links(&offered)?;
        // The page's listing while the app shows `screen` as it was listed; `None` once a
        // probe has changed it.
        let mut current = Some(offered.clone());
        // Controls that appear after a control fired in place (a new list row) join the
        // screen's list, and are surveyed in turn.
        let mut todo: std::collections::VecDeque<LiveEvent> = offered.into_iter().collect();
        while let Some(live) = todo.pop_front() {
            let live = &live;
            if self.probed.contains(&live.event.id) {
                continue;
            }
            if !self.config.probe_all && !(self.may_change)(live) {
                self.probed.insert(live.event.id.clone());
                self.out.skipped += 1;
                continue;
            }
            if let Some(leads) = links.remove(&live.event.id) {
                self.probed.insert(live.event.id.clone());
                self.out.read_links += 1;
                if let Some(to) = leads {
                    self.record_screen(&to);
                    if let Some((_, rec)) =
                        self.out.ui.iter_mut().find(|(id, _)| *id == live.event.id)
                    {
                        rec.effect = Some(Effect::Launch(to));
                    }
                }
                continue;
            }
            if self.out.screens.len() >= self.config.max_screens {
                return Ok(());
            }
            let listing = match current.take() {
                Some(l) => l,
                None => match self.return_to(&path, &screen, parent.as_deref(), &here)? {
                    Some(l) => l,
                    None => {
                        tracing::warn!(
                            "survey: the path to {screen} no longer plays; its other controls are left"
                        );
                        return Ok(());
                    }
                },
            };
            // The control may have moved or gone after in-place probes: look it up in the
            // listing taken since (which still holds when it is not there).
            let Some(target) = listing
                .iter()
                .find(|l| l.event.id == live.event.id)
                .cloned()
            else {
                current = Some(listing);
                continue;
            };
            self.probed.insert(live.event.id.clone());
            self.out.probes += 1;
            if let Err(e) = self.app.fire(&target, &self.config.input) {
                tracing::warn!("survey: firing {} failed: {e}", target.event.id);
                continue;
            }
            let after = self.screen()?;
            if after == screen {
                let now = self.app.available()?;
                let same = ids_of(&now) == here;
                let mut appeared = Vec::new();
                for l in &now {
                    if !self.out.ui.iter().any(|(id, _)| *id == l.event.id) {
                        self.record_ui(&screen, l);
                        todo.push_back(l.clone());
                        appeared.push(l.clone());
                    }
                }
                links.extend(self.plain_links(&appeared)?);
                // A screen that changed in place is restored before the next probe; the
                // controls that appeared are then gone, and stay in the model unfired.
                if same {
                    current = Some(now);
                }
                continue;
            }
            // Closing a dialog returns to the screen it was opened on; so does a step back
            // in history. Anything else launches the screen that shows now.
            let effect = if kind_of(&screen) == ScreenKind::Dialog
                && parent.as_deref() == Some(after.as_str())
            {
                Effect::Finish
            } else {
                Effect::Launch(after.clone())
            };
            if let Some((_, rec)) = self.out.ui.iter_mut().find(|(id, _)| *id == live.event.id) {
                rec.effect = Some(effect.clone());
            }
            if matches!(effect, Effect::Launch(_))
                && after != OUTSIDE
                && !self.out.screens.contains(&after)
                && path.len() < self.config.max_depth
            {
                let mut deeper = path.clone();
                deeper.push(live.event.id.clone());
                self.visit(after, deeper, Some(screen.clone()))?;
            } else {
                self.record_screen(&after);
            }
        }
        Ok(())
    }
}

/// What the survey found: the screens, the controls with their effects, and what it
/// took.
#[derive(Default)]
struct Surveyed {
    screens: Vec<String>,
    ui: Vec<(String, UiRecord)>,
    probes: usize,
    skipped: usize,
    resets: usize,
    backs: usize,
    read_links: usize,
    signals: Vec<Signal>,
}

/// Surveys the app from a fresh start (see the module documentation).
fn survey(
    app: &mut WebApp,
    config: &WebModelConfig,
    may_change: &dyn Fn(&LiveEvent) -> bool,
) -> Result<(String, Surveyed)> {
    app.reset()?;
    let mut survey = Survey {
        config,
        may_change,
        probed: HashSet::new(),
        out: Surveyed {
            resets: 1,
            ..Surveyed::default()
        },
        app,
    };
    let launch = survey.screen()?;
    survey.visit(launch.clone(), Vec::new(), None)?;
    // Signals stay with the device until drained, restarts included: one drain takes
    // what every probe set off.
    survey.drain()?;
    Ok((launch, survey.out))
}

/// Builds the Monkey++ model of the web app `app` shows (its start page).
pub fn build_web_model(app: &mut WebApp, config: &WebModelConfig) -> Result<WebModel> {
    let t = Instant::now();
    let analysis = JsAnalysis::analyse(app.scripts(), &Default::default());
    let start_url = app.chromium().start_url().to_owned();
    // The launch screen's name is only known once the page shows it; the code part names
    // it with a placeholder that is renamed below.
    const LAUNCH: &str = "\u{0}launch";
    let code = web_code(app.scripts(), &analysis, LAUNCH);
    let static_ms = t.elapsed().as_secs_f64() * 1e3;

    // Which functions may change the screen: those whose code, callees included, has a
    // statement with a web effect. One walk backwards from those statements finds them
    // all (rather than a walk forwards from every handler of every control).
    let mut into: HashMap<&str, Vec<&str>> = HashMap::new();
    for e in &code.edges {
        into.entry(e.to.as_str()).or_default().push(e.from.as_str());
    }
    let mut changing: HashSet<&str> = code.effects.iter().map(|(s, _)| s.as_str()).collect();
    let mut stack: Vec<&str> = changing.iter().copied().collect();
    while let Some(v) = stack.pop() {
        for &w in into.get(v).into_iter().flatten() {
            if changing.insert(w) {
                stack.push(w);
            }
        }
    }
    let changes_screen = |method: &str| changing.contains(method);
    let method_of = |h: &HandlerRef| -> Option<&str> {
        let HandlerRef::Js {
            script,
            line,
            column,
        } = h
        else {
            return None;
        };
        let f = analysis.function_at(script, *line, *column)?;
        code.method_of_function.get(f).map(String::as_str)
    };
    let may_change = |live: &LiveEvent| -> bool {
        let methods: Vec<&str> = live.event.handlers.iter().filter_map(method_of).collect();
        // Unknown code (no listener located, native links, form submits) may do anything.
        methods.is_empty() || methods.iter().any(|m| changes_screen(m))
    };

    let t = Instant::now();
    let settle = app.settle_times();
    app.set_settle(WebSettle {
        quiet: Duration::from_millis(config.quiet_ms),
        ..settle
    });
    let surveyed = survey(app, config, &may_change);
    app.set_settle(settle);
    let (launch, survey) = surveyed?;
    let survey_ms = t.elapsed().as_secs_f64() * 1e3;

    let mut vertices = Vec::new();
    let mut edges = Vec::new();
    let mut callbacks = HashSet::new();
    for (id, rec) in &survey.ui {
        for h in &rec.handlers {
            if let Some(m) = method_of(h)
                && !edges.iter().any(|e: &Edge| e.from == *id && e.to == m)
            {
                edges.push(Edge {
                    from: id.clone(),
                    to: m.to_owned(),
                    kind: EdgeKind::Listener,
                });
                callbacks.insert(m.to_owned());
            }
        }
        vertices.push(Vertex {
            id: id.clone(),
            kind: VertexKind::Ui {
                screens: rec.screens.clone(),
                label: rec.label.clone(),
                event: rec.event,
                effect: rec.effect.clone(),
                locator: Locator {
                    event_id: Some(id.clone()),
                    ..Locator::default()
                },
            },
        });
    }
    for mut v in code.vertices.iter().cloned() {
        if let VertexKind::Method { role, screen, .. } = &mut v.kind {
            if screen.as_deref() == Some(LAUNCH) {
                *screen = Some(launch.clone());
            }
            if *role == MethodRole::Ordinary && callbacks.contains(&v.id) {
                *role = MethodRole::Callback;
            }
        }
        vertices.push(v);
    }
    edges.extend(code.edges.iter().cloned());
    let model = AppModel {
        app: start_url,
        platform: "web".into(),
        launch,
        screens: survey
            .screens
            .iter()
            .map(|s| Screen {
                name: s.clone(),
                kind: kind_of(s),
            })
            .collect(),
        vertices,
        edges,
    };
    model.check()?;
    Ok(WebModel {
        model,
        static_ms,
        survey_ms,
        probes: survey.probes,
        skipped: survey.skipped,
        resets: survey.resets,
        backs: survey.backs,
        read_links: survey.read_links,
        static_effects: code.effects.clone(),
        signals: survey.signals,
    })
}

/// One interaction carried out on the page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LiveStep {
    pub interaction: Interaction,
    /// The control was offered and fired (always true for Back and Relaunch).
    pub done: bool,
    /// The screen the page shows afterwards.
    pub screen: String,
    /// The screen the model expected on top afterwards.
    pub expected: Option<String>,
    /// Interface coverage after the step, counting only controls actually fired.
    pub interface_coverage: f64,
    /// From the start of the step until the page settled and was read.
    pub round_trip_ms: f64,
}

/// The outcome of carrying out a plan on the page.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LiveOutcome {
    pub steps: Vec<LiveStep>,
    /// Controls of the plan the page did not offer when their turn came.
    pub missing: Vec<String>,
    /// Steps after which the page showed another screen than the model expected.
    pub diverged: usize,
    /// Times the app was restarted to bring back a control the plan wanted.
    pub recoveries: usize,
    pub covered_ui: usize,
    pub interface_coverage: f64,
    /// Distinct crash and error signals, with the step that first showed each.
    pub signals: Vec<(u64, Signal)>,
    pub coverage: Option<CoverageSnapshot>,
    pub duration_ms: u64,
}

/// Carries out `plan` on the page from a fresh start, following it in the model too, and
/// records every step in `recorder` when one is given.
///
/// The model does not know the app's data: a control the plan wants may be gone (the
/// demo's list rows after *Archive*). Then the app is restarted and brought back to the
/// planned screen along the shortest path of controls the model knows, and the control is
/// looked up again; these extra interactions are recorded and counted like the others.
pub fn run_plan(
    app: &mut WebApp,
    model: &AppModel,
    plan: &SearchPlan,
    input: &str,
    recorder: Option<&mut RunRecorder>,
) -> Result<LiveOutcome> {
    let mut live = Live {
        started: Instant::now(),
        out: LiveOutcome::default(),
        run: ModelRun::new(model, Reuse::NewInstance)?,
        seen: HashSet::new(),
        app,
        input,
        recorder,
        listing: None,
    };
    live.app.reset()?;
    if let Some(rec) = live.recorder.as_deref_mut() {
        let shot = live.app.device().screenshot()?;
        rec.save_screenshot(0, &shot)?;
    }
    for step in &plan.steps {
        if let Interaction::Touch(id) = &step.interaction
            && !live.offered(id)?
        {
            live.out.recoveries += 1;
            live.step(&Interaction::Relaunch)?;
            for c in path_to(model, &step.screen) {
                live.step(&Interaction::Touch(c))?;
            }
        }
        live.step(&step.interaction)?;
    }
    let mut out = live.out;
    out.covered_ui = live.run.counts().0;
    out.interface_coverage = live.run.interface_coverage();
    out.duration_ms = live.started.elapsed().as_millis() as u64;
    Ok(out)
}

/// The shortest sequence of controls that leads from the launch screen to `screen`,
/// by the effects the model records (empty when there is none).
fn path_to(model: &AppModel, screen: &str) -> Vec<String> {
    let mut prev: HashMap<&str, (&str, &str)> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([model.launch.as_str()]);
    let mut seen = HashSet::from([model.launch.as_str()]);
    while let Some(s) = queue.pop_front() {
        if s == screen {
            let mut path = Vec::new();
            let mut at = s;
            while let Some(&(from, via)) = prev.get(at) {
                path.push(via.to_owned());
                at = from;
            }
            path.reverse();
            return path;
        }
        for (_, v) in model.ui_vertices() {
            if let VertexKind::Ui {
                screens,
                effect: Some(Effect::Launch(t)),
                ..
            } = &v.kind
                && screens.iter().any(|x| x == s)
                && seen.insert(t.as_str())
            {
                prev.insert(t.as_str(), (s, v.id.as_str()));
                queue.push_back(t.as_str());
            }
        }
    }
    Vec::new()
}

/// A plan being carried out: the page, the model following it, and the record.
struct Live<'a, 'm> {
    started: Instant,
    out: LiveOutcome,
    run: ModelRun<'m>,
    seen: HashSet<String>,
    app: &'a mut WebApp,
    input: &'a str,
    recorder: Option<&'a mut RunRecorder>,
    /// The page's controls, listed by `offered` for the touch that follows.
    listing: Option<Vec<LiveEvent>>,
}

impl Live<'_, '_> {
    /// Whether the page offers control `id` now. The listing is kept for the step that
    /// follows, so a touch lists the page once.
    fn offered(&mut self, id: &str) -> Result<bool> {
        let listing = self.app.available()?;
        let found = listing.iter().any(|l| l.event.id == id);
        self.listing = Some(listing);
        Ok(found)
    }

    /// Carries out one interaction and records it.
    fn step(&mut self, interaction: &Interaction) -> Result<()> {
        // A listing taken before another interaction is stale.
        if !matches!(interaction, Interaction::Touch(_)) {
            self.listing = None;
        }
        let n = self.out.steps.len() as u64 + 1;
        let t = Instant::now();
        let mut done = true;
        let mut error = None;
        let action = match interaction {
            Interaction::Touch(id) => {
                let listing = match self.listing.take() {
                    Some(l) => l,
                    None => self.app.available()?,
                };
                match listing.into_iter().find(|l| l.event.id == *id) {
                    Some(live) => {
                        let action = live.action(self.input);
                        if let Err(e) = self.app.fire(&live, self.input) {
                            error = Some(e.to_string());
                        }
                        self.run.touch(id)?;
                        action
                    }
                    None => {
                        done = false;
                        self.out.missing.push(id.clone());
                        Action::new(ActionKind::Click)
                    }
                }
            }
            Interaction::Back => {
                let here = current_screen(self.app.chromium())?;
                back(self.app, &here)?;
                self.run.back();
                Action::new(ActionKind::Return)
            }
            Interaction::Relaunch => {
                self.app.reset()?;
                self.run.relaunch();
                Action::new(ActionKind::BackSwitch)
            }
        };
        let action_ms = t.elapsed().as_secs_f64() * 1e3;
        let screen = current_screen(self.app.chromium())?;
        let expected = self.run.top().map(str::to_owned);
        if expected.as_deref() != Some(screen.as_str()) {
            self.out.diverged += 1;
        }
        let mut fresh = Vec::new();
        for s in self.app.device().drain_signals()? {
            if self.seen.insert(s.key.clone()) {
                fresh.push(s.key.clone());
                self.out.signals.push((n, s));
            }
        }
        let coverage = self.app.device().coverage()?;
        if coverage.is_some() {
            self.out.coverage = coverage;
        }
        if let Some(rec) = self.recorder.as_deref_mut() {
            let shot = self.app.device().screenshot()?;
            let rel = rec.save_screenshot(n, &shot)?;
            rec.append_step(&StepRecord {
                step: n,
                action,
                screenshot: rel.clone(),
                viewport: self.app.device().viewport(),
                coverage,
                new_signals: fresh,
                signals_observed: self.seen.len() as u32,
                error,
                timings: StepTimings {
                    action_ms,
                    round_trip_ms: t.elapsed().as_secs_f64() * 1e3,
                    ..StepTimings::default()
                },
                elapsed_ms: self.started.elapsed().as_millis() as u64,
                seen: None,
                worker: None,
                signal_keys: Vec::new(),
                new_functions: Vec::new(),
            })?;
            for (at, s) in self.out.signals.iter().filter(|(at, _)| *at == n) {
                rec.append_signal(s, *at, &rel)?;
            }
        }
        self.out.steps.push(LiveStep {
            interaction: interaction.clone(),
            done,
            screen,
            expected,
            interface_coverage: self.run.interface_coverage(),
            round_trip_ms: t.elapsed().as_secs_f64() * 1e3,
        });
        Ok(())
    }
}

/// How far a recorded run (our `monkey`'s run folder) got through the model's interface.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MappedWebRun {
    /// Steps re-executed.
    pub events: usize,
    /// Steps whose touch landed on a control of the model.
    pub hits: usize,
    /// UI vertex ids in first-hit order.
    pub covered: Vec<String>,
    pub interface_coverage: f64,
    /// Interface coverage after each step.
    pub curve: Vec<f64>,
}

impl MappedWebRun {
    pub fn hit_rate(&self) -> f64 {
        self.hits as f64 / self.events.max(1) as f64
    }
}

const CONTROL_AT_JS: &str = r#"((x, y, sels) => {
  const el = document.elementFromPoint(x, y);
  if (!el) return -1;
  let best = -1, bestDepth = -1;
  sels.forEach((s, i) => {
    let m = null;
    try { m = el.closest(s); } catch (e) { return; }
    if (!m) return;
    let d = 0; for (let n = m; n; n = n.parentElement) d++;
    if (d > bestDepth) { best = i; bestDepth = d; }
  });
  return best;
})"#;

fn is_touch(kind: ActionKind) -> bool {
    use ActionKind::*;
    matches!(
        kind,
        Click | Input | Drag | DoubleClick | LongClick | MidClick | RightClick
    )
}

/// Re-executes the steps of a recorded run from a fresh app and, before each touch,
/// asks the page which of the model's controls is under the touch point (the paper maps
/// Monkey's coordinates the same way, re-running the events with a view dump at each).
pub fn map_recorded_run(
    app: &mut WebApp,
    model: &AppModel,
    steps: &[StepRecord],
) -> Result<MappedWebRun> {
    let mut ids: Vec<&str> = Vec::new();
    let mut selectors: Vec<String> = Vec::new();
    for (_, v) in model.ui_vertices() {
        let id = v.id.as_str();
        // Grey-box event ids are a CSS selector and the event type.
        let sel = id
            .strip_suffix(" click")
            .or_else(|| id.strip_suffix(" type"))
            .unwrap_or(id);
        ids.push(id);
        selectors.push(sel.to_owned());
    }
    let sels = serde_json::to_string(&selectors).expect("strings serialise");
    let total = ids.len().max(1) as f64;
    let mut out = MappedWebRun::default();
    let mut covered: HashSet<&str> = HashSet::new();
    app.reset()?;
    for step in steps {
        out.events += 1;
        if is_touch(step.action.kind)
            && let Some(p) = step.action.point()
        {
            let expr = format!("{CONTROL_AT_JS}({}, {}, {sels})", p.x, p.y);
            let hit = app.chromium().evaluate(&expr)?.as_i64().unwrap_or(-1);
            if let Some(sel) = usize::try_from(hit).ok().and_then(|i| selectors.get(i)) {
                out.hits += 1;
                // Both the click and the typing vertex of a field count as touched.
                for (i, s) in selectors.iter().enumerate() {
                    if s == sel && covered.insert(ids[i]) {
                        out.covered.push(ids[i].to_owned());
                    }
                }
            }
        }
        if let Err(e) = app.device().perform(&step.action) {
            tracing::debug!("re-executing step {}: {e}", step.step);
        }
        if app.settle().is_err() {
            // A dead or wandering page: start again, as the recorded run did.
            app.reset()?;
        }
        out.curve.push(covered.len() as f64 / total);
    }
    out.interface_coverage = covered.len() as f64 / total;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::origin_of;

    #[test]
    fn origins_are_scheme_host_and_port() {
        assert_eq!(
            origin_of("http://127.0.0.1:8765/index.html#/home"),
            "http://127.0.0.1:8765"
        );
        assert_eq!(origin_of("https://example.org"), "https://example.org");
        assert_eq!(origin_of("http://a.b:1?x=1"), "http://a.b:1");
        assert_eq!(origin_of("file:///srv/app/index.html"), "file://");
    }
}
