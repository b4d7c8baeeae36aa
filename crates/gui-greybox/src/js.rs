//! JavaScript handler analysis: `getFieldsRead` and `getFieldsWritten` of Algorithm 1 for
//! web applications, and the event registrations that tie DOM events to handler functions.
//!
//! [`JsAnalysis::analyse`] parses each [`Script`] with oxc, walks every function once and
//! records which access paths it reads and writes, which application functions it calls
//! and which handlers it registers. [`JsAnalysis::read_write`] then answers Algorithm 1's
//! question for one function, following its calls recursively as Section 4.3 does with
//! `INVOKE*` instructions.
//!
//! The same walk lists the statements of every function and of every script's top level
//! ([`JsFunction::statements`], [`JsAnalysis::top_levels`]), with their call sites and
//! what they do to the screen ([`WebEffect`]), for models made of statements (Monkey++):
//! each script is parsed once for every use.
//!
//! # What counts as a field
//!
//! JavaScript has no declared fields, so the unit of sharing is the *access path*: a chain
//! of property names hanging off a name that outlives one call of the function.
//!
//! * **Roots.** A path starts at a global, a top-level binding of a script, a variable of an
//!   enclosing function (a closure variable), `this`, or a DOM element looked up by a
//!   literal. Parameters and variables declared in the function itself are locals and
//!   name nothing shared, with one exception: a local initialised from a path is an alias
//!   for it (`var s = state.list; s.items.push(x)` writes `state.list.items`; likewise
//!   `const {list} = state` and `for (const item of state.items)`, which stands for
//!   `state.items[]`). Aliases are followed in source order; reassigning the local
//!   re-points or drops the alias. A callback (a function literal passed as an argument or
//!   called on the spot) runs on behalf of its creator, so the creator's variables stay
//!   locals inside it; in any other nested function they are closure variables.
//! * **`this`.** Inside a class method, a constructor (a function whose name starts with a
//!   capital), a `Foo.prototype.m = function`, an `obj.m = function` or a method of an
//!   object literal bound to a name, `this.x` is recorded as `Foo.x` / `obj.x`: like the
//!   bytecode analysis, instance fields are named by their class, not their object.
//!   Arrow functions see the `this` of their surroundings, and so does a
//!   `function () {..}.bind(this)`. When no owner is known the path stays `this.x`.
//! * **DOM roots.** A call of `getElementById`/`byId`/`$id` with a string literal is the
//!   element `#id`; `querySelector`/`querySelectorAll`/`$`/`jQuery`/`qs`/`qsa` with a
//!   literal `#id` selector is `#id` as well and any other literal selector `sel` becomes
//!   the root `$(sel)`. So `byId('cart-coupon').value` reads `#cart-coupon.value`.
//! * **Reads.** Every path that is evaluated is read, together with its prefixes of at
//!   least two names (`state.coupon.rule.percent` also reads `state.coupon` and
//!   `state.coupon.rule`). A lone name is a read only when it is a variable of the
//!   application (declared at the top level of a script, a closure variable, or assigned
//!   as a global somewhere); reading `document` or `Math` alone is not. Function names
//!   used as values are not reads. The receiver of a method call is read; the method
//!   name itself is not.
//! * **Writes.** Targets of `=`, compound assignment, `++`/`--` and `delete`: the whole
//!   path only. Its strict prefixes of at least two names are read, as `GETFIELD
//!   mainWindow` precedes `PUTFIELD text` in Listing 2. (Writing the prefixes too would
//!   make every handler that touches `state.list.x` depend on every reader of
//!   `state.list.y`, and the EDG nearly complete.) Calling a built-in mutating method
//!   (`push`, `pop`, `shift`, `unshift`, `splice`, `sort`, `reverse`, `fill`, `set`, `add`,
//!   `delete`, `clear`, `remove`, `toggle`, `setItem`, `removeItem`, `setAttribute`,
//!   `removeAttribute`) writes its receiver; when the call reaches an application method
//!   of that name (`this.model.remove(id)`), that method's effects count instead.
//!   Assigning a function literal (`Foo.prototype.m = function ..`) defines a method and
//!   is no write. A computed member `a[i]` is the segment `a[]`; a computed member with a
//!   string literal key is that name.
//!
//! # Calls
//!
//! Callees are resolved by name after all scripts are read, so calls across scripts work:
//! `f()` finds function declarations and `var f = function`, `obj.m()` finds
//! `obj.m = function`, object-literal methods of `obj`, `Foo.prototype.m` and class
//! methods of `Foo`, and `this.m()` finds methods of the enclosing class. When the
//! receiver's owner is unknown (`this.view.render()`, a parameter), every application
//! method of that name is a callee, unless the name is a common built-in method
//! (`forEach`, `indexOf`, ..) or the receiver is a library global such as `Math` or a
//! jQuery object. Like the paper, which restricts the analysis to the application's
//! classes, unresolved callees are dropped. `f.call(..)`/`f.apply(..)` call `f`.
//! A function literal passed as an argument (`forEach(function ..)`, `setTimeout(..)`) or
//! called on the spot runs on behalf of its creator, so it is a callee of the enclosing
//! function; one that is registered as an event handler is not, since it runs only when
//! its own event fires. `new Foo()` is not followed: a constructor initialises a fresh
//! object that no earlier event can have seen (the Java analysis makes the same choice).
//!
//! # Handlers
//!
//! Registrations with a literal event type are collected as [`JsHandler`]s:
//! `x.addEventListener('type', fn)`, `x.ontype = fn`, jQuery-style calls on a jQuery-like
//! receiver (`$(..)`, a name starting with `$`, or a chain of calls on those):
//! `.on('type', [selector,] fn)`, `.one`, `.bind`, `.live`, `.delegate(selector, 'type', fn)`
//! and shortcuts such as `.click(fn)`; and the application helpers of
//! [`JsConfig::helper_names`] called as `helper(target, 'type', fn)`,
//! `helper(target, 'selector', 'type', fn)` or `helper('selector', 'type', fn)`. A
//! registration whose function is a parameter of the enclosing function is the inside of
//! such a helper and is skipped, as is one whose event type is not a literal.
//!
//! # Limits
//!
//! The analysis is shallow on purpose, like the paper's (Section 4.3.2): no flow
//! sensitivity beyond aliases, no dispatch on runtime types. In particular it does not
//! follow a function value through a parameter (`bind(event, handler)` calling
//! `handler(..)`, as todomvc's view does) or through data (`{ action: canvasGoHome }`),
//! and an element id passed as a parameter (`setText(id, text)`) makes no DOM root.

mod collect;
mod effects;
mod statements;

pub use collect::LineIndex;
pub use effects::WebEffect;
pub use statements::{CallSite, JsStatement, TopLevel};

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::OnceLock;

use petgraph::graph::DiGraph;
use serde::{Deserialize, Serialize};

use crate::{HandlerRef, ReadWrite};

/// One script of the application under test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Script {
    /// URL or path; [`JsAnalysis::function_at`] matches it against DevTools' script URLs.
    pub name: String,
    pub source: String,
}

/// Knobs of the analysis.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JsConfig {
    /// Names of functions that register handlers. Called as a plain function
    /// (`$on(target, 'click', fn)`, `$delegate(target, 'li', 'click', fn)`) any of them
    /// is a helper; called as a method on a jQuery-like receiver, `on`/`one`/`bind`/`live`
    /// take the event type as first argument, `delegate` a selector and then the type, and
    /// every other name (`click`, `change`, ..) is itself the event type.
    pub helper_names: Vec<String>,
}

impl Default for JsConfig {
    fn default() -> Self {
        const NAMES: &[&str] = &[
            // Application helpers (todomvc-vanillajs and friends).
            "$on",
            "$delegate",
            "$live",
            // jQuery / Zepto registration methods.
            "on",
            "one",
            "bind",
            "live",
            "delegate",
            // jQuery shortcut methods: the method name is the event type.
            "click",
            "dblclick",
            "contextmenu",
            "mousedown",
            "mouseup",
            "mouseover",
            "mouseout",
            "mouseenter",
            "mouseleave",
            "mousemove",
            "hover",
            "change",
            "input",
            "submit",
            "keydown",
            "keyup",
            "keypress",
            "focus",
            "blur",
            "focusin",
            "focusout",
            "select",
            "scroll",
            "resize",
        ];
        JsConfig {
            helper_names: NAMES.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// A script that could not be analysed. `line` and `column` are 0-based like the rest of
/// this module; the message shows them 1-based, as editors do.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{script}:{}:{}: {message}", .line + 1, .column + 1)]
pub struct ScriptError {
    pub script: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// A function of the application: a declaration, a function or arrow expression, or a
/// method.
#[derive(Debug, Clone, Serialize)]
pub struct JsFunction {
    /// `f`, `obj.m`, `Foo.m` (prototype and class methods alike), or `None` for an
    /// anonymous function literal.
    pub name: Option<String>,
    pub script: String,
    /// 0-based line of the function's start (for methods, the start of the key).
    pub line: u32,
    /// 0-based column in UTF-16 code units, as the DevTools protocol counts.
    pub column: u32,
    /// What the function's own body reads and writes, without its callees.
    pub own: ReadWrite,
    /// Resolved callees, indices into [`JsAnalysis::functions`].
    pub calls: Vec<usize>,
    /// Each read and write of `own`, where it happens, in source order: which of them a
    /// run executed follows from V8's block coverage of that run.
    #[serde(skip)]
    pub accesses: Vec<Access>,
    /// The statements of the function's body, flattened in source order (see
    /// [`JsStatement`]); an arrow with an expression body has that one.
    #[serde(skip)]
    pub statements: Vec<JsStatement>,
}

/// One read or write of an access path in a function's own body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Byte offset in the script's source of the innermost expression that makes the
    /// access.
    pub offset: u32,
    pub path: String,
    pub write: bool,
}

/// One event registration found in the source.
#[derive(Debug, Clone, Serialize)]
pub struct JsHandler {
    pub script: String,
    /// 0-based line of the registering call or assignment.
    pub line: u32,
    pub event_type: String,
    /// Source text of the target expression, e.g. `byId('back-home')`, `document`.
    pub target: String,
    /// The delegation selector when one is given; otherwise `#id` when the target is an
    /// element looked up by a literal id, or the literal selector of a `querySelector`/`$`
    /// lookup.
    pub selector: Option<String>,
    /// The handler function, when it is an application function.
    pub function: Option<usize>,
    /// `addEventListener`, `on-property`, `jquery` or `helper:<name>`.
    pub via: String,
}

/// The analysis of a set of scripts.
#[derive(Debug, Clone)]
pub struct JsAnalysis {
    errors: Vec<ScriptError>,
    functions: Vec<JsFunction>,
    handlers: Vec<JsHandler>,
    top_levels: Vec<TopLevel>,
    /// Start and end of each function as (line, UTF-16 column), end exclusive.
    extents: Vec<((u32, u32), (u32, u32))>,
    /// Strongly connected component of each function in the call graph.
    scc_of: Vec<usize>,
    scc_members: Vec<Vec<usize>>,
    scc_callees: Vec<Vec<usize>>,
    closure: Vec<OnceLock<ReadWrite>>,
}

impl JsAnalysis {
    /// Analyses `scripts` together, so calls and handler references may cross scripts.
    /// Scripts that do not parse become [`ScriptError`]s; the others are analysed.
    pub fn analyse(scripts: &[Script], config: &JsConfig) -> JsAnalysis {
        // The walk recurses along the syntax tree; a generated script with thousands of
        // nested `+` operands would exhaust a default thread stack, so the walk gets a
        // large one (reserved, not committed, until used).
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("js-analysis".into())
                .stack_size(64 << 20)
                .spawn_scoped(scope, || analyse_on_this_thread(scripts, config))
                .ok()
                .and_then(|handle| handle.join().ok())
        })
        .unwrap_or_else(|| analyse_on_this_thread(scripts, config))
    }

    pub fn errors(&self) -> &[ScriptError] {
        &self.errors
    }

    pub fn functions(&self) -> &[JsFunction] {
        &self.functions
    }

    pub fn handlers(&self) -> &[JsHandler] {
        &self.handlers
    }

    /// The top-level statements of each script that parsed, in script order.
    pub fn top_levels(&self) -> &[TopLevel] {
        &self.top_levels
    }

    /// The innermost function of `script` whose extent contains the 0-based `line` and
    /// `column` (UTF-16 units), e.g. a listener location from
    /// `DOMDebugger.getEventListeners`. `script` is compared with [`Script::name`]
    /// exactly first; otherwise the script sharing the most trailing path segments with it
    /// is taken, so `http://127.0.0.1:8000/app.js` finds `examples/apps/demo/app.js`.
    pub fn function_at(&self, script: &str, line: u32, column: u32) -> Option<usize> {
        let names: BTreeSet<&str> = self.functions.iter().map(|f| f.script.as_str()).collect();
        let chosen = if names.contains(script) {
            script
        } else {
            names
                .iter()
                .copied()
                .map(|name| (shared_tail(name, script), name))
                .filter(|(shared, _)| *shared > 0)
                .max_by_key(|(shared, _)| *shared)?
                .1
        };
        let position = (line, column);
        self.functions
            .iter()
            .enumerate()
            .filter(|(index, function)| {
                let (start, end) = self.extents[*index];
                function.script == chosen && start <= position && position < end
            })
            .max_by_key(|(index, _)| (self.extents[*index].0, *index))
            .map(|(index, _)| index)
    }

    /// The function a located handler runs ([`function_at`](Self::function_at) its
    /// start); `None` for a Java handler or one the analysis does not have.
    pub fn handler_function(&self, handler: &HandlerRef) -> Option<usize> {
        match handler {
            HandlerRef::Js {
                script,
                line,
                column,
            } => self.function_at(script, *line, *column),
            HandlerRef::Java { .. } => None,
        }
    }

    /// The first function called exactly `name`, else the first whose name ends in
    /// `.name` (so `render` finds `View.render`).
    pub fn function_named(&self, name: &str) -> Option<usize> {
        let named = |f: &JsFunction| f.name.as_deref() == Some(name);
        self.functions.iter().position(named).or_else(|| {
            let suffix = format!(".{name}");
            self.functions
                .iter()
                .position(|f| f.name.as_deref().is_some_and(|n| n.ends_with(&suffix)))
        })
    }

    /// What `function` and every application function it calls, directly or not, read and
    /// write: Section 3.1's "we recursively follow potential method calls". Mutually
    /// recursive functions share one result. Results are memoised.
    pub fn read_write(&self, function: usize) -> ReadWrite {
        match self.scc_of.get(function) {
            Some(&scc) => self.component_closure(scc).clone(),
            None => ReadWrite::default(),
        }
    }

    /// The closure of one strongly connected component, computing those of the components
    /// it reaches first (post-order on an explicit stack, so deep call chains are fine).
    fn component_closure(&self, scc: usize) -> &ReadWrite {
        let mut stack = vec![(scc, false)];
        while let Some((component, callees_done)) = stack.pop() {
            if self.closure[component].get().is_some() {
                continue;
            }
            if !callees_done {
                stack.push((component, true));
                for &callee in &self.scc_callees[component] {
                    if self.closure[callee].get().is_none() {
                        stack.push((callee, false));
                    }
                }
                continue;
            }
            let mut rw = ReadWrite::default();
            for &member in &self.scc_members[component] {
                rw.merge(&self.functions[member].own);
            }
            for &callee in &self.scc_callees[component] {
                if let Some(done) = self.closure[callee].get() {
                    rw.merge(done);
                }
            }
            let _ = self.closure[component].set(rw);
        }
        self.closure[scc].get_or_init(ReadWrite::default)
    }
}

/// How many trailing path segments a script name and a URL or path share, ignoring
/// query strings and fragments: `http://host/js/app.js` and `examples/js/app.js` share 2.
fn shared_tail(a: &str, b: &str) -> usize {
    let segments = |s: &str| -> Vec<String> {
        let s = s.split(['?', '#']).next().unwrap_or(s);
        s.split(['/', '\\'])
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (a, b) = (segments(a), segments(b));
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

fn analyse_on_this_thread(scripts: &[Script], config: &JsConfig) -> JsAnalysis {
    let mut out = collect::Output::default();
    let mut errors = Vec::new();
    for (index, script) in scripts.iter().enumerate() {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            collect::collect_script(index, script, config, &mut out)
        }));
        match run {
            Ok(Ok(())) => {}
            Ok(Err(error)) => errors.push(error),
            Err(_) => errors.push(ScriptError {
                script: script.name.clone(),
                line: 0,
                column: 0,
                message: "internal error while analysing this script".into(),
            }),
        }
    }
    finish(scripts, out, errors)
}

/// Resolves calls and handler references by name, drops lone names that are not
/// application variables, and condenses the call graph.
fn finish(scripts: &[Script], out: collect::Output, errors: Vec<ScriptError>) -> JsAnalysis {
    let collect::Output {
        functions: mut raw,
        handlers: raw_handlers,
        top_level_names,
        mut variables,
        tops,
    } = out;
    let mut statements: Vec<Vec<JsStatement>> = raw
        .iter_mut()
        .map(|function| std::mem::take(&mut function.statements))
        .collect();
    let top_levels = tops
        .into_iter()
        .map(|(script, statements)| TopLevel {
            script: scripts[script].name.clone(),
            statements,
        })
        .collect();

    let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_method: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut app_names: HashSet<&str> = top_level_names.iter().map(String::as_str).collect();
    for (index, function) in raw.iter().enumerate() {
        for key in &function.keys {
            by_key.entry(key.as_str()).or_default().push(index);
            if let Some(root) = key.split('.').next() {
                app_names.insert(root);
            }
        }
        if let Some(method) = &function.method {
            by_method.entry(method.as_str()).or_default().push(index);
        }
    }
    let resolver = Resolver {
        by_key,
        by_method,
        app_names,
        script_of: raw.iter().map(|f| f.script).collect(),
    };

    // Built-in mutations, e.g. `items.push(x)`; a call that reaches an application method
    // is followed instead.
    let mutations: Vec<Vec<(&String, u32)>> = raw
        .iter()
        .map(|function| {
            function
                .mutations
                .iter()
                .filter(|(key, _, _)| resolver.all(key).is_empty())
                .flat_map(|(_, writes, at)| writes.iter().map(|w| (w, *at)))
                .collect()
        })
        .collect();
    variables.extend(
        mutations
            .iter()
            .flatten()
            .filter(|(w, _)| !w.contains(['.', '[']))
            .map(|(w, _)| w.to_string()),
    );

    let script_name = |index: usize| scripts[index].name.clone();
    let mut functions = Vec::with_capacity(raw.len());
    let mut extents = Vec::with_capacity(raw.len());
    for (index, function) in raw.iter().enumerate() {
        let kept = |path: &String| path.contains(['.', '[']) || variables.contains(path);
        let mut accesses: Vec<Access> = function
            .accesses
            .iter()
            .filter(|a| a.write || kept(&a.path))
            .cloned()
            .chain(mutations[index].iter().map(|(w, offset)| Access {
                offset: *offset,
                path: w.to_string(),
                write: true,
            }))
            .collect();
        accesses.sort_by_key(|a| a.offset);
        let mut own = ReadWrite::default();
        for a in &accesses {
            own.record(&a.path, a.write);
        }
        let mut calls: Vec<usize> = function
            .direct
            .iter()
            .copied()
            .chain(function.calls.iter().flat_map(|key| resolver.all(key)))
            .filter(|&callee| callee != index)
            .collect();
        calls.sort_unstable();
        calls.dedup();
        functions.push(JsFunction {
            name: function.name.clone(),
            script: script_name(function.script),
            line: function.start.0,
            column: function.start.1,
            own,
            calls,
            accesses,
            statements: std::mem::take(&mut statements[index]),
        });
        extents.push((function.start, function.end));
    }

    let handlers = raw_handlers
        .into_iter()
        .map(|handler| {
            let function = match handler.function {
                collect::FnRef::Index(index) => Some(index),
                collect::FnRef::Key(key) => resolver.one(&key, handler.script),
                collect::FnRef::Unknown => None,
            };
            JsHandler {
                script: script_name(handler.script),
                line: handler.line,
                event_type: handler.event_type,
                target: handler.target,
                selector: handler.selector,
                function,
                via: handler.via,
            }
        })
        .collect();

    let mut graph = DiGraph::<(), ()>::with_capacity(functions.len(), 0);
    let nodes: Vec<_> = (0..functions.len()).map(|_| graph.add_node(())).collect();
    for (caller, function) in functions.iter().enumerate() {
        for &callee in &function.calls {
            graph.add_edge(nodes[caller], nodes[callee], ());
        }
    }
    let components = petgraph::algo::tarjan_scc(&graph);
    let mut scc_of = vec![0; functions.len()];
    let mut scc_members = Vec::with_capacity(components.len());
    for (scc, component) in components.iter().enumerate() {
        for node in component {
            scc_of[node.index()] = scc;
        }
        scc_members.push(
            component
                .iter()
                .map(|node| node.index())
                .collect::<Vec<_>>(),
        );
    }
    let scc_callees = scc_members
        .iter()
        .enumerate()
        .map(|(scc, members)| {
            let mut callees: Vec<usize> = members
                .iter()
                .flat_map(|&member| functions[member].calls.iter().map(|&c| scc_of[c]))
                .filter(|&callee| callee != scc)
                .collect();
            callees.sort_unstable();
            callees.dedup();
            callees
        })
        .collect();
    let closure = (0..scc_members.len()).map(|_| OnceLock::new()).collect();

    JsAnalysis {
        errors,
        functions,
        handlers,
        top_levels,
        extents,
        scc_of,
        scc_members,
        scc_callees,
        closure,
    }
}

/// Method names of the JavaScript and DOM built-ins that an application method of the
/// same name must not capture when the receiver's owner is unknown.
const BUILTIN_METHODS: &[&str] = &[
    "push",
    "pop",
    "shift",
    "unshift",
    "splice",
    "slice",
    "concat",
    "join",
    "map",
    "filter",
    "forEach",
    "reduce",
    "reduceRight",
    "some",
    "every",
    "find",
    "findIndex",
    "indexOf",
    "lastIndexOf",
    "includes",
    "sort",
    "reverse",
    "fill",
    "keys",
    "values",
    "entries",
    "call",
    "apply",
    "bind",
    "toString",
    "valueOf",
    "hasOwnProperty",
    "get",
    "set",
    "has",
    "add",
    "delete",
    "clear",
    "then",
    "catch",
    "finally",
    "trim",
    "split",
    "replace",
    "toLowerCase",
    "toUpperCase",
    "substring",
    "substr",
    "charAt",
    "charCodeAt",
    "match",
    "test",
    "exec",
    "addEventListener",
    "removeEventListener",
    "preventDefault",
    "stopPropagation",
    "querySelector",
    "querySelectorAll",
    "getElementById",
    "getAttribute",
    "setAttribute",
    "removeAttribute",
    "appendChild",
    "removeChild",
    "insertBefore",
    "createElement",
    "closest",
    "matches",
    "contains",
    "focus",
    "blur",
    "log",
    "error",
    "warn",
    "info",
    "parse",
    "stringify",
    "toFixed",
    "getItem",
    "setItem",
    "removeItem",
    "length",
    "on",
    "off",
    "trigger",
];

struct Resolver<'r> {
    by_key: HashMap<&'r str, Vec<usize>>,
    by_method: HashMap<&'r str, Vec<usize>>,
    app_names: HashSet<&'r str>,
    script_of: Vec<usize>,
}

impl Resolver<'_> {
    /// Every application function a call may reach.
    fn all(&self, key: &collect::CallKey) -> Vec<usize> {
        match key {
            collect::CallKey::Name(name) => {
                self.by_key.get(name.as_str()).cloned().unwrap_or_default()
            }
            collect::CallKey::Member {
                qualifier,
                method,
                fallback,
            } => {
                if let Some(qualifier) = qualifier {
                    let exact = format!("{qualifier}.{method}");
                    if let Some(found) = self.by_key.get(exact.as_str()) {
                        return found.clone();
                    }
                }
                let allowed = match fallback {
                    collect::Fallback::Always => true,
                    collect::Fallback::IfAppRoot(root) => self.app_names.contains(root.as_str()),
                    collect::Fallback::Never => false,
                };
                if !allowed || BUILTIN_METHODS.contains(&method.as_str()) {
                    return Vec::new();
                }
                self.by_method
                    .get(method.as_str())
                    .cloned()
                    .unwrap_or_default()
            }
        }
    }

    /// The one function a handler reference names: an exact match, preferring one in the
    /// registering script, or else the only method of that name.
    fn one(&self, key: &collect::CallKey, script: usize) -> Option<usize> {
        let exact = match key {
            collect::CallKey::Name(name) => self.by_key.get(name.as_str()).cloned(),
            collect::CallKey::Member {
                qualifier: Some(qualifier),
                method,
                ..
            } => self
                .by_key
                .get(format!("{qualifier}.{method}").as_str())
                .cloned(),
            collect::CallKey::Member { .. } => None,
        };
        if let Some(exact) = exact {
            return exact
                .iter()
                .copied()
                .find(|&f| self.script_of[f] == script)
                .or_else(|| exact.first().copied());
        }
        match self.all(key).as_slice() {
            [only] => Some(*only),
            _ => None,
        }
    }
}
