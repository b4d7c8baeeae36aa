//! The code part of a web app's model: method and statement vertices for its JavaScript,
//! with execution-order and call edges, method roles taken from the event registrations,
//! and what statements do to the screen (navigations, dialogs opened and closed).
//!
//! The grey-box analysis ([`JsAnalysis`]) already knows the functions, their callees and
//! the handlers; this module re-parses each script only to list the statements of every
//! function, and matches functions to the analysis by the 0-based line and UTF-16 column
//! of their start, the same key [`JsAnalysis::function_at`] uses.
//!
//! # Statements
//!
//! Each function body (and each script's top level) is flattened in source order. A
//! compound statement (`if`, loops, `switch`, `try`, a block, a label, `with`) is one vertex
//! for its header, followed by the statements of all its branches; the header vertex only
//! carries what its own expressions do (the test of an `if`, the parts of a `for` head),
//! so a call inside a branch belongs to the branch's statement alone. Function
//! declarations and imports run nothing where they stand and are left out. The bodies of
//! nested functions, arrows and classes belong to their own methods.
//!
//! Next edges follow plain source order (method to first statement, statement `k` to
//! `k + 1`), without modelling branches or early returns: the search only needs to know
//! which statements a method may reach, and every statement of a method is reachable once
//! the method runs.

use std::collections::{HashMap, HashSet};

use gui_greybox::js::{JsAnalysis, JsConfig, JsHandler, LineIndex, Script};
use oxc_allocator::Allocator;
use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};
use oxc_parser::Parser;
use oxc_span::{GetSpan, SourceType, Span};

use crate::model::{Edge, EdgeKind, Hook, MethodRole, Vertex, VertexKind};

/// What a statement does to the screen on the web (turned into model Effects by the
/// caller, who knows the screens).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum WebEffect {
    /// `location.hash`/`href` assignment (also `window.location = ..`,
    /// `document.location`), `location.assign/replace(..)`,
    /// `history.pushState/replaceState(_, _, url)`, `window.open(url)`: the literal target
    /// when the argument or right side is a string literal (or a template or concatenation
    /// whose parts are all literals), else `None`. A literal assigned to `location.hash`
    /// gets its leading `#` if it lacks one, since that is where the browser goes.
    Navigate(Option<String>),
    /// `history.back()`, `history.go(-n)` with a negative literal.
    Back,
    /// An element made visible: `.hidden = false`, `.showModal()`, `.show()`,
    /// `.setAttribute('open', ..)`, `.removeAttribute('hidden')`, `.open = true`,
    /// `.style.display = <a literal other than 'none'>`. Carries the element's id when it
    /// was looked up by a literal (`getElementById('x')`, `byId('x')`, any one-argument
    /// call with a literal id, `querySelector('#x')`, `$('#x')`).
    OpenDialog(Option<String>),
    /// The reverse: `.hidden = true`, `.close()`, `.hide()`, `.removeAttribute('open')`,
    /// `.setAttribute('hidden', ..)`, `.open = false`, `.style.display = 'none'`.
    CloseDialog(Option<String>),
}

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

/// Builds the method and statement vertices of `scripts`, which `analysis` was computed
/// from. `launch` is the name of the model's launch screen (page-load code belongs to
/// it). Scripts that do not parse contribute no statements and no top-level method.
///
/// Method ids are `m:{file}:{line}:{column}` (1-based, the file being the last path
/// segment of the script's name) and `m:{file}:top`; should two scripts share a file name
/// and a position, the later id gets a `~2`, `~3`, .. suffix so ids stay unique.
/// Statement ids are `s:{method id without "m:"}:{k}`.
pub fn web_code(scripts: &[Script], analysis: &JsAnalysis, launch: &str) -> WebCode {
    // The walk recurses along the syntax tree like the analysis does, so it gets the same
    // large (reserved, not committed) stack for deeply nested generated code.
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("web-code".into())
            .stack_size(64 << 20)
            .spawn_scoped(scope, || build(scripts, analysis, launch))
            .ok()
            .and_then(|handle| handle.join().ok())
    })
    .unwrap_or_else(|| build(scripts, analysis, launch))
}

/// One statement before it becomes a vertex.
#[derive(Debug, Default)]
struct RawStatement {
    text: String,
    /// Callee function indices, in first-seen order, without repeats.
    callees: Vec<usize>,
    effect: Option<WebEffect>,
}

/// What the walk of all scripts produced.
#[derive(Default)]
struct Bodies {
    /// Statements of each analysis function, when its script parsed.
    functions: HashMap<usize, Vec<RawStatement>>,
    /// Per parsed script, in script order: its file name and top-level statements.
    tops: Vec<(String, Vec<RawStatement>)>,
}

fn build(scripts: &[Script], analysis: &JsAnalysis, launch: &str) -> WebCode {
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

    let mut bodies = Bodies::default();
    for script in scripts {
        // A panic inside the parser or the walk costs this script's statements, not the
        // whole model; the analysis treats its scripts the same way.
        let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            walk_script(script, analysis, &names)
        }));
        if let Ok(Some((top, found))) = walked {
            bodies.tops.push((file_name(&script.name).to_string(), top));
            for (index, statements) in found {
                bodies.functions.entry(index).or_insert(statements);
            }
        }
    }

    let mut out = Assembly::default();
    for (file, statements) in bodies.tops {
        let id = unique(&mut used, format!("m:{file}:top"));
        out.method(
            &id,
            format!("{file} (top level)"),
            MethodRole::Lifecycle(Hook::Create),
            Some(launch.to_string()),
        );
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
        let statements = bodies.functions.remove(&index).unwrap_or_default();
        out.statements(id, statements, &method_of_function);
    }
    WebCode {
        vertices: out.vertices,
        edges: out.edges,
        method_of_function,
        effects: out.effects,
    }
}

/// Collects vertices and edges, dropping repeated edges.
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
    fn resolve(&self, named: &Named, owner: Option<usize>, script: &str) -> Vec<usize> {
        let functions = self.analysis.functions();
        if let Some(owner) = owner {
            let found: Vec<usize> = functions[owner]
                .calls
                .iter()
                .copied()
                .filter(|&g| {
                    functions[g].name.as_deref().map(last_segment) == Some(named.last.as_str())
                })
                .collect();
            // The analysis does not count a function passed by name as called, but a
            // non-registration call such as `setTimeout` does run it.
            if found.is_empty() && named.argument {
                return self.plain(&named.last, script);
            }
            return found;
        }
        match named.path.as_deref() {
            Some(path) if path.contains('.') => {
                if self.by_name.contains_key(path) {
                    return self.plain(path, script);
                }
                let root = path.split('.').next().unwrap_or(path);
                if BUILTIN_ROOTS.contains(&root) {
                    return Vec::new();
                }
                self.by_last
                    .get(named.last.as_str())
                    .cloned()
                    .unwrap_or_default()
            }
            _ => self.plain(&named.last, script),
        }
    }
}

// ----- the walk -----

/// Statements found in one script: its top level, and the body of each analysis
/// function in it.
type ScriptBodies = (Vec<RawStatement>, Vec<(usize, Vec<RawStatement>)>);

/// Parses one script and lists its statements, or `None` when it does not parse.
fn walk_script(script: &Script, analysis: &JsAnalysis, names: &Names<'_>) -> Option<ScriptBodies> {
    let allocator = Allocator::default();
    let source = script.source.as_str();
    let parsed = Parser::new(&allocator, source, SourceType::unambiguous()).parse();
    if parsed.panicked || parsed.diagnostics.has_errors() {
        return None;
    }
    let at = analysis
        .functions()
        .iter()
        .enumerate()
        .filter(|(_, f)| f.script == script.name)
        .map(|(index, f)| ((f.line, f.column), index))
        .collect();
    let mut walker = Walker {
        script: &script.name,
        source,
        lines: LineIndex::new(source),
        names,
        at,
        hints: HashMap::new(),
        found: Vec::new(),
        registrations: registration_names(),
    };
    let mut top = Vec::new();
    walker.flatten(&parsed.program.body, None, &mut top);
    walker.visit_program(&parsed.program);
    Some((top, walker.found))
}

/// Method names whose function arguments are event handlers, not callees: the analysis's
/// own list of registration helpers and jQuery shortcuts, plus the DOM's.
fn registration_names() -> HashSet<String> {
    let mut names: HashSet<String> = JsConfig::default().helper_names.into_iter().collect();
    for name in [
        "addEventListener",
        "removeEventListener",
        "off",
        "unbind",
        "undelegate",
        "die",
    ] {
        names.insert(name.to_string());
    }
    names
}

/// Finds every function of a script (to list its body) and lists statements.
struct Walker<'w, 'x> {
    script: &'w str,
    source: &'w str,
    lines: LineIndex,
    names: &'w Names<'x>,
    /// (line, column) of each analysis function of this script -> its index.
    at: HashMap<(u32, u32), usize>,
    /// Function literal start -> where the analysis starts it instead (a method's key).
    hints: HashMap<u32, u32>,
    found: Vec<(usize, Vec<RawStatement>)>,
    registrations: HashSet<String>,
}

impl<'a> Walker<'_, '_> {
    /// The analysis function starting at `start`, or at its hint.
    fn function_at(&self, start: u32) -> Option<usize> {
        let key = self.lines.position(self.source, start);
        self.at.get(&key).copied().or_else(|| {
            let hint = self.hints.get(&start)?;
            self.at
                .get(&self.lines.position(self.source, *hint))
                .copied()
        })
    }

    fn function_body(&mut self, span: Span, hint: Option<u32>, body: Option<&FunctionBody<'a>>) {
        if let Some(hint) = hint {
            self.hints.insert(span.start, hint);
        }
        let Some(index) = self.function_at(span.start) else {
            tracing::debug!(
                script = self.script,
                offset = span.start,
                "function unknown to the analysis"
            );
            return;
        };
        let mut statements = Vec::new();
        if let Some(body) = body {
            self.flatten(&body.statements, Some(index), &mut statements);
        }
        self.found.push((index, statements));
    }

    fn arrow(&mut self, arrow: &ArrowFunctionExpression<'a>) {
        let Some(index) = self.function_at(arrow.span.start) else {
            return;
        };
        let mut statements = Vec::new();
        match &arrow.body {
            ArrowFunctionBody::FunctionBody(body) => {
                self.flatten(&body.statements, Some(index), &mut statements);
            }
            body => {
                if let Some(expression) = body.as_expression() {
                    let mut scan = Scan::new(&self.registrations);
                    scan.visit_expression(expression);
                    statements.push(self.finish(expression.span(), scan, Some(index)));
                }
            }
        }
        self.found.push((index, statements));
    }

    /// The text of a statement: its first line, trimmed, at most 80 characters.
    fn text(&self, span: Span) -> String {
        let whole = &self.source[span.start as usize..span.end as usize];
        let line = whole
            .split(['\n', '\r', '\u{2028}', '\u{2029}'])
            .next()
            .unwrap_or("")
            .trim();
        if line.chars().count() <= 80 {
            return line.to_string();
        }
        let mut cut: String = line.chars().take(79).collect();
        cut.push('…');
        cut
    }

    fn finish(&self, span: Span, scan: Scan<'_>, owner: Option<usize>) -> RawStatement {
        let mut callees = Vec::new();
        for named in &scan.named {
            for callee in self.names.resolve(named, owner, self.script) {
                if !callees.contains(&callee) {
                    callees.push(callee);
                }
            }
        }
        for start in &scan.literals {
            if let Some(callee) = self.function_at(*start)
                && !callees.contains(&callee)
            {
                callees.push(callee);
            }
        }
        RawStatement {
            text: self.text(span),
            callees,
            effect: scan.effect.map(|(_, effect)| effect),
        }
    }

    fn flatten(
        &self,
        statements: &[Statement<'a>],
        owner: Option<usize>,
        out: &mut Vec<RawStatement>,
    ) {
        for statement in statements {
            self.statement(statement, owner, out);
        }
    }

    /// A branch of a compound statement: a block's statements stand for themselves.
    fn branch(&self, statement: &Statement<'a>, owner: Option<usize>, out: &mut Vec<RawStatement>) {
        match statement {
            Statement::BlockStatement(block) => self.flatten(&block.body, owner, out),
            other => self.statement(other, owner, out),
        }
    }

    fn statement(
        &self,
        statement: &Statement<'a>,
        owner: Option<usize>,
        out: &mut Vec<RawStatement>,
    ) {
        let mut scan = Scan::new(&self.registrations);
        let span = statement.span();
        match statement {
            Statement::EmptyStatement(_)
            | Statement::FunctionDeclaration(_)
            | Statement::ImportDeclaration(_)
            | Statement::ExportNamedDeclaration(_)
            | Statement::ExportFromDeclaration(_)
            | Statement::ExportAllDeclaration(_) => {}
            Statement::ExportDeclaration(export)
                if matches!(export.declaration, Declaration::FunctionDeclaration(_)) => {}
            Statement::ExportDefaultDeclaration(export)
                if matches!(
                    export.declaration,
                    ExportDefaultDeclarationKind::FunctionDeclaration(_)
                ) => {}
            Statement::BlockStatement(block) => {
                out.push(self.finish(span, scan, owner));
                self.flatten(&block.body, owner, out);
            }
            Statement::IfStatement(s) => {
                scan.visit_expression(&s.test);
                out.push(self.finish(span, scan, owner));
                self.branch(&s.consequent, owner, out);
                if let Some(alternate) = &s.alternate {
                    self.branch(alternate, owner, out);
                }
            }
            Statement::ForStatement(s) => {
                if let Some(init) = &s.init {
                    scan.visit_for_statement_init(init);
                }
                if let Some(test) = &s.test {
                    scan.visit_expression(test);
                }
                if let Some(update) = &s.update {
                    scan.visit_expression(update);
                }
                out.push(self.finish(span, scan, owner));
                self.branch(&s.body, owner, out);
            }
            Statement::ForInStatement(s) => {
                scan.visit_for_statement_left(&s.left);
                scan.visit_expression(&s.right);
                out.push(self.finish(span, scan, owner));
                self.branch(&s.body, owner, out);
            }
            Statement::ForOfStatement(s) => {
                scan.visit_for_statement_left(&s.left);
                scan.visit_expression(&s.right);
                out.push(self.finish(span, scan, owner));
                self.branch(&s.body, owner, out);
            }
            Statement::WhileStatement(s) => {
                scan.visit_expression(&s.test);
                out.push(self.finish(span, scan, owner));
                self.branch(&s.body, owner, out);
            }
            Statement::DoWhileStatement(s) => {
                scan.visit_expression(&s.test);
                out.push(self.finish(span, scan, owner));
                self.branch(&s.body, owner, out);
            }
            Statement::WithStatement(s) => {
                scan.visit_expression(&s.object);
                out.push(self.finish(span, scan, owner));
                self.branch(&s.body, owner, out);
            }
            Statement::LabeledStatement(s) => {
                out.push(self.finish(span, scan, owner));
                self.branch(&s.body, owner, out);
            }
            Statement::SwitchStatement(s) => {
                scan.visit_expression(&s.discriminant);
                for case in &s.cases {
                    if let Some(test) = &case.test {
                        scan.visit_expression(test);
                    }
                }
                out.push(self.finish(span, scan, owner));
                for case in &s.cases {
                    self.flatten(&case.consequent, owner, out);
                }
            }
            Statement::TryStatement(s) => {
                out.push(self.finish(span, scan, owner));
                self.flatten(&s.block.body, owner, out);
                if let Some(handler) = &s.handler {
                    self.flatten(&handler.body.body, owner, out);
                }
                if let Some(finalizer) = &s.finalizer {
                    self.flatten(&finalizer.body, owner, out);
                }
            }
            other => {
                scan.visit_statement(other);
                out.push(self.finish(span, scan, owner));
            }
        }
    }
}

/// The walk that finds functions: every function literal, declaration and method of the
/// script, nested ones included.
impl<'a> Visit<'a> for Walker<'_, '_> {
    fn visit_expression(&mut self, expression: &Expression<'a>) {
        match expression {
            Expression::FunctionExpression(function) => {
                self.function_body(function.span, None, function.body.as_deref());
            }
            Expression::ArrowFunctionExpression(arrow) => self.arrow(arrow),
            _ => {}
        }
        walk::walk_expression(self, expression);
    }

    fn visit_declaration(&mut self, declaration: &Declaration<'a>) {
        if let Declaration::FunctionDeclaration(function) = declaration {
            self.function_body(function.span, None, function.body.as_deref());
        }
        walk::walk_declaration(self, declaration);
    }

    fn visit_export_default_declaration_kind(&mut self, kind: &ExportDefaultDeclarationKind<'a>) {
        if let ExportDefaultDeclarationKind::FunctionDeclaration(function) = kind {
            self.function_body(function.span, None, function.body.as_deref());
        }
        walk::walk_export_default_declaration_kind(self, kind);
    }

    fn visit_method_definition(&mut self, method: &MethodDefinition<'a>) {
        // The analysis starts a method at its key, not at its parameter list.
        let function = &method.value;
        self.function_body(
            function.span,
            Some(method.span.start),
            function.body.as_deref(),
        );
        walk::walk_method_definition(self, method);
    }

    fn visit_object_property(&mut self, property: &ObjectProperty<'a>) {
        if property.method {
            self.hints
                .insert(property.value.span().start, property.span.start);
        }
        walk::walk_object_property(self, property);
    }

    fn visit_property_definition(&mut self, property: &PropertyDefinition<'a>) {
        if let Some(value) = &property.value {
            self.hints.insert(
                value.without_parentheses().span().start,
                property.span.start,
            );
        }
        walk::walk_property_definition(self, property);
    }
}

// ----- one statement -----

/// A call site or function name to resolve.
#[derive(Debug)]
struct Named {
    /// The callee's last name segment.
    last: String,
    /// The callee's whole static path (`obj.m`, with `prototype` dropped), when it has one.
    path: Option<String>,
    /// A function name passed as an argument rather than called.
    argument: bool,
}

/// What one statement's own code (not nested functions) calls and does to the screen.
struct Scan<'r> {
    registrations: &'r HashSet<String>,
    named: Vec<Named>,
    /// Starts of function literals the statement runs: called on the spot, or passed to a
    /// call that is not an event registration.
    literals: Vec<u32>,
    /// The first effect in source order, with its start.
    effect: Option<(u32, WebEffect)>,
}

impl<'r> Scan<'r> {
    fn new(registrations: &'r HashSet<String>) -> Self {
        Scan {
            registrations,
            named: Vec::new(),
            literals: Vec::new(),
            effect: None,
        }
    }

    fn effect_at(&mut self, start: u32, effect: Option<WebEffect>) {
        if let Some(effect) = effect
            && self.effect.as_ref().is_none_or(|(at, _)| start < *at)
        {
            self.effect = Some((start, effect));
        }
    }

    fn callee(&mut self, callee: &Expression<'_>) {
        match callee.without_parentheses() {
            Expression::Identifier(id) => self.named.push(Named {
                last: id.name.to_string(),
                path: Some(id.name.to_string()),
                argument: false,
            }),
            e @ (Expression::FunctionExpression(_) | Expression::ArrowFunctionExpression(_)) => {
                self.literals.push(e.span().start);
            }
            e => {
                let Some(member) = e.as_member_expression() else {
                    return;
                };
                let Some(name) = member.static_property_name() else {
                    return;
                };
                // `f.call(..)` and `f.apply(..)` call `f`.
                if matches!(name, "call" | "apply") {
                    self.callee(member.object());
                    return;
                }
                self.named.push(Named {
                    last: name.to_string(),
                    path: path_of(e).map(|p| {
                        p.into_iter()
                            .filter(|s| s != "prototype")
                            .collect::<Vec<_>>()
                            .join(".")
                    }),
                    argument: false,
                });
            }
        }
    }

    fn arguments(&mut self, arguments: &[Argument<'_>], registration: bool) {
        if registration {
            return;
        }
        for argument in arguments {
            let Some(expression) = argument.as_expression() else {
                continue;
            };
            if let Some(start) = literal_start(expression) {
                self.literals.push(start);
            } else if let Expression::Identifier(id) = expression.without_parentheses() {
                self.named.push(Named {
                    last: id.name.to_string(),
                    path: None,
                    argument: true,
                });
            }
        }
    }
}

impl<'a> Visit<'a> for Scan<'_> {
    fn visit_expression(&mut self, expression: &Expression<'a>) {
        match expression {
            Expression::FunctionExpression(_)
            | Expression::ArrowFunctionExpression(_)
            | Expression::ClassExpression(_) => {}
            _ => walk::walk_expression(self, expression),
        }
    }

    fn visit_declaration(&mut self, declaration: &Declaration<'a>) {
        match declaration {
            Declaration::FunctionDeclaration(_) | Declaration::ClassDeclaration(_) => {}
            _ => walk::walk_declaration(self, declaration),
        }
    }

    fn visit_export_default_declaration_kind(&mut self, kind: &ExportDefaultDeclarationKind<'a>) {
        match kind {
            ExportDefaultDeclarationKind::FunctionDeclaration(_)
            | ExportDefaultDeclarationKind::ClassDeclaration(_) => {}
            _ => walk::walk_export_default_declaration_kind(self, kind),
        }
    }

    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        self.effect_at(call.span.start, call_effect(call));
        self.callee(&call.callee);
        let registration = !call.arguments.is_empty()
            && callee_name(&call.callee).is_some_and(|name| self.registrations.contains(name));
        self.arguments(&call.arguments, registration);
        walk::walk_call_expression(self, call);
    }

    fn visit_new_expression(&mut self, new: &NewExpression<'a>) {
        self.arguments(&new.arguments, false);
        walk::walk_new_expression(self, new);
    }

    fn visit_assignment_expression(&mut self, assignment: &AssignmentExpression<'a>) {
        self.effect_at(assignment.span.start, assignment_effect(assignment));
        walk::walk_assignment_expression(self, assignment);
    }
}

// ----- effects -----

/// The last name of a callee: `f`, `m` of `a.b.m`.
fn callee_name<'a>(callee: &Expression<'a>) -> Option<&'a str> {
    match callee.without_parentheses() {
        Expression::Identifier(id) => Some(id.name.as_str()),
        e => e.as_member_expression()?.static_property_name(),
    }
}

/// The static path of an expression: `window.location.hash`, `this.view`.
fn path_of(expression: &Expression<'_>) -> Option<Vec<String>> {
    match expression.without_parentheses() {
        Expression::Identifier(id) => Some(vec![id.name.to_string()]),
        Expression::ThisExpression(_) => Some(vec!["this".into()]),
        e => {
            let member = e.as_member_expression()?;
            let mut path = path_of(member.object())?;
            path.push(member.static_property_name()?.to_string());
            Some(path)
        }
    }
}

/// A path with the global objects that merely hold `location` and `history` taken off:
/// `window.document.location.hash` is `location.hash`.
fn page_path(mut path: Vec<String>) -> Vec<String> {
    while path.len() > 1
        && matches!(
            path[0].as_str(),
            "window" | "self" | "top" | "parent" | "globalThis" | "document"
        )
    {
        path.remove(0);
    }
    path
}

/// A string that is known before the code runs: a literal, a template without
/// substitutions, or a concatenation of those.
fn literal_text(expression: &Expression<'_>) -> Option<String> {
    match expression.without_parentheses() {
        Expression::StringLiteral(s) => Some(s.value.to_string()),
        Expression::TemplateLiteral(t) if t.expressions.is_empty() => Some(
            t.quasis
                .iter()
                .map(|q| q.value.cooked.as_ref().map_or("", |c| c.as_str()))
                .collect(),
        ),
        Expression::BinaryExpression(b) if b.operator == BinaryOperator::Addition => {
            Some(literal_text(&b.left)? + &literal_text(&b.right)?)
        }
        _ => None,
    }
}

/// Where the function literal of `function () {..}` or `function () {..}.bind(x)` starts.
fn literal_start(expression: &Expression<'_>) -> Option<u32> {
    match expression.without_parentheses() {
        e @ (Expression::FunctionExpression(_) | Expression::ArrowFunctionExpression(_)) => {
            Some(e.span().start)
        }
        Expression::CallExpression(call) => match call.callee.without_parentheses() {
            Expression::StaticMemberExpression(m) if m.property.name == "bind" => {
                literal_start(&m.object)
            }
            _ => None,
        },
        _ => None,
    }
}

/// The id of an element looked up by a literal: `getElementById('x')`, `byId('x')` or any
/// other one-argument call with an id-like literal, `querySelector('#x')`, `$('#x')`.
fn element_id(expression: &Expression<'_>) -> Option<String> {
    let Expression::CallExpression(call) = expression.without_parentheses() else {
        return None;
    };
    let [argument] = call.arguments.as_slice() else {
        return None;
    };
    let literal = literal_text(argument.as_expression()?)?;
    let literal = literal.trim();
    let id_like = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
    };
    let name = callee_name(&call.callee)?;
    let id = match name {
        "querySelector" | "$" | "jQuery" | "qs" | "$$" => literal.strip_prefix('#')?,
        "querySelectorAll"
        | "qsa"
        | "getElementsByClassName"
        | "getElementsByTagName"
        | "getElementsByName" => return None,
        _ => literal.strip_prefix('#').unwrap_or(literal),
    };
    id_like(id).then(|| id.to_string())
}

/// Whether `.show()`, `.hide()` or `.close()` on this receiver is about an element: a
/// looked-up element, or a name that says dialog. `window.close()` or a socket's
/// `close()` is not.
fn dialog_like(receiver: &Expression<'_>) -> bool {
    const LOOKUPS: &[&str] = &[
        "getElementById",
        "querySelector",
        "byId",
        "$id",
        "$",
        "jQuery",
        "qs",
        "closest",
    ];
    const WORDS: &[&str] = &[
        "dialog", "modal", "popup", "popover", "drawer", "overlay", "sheet", "menu", "panel",
        "lightbox",
    ];
    if element_id(receiver).is_some() {
        return true;
    }
    if let Expression::CallExpression(call) = receiver.without_parentheses() {
        return callee_name(&call.callee).is_some_and(|name| LOOKUPS.contains(&name));
    }
    path_of(receiver)
        .and_then(|path| path.last().map(|s| s.to_lowercase()))
        .is_some_and(|last| WORDS.iter().any(|word| last.contains(word)))
}

fn is_negative_number(expression: &Expression<'_>) -> bool {
    match expression.without_parentheses() {
        Expression::UnaryExpression(u) => {
            u.operator == UnaryOperator::UnaryNegation
                && matches!(&u.argument, Expression::NumericLiteral(n) if n.value > 0.0)
        }
        Expression::NumericLiteral(n) => n.value < 0.0,
        _ => false,
    }
}

fn call_effect(call: &CallExpression<'_>) -> Option<WebEffect> {
    let member = call.callee.without_parentheses().as_member_expression()?;
    let method = member.static_property_name()?;
    let receiver = member.object();
    let place = path_of(receiver).map(page_path);
    let place: Vec<&str> = place.iter().flatten().map(String::as_str).collect();
    let argument = |i: usize| call.arguments.get(i).and_then(Argument::as_expression);
    let literal_argument = |i: usize| argument(i).and_then(literal_text);
    match (place.as_slice(), method) {
        (["location"], "assign" | "replace") => Some(WebEffect::Navigate(literal_argument(0))),
        (["history"], "pushState" | "replaceState") => {
            argument(2).map(|_| WebEffect::Navigate(literal_argument(2)))
        }
        (["history"], "back") => Some(WebEffect::Back),
        (["history"], "go") => argument(0)
            .filter(|a| is_negative_number(a))
            .map(|_| WebEffect::Back),
        _ if method == "open"
            && matches!(path_of(receiver).as_deref(), Some([w]) if w == "window") =>
        {
            argument(0).map(|_| WebEffect::Navigate(literal_argument(0)))
        }
        (_, "showModal") => Some(WebEffect::OpenDialog(element_id(receiver))),
        (_, "show") if dialog_like(receiver) => Some(WebEffect::OpenDialog(element_id(receiver))),
        (_, "close" | "hide") if dialog_like(receiver) => {
            Some(WebEffect::CloseDialog(element_id(receiver)))
        }
        (_, "setAttribute" | "removeAttribute") => {
            let set = method == "setAttribute";
            match (literal_argument(0).as_deref(), set) {
                (Some("open"), true) | (Some("hidden"), false) => {
                    Some(WebEffect::OpenDialog(element_id(receiver)))
                }
                (Some("open"), false) | (Some("hidden"), true) => {
                    Some(WebEffect::CloseDialog(element_id(receiver)))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn assignment_effect(assignment: &AssignmentExpression<'_>) -> Option<WebEffect> {
    if assignment.operator != AssignmentOperator::Assign {
        return None;
    }
    let right = &assignment.right;
    let (path, member) = match &assignment.left {
        AssignmentTarget::AssignmentTargetIdentifier(id) => (vec![id.name.to_string()], None),
        target => {
            let member = target.as_member_expression()?;
            // An object without a static path (`f().x`) must not pass for `location`.
            let mut path = path_of(member.object()).unwrap_or_else(|| vec!["?".into()]);
            path.push(member.static_property_name()?.to_string());
            (path, Some(member))
        }
    };
    let place = page_path(path);
    let place: Vec<&str> = place.iter().map(String::as_str).collect();
    match place.as_slice() {
        ["location"] | ["location", "href" | "pathname" | "search"] => {
            return Some(WebEffect::Navigate(literal_text(right)));
        }
        ["location", "hash"] => {
            let target = literal_text(right).map(|hash| {
                if hash.starts_with('#') {
                    hash
                } else {
                    format!("#{hash}")
                }
            });
            return Some(WebEffect::Navigate(target));
        }
        _ => {}
    }
    let member = member?;
    let element = member.object();
    let boolean = match right.without_parentheses() {
        Expression::BooleanLiteral(b) => Some(b.value),
        _ => None,
    };
    match member.static_property_name()? {
        "hidden" => boolean.map(|hidden| {
            if hidden {
                WebEffect::CloseDialog(element_id(element))
            } else {
                WebEffect::OpenDialog(element_id(element))
            }
        }),
        "open" if !matches!(path_of(element).as_deref(), Some([w]) if w == "window") => boolean
            .map(|open| {
                if open {
                    WebEffect::OpenDialog(element_id(element))
                } else {
                    WebEffect::CloseDialog(element_id(element))
                }
            }),
        "display" => {
            let style = element.without_parentheses().as_member_expression()?;
            if style.static_property_name()? != "style" {
                return None;
            }
            let shown = style.object();
            let value = literal_text(right)?;
            Some(if value.trim() == "none" {
                WebEffect::CloseDialog(element_id(shown))
            } else {
                WebEffect::OpenDialog(element_id(shown))
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AppModel, Screen, ScreenKind};

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
        let code = web_code(&scripts, &analysis, "#/home");
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
