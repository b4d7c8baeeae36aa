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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use gui_core::{Action, ActionKind, CoverageSnapshot, Signal};
use gui_driver::ChromiumDevice;
use gui_explore::{RunRecorder, StepRecord, StepTimings};
use gui_greybox::js::JsAnalysis;
use gui_greybox::web::{WebApp, WebSettle};
use gui_greybox::{
    EventKind, GreyboxApp, HandlerRef, LiveEvent, SettleClock, TimeBreakdown, equivalence_class,
    largest_first, share_line,
};
use serde::{Deserialize, Serialize};

use crate::{
    AppModel, Edge, EdgeKind, Effect, Error, Interaction, Locator, MethodRole, ModelRun, PlanStep,
    Result, Reuse, Screen, ScreenKind, SearchConfig, SearchPlan, UiEvent, Vertex, VertexKind,
    WebCode, WebEffect, web_code,
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
    /// Stop surveying once this much time has passed since the survey began (none: no
    /// limit); the model then holds what the survey found so far.
    #[serde(default)]
    pub budget: Option<Duration>,
    /// Fire one control of each class of equivalent controls
    /// ([`gui_greybox::equivalence_class`]) first and the others after the whole survey,
    /// while the budget lasts; those left take their representative's effect (see the
    /// module documentation). Off: every control when its screen is surveyed.
    #[serde(default = "yes")]
    pub group_equivalent: bool,
    /// After the survey, fire the controls left as equivalent to a fired one, while the
    /// budget lasts. Off: they keep their representative's effect, as when the budget
    /// runs out first.
    #[serde(default = "yes")]
    pub second_pass: bool,
    /// Come back to a screen after a probe by restarting the app, never by Back.
    #[serde(default)]
    pub restart_every_probe: bool,
}

fn yes() -> bool {
    true
}

impl Default for WebModelConfig {
    fn default() -> Self {
        WebModelConfig {
            input: "test".into(),
            max_depth: 6,
            max_screens: 60,
            probe_all: false,
            quiet_ms: 10,
            budget: None,
            group_equivalent: true,
            second_pass: true,
            restart_every_probe: false,
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
    /// The survey as it ended: what `--resume` continues from, and what it left out.
    pub survey: SurveyState,
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
        app.escape()?;
    } else {
        app.history_back()?;
    }
    Ok(())
}

fn kind_of(screen: &str) -> ScreenKind {
    if screen.starts_with("dialog ") {
        ScreenKind::Dialog
    } else {
        ScreenKind::Page
    }
}

/// A control the survey found, as it goes into the model's UI vertex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UiRecord {
    pub label: String,
    pub event: UiEvent,
    pub screens: Vec<String>,
    pub handlers: Vec<HandlerRef>,
    pub effect: Option<Effect>,
    /// The control whose in-place probe made this one appear (see
    /// [`Locator::shown_after`]).
    #[serde(default)]
    pub shown_after: Option<String>,
}

/// Why a survey stopped with screens or controls left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SurveyCut {
    /// [`WebModelConfig::budget`] ran out.
    Budget,
    /// [`WebModelConfig::max_screens`] screens were found.
    MaxScreens,
}

impl SurveyCut {
    pub fn name(self) -> &'static str {
        match self {
            SurveyCut::Budget => "time budget",
            SurveyCut::MaxScreens => "max screens",
        }
    }
}

/// Everything a survey has learnt so far, enough to continue it: the screens and
/// controls found, each control's effect, which controls were decided (fired, skipped by
/// the static model, or read as plain links) and which screens were surveyed to the
/// end. Saved as the survey goes (`survey.json` of a `monkeypp` run folder), it is what
/// [`build_web_model_watched`] continues from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SurveyState {
    /// The screen the app starts on, once the survey has seen it.
    pub launch: Option<String>,
    pub screens: Vec<String>,
    pub ui: Vec<(String, UiRecord)>,
    /// Controls fired, skipped by the model, or read as plain links.
    pub probed: BTreeSet<String>,
    /// Screens whose survey began.
    pub visited: Vec<String>,
    /// Screens whose every control was decided.
    pub finished: Vec<String>,
    pub probes: usize,
    pub skipped: usize,
    pub resets: usize,
    pub backs: usize,
    pub read_links: usize,
    /// Time spent surveying, over every run that worked on this state.
    pub elapsed_ms: u64,
    /// Why the last run on this state stopped with work left.
    pub cut: Option<SurveyCut>,
    /// Per class of equivalent controls, the control fired for it.
    #[serde(default)]
    pub groups: BTreeMap<String, SurveyGroup>,
    /// Controls decided without firing because they are equivalent to one that was fired
    /// (control, that one); they take its effect in the model.
    #[serde(default)]
    pub equivalent: BTreeMap<String, String>,
    /// Where the survey's time went, over every run that worked on this state.
    #[serde(default)]
    pub timing: SurveyTiming,
    #[serde(skip)]
    pub signals: Vec<Signal>,
}

/// The representative of a class of equivalent controls: the first fired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurveyGroup {
    pub representative: String,
    /// Whether it led to another screen: the others of its class are then fired first in
    /// the second pass, as the same handler may lead elsewhere for each.
    pub led_elsewhere: bool,
}

/// Where a survey's time went, in milliseconds. The parts do not overlap: waiting for the
/// page to settle is counted in `wait_ms` only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SurveyTiming {
    /// App restarts (a page load), without their settle.
    pub restart_ms: u64,
    /// Going back by Back or Escape, and reopening a dialog, without their settle.
    pub back_ms: u64,
    /// Firing the controls surveyed, without their settle.
    pub fire_ms: u64,
    /// Waiting for the page to settle.
    pub wait_ms: u64,
    /// Reading the controls on offer, the screen's name and plain links' targets.
    pub listing_ms: u64,
}

impl SurveyTiming {
    /// The named parts, largest first.
    pub fn parts(&self) -> Vec<(&'static str, u64)> {
        largest_first(vec![
            ("restarts", self.restart_ms),
            ("ways back", self.back_ms),
            ("firing", self.fire_ms),
            ("waiting", self.wait_ms),
            ("listing", self.listing_ms),
        ])
    }

    /// One line: each part's share of `total_ms`, largest first.
    pub fn summary(&self, total_ms: u64) -> String {
        share_line(&self.parts(), total_ms)
    }
}

impl TimeBreakdown for SurveyTiming {
    fn waits(&mut self) -> &mut u64 {
        &mut self.wait_ms
    }
}

impl SurveyState {
    /// Controls found but neither decided nor equivalent to one that was: their effect,
    /// if any, is unknown to the model.
    pub fn unprobed(&self) -> Vec<String> {
        self.ui
            .iter()
            .filter(|(id, _)| !self.probed.contains(id) && !self.equivalent.contains_key(id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Screens whose survey began and did not end.
    pub fn unfinished(&self) -> Vec<String> {
        self.visited
            .iter()
            .filter(|s| !self.finished.contains(s))
            .cloned()
            .collect()
    }

    /// Whether the survey has anything left to do.
    pub fn has_work(&self) -> bool {
        self.launch.is_none() || self.cut.is_some() || !self.unfinished().is_empty()
    }

    fn record_screen(&mut self, s: &str) {
        if !self.screens.iter().any(|x| x == s) {
            self.screens.push(s.to_owned());
        }
    }

    fn effect_of(&self, id: &str) -> Option<&Effect> {
        self.ui
            .iter()
            .find(|(i, _)| i == id)
            .and_then(|(_, r)| r.effect.as_ref())
    }

    fn set_effect(&mut self, id: &str, effect: Effect) {
        if let Some((_, rec)) = self.ui.iter_mut().find(|(i, _)| i == id) {
            rec.effect = Some(effect);
        }
    }
}

/// One control the survey fired, as the survey reports it to its watcher.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyProbe {
    pub control: String,
    /// The screen it was fired on.
    pub screen: String,
    /// The screen the page showed afterwards, when it left `screen`.
    pub led_to: Option<String>,
    /// Controls that appeared on the screen after it fired in place.
    pub appeared: usize,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// What a survey's watcher sees after each probe: the survey so far, and the model it
/// gives (built on demand: it copies the whole code graph).
pub struct SurveyProgress<'a> {
    pub state: &'a SurveyState,
    pub probe: &'a SurveyProbe,
    parts: &'a ModelParts<'a>,
}

impl std::fmt::Debug for SurveyProgress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurveyProgress")
            .field("state", &self.state)
            .field("probe", &self.probe)
            .finish()
    }
}

impl SurveyProgress<'_> {
    /// The app model of what the survey has found so far.
    pub fn model(&self) -> Result<AppModel> {
        self.parts.assemble(self.state)
    }
}

/// The parts of the model that do not depend on the survey: the code graph.
struct ModelParts<'a> {
    code: &'a WebCode,
    analysis: &'a JsAnalysis,
    start_url: String,
}

/// The launch screen's placeholder name in the code part of the model, renamed once the
/// page shows it.
const LAUNCH: &str = "\u{0}launch";

impl ModelParts<'_> {
    /// The method vertex of a handler's function, if the analysis has it.
    fn method_of(&self, h: &HandlerRef) -> Option<&str> {
        let f = self.analysis.handler_function(h)?;
        self.code.method_of_function.get(f).map(String::as_str)
    }

    /// The model of the code plus the controls and screens `survey` found.
    fn assemble(&self, survey: &SurveyState) -> Result<AppModel> {
        let launch = survey.launch.clone().unwrap_or_default();
        let mut vertices = Vec::new();
        let mut edges = Vec::new();
        let mut callbacks = HashSet::new();
        for (id, rec) in &survey.ui {
            for h in &rec.handlers {
                if let Some(m) = self.method_of(h)
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
                        shown_after: rec.shown_after.clone(),
                        ..Locator::default()
                    },
                },
            });
        }
        for mut v in self.code.vertices.iter().cloned() {
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
        edges.extend(self.code.edges.iter().cloned());
        let mut screens: Vec<Screen> = survey
            .screens
            .iter()
            .map(|s| Screen {
                name: s.clone(),
                kind: kind_of(s),
            })
            .collect();
        if !survey.screens.contains(&launch) {
            screens.insert(
                0,
                Screen {
                    name: launch.clone(),
                    kind: kind_of(&launch),
                },
            );
        }
        let model = AppModel {
            app: self.start_url.clone(),
            platform: "web".into(),
            launch,
            screens,
            vertices,
            edges,
        };
        model.check()?;
        Ok(model)
    }
}

struct Survey<'a> {
    app: &'a mut WebApp,
    config: &'a WebModelConfig,
    may_change: &'a dyn Fn(&LiveEvent) -> bool,
    out: SurveyState,
    /// Screens an earlier run began to survey and did not finish: surveyed again when
    /// reached, though already known.
    reopen: HashSet<String>,
    /// The screens being surveyed, the start screen first (a screen is not entered twice).
    chain: Vec<String>,
    deadline: Option<Instant>,
    watch: &'a mut dyn FnMut(&SurveyState, &SurveyProbe),
    /// Controls left for the second pass: equivalent to one fired before them.
    pending: Vec<Deferred>,
    /// Controls the second pass fires although their class has a representative.
    undefer: HashSet<String>,
}

/// A control the survey left for its second pass, and how to get to its screen.
struct Deferred {
    control: String,
    screen: String,
    path: Vec<String>,
    parent: Option<String>,
    here: Vec<String>,
}

/// The ids of a listing, in order.
fn ids_of(listing: &[LiveEvent]) -> Vec<String> {
    listing.iter().map(|l| l.event.id.clone()).collect()
}

impl Survey<'_> {
    fn record_screen(&mut self, s: &str) {
        self.out.record_screen(s);
    }

    /// Runs `f` on the app, adding its time to `part` of the survey's timing and the page
    /// settles within it to `wait_ms`.
    fn timed<T>(
        &mut self,
        part: fn(&mut SurveyTiming) -> &mut u64,
        f: impl FnOnce(&mut WebApp) -> Result<T>,
    ) -> Result<T> {
        let clock = SettleClock::start(&*self.app);
        let out = f(self.app);
        clock.stop(&*self.app, &mut self.out.timing, part);
        out
    }

    fn listing(&mut self) -> Result<Vec<LiveEvent>> {
        self.timed(|t| &mut t.listing_ms, |app| Ok(app.available()?))
    }

    fn restart(&mut self) -> Result<()> {
        self.out.resets += 1;
        self.timed(|t| &mut t.restart_ms, |app| Ok(app.reset()?))
    }

    /// The second pass: the controls left as equivalent to one fired, those whose
    /// representative led elsewhere first, screen by screen, while the budget lasts.
    /// Controls it does not get to stay equivalent.
    fn second_pass(&mut self) -> Result<()> {
        let mut pending = std::mem::take(&mut self.pending);
        // A representative that led elsewhere says the others may lead elsewhere too.
        pending.sort_by_key(|d| {
            let rep = self.out.equivalent.get(&d.control);
            !rep.is_some_and(|r| {
                self.out
                    .groups
                    .values()
                    .any(|g| g.representative == *r && g.led_elsewhere)
            })
        });
        loop {
            // Screens the second pass enters may leave controls of their own.
            pending.append(&mut self.pending);
            if pending.is_empty() {
                return Ok(());
            }
            if self.stop_for_budget() {
                // Left unfinished with their screens, for a resumed survey.
                self.pending = pending;
                return Ok(());
            }
            let first = pending.remove(0);
            let mut batch = vec![first.control.clone()];
            pending.retain(|d| {
                let same = d.screen == first.screen;
                if same {
                    batch.push(d.control.clone());
                }
                !same
            });
            self.undefer.extend(batch);
            let back = self.return_to(
                &first.path,
                &first.screen,
                first.parent.as_deref(),
                &first.here,
            )?;
            match back {
                // Controls it does not fire (no longer offered) stay equivalent.
                Some(_) => self.visit(
                    first.screen.clone(),
                    first.path.clone(),
                    first.parent.clone(),
                )?,
                // The screen cannot be reached again: its controls stay equivalent.
                None => self.mark_finished(&first.screen),
            }
            if self.out.cut.is_some() {
                return Ok(());
            }
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
                        shown_after: None,
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
        self.timed(|t| &mut t.listing_ms, |app| current_screen(app.chromium()))
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
            if self.config.restart_every_probe {
                break;
            }
            let now = self.screen()?;
            if now == screen {
                let listing = self.listing()?;
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
                let input = self.config.input.clone();
                self.timed(|t| &mut t.back_ms, |app| Ok(app.fire(&live, &input)?))?;
                continue;
            }
            self.timed(|t| &mut t.back_ms, |app| back(app, &now))?;
        }
        self.restart()?;
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

    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Surveys `screen`, reached from the start page by the controls of `path` (`parent`
    /// is the screen under it), and, depth first, the screens its controls lead to.
    /// Returns early, with [`SurveyState::cut`] set, when a limit is reached; the screen
    /// then stays unfinished.
    fn visit(&mut self, screen: String, path: Vec<String>, parent: Option<String>) -> Result<()> {
        if !self.out.visited.contains(&screen) {
            self.out.visited.push(screen.clone());
        }
        self.chain.push(screen.clone());
        let surveyed = self.visit_controls(&screen, &path, parent);
        self.chain.pop();
        surveyed?;
        // A screen with controls left for the second pass is finished by it: a survey cut
        // before then reopens the screen when resumed.
        if self.out.cut.is_none() && !self.pending.iter().any(|d| d.screen == screen) {
            self.mark_finished(&screen);
        }
        Ok(())
    }

    fn mark_finished(&mut self, screen: &str) {
        if !self.out.finished.iter().any(|s| s == screen) {
            self.out.finished.push(screen.to_owned());
        }
        self.reopen.remove(screen);
    }

    /// Whether the survey goes into `to` after a control led there from `screen`: a
    /// screen not seen before, or one an earlier run left unfinished (not while it is
    /// being surveyed further up), within the depth limit.
    fn enters(&self, to: &str, screen: &str, path: &[String]) -> bool {
        to != OUTSIDE
            && to != screen
            && path.len() < self.config.max_depth
            && (!self.out.screens.iter().any(|s| s == to)
                || (self.reopen.contains(to) && !self.chain.iter().any(|s| s == to)))
    }

    fn stop_for_budget(&mut self) -> bool {
        if self.out_of_time() {
            self.out.cut = Some(SurveyCut::Budget);
            return true;
        }
        false
    }

    fn visit_controls(
        &mut self,
        screen: &str,
        path: &[String],
        parent: Option<String>,
    ) -> Result<()> {
        let screen = screen.to_owned();
        self.record_screen(&screen);
        let offered = self.listing()?;
        for live in &offered {
            self.record_ui(&screen, live);
        }
        let here = ids_of(&offered);
        let mut links = self.plain_links(&offered)?;
        // The page's listing while the app shows `screen` as it was listed; `None` once a
        // probe has changed it.
        let mut current = Some(offered.clone());
        // Controls that appear after a control fired in place (a new list row) join the
        // screen's list, and are surveyed in turn. With grouping, controls that do not
        // repeat on the screen (a toolbar, a menu) go before repeated ones (a list's rows).
        let mut order = offered.clone();
        if self.config.group_equivalent {
            let classes: Vec<String> = order.iter().map(|l| equivalence_class(&l.event)).collect();
            let mut count: HashMap<&str, usize> = HashMap::new();
            for c in &classes {
                *count.entry(c).or_default() += 1;
            }
            let repeated: HashMap<String, bool> = order
                .iter()
                .zip(&classes)
                .map(|(l, c)| (l.event.id.clone(), count[c.as_str()] > 1))
                .collect();
            order.sort_by_key(|l| repeated[&l.event.id]);
        }
        let mut todo: std::collections::VecDeque<LiveEvent> = order.into_iter().collect();
        while let Some(live) = todo.pop_front() {
            let live = &live;
            let id = live.event.id.clone();
            if self.out.probed.contains(&id) {
                // Decided by an earlier run, or on another screen. A control that led to
                // a screen an earlier run left unfinished is fired again to go there.
                let reenter = match self.out.effect_of(&id) {
                    Some(Effect::Launch(to)) if self.reopen.contains(to.as_str()) => {
                        Some(to.clone())
                    }
                    _ => None,
                };
                let Some(to) = reenter.filter(|to| self.enters(to, &screen, path)) else {
                    continue;
                };
                if self.stop_for_budget() {
                    return Ok(());
                }
                let listing = match current.take() {
                    Some(l) => l,
                    None => match self.return_to(path, &screen, parent.as_deref(), &here)? {
                        Some(l) => l,
                        None => return Ok(()),
                    },
                };
                let Some(target) = listing.iter().find(|l| l.event.id == id).cloned() else {
                    current = Some(listing);
                    continue;
                };
                if let Err(e) = self.app.fire(&target, &self.config.input) {
                    tracing::warn!("survey: firing {id} failed: {e}");
                    continue;
                }
                if self.screen()? == to {
                    let mut deeper = path.to_vec();
                    deeper.push(id);
                    self.visit(to, deeper, Some(screen.clone()))?;
                    if self.out.cut.is_some() {
                        return Ok(());
                    }
                }
                continue;
            }
            if !self.config.probe_all && !(self.may_change)(live) {
                self.out.probed.insert(id);
                self.out.skipped += 1;
                continue;
            }
            if let Some(leads) = links.remove(&id) {
                self.out.probed.insert(id.clone());
                self.out.read_links += 1;
                if let Some(to) = leads {
                    self.record_screen(&to);
                    self.out.set_effect(&id, Effect::Launch(to));
                }
                continue;
            }
            let class = equivalence_class(&live.event);
            if self.config.group_equivalent
                && !self.undefer.contains(&id)
                && let Some(g) = self.out.groups.get(&class)
            {
                // Equivalent to a control fired before: left for the second pass, with
                // that control's effect meanwhile.
                let representative = g.representative.clone();
                if let Some(effect) = self.out.effect_of(&representative).cloned() {
                    self.out.set_effect(&id, effect);
                }
                self.out.equivalent.insert(id.clone(), representative);
                self.pending.push(Deferred {
                    control: id,
                    screen: screen.clone(),
                    path: path.to_vec(),
                    parent: parent.clone(),
                    here: here.clone(),
                });
                continue;
            }
            if self.out.screens.len() >= self.config.max_screens {
                self.out.cut = Some(SurveyCut::MaxScreens);
                return Ok(());
            }
            if self.stop_for_budget() {
                return Ok(());
            }
            let started = Instant::now();
            let listing = match current.take() {
                Some(l) => l,
                None => match self.return_to(path, &screen, parent.as_deref(), &here)? {
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
            let Some(target) = listing.iter().find(|l| l.event.id == id).cloned() else {
                current = Some(listing);
                continue;
            };
            self.out.probed.insert(id.clone());
            self.out.equivalent.remove(&id);
            self.out.probes += 1;
            let mut probe = SurveyProbe {
                control: id.clone(),
                screen: screen.clone(),
                led_to: None,
                appeared: 0,
                error: None,
                duration_ms: 0,
            };
            let input = self.config.input.clone();
            let fired = self.timed(|t| &mut t.fire_ms, |app| Ok(app.fire(&target, &input)?));
            if let Err(e) = fired {
                tracing::warn!("survey: firing {id} failed: {e}");
                probe.error = Some(e.to_string());
                probe.duration_ms = started.elapsed().as_millis() as u64;
                (self.watch)(&self.out, &probe);
                continue;
            }
            let after = self.screen()?;
            if self.config.group_equivalent {
                self.out.groups.entry(class).or_insert_with(|| SurveyGroup {
                    representative: id.clone(),
                    led_elsewhere: after != screen,
                });
            }
            if after == screen {
                let now = self.listing()?;
                let same = ids_of(&now) == here;
                let mut appeared = Vec::new();
                for l in &now {
                    if !self.out.ui.iter().any(|(id, _)| *id == l.event.id) {
                        self.record_ui(&screen, l);
                        if let Some((_, rec)) = self.out.ui.last_mut() {
                            rec.shown_after = Some(id.clone());
                        }
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
                probe.appeared = appeared.len();
                probe.duration_ms = started.elapsed().as_millis() as u64;
                (self.watch)(&self.out, &probe);
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
            self.out.set_effect(&id, effect.clone());
            probe.led_to = Some(after.clone());
            probe.duration_ms = started.elapsed().as_millis() as u64;
            let enter = matches!(effect, Effect::Launch(_)) && self.enters(&after, &screen, path);
            if !enter {
                self.record_screen(&after);
            }
            (self.watch)(&self.out, &probe);
            if enter {
                let mut deeper = path.to_vec();
                deeper.push(id);
                self.visit(after, deeper, Some(screen.clone()))?;
                if self.out.cut.is_some() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

/// Surveys the app from a fresh start (see the module documentation), or continues the
/// survey of `prior`.
fn survey(
    app: &mut WebApp,
    config: &WebModelConfig,
    may_change: &dyn Fn(&LiveEvent) -> bool,
    prior: SurveyState,
    watch: &mut dyn FnMut(&SurveyState, &SurveyProbe),
) -> Result<SurveyState> {
    let started = Instant::now();
    let elapsed_before = prior.elapsed_ms;
    let reopen: HashSet<String> = prior.unfinished().into_iter().collect();
    let fresh = prior.launch.is_none();
    let mut survey = Survey {
        config,
        may_change,
        out: SurveyState { cut: None, ..prior },
        reopen,
        chain: Vec::new(),
        deadline: config.budget.map(|b| started + b),
        watch,
        app,
        pending: Vec::new(),
        undefer: HashSet::new(),
    };
    if fresh || !survey.reopen.is_empty() {
        survey.restart()?;
        let launch = survey.screen()?;
        let launch = match survey.out.launch.take() {
            // The app may start on another screen now (a remembered route): the earlier
            // run's name stays, the model is about it.
            Some(before) => before,
            None => launch,
        };
        survey.out.launch = Some(launch.clone());
        survey.visit(launch, Vec::new(), None)?;
        if survey.out.cut.is_none() {
            if config.second_pass {
                survey.second_pass()?;
            } else {
                for d in std::mem::take(&mut survey.pending) {
                    survey.mark_finished(&d.screen);
                }
            }
        }
    }
    // Signals stay with the device until drained, restarts included: one drain takes
    // what every probe set off.
    survey.drain()?;
    survey.out.elapsed_ms = elapsed_before + started.elapsed().as_millis() as u64;
    Ok(survey.out)
}

/// Builds the Monkey++ model of the web app `app` shows (its start page).
pub fn build_web_model(app: &mut WebApp, config: &WebModelConfig) -> Result<WebModel> {
    build_web_model_watched(app, config, None, &mut |_| {})
}

/// [`build_web_model`], continuing the survey of `prior` when given (a survey cut by its
/// budget, or killed: see [`SurveyState`]) and calling `watch` after each control the
/// survey fires.
pub fn build_web_model_watched(
    app: &mut WebApp,
    config: &WebModelConfig,
    prior: Option<SurveyState>,
    watch: &mut dyn FnMut(&SurveyProgress<'_>),
) -> Result<WebModel> {
    let t = Instant::now();
    let analysis = JsAnalysis::analyse(app.scripts(), &Default::default());
    let start_url = app.chromium().start_url().to_owned();
    // The launch screen's name is only known once the page shows it; the code part names
    // it with a placeholder that is renamed below.
    let code = web_code(&analysis, LAUNCH);
    let static_ms = t.elapsed().as_secs_f64() * 1e3;
    let parts = ModelParts {
        code: &code,
        analysis: &analysis,
        start_url,
    };

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
    let may_change = |live: &LiveEvent| -> bool {
        let methods: Vec<&str> = live
            .event
            .handlers
            .iter()
            .filter_map(|h| parts.method_of(h))
            .collect();
        // Unknown code (no listener located, native links, form submits) may do anything.
        methods.is_empty() || methods.iter().any(|m| changing.contains(m))
    };

    let t = Instant::now();
    let settle = app.settle_times();
    app.set_settle(WebSettle {
        quiet: Duration::from_millis(config.quiet_ms),
        ..settle
    });
    let surveyed = survey(
        app,
        config,
        &may_change,
        prior.unwrap_or_default(),
        &mut |state, probe| {
            watch(&SurveyProgress {
                state,
                probe,
                parts: &parts,
            })
        },
    );
    app.set_settle(settle);
    let survey = surveyed?;
    let survey_ms = t.elapsed().as_secs_f64() * 1e3;
    let model = parts.assemble(&survey)?;
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
        signals: survey.signals.clone(),
        survey,
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

impl LiveStep {
    /// The page shows another screen than the model expected.
    pub fn diverged(&self) -> bool {
        self.expected.as_deref() != Some(self.screen.as_str())
    }
}

/// Why a control of the model was not touched in a live run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissReason {
    /// No plan led to it: the model knows no way to its screen (no control the survey
    /// fired leads there, or it is deeper than the search goes).
    NeverReached,
    /// Its turn came but the page did not offer it, even after a restart brought the app
    /// back to its screen.
    TargetNotFound,
    /// The page went elsewhere than the model expected, and the plan made from there
    /// could not reach it.
    Diverged,
    /// The run's time budget ran out before its turn.
    Budget,
    /// The run reached its cap of interactions (see [`LiveConfig::max_interactions`])
    /// before its turn.
    InteractionCap,
}

impl MissReason {
    pub fn name(self) -> &'static str {
        match self {
            MissReason::NeverReached => "never reached",
            MissReason::TargetNotFound => "target not found",
            MissReason::Diverged => "diverged",
            MissReason::Budget => "time budget",
            MissReason::InteractionCap => "interaction cap",
        }
    }
}

/// A control the live run did not touch, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Missed {
    pub control: String,
    pub label: String,
    pub screens: Vec<String>,
    pub why: MissReason,
}

/// How a plan is carried out on the page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LiveConfig {
    /// Text typed into fields.
    pub input: String,
    /// When the page shows another screen than the model expected, plan again from the
    /// screen it shows ([`crate::search_from`]) instead of going on with the old plan.
    pub replan: bool,
    /// The search that plans again.
    pub search: SearchConfig,
    /// Start no interaction once this much time has passed (none: no limit).
    #[serde(default)]
    pub budget: Option<Duration>,
    /// At most this many interactions in all (none: three times the plan's, plus 20),
    /// so that a page that diverges at every step cannot keep the run going.
    #[serde(default)]
    pub max_interactions: Option<usize>,
    /// Steps the recorder's folder already holds (a resumed run): the first step is
    /// numbered after them.
    #[serde(default)]
    pub steps_before: u64,
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            input: "test".into(),
            replan: true,
            search: SearchConfig {
                reuse: Reuse::NewInstance,
                ..SearchConfig::default()
            },
            budget: None,
            max_interactions: None,
            steps_before: 0,
        }
    }
}

/// Why a live run stopped with planned interactions left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LiveCut {
    Budget,
    InteractionCap,
}

/// The outcome of carrying out a plan on the page.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LiveOutcome {
    pub steps: Vec<LiveStep>,
    /// Controls of the plan the page did not offer when their turn came.
    pub missing: Vec<String>,
    /// Steps after which the page showed another screen than the model expected.
    pub diverged: usize,
    /// Times the run planned again from the screen the page showed.
    pub replans: usize,
    /// Times the app was restarted to bring back a control the plan wanted.
    pub recoveries: usize,
    pub covered_ui: usize,
    pub interface_coverage: f64,
    /// Controls the first plan touches.
    pub planned_ui: usize,
    /// Every control of the model not touched, with the reason.
    pub missed: Vec<Missed>,
    /// Why the run stopped with interactions left, if it did.
    pub cut: Option<LiveCut>,
    /// Planned interactions not carried out: when it stopped (while it runs, those still
    /// to come).
    pub not_done: usize,
    /// Distinct crash and error signals, with the step that first showed each.
    pub signals: Vec<(u64, Signal)>,
    pub coverage: Option<CoverageSnapshot>,
    pub duration_ms: u64,
}

/// Carries out `plan` on the page from a fresh start with [`LiveConfig::default`]; see
/// [`run_plan_watched`].
pub fn run_plan(
    app: &mut WebApp,
    model: &AppModel,
    plan: &SearchPlan,
    input: &str,
    recorder: Option<&mut RunRecorder>,
) -> Result<LiveOutcome> {
    let config = LiveConfig {
        input: input.to_owned(),
        ..LiveConfig::default()
    };
    run_plan_watched(app, model, plan, &config, recorder, &mut |_, _| {})
}

/// Carries out `plan` on the page from a fresh start, following it in the model too, and
/// records every step in `recorder` when one is given; `watch` sees each step.
///
/// The model does not know the app's data: a control the plan wants may be gone (the
/// demo's list rows after *Archive*). Then the app is restarted and brought back to the
/// planned screen along the shortest path of controls the model knows, and the control is
/// looked up again; these extra interactions are recorded and counted like the others.
///
/// Nor does the model know everything a control does: when the page shows another
/// screen than the model expected after a step, the model follows the page
/// ([`ModelRun::follow`]; a screen it does not know is left by a relaunch) and the rest is
/// planned again from there ([`crate::search_from`]), leaving out controls already found
/// missing. Every control not touched in the end is reported with the reason
/// ([`LiveOutcome::missed`]).
pub fn run_plan_watched(
    app: &mut WebApp,
    model: &AppModel,
    plan: &SearchPlan,
    config: &LiveConfig,
    recorder: Option<&mut RunRecorder>,
    watch: &mut dyn FnMut(&LiveStep, &LiveOutcome),
) -> Result<LiveOutcome> {
    let started = Instant::now();
    let deadline = config.budget.map(|b| started + b);
    let mut live = Live {
        started,
        out: LiveOutcome::default(),
        run: ModelRun::new(model, Reuse::NewInstance)?,
        seen: HashSet::new(),
        app,
        input: &config.input,
        recorder,
        listing: None,
        steps_before: config.steps_before,
    };
    live.app.reset()?;
    // The start screen is step 0's picture; a resumed folder has its own.
    if let Some(rec) = live.recorder.as_deref_mut()
        && config.steps_before == 0
    {
        let shot = live.app.device().screenshot()?;
        rec.save_screenshot(0, &shot)?;
    }
    let planned: BTreeSet<String> = plan.touched().into_iter().collect();
    live.out.planned_ui = planned.len();
    let mut why: HashMap<String, MissReason> = HashMap::new();
    // Controls the page did not offer when their turn came: not planned again.
    let mut gave_up: BTreeSet<String> = BTreeSet::new();
    // Controls that led elsewhere than the model says when touched during the run.
    let mut unreliable: BTreeSet<String> = BTreeSet::new();
    let mut queue: std::collections::VecDeque<PlanStep> = plan.steps.iter().cloned().collect();
    let cap = config.max_interactions.unwrap_or(3 * plan.steps.len() + 20);
    'plan: while let Some(step) = queue.pop_front() {
        let cut = if deadline.is_some_and(|d| Instant::now() >= d) {
            Some(LiveCut::Budget)
        } else if live.out.steps.len() >= cap {
            Some(LiveCut::InteractionCap)
        } else {
            None
        };
        if cut.is_some() {
            live.out.cut = cut;
            queue.push_front(step);
            break;
        }
        let mut moves = Vec::new();
        if let Interaction::Touch(id) = &step.interaction
            && !live.offered(id)?
        {
            live.out.recoveries += 1;
            moves.push(Interaction::Relaunch);
            moves.extend(
                path_to(model, &step.screen)
                    .into_iter()
                    .map(Interaction::Touch),
            );
            moves.extend(shown_after(model, id).into_iter().map(Interaction::Touch));
        }
        moves.push(step.interaction.clone());
        let last = moves.len() - 1;
        for (k, m) in moves.iter().enumerate() {
            live.step(m)?;
            let done = live.out.steps.last().expect("just stepped");
            if k == last
                && let Interaction::Touch(id) = m
                && !done.done
            {
                why.insert(id.clone(), MissReason::TargetNotFound);
                gave_up.insert(id.clone());
            }
            let diverged = done.diverged();
            if diverged && let Interaction::Touch(id) = m {
                unreliable.insert(id.clone());
            }
            live.out.not_done = queue.len() + last - k;
            watch(live.out.steps.last().expect("just stepped"), &live.out);
            if diverged && config.replan {
                let before: BTreeSet<String> = queue
                    .iter()
                    .filter_map(|s| match &s.interaction {
                        Interaction::Touch(id) => Some(id.clone()),
                        _ => None,
                    })
                    .collect();
                let screen = live.out.steps.last().expect("just stepped").screen.clone();
                if !live.run.follow(&screen) {
                    // A screen the survey never saw (a slide deck's next slide, as its
                    // own hash): nothing to plan from; the plan goes on, and a control
                    // it does not find is brought back by a restart.
                    tracing::info!(
                        "the page shows {screen}, which the model does not know: the plan goes on"
                    );
                    continue;
                }
                let mut planning = live.run.clone();
                for id in &gave_up {
                    planning.assume_covered(id);
                }
                let unreliable: Vec<String> = unreliable.iter().cloned().collect();
                let again = crate::search_from(&planning, &config.search, &unreliable);
                live.out.replans += 1;
                let after: BTreeSet<String> = again.touched().into_iter().collect();
                for id in before.difference(&after) {
                    if !live.run.is_covered(id) {
                        why.insert(id.clone(), MissReason::Diverged);
                    }
                }
                tracing::info!(
                    "the page shows {screen}, not what the model expected: planned again from there ({} interactions)",
                    again.interactions()
                );
                queue = again.steps.into_iter().collect();
                continue 'plan;
            }
        }
    }
    live.out.not_done = queue.len();
    if let Some(cut) = live.out.cut {
        let reason = match cut {
            LiveCut::Budget => MissReason::Budget,
            LiveCut::InteractionCap => MissReason::InteractionCap,
        };
        for s in &queue {
            if let Interaction::Touch(id) = &s.interaction {
                why.insert(id.clone(), reason);
            }
        }
    }
    let mut out = live.out;
    out.missed = missed_controls(&live.run, &planned, &why);
    out.covered_ui = live.run.counts().0;
    out.interface_coverage = live.run.interface_coverage();
    out.duration_ms = live.started.elapsed().as_millis() as u64;
    Ok(out)
}

/// Every control of `run`'s model it has not covered, with the reason: the last one
/// noted in `why`, else `diverged` for a control the first plan touched (the run went
/// elsewhere) and `never_reached` for one it did not.
fn missed_controls(
    run: &ModelRun<'_>,
    planned: &BTreeSet<String>,
    why: &HashMap<String, MissReason>,
) -> Vec<Missed> {
    run.model()
        .ui_vertices()
        .filter(|(_, v)| !run.is_covered(&v.id))
        .filter_map(|(_, v)| {
            let VertexKind::Ui { screens, label, .. } = &v.kind else {
                return None;
            };
            let reason = why
                .get(&v.id)
                .copied()
                .unwrap_or(if planned.contains(&v.id) {
                    MissReason::Diverged
                } else {
                    MissReason::NeverReached
                });
            Some(Missed {
                control: v.id.clone(),
                label: label.clone(),
                screens: screens.clone(),
                why: reason,
            })
        })
        .collect()
}

/// The controls to touch, in order, before `id` is offered: the chain of
/// [`Locator::shown_after`] (empty when it needs none).
fn shown_after(model: &AppModel, id: &str) -> Vec<String> {
    let locator = |id: &str| {
        model.vertices.iter().find_map(|v| match &v.kind {
            VertexKind::Ui { locator, .. } if v.id == id => Some(locator.clone()),
            _ => None,
        })
    };
    let mut chain: Vec<String> = Vec::new();
    let mut at = id.to_owned();
    while let Some(before) = locator(&at).and_then(|l| l.shown_after) {
        if before == id || chain.contains(&before) {
            break;
        }
        chain.push(before.clone());
        at = before;
    }
    chain.reverse();
    chain
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
    /// Steps the recorder's folder already holds.
    steps_before: u64,
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
        let n = self.steps_before + self.out.steps.len() as u64 + 1;
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
    use super::*;

    #[test]
    fn each_control_not_touched_is_reported_with_the_last_reason_seen() {
        let ui = |id: &str, screen: &str, effect: Option<Effect>, after: Option<&str>| Vertex {
            id: id.into(),
            kind: VertexKind::Ui {
                screens: vec![screen.into()],
                label: id.to_uppercase(),
                event: UiEvent::Click,
                effect,
                locator: Locator {
                    shown_after: after.map(Into::into),
                    ..Locator::default()
                },
            },
        };
        let model = AppModel {
            app: "reasons".into(),
            platform: "web".into(),
            launch: "A".into(),
            screens: vec![
                Screen {
                    name: "A".into(),
                    kind: ScreenKind::Page,
                },
                Screen {
                    name: "Island".into(),
                    kind: ScreenKind::Page,
                },
            ],
            vertices: vec![
                ui("next", "A", None, None),
                ui("prev", "A", None, Some("next")),
                ui("first", "A", None, Some("prev")),
                ui("gone", "A", None, None),
                ui("late", "A", None, None),
                ui("lost", "Island", None, None),
            ],
            edges: vec![],
        };
        let mut run = ModelRun::new(&model, Reuse::NewInstance).unwrap();
        run.touch("next").unwrap();
        let planned: BTreeSet<String> = ["next", "prev", "gone", "late"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let why = HashMap::from([
            ("gone".to_string(), MissReason::TargetNotFound),
            ("late".to_string(), MissReason::Budget),
        ]);
        let missed: Vec<(&str, MissReason)> = missed_controls(&run, &planned, &why)
            .iter()
            .map(|m| (model_id(&model, &m.control), m.why))
            .collect();
        assert_eq!(
            missed,
            [
                ("prev", MissReason::Diverged),
                ("first", MissReason::NeverReached),
                ("gone", MissReason::TargetNotFound),
                ("late", MissReason::Budget),
                ("lost", MissReason::NeverReached),
            ]
        );
        // A control that appeared after another is brought back through the chain.
        assert_eq!(shown_after(&model, "first"), ["next", "prev"]);
        assert!(shown_after(&model, "next").is_empty());
    }

    fn model_id<'m>(model: &'m AppModel, id: &str) -> &'m str {
        &model.vertices.iter().find(|v| v.id == id).unwrap().id
    }

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
