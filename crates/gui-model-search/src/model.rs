//! The app model: a control-flow graph G with statement, method and UI vertices
//! (V = V_s ∪ V_m ∪ V_ui, Section III of the Monkey++ paper), and the screens the UI
//! vertices sit on.
//!
//! # JSON form
//!
//! Models built elsewhere (an Android app analysed with Soot, say) are fed in as JSON:
//!
//! ```json
//! {
//!   "app": "hello", "platform": "android", "launch": "ActivityA",
//!   "screens": [{ "name": "ActivityA" }, { "name": "ActivityB" },
//!               { "name": "About", "kind": "dialog" }],
//!   "vertices": [
//!     { "id": "ui:StartB", "type": "ui", "screens": ["ActivityA"], "label": "StartB",
//!       "locator": { "resource_id": "com.hello:id/startB" } },
//!     { "id": "m:startActivityB", "type": "method", "name": "startActivityB", "role": "callback" },
//!     { "id": "s:startActivityB:0", "type": "statement", "method": "m:startActivityB",
//!       "text": "startActivity(intent)", "effect": { "launch": "ActivityB" } },
//!     { "id": "m:B.onResume", "type": "method", "name": "ActivityB.onResume",
//!       "role": { "lifecycle": "resume" }, "screen": "ActivityB" }
//!   ],
//!   "edges": [
//!     { "from": "ui:StartB", "to": "m:startActivityB", "kind": "listener" },
//!     { "from": "m:startActivityB", "to": "s:startActivityB:0", "kind": "next" }
//!   ]
//! }
//! ```
//!
//! Edges: `next` is execution order (a method to its first statement, a statement to the
//! one after it), `call` a statement (or method) calling a method, `listener` a UI vertex
//! to its input callback. Lifecycle methods have no incoming edges: the runtime model
//! ([`crate::ScreenStack`]) decides when they run. A method without `screen` runs for
//! every screen (a web app's router).

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A screen: an Android activity, a web page or route, or a dialog over one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Screen {
    pub name: String,
    #[serde(default)]
    pub kind: ScreenKind,
}

/// A page covers the screen below it (which is stopped); a dialog only pauses it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScreenKind {
    #[default]
    Page,
    Dialog,
}

/// Lifecycle callbacks, named after Android's; [`crate::web`] maps the browser's events
/// onto them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hook {
    Create,
    Start,
    Restart,
    Resume,
    Pause,
    Stop,
    Destroy,
}

/// The three kinds of method vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodRole {
    /// Called by the framework as a screen's lifecycle moves.
    Lifecycle(Hook),
    /// Called when the user touches or types into a UI vertex.
    Callback,
    /// Called by the app's own code.
    Ordinary,
}

/// What running a statement, or touching a control, does to the screen stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Starts a screen (`startActivity`, a navigation, opening a dialog).
    Launch(String),
    /// Ends the current screen (`finish()`, `history.back()`, closing a dialog).
    Finish,
}

/// How a UI vertex is operated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UiEvent {
    #[default]
    Click,
    /// Typing text (then Enter) into a field.
    Input,
}

/// How to find a UI vertex's control on a device. Any field may be missing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Locator {
    /// The grey-box event id on the web (a CSS selector and the event type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<String>,
    /// Android's `resource-id` as UI Automator dumps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    /// Text or content description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Where the control was seen, `[x, y, width, height]` in screen pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<[f64; 4]>,
    /// The control (a UI vertex id) on the same screen that made this one appear when it
    /// was touched in place (a slide deck's "previous" after "next"): touched first when
    /// this one is not offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_after: Option<String>,
}

/// A vertex of G.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vertex {
    pub id: String,
    #[serde(flatten)]
    pub kind: VertexKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum VertexKind {
    /// A statement of the app's own code (V_s).
    Statement {
        /// The id of the method vertex it belongs to.
        method: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effect: Option<Effect>,
    },
    /// The entry of one of the app's methods (V_m).
    Method {
        name: String,
        role: MethodRole,
        /// For lifecycle methods, the screen they belong to; `None` means every screen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        screen: Option<String>,
    },
    /// A place where the user gives input (V_ui).
    Ui {
        /// The screens that show the control (a web page's header shows on every route).
        screens: Vec<String>,
        label: String,
        #[serde(default)]
        event: UiEvent,
        /// What touching the control does to the screen stack when that is known for the
        /// control itself: declared, or observed on the web (a delegated handler navigates
        /// to a different place for each link). When set it is used instead of the
        /// effects of the listener's statements.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effect: Option<Effect>,
        #[serde(default)]
        locator: Locator,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// Execution order.
    Next,
    /// A call.
    Call,
    /// A UI vertex to its input callback.
    Listener,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
}

/// The app model G, with its screens and the screen the app starts on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppModel {
    pub app: String,
    /// `web`, `android`, `desktop`: informative.
    #[serde(default)]
    pub platform: String,
    /// The launch screen (the default launch activity, the web app's start page).
    pub launch: String,
    pub screens: Vec<Screen>,
    pub vertices: Vec<Vertex>,
    pub edges: Vec<Edge>,
}

impl AppModel {
    /// Reads a model in the JSON form and checks it.
    pub fn from_json_file(path: &Path) -> Result<AppModel> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let model: AppModel = serde_json::from_str(&text).map_err(|e| Error::BadFile {
            path: path.to_path_buf(),
            message: format!("not an app model: {e}"),
        })?;
        model.check().map_err(|e| Error::BadFile {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(model)
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("models serialise")
    }

    pub fn screen(&self, name: &str) -> Option<&Screen> {
        self.screens.iter().find(|s| s.name == name)
    }

    /// Indices of the UI vertices, in model order.
    pub fn ui_vertices(&self) -> impl Iterator<Item = (usize, &Vertex)> {
        self.vertices
            .iter()
            .enumerate()
            .filter(|(_, v)| matches!(v.kind, VertexKind::Ui { .. }))
    }

    pub fn count(&self) -> Counts {
        Counts {
            screens: self.screens.len(),
            edges: self.edges.len(),
            ..Counts::of(&self.vertices)
        }
    }

    /// Checks the model is consistent: unique ids and screen names, edges between known
    /// vertices, UI vertices and lifecycle methods on known screens, effects launching
    /// known screens, statements belonging to methods, the launch screen a page.
    pub fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::BadModel { what });
        let mut screens = HashMap::new();
        for s in &self.screens {
            if screens.insert(s.name.as_str(), s.kind).is_some() {
                return bad(format!("screen `{}` is listed twice", s.name));
            }
        }
        match screens.get(self.launch.as_str()) {
            None => {
                return bad(format!(
                    "the launch screen `{}` is not a screen",
                    self.launch
                ));
            }
            Some(ScreenKind::Dialog) => {
                return bad(format!("the launch screen `{}` is a dialog", self.launch));
            }
            Some(ScreenKind::Page) => {}
        }
        let mut ids: HashMap<&str, &VertexKind> = HashMap::new();
        for v in &self.vertices {
            if v.id.is_empty() {
                return bad("a vertex has an empty id".into());
            }
            if ids.insert(v.id.as_str(), &v.kind).is_some() {
                return bad(format!("vertex id `{}` is used twice", v.id));
            }
        }
        let known_effect = |e: &Option<Effect>, id: &str| match e {
            Some(Effect::Launch(s)) if !screens.contains_key(s.as_str()) => bad(format!(
                "vertex `{id}` launches `{s}`, which is not a screen"
            )),
            _ => Ok(()),
        };
        for v in &self.vertices {
            match &v.kind {
                VertexKind::Statement { method, effect, .. } => {
                    if !matches!(ids.get(method.as_str()), Some(VertexKind::Method { .. })) {
                        return bad(format!(
                            "statement `{}` belongs to `{method}`, which is not a method",
                            v.id
                        ));
                    }
                    known_effect(effect, &v.id)?;
                }
                VertexKind::Method { screen, .. } => {
                    if let Some(s) = screen
                        && !screens.contains_key(s.as_str())
                    {
                        return bad(format!("method `{}` is on unknown screen `{s}`", v.id));
                    }
                }
                VertexKind::Ui {
                    screens: on,
                    effect,
                    ..
                } => {
                    if on.is_empty() {
                        return bad(format!("UI vertex `{}` is on no screen", v.id));
                    }
                    if let Some(s) = on.iter().find(|s| !screens.contains_key(s.as_str())) {
                        return bad(format!("UI vertex `{}` is on unknown screen `{s}`", v.id));
                    }
                    known_effect(effect, &v.id)?;
                }
            }
        }
        for e in &self.edges {
            for end in [&e.from, &e.to] {
                if !ids.contains_key(end.as_str()) {
                    return bad(format!(
                        "edge `{}` -> `{}` names unknown vertex `{end}`",
                        e.from, e.to
                    ));
                }
            }
            let (from, to) = (ids[e.from.as_str()], ids[e.to.as_str()]);
            let ok = match e.kind {
                EdgeKind::Listener => {
                    matches!(from, VertexKind::Ui { .. }) && matches!(to, VertexKind::Method { .. })
                }
                EdgeKind::Call => {
                    !matches!(from, VertexKind::Ui { .. })
                        && matches!(to, VertexKind::Method { .. })
                }
                EdgeKind::Next => {
                    !matches!(from, VertexKind::Ui { .. })
                        && matches!(to, VertexKind::Statement { .. })
                }
            };
            if !ok {
                return bad(format!(
                    "edge `{}` -> `{}` of kind {:?} joins the wrong kinds of vertex",
                    e.from, e.to, e.kind
                ));
            }
        }
        Ok(())
    }
}

/// Sizes of a model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub screens: usize,
    pub ui: usize,
    pub methods: usize,
    pub statements: usize,
    pub edges: usize,
}

impl Counts {
    /// The vertices of each kind among `vertices` (screens and edges left at 0).
    pub fn of<'v>(vertices: impl IntoIterator<Item = &'v Vertex>) -> Counts {
        let mut c = Counts::default();
        for v in vertices {
            match v.kind {
                VertexKind::Statement { .. } => c.statements += 1,
                VertexKind::Method { .. } => c.methods += 1,
                VertexKind::Ui { .. } => c.ui += 1,
            }
        }
        c
    }
}

/// The model with ids resolved to indices, for the searches.
#[derive(Debug, Clone)]
pub struct Compiled<'m> {
    pub model: &'m AppModel,
    pub screen_index: HashMap<&'m str, usize>,
    /// Vertex id to index.
    pub index: HashMap<&'m str, usize>,
    /// Outgoing edges of each vertex, in model order.
    pub out: Vec<Vec<(usize, EdgeKind)>>,
    /// UI vertices shown on each screen, in model order.
    pub ui_on: Vec<Vec<usize>>,
    /// Lifecycle methods per (screen, hook); methods for every screen are included.
    pub lifecycle: HashMap<(usize, Hook), Vec<usize>>,
    pub launch: usize,
}

impl<'m> Compiled<'m> {
    /// Resolves a model that passed [`AppModel::check`].
    pub fn new(model: &'m AppModel) -> Result<Compiled<'m>> {
        model.check()?;
        let screen_index: HashMap<&str, usize> = model
            .screens
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let index: HashMap<&str, usize> = model
            .vertices
            .iter()
            .enumerate()
            .map(|(i, v)| (v.id.as_str(), i))
            .collect();
        let mut out = vec![Vec::new(); model.vertices.len()];
        for e in &model.edges {
            out[index[e.from.as_str()]].push((index[e.to.as_str()], e.kind));
        }
        let mut ui_on = vec![Vec::new(); model.screens.len()];
        let mut lifecycle: HashMap<(usize, Hook), Vec<usize>> = HashMap::new();
        for (i, v) in model.vertices.iter().enumerate() {
            match &v.kind {
                VertexKind::Ui { screens, .. } => {
                    for s in screens {
                        let s = screen_index[s.as_str()];
                        if !ui_on[s].contains(&i) {
                            ui_on[s].push(i);
                        }
                    }
                }
                VertexKind::Method {
                    role: MethodRole::Lifecycle(hook),
                    screen,
                    ..
                } => {
                    let on: Vec<usize> = match screen {
                        Some(s) => vec![screen_index[s.as_str()]],
                        None => (0..model.screens.len()).collect(),
                    };
                    for s in on {
                        lifecycle.entry((s, *hook)).or_default().push(i);
                    }
                }
                _ => {}
            }
        }
        let launch = screen_index[model.launch.as_str()];
        Ok(Compiled {
            model,
            screen_index,
            index,
            out,
            ui_on,
            lifecycle,
            launch,
        })
    }

    pub fn screen_kind(&self, screen: usize) -> ScreenKind {
        self.model.screens[screen].kind
    }

    pub fn screen_name(&self, screen: usize) -> &'m str {
        &self.model.screens[screen].name
    }

    /// The effect a UI vertex's own entry declares, if any.
    pub fn ui_effect(&self, ui: usize) -> Option<&'m Effect> {
        match &self.model.vertices[ui].kind {
            VertexKind::Ui { effect, .. } => effect.as_ref(),
            _ => None,
        }
    }

    /// The effect of a statement vertex, if any.
    pub fn statement_effect(&self, v: usize) -> Option<&'m Effect> {
        match &self.model.vertices[v].kind {
            VertexKind::Statement { effect, .. } => effect.as_ref(),
            _ => None,
        }
    }
}
