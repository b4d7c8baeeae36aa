//! The code part of a web app's model: method and statement vertices for its JavaScript,
//! with execution-order and call edges, method roles taken from the event registrations,
//! and what statements do to the screen (navigations, dialogs opened and closed).
//!
//! Everything here comes from the grey-box analysis ([`JsAnalysis`]): its one walk of
//! each script gives the functions, their callees and the handlers, and also the
//! statements of every function and script top level with their call sites and
//! [`WebEffect`]s ([`JsStatement`]). This module turns them into vertices and edges.
//!
//! # Statements
//!
//! A statement vertex is one [`JsStatement`]: each function body (and each script's top
//! level) flattened in source order, a compound statement's header apart from its
//! branches. A statement's call sites are resolved to the analysis's functions: inside a
//! function, to those of its callees the site names; at a script's top level, by name.
//!
//! Next edges follow plain source order (method to first statement, statement `k` to
//! `k + 1`), without modelling branches or early returns: the search only needs to know
//! which statements a method may reach, and every statement of a method is reachable once
//! the method runs.

use std::collections::{HashMap, HashSet};

use gui_greybox::js::{CallSite, JsAnalysis, JsHandler, JsStatement, WebEffect};

use crate::model::{Edge, EdgeKind, Hook, MethodRole, Vertex, VertexKind};

/// The method and statement vertices of a web app's scripts.
#[derive(Debug, Clone, PartialEq)]
pub struct WebCode {
    /// Method vertices (one per [`JsAnalysis`] function, plus one per script for its
    /// top-level code) and statement vertices.
    pub vertices: Vec<Vertex>,
    /// Next edges (method -> first statement, statement -> next statement in source
    /// order) and Call edges (statement -> method).
    pub edges: Vec<Edge>,
    /// For each [`JsAnalysis`] function index, its method vertex id.
    pub method_of_function: Vec<String>,
    /// Statement vertex id -> what it does to the screen.
    pub effects: Vec<(String, WebEffect)>,
}

/// Builds the method and statement vertices of the scripts `analysis` was computed from.
/// `launch` is the name of the model's launch screen (page-load code belongs to it).
/// Scripts that do not parse contribute no statements and no top-level method.
///
/// Method ids are `m:{file}:{line}:{column}` (1-based, the file being the last path
/// segment of the script's name) and `m:{file}:top`; should two scripts share a file name
/// and a position, the later id gets a `~2`, `~3`, .. suffix so ids stay unique.
/// Statement ids are `s:{method id without "m:"}:{k}`.
pub fn web_code(analysis: &JsAnalysis, launch: &str) -> WebCode {
    let functions = analysis.functions();
    let mut used = HashSet::new();
    let method_of_function: Vec<String> = functions
        .iter()
        .map(|f| {
            unique(
                &mut used,
                format!("m:{}:{}:{}", file_name(&f.script), f.line + 1, f.column + 1),
            )
        })
        .collect();
    let roles = roles(analysis, launch);
    let names = Names::new(analysis);

    let mut out = Assembly::default();
    for top in analysis.top_levels() {
        let file = file_name(&top.script);
        let id = unique(&mut used, format!("m:{file}:top"));
        out.method(
            &id,
            format!("{file} (top level)"),
            MethodRole::Lifecycle(Hook::Create),
            Some(launch.to_string()),
        );
        let statements = names.statements(&top.statements, None, &top.script);
        out.statements(&id, statements, &method_of_function);
    }
    for (index, function) in functions.iter().enumerate() {
        let id = &method_of_function[index];
        let (role, screen) = roles[index].clone();
        let name = function
            .name
            .clone()
            .unwrap_or_else(|| "(anonymous)".into());
        out.method(id, name, role, screen);
        let statements = names.statements(&function.statements, Some(index), &function.script);
        out.statements(id, statements, &method_of_function);
    }
    WebCode {
        vertices: out.vertices,
        edges: out.edges,
        method_of_function,
        effects: out.effects,
    }
}

/// One statement before it becomes a vertex.
#[derive(Debug, Default)]
struct RawStatement {
    text: String,
    /// Callee function indices, in first-seen order, without repeats.
    callees: Vec<usize>,
    effect: Option<WebEffect>,
}

#[derive(Default)]
struct Assembly {
    vertices: Vec<Vertex>,
    edges: Vec<Edge>,
    seen: HashSet<(String, String, EdgeKind)>,
    effects: Vec<(String, WebEffect)>,
}

impl Assembly {
    fn method(&mut self, id: &str, name: String, role: MethodRole, screen: Option<String>) {
        self.vertices.push(Vertex {
            id: id.to_string(),
            kind: VertexKind::Method { name, role, screen },
        });
    }

    fn edge(&mut self, from: &str, to: &str, kind: EdgeKind) {
        if self.seen.insert((from.to_string(), to.to_string(), kind)) {
            self.edges.push(Edge {
                from: from.to_string(),
                to: to.to_string(),
                kind,
            });
        }
    }

    fn statements(&mut self, method: &str, statements: Vec<RawStatement>, methods: &[String]) {
        let stem = method.strip_prefix("m:").unwrap_or(method);
        let mut previous = method.to_string();
        for (k, statement) in statements.into_iter().enumerate() {
            let id = format!("s:{stem}:{k}");
            self.vertices.push(Vertex {
                id: id.clone(),
                kind: VertexKind::Statement {
                    method: method.to_string(),
                    text: statement.text,
                    effect: None,
                },
            });
            self.edge(&previous, &id, EdgeKind::Next);
            for callee in statement.callees {
                if let Some(target) = methods.get(callee) {
                    self.edge(&id, target, EdgeKind::Call);
                }
            }
            if let Some(effect) = statement.effect {
                self.effects.push((id.clone(), effect));
            }
            previous = id;
        }
    }
}

/// `id` itself, or with the first free `~n` suffix.
fn unique(used: &mut HashSet<String>, id: String) -> String {
    if used.insert(id.clone()) {
        return id;
    }
    let mut n = 2;
    loop {
        let candidate = format!("{id}~{n}");
        if used.insert(candidate.clone()) {
            return candidate;
        }
        n += 1;
    }
}

/// The last path segment of a script name, ignoring a query string or fragment:
/// `http://127.0.0.1:1/js/app.js?v=2` is `app.js`.
fn file_name(name: &str) -> &str {
    let path = name.split(['?', '#']).next().unwrap_or(name);
    path.rsplit(['/', '\\'])
        .find(|segment| !segment.is_empty())
        .unwrap_or(name)
}

// ----- roles -----

/// Events by which the user operates a control: their handlers are input callbacks.
const INPUT_EVENTS: &[&str] = &[
    "click",
    "dblclick",
    "auxclick",
    "contextmenu",
    "input",
    "change",
    "submit",
    "reset",
    "keydown",
    "keyup",
    "keypress",
    "mousedown",
    "mouseup",
    "focus",
    "blur",
    "focusin",
    "focusout",
    "touchstart",
    "touchend",
    "pointerdown",
    "pointerup",
    "select",
    "paste",
    "cut",
    "copy",
    "drop",
];

/// Targets that stand for the page itself, for events (`load`, `readystatechange`) that
/// elements and requests fire too.
const PAGE_TARGETS: &[&str] = &[
    "window",
    "self",
    "globalThis",
    "document",
    "document.body",
    "$(window)",
    "$(document)",
    "jQuery(window)",
    "jQuery(document)",
];

/// The lifecycle hook a page event maps onto. Page load (Create) belongs to the launch
/// screen; the caller gives every other hook to all screens.
fn lifecycle_hook(handler: &JsHandler) -> Option<Hook> {
    let on_page = || PAGE_TARGETS.contains(&handler.target.trim());
    match handler.event_type.as_str() {
        "DOMContentLoaded" => Some(Hook::Create),
        "load" | "readystatechange" if on_page() => Some(Hook::Create),
        "pageshow" => Some(Hook::Start),
        // A router runs on every route change, whichever screen is shown.
        "hashchange" | "popstate" | "visibilitychange" => Some(Hook::Resume),
        "pagehide" => Some(Hook::Stop),
        "beforeunload" | "unload" => Some(Hook::Destroy),
        _ => None,
    }
}

/// When a function is registered for several page events, the hook that runs most often
/// wins: a router bound to both `load` and `hashchange` is Resume on every screen, which
/// also covers the launch screen's first showing.
fn hook_rank(hook: Hook) -> u8 {
    match hook {
        Hook::Resume => 0,
        Hook::Start | Hook::Restart => 1,
        Hook::Create => 2,
        Hook::Pause => 3,
        Hook::Stop => 4,
        Hook::Destroy => 5,
    }
}

/// Role and screen of each analysis function. Lifecycle wins over Callback.
fn roles(analysis: &JsAnalysis, launch: &str) -> Vec<(MethodRole, Option<String>)> {
    let count = analysis.functions().len();
    let mut hooks: Vec<Option<Hook>> = vec![None; count];
    let mut callback = vec![false; count];
    for handler in analysis.handlers() {
        let Some(function) = handler.function.filter(|&f| f < count) else {
            continue;
        };
        if let Some(hook) = lifecycle_hook(handler) {
            let better = hooks[function].is_none_or(|old| hook_rank(hook) < hook_rank(old));
            if better {
                hooks[function] = Some(hook);
            }
        } else if INPUT_EVENTS.contains(&handler.event_type.as_str()) {
            callback[function] = true;
        }
    }
    hooks
        .into_iter()
        .zip(callback)
        .map(|(hook, callback)| match hook {
            Some(Hook::Create) => (
                MethodRole::Lifecycle(Hook::Create),
                Some(launch.to_string()),
            ),
            Some(hook) => (MethodRole::Lifecycle(hook), None),
            None if callback => (MethodRole::Callback, None),
            None => (MethodRole::Ordinary, None),
        })
        .collect()
}

// ----- call resolution -----

/// Analysis functions by name, for calls the analysis has no callee list for (a script's
/// top level) and for function names passed as values (`setTimeout(showFeed, 700)`).
struct Names<'x> {
    analysis: &'x JsAnalysis,
    /// Full name (`f`, `obj.m`) -> functions.
    by_name: HashMap<&'x str, Vec<usize>>,
    /// Last `.` segment (`m` of `obj.m`) -> functions.
    by_last: HashMap<&'x str, Vec<usize>>,
}

/// Globals of the platform whose methods are never the application's.
const BUILTIN_ROOTS: &[&str] = &[
    "console",
    "Math",
    "JSON",
    "Object",
    "Array",
    "Number",
    "String",
    "Date",
    "Promise",
    "Reflect",
    "document",
    "window",
    "navigator",
    "location",
    "history",
    "localStorage",
    "sessionStorage",
    "performance",
    "this",
];

fn last_segment(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

impl<'x> Names<'x> {
    fn new(analysis: &'x JsAnalysis) -> Self {
        let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut by_last: HashMap<&str, Vec<usize>> = HashMap::new();
        for (index, function) in analysis.functions().iter().enumerate() {
            if let Some(name) = function.name.as_deref() {
                by_name.entry(name).or_default().push(index);
                by_last.entry(last_segment(name)).or_default().push(index);
            }
        }
        Names {
            analysis,
            by_name,
            by_last,
        }
    }

    /// Functions with exactly this name, those of `script` first: if the script has one,
    /// only its own.
    fn plain(&self, name: &str, script: &str) -> Vec<usize> {
        let all = self.by_name.get(name).cloned().unwrap_or_default();
        let functions = self.analysis.functions();
        let own: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&f| functions[f].script == script)
            .collect();
        if own.is_empty() { all } else { own }
    }

    /// The functions a named call site reaches, inside function `owner` or at the top
    /// level of `script` when `owner` is `None`.
    fn resolve(&self, site: &CallSite, owner: Option<usize>, script: &str) -> Vec<usize> {
        let functions = self.analysis.functions();
        if let Some(owner) = owner {
            let found: Vec<usize> = functions[owner]
                .calls
                .iter()
                .copied()
                .filter(|&g| {
                    functions[g].name.as_deref().map(last_segment) == Some(site.name.as_str())
                })
                .collect();
            // The analysis does not count a function passed by name as called, but a
            // non-registration call such as `setTimeout` does run it.
            if found.is_empty() && site.argument {
                return self.plain(&site.name, script);
            }
            return found;
        }
        match site.path.as_deref() {
            Some(path) if path.contains('.') => {
                if self.by_name.contains_key(path) {
                    return self.plain(path, script);
                }
                let root = path.split('.').next().unwrap_or(path);
                if BUILTIN_ROOTS.contains(&root) {
                    return Vec::new();
                }
                self.by_last
                    .get(site.name.as_str())
                    .cloned()
                    .unwrap_or_default()
            }
            _ => self.plain(&site.name, script),
        }
    }

    /// The statements of function `owner` (or of the top level of `script`), each with
    /// its call sites resolved, then the function literals it runs, without repeats.
    fn statements(
        &self,
        statements: &[JsStatement],
        owner: Option<usize>,
        script: &str,
    ) -> Vec<RawStatement> {
        statements
            .iter()
            .map(|statement| {
                let mut callees = Vec::new();
                let sites = statement.calls.iter();
                let called = sites.flat_map(|site| self.resolve(site, owner, script));
                for callee in called.chain(statement.runs.iter().copied()) {
                    if !callees.contains(&callee) {
                        callees.push(callee);
                    }
                }
                RawStatement {
                    text: statement.text.clone(),
                    callees,
                    effect: statement.effect.clone(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AppModel, Screen, ScreenKind};
    use gui_greybox::js::{JsConfig, Script};

    const DEMO: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/apps/demo/app.js"
    ));

    fn code_of(sources: &[(&str, &str)]) -> (JsAnalysis, WebCode) {
        let scripts: Vec<Script> = sources
            .iter()
            .map(|(name, source)| Script {
                name: name.to_string(),
                source: source.to_string(),
            })
            .collect();
        let analysis = JsAnalysis::analyse(&scripts, &JsConfig::default());
        let code = web_code(&analysis, "#/home");
        (analysis, code)
    }

    fn method_id(analysis: &JsAnalysis, code: &WebCode, name: &str) -> String {
        let index = analysis
            .functions()
            .iter()
            .position(|f| f.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no function {name}"));
        code.method_of_function[index].clone()
    }

    fn method<'c>(code: &'c WebCode, id: &str) -> (&'c MethodRole, &'c Option<String>) {
        code.vertices
            .iter()
            .find_map(|v| match &v.kind {
                VertexKind::Method { role, screen, .. } if v.id == id => Some((role, screen)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no method {id}"))
    }

    /// Statement ids and texts of a method, in order.
    fn statements<'c>(code: &'c WebCode, id: &str) -> Vec<(&'c str, &'c str)> {
        code.vertices
            .iter()
            .filter_map(|v| match &v.kind {
                VertexKind::Statement { method, text, .. } if method == id => {
                    Some((v.id.as_str(), text.as_str()))
                }
                _ => None,
            })
            .collect()
    }

    fn effects_of(code: &WebCode, id: &str) -> Vec<WebEffect> {
        let ids: HashSet<&str> = statements(code, id).into_iter().map(|(s, _)| s).collect();
        code.effects
            .iter()
            .filter(|(s, _)| ids.contains(s.as_str()))
            .map(|(_, e)| e.clone())
            .collect()
    }

    fn calls_from(code: &WebCode, id: &str) -> Vec<String> {
        let ids: HashSet<&str> = statements(code, id).into_iter().map(|(s, _)| s).collect();
        code.edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Call && ids.contains(e.from.as_str()))
            .map(|e| e.to.clone())
            .collect()
    }

    #[test]
    fn the_demo_app_has_its_navigations_dialogs_calls_and_roles() {
        let (analysis, code) = code_of(&[("http://127.0.0.1:1/app.js", DEMO)]);
        assert!(analysis.errors().is_empty());
        let navigate = method_id(&analysis, &code, "navigate");
        assert!(navigate.starts_with("m:app.js:"), "{navigate}");
        assert_eq!(
            effects_of(&code, &navigate),
            vec![WebEffect::Navigate(None)]
        );
        let route = method_id(&analysis, &code, "handleRoute");
        assert!(effects_of(&code, &route).contains(&WebEffect::Navigate(Some("#/home".into()))));
        assert_eq!(
            effects_of(&code, &method_id(&analysis, &code, "openHelp")),
            vec![WebEffect::OpenDialog(Some("help-dialog".into()))]
        );
        assert_eq!(
            effects_of(&code, &method_id(&analysis, &code, "closeHelp")),
            vec![WebEffect::CloseDialog(Some("help-dialog".into()))]
        );
        assert_eq!(
            calls_from(&code, &method_id(&analysis, &code, "goHome")),
            vec![navigate.clone()]
        );
        // `setTimeout(showFeed, FEED_DELAY)` runs showFeed.
        assert!(
            calls_from(&code, &method_id(&analysis, &code, "startFeed"))
                .contains(&method_id(&analysis, &code, "showFeed"))
        );
        // Registering a handler is not calling it.
        assert!(
            !calls_from(&code, &method_id(&analysis, &code, "bindEvents"))
                .contains(&method_id(&analysis, &code, "goHome"))
        );
        let counter = method_id(&analysis, &code, "incrementHomeCounter");
        assert_eq!(method(&code, &counter), (&MethodRole::Callback, &None));
        // `state.notifier.count(..)` reaches the notifier's method.
        assert!(
            calls_from(&code, &counter).contains(&method_id(&analysis, &code, "count")),
            "{:?}",
            calls_from(&code, &counter)
        );
        assert_eq!(
            method(&code, &route),
            (&MethodRole::Lifecycle(Hook::Resume), &None)
        );
        assert_eq!(
            method(&code, &method_id(&analysis, &code, "parseRoute")).0,
            &MethodRole::Ordinary
        );
        assert_eq!(
            method(&code, "m:app.js:top"),
            (
                &MethodRole::Lifecycle(Hook::Create),
                &Some("#/home".to_string())
            )
        );
        assert_eq!(
            calls_from(&code, "m:app.js:top"),
            vec![method_id(&analysis, &code, "init")]
        );
        // Every analysis function has its method, and the vertices and edges make a
        // consistent model once the launch screen exists.
        assert_eq!(code.method_of_function.len(), analysis.functions().len());
        let model = AppModel {
            app: "demo".into(),
            platform: "web".into(),
            launch: "#/home".into(),
            screens: vec![Screen {
                name: "#/home".into(),
                kind: ScreenKind::Page,
            }],
            vertices: code.vertices.clone(),
            edges: code.edges.clone(),
        };
        model.check().unwrap();
    }

    #[test]
    fn statements_are_flattened_in_source_order_without_nested_functions() {
        let source = "\
function pick(x) {
  if (x > 1) {
    show(x);
  } else {
    const f = (y) => y + 1;
    hide(f(x));
  }
  return x;
}
pick(2);
";
        let (analysis, code) = code_of(&[("js/pick.js", source)]);
        let pick = method_id(&analysis, &code, "pick");
        assert_eq!(pick, "m:pick.js:1:1");
        let texts: Vec<&str> = statements(&code, &pick).iter().map(|(_, t)| *t).collect();
        assert_eq!(
            texts,
            [
                "if (x > 1) {",
                "show(x);",
                "const f = (y) => y + 1;",
                "hide(f(x));",
                "return x;"
            ]
        );
        let arrow = &code.method_of_function[1];
        assert_eq!(arrow, "m:pick.js:5:15");
        assert_eq!(statements(&code, arrow), [("s:pick.js:5:15:0", "y + 1")]);
        assert_eq!(method(&code, arrow), (&MethodRole::Ordinary, &None),);
        assert_eq!(
            statements(&code, "m:pick.js:top"),
            [("s:pick.js:top:0", "pick(2);")]
        );
        assert_eq!(calls_from(&code, "m:pick.js:top"), vec![pick.clone()]);
        let next: Vec<(&str, &str)> = code
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Next && e.from.contains("pick.js:1:1"))
            .map(|e| (e.from.as_str(), e.to.as_str()))
            .collect();
        assert_eq!(
            next,
            [
                ("m:pick.js:1:1", "s:pick.js:1:1:0"),
                ("s:pick.js:1:1:0", "s:pick.js:1:1:1"),
                ("s:pick.js:1:1:1", "s:pick.js:1:1:2"),
                ("s:pick.js:1:1:2", "s:pick.js:1:1:3"),
                ("s:pick.js:1:1:3", "s:pick.js:1:1:4"),
            ]
        );
    }

    #[test]
    fn screen_effects_are_recognised_in_their_usual_forms() {
        let source = "\
function a() { history.back(); }
function b() { window.history.go(-2); }
function c() { history.pushState({}, '', '/cart'); }
function d() { location.hash = 'about'; }
function e() { document.location.href = `/` + 'x'; }
function f() { byId('menu').style.display = 'block'; }
function g() { document.querySelector('#confirm').showModal(); }
function h(dialog) { dialog.close(); }
function i(socket) { socket.close(); window.close(); }
function j() { $('#tip').removeAttribute('open'); }
function k() { x.open = true; }
function l() { window.open(url); }
function m() { if (ok) { location.replace('#/a'); } }
";
        let (analysis, code) = code_of(&[("fx.js", source)]);
        let effects = |name: &str| effects_of(&code, &method_id(&analysis, &code, name));
        assert_eq!(effects("a"), [WebEffect::Back]);
        assert_eq!(effects("b"), [WebEffect::Back]);
        assert_eq!(effects("c"), [WebEffect::Navigate(Some("/cart".into()))]);
        assert_eq!(effects("d"), [WebEffect::Navigate(Some("#about".into()))]);
        assert_eq!(effects("e"), [WebEffect::Navigate(Some("/x".into()))]);
        assert_eq!(effects("f"), [WebEffect::OpenDialog(Some("menu".into()))]);
        assert_eq!(
            effects("g"),
            [WebEffect::OpenDialog(Some("confirm".into()))]
        );
        assert_eq!(effects("h"), [WebEffect::CloseDialog(None)]);
        assert_eq!(effects("i"), Vec::<WebEffect>::new());
        assert_eq!(effects("j"), [WebEffect::CloseDialog(Some("tip".into()))]);
        assert_eq!(effects("k"), [WebEffect::OpenDialog(None)]);
        assert_eq!(effects("l"), [WebEffect::Navigate(None)]);
        // The effect sits on the statement inside the branch, not on the `if`.
        let m = method_id(&analysis, &code, "m");
        let [(header, _), (inner, _)] = statements(&code, &m)[..] else {
            panic!("two statements expected in m");
        };
        assert!(code.effects.iter().all(|(s, _)| s != header));
        assert!(
            code.effects
                .contains(&(inner.to_string(), WebEffect::Navigate(Some("#/a".into()))))
        );
    }

    #[test]
    fn lifecycle_events_and_callbacks_give_roles() {
        let source = "\
function boot() {}
function route() {}
function away() {}
function press() {}
function loaded() {}
document.addEventListener('DOMContentLoaded', boot);
window.addEventListener('load', route);
window.addEventListener('popstate', route);
window.onpagehide = away;
button.addEventListener('click', press);
window.addEventListener('load', press);
img.addEventListener('load', loaded);
";
        let (analysis, code) = code_of(&[("roles.js", source)]);
        let role = |name: &str| method(&code, &method_id(&analysis, &code, name));
        let launch = Some("#/home".to_string());
        assert_eq!(
            role("boot"),
            (&MethodRole::Lifecycle(Hook::Create), &launch)
        );
        assert_eq!(role("route"), (&MethodRole::Lifecycle(Hook::Resume), &None));
        assert_eq!(role("away"), (&MethodRole::Lifecycle(Hook::Stop), &None));
        assert_eq!(
            role("press"),
            (&MethodRole::Lifecycle(Hook::Create), &launch)
        );
        assert_eq!(role("loaded"), (&MethodRole::Ordinary, &None));
    }

    #[test]
    fn methods_and_immediately_called_functions_get_their_statements() {
        let source = "\
(function () {
  class View {
    render() { this.paint(); }
    paint() {}
  }
  var api = {
    start() { setTimeout(() => api.stop(), 5); },
    stop: function () {}
  };
  api.start();
})();
";
        let (analysis, code) = code_of(&[("app.js", source)]);
        let texts = |id: &str| -> Vec<String> {
            statements(&code, id)
                .into_iter()
                .map(|(_, t)| t.to_string())
                .collect()
        };
        let wrapper = &code.method_of_function[0];
        assert_eq!(texts("m:app.js:top"), ["(function () {"]);
        assert_eq!(calls_from(&code, "m:app.js:top"), vec![wrapper.clone()]);
        assert_eq!(
            texts(wrapper),
            ["class View {", "var api = {", "api.start();"]
        );
        let render = method_id(&analysis, &code, "View.render");
        assert_eq!(render, "m:app.js:3:5");
        assert_eq!(texts(&render), ["this.paint();"]);
        assert_eq!(
            calls_from(&code, &render),
            vec![method_id(&analysis, &code, "View.paint")]
        );
        let start = method_id(&analysis, &code, "api.start");
        assert_eq!(calls_from(&code, wrapper), vec![start.clone()]);
        assert_eq!(texts(&start), ["setTimeout(() => api.stop(), 5);"]);
        // The arrow passed to setTimeout runs, and it calls api.stop.
        let [arrow] = &calls_from(&code, &start)[..] else {
            panic!("one callee expected");
        };
        assert_eq!(texts(arrow), ["api.stop()"]);
        assert_eq!(
            calls_from(&code, arrow),
            vec![method_id(&analysis, &code, "api.stop")]
        );
    }

    #[test]
    fn long_statements_are_cut_on_a_character_boundary() {
        let source = format!("function f() {{\n  say('{}');\n}}\n", "é".repeat(100));
        let (analysis, code) = code_of(&[("long.js", &source)]);
        let f = method_id(&analysis, &code, "f");
        let text = statements(&code, &f)[0].1;
        assert_eq!(text.chars().count(), 80);
        assert!(text.starts_with("say('éé") && text.ends_with('…'));
    }

    #[test]
    fn a_script_that_does_not_parse_is_skipped() {
        let (analysis, code) = code_of(&[
            ("bad.js", "function ( {"),
            ("good.js", "function ok() { go(); }\nok();\n"),
        ]);
        assert_eq!(analysis.errors().len(), 1);
        assert!(code.vertices.iter().all(|v| !v.id.contains("bad.js")));
        assert_eq!(
            statements(&code, "m:good.js:top"),
            [("s:good.js:top:0", "ok();")]
        );
        assert_eq!(
            calls_from(&code, "m:good.js:top"),
            vec!["m:good.js:1:1".to_string()]
        );
    }
}
