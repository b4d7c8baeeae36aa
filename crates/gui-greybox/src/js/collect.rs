//! One walk over a script's syntax tree: functions with their own reads, writes, call
//! sites and statements, and handler registrations. Names are resolved later, across all
//! scripts, in `finish` of the parent module.

use std::collections::{HashMap, HashSet};

use oxc_allocator::Allocator;
use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};
use oxc_parser::Parser;
use oxc_span::{GetSpan, SourceType, Span};

use super::statements::{JsStatement, Lister, registration_names};
use super::{JsConfig, Script, ScriptError};

/// Everything collected from the scripts read so far. Function indices are global.
#[derive(Default)]
pub(super) struct Output {
    pub functions: Vec<RawFunction>,
    pub handlers: Vec<RawHandler>,
    /// Names declared at the top level of any script, of any kind.
    pub top_level_names: HashSet<String>,
    /// Names that are application variables: top-level `var`/`let`/`const` bindings that
    /// do not hold functions, closure variables, and names assigned as globals.
    pub variables: HashSet<String>,
    /// The top-level statements of each script that parsed, by script index.
    pub tops: Vec<(usize, Vec<JsStatement>)>,
}

pub(super) struct RawFunction {
    pub name: Option<String>,
    /// Names under which calls find this function (`f`, `obj.m`, `Foo.m`, `Foo`).
    pub keys: Vec<String>,
    /// The method name, when this is a method, for calls whose receiver is unknown.
    pub method: Option<String>,
    pub script: usize,
    /// (line, UTF-16 column), 0-based; `end` is exclusive.
    pub start: (u32, u32),
    pub end: (u32, u32),
    pub calls: Vec<CallKey>,
    /// Function literals that run on behalf of this one (callbacks, immediate calls).
    pub direct: Vec<usize>,
    /// Writes of built-in mutating methods (`push`, ..), kept only when the call reaches no
    /// application function.
    pub mutations: Vec<(CallKey, Vec<String>, u32)>,
    /// Every read and write of the function's own body, where it happens (the
    /// function's own reads and writes are derived from them in `finish`).
    pub accesses: Vec<super::Access>,
    /// The statements of the function's body, listed when the walk leaves it.
    pub statements: Vec<JsStatement>,
}

/// A call site, to be resolved once every script's functions are known.
#[derive(Debug, Clone)]
pub(super) enum CallKey {
    /// `f()`.
    Name(String),
    /// `receiver.method()`, with the receiver's path as qualifier when it has one.
    Member {
        qualifier: Option<String>,
        method: String,
        fallback: Fallback,
    },
}

/// Whether a method call with no exact match may reach every method of its name.
#[derive(Debug, Clone)]
pub(super) enum Fallback {
    Always,
    /// Only when this root names something of the application (not `Math`, `console`).
    IfAppRoot(String),
    Never,
}

pub(super) enum FnRef {
    Index(usize),
    Key(CallKey),
    Unknown,
}

pub(super) struct RawHandler {
    pub script: usize,
    pub line: u32,
    pub event_type: String,
    pub target: String,
    pub selector: Option<String>,
    pub function: FnRef,
    pub via: String,
}

/// Parses one script and adds what it finds to `out`.
pub(super) fn collect_script(
    index: usize,
    script: &Script,
    config: &JsConfig,
    out: &mut Output,
) -> Result<(), ScriptError> {
    let allocator = Allocator::default();
    let source = script.source.as_str();
    let parsed = Parser::new(&allocator, source, SourceType::unambiguous()).parse();
    let lines = LineIndex::new(source);
    if parsed.panicked || parsed.diagnostics.has_errors() {
        let first = parsed.diagnostics.errors().next();
        let offset = first
            .and_then(|d| d.labels.first().map(|l| l.offset()))
            .unwrap_or(0);
        let (line, column) = lines.position(source, offset);
        return Err(ScriptError {
            script: script.name.clone(),
            line,
            column,
            message: first.map_or_else(|| "parse failed".to_string(), |d| d.message.to_string()),
        });
    }
    let registrations = registration_names(config);
    let mut collector = Collector {
        script: index,
        source,
        lines,
        config,
        registrations: &registrations,
        out,
        frames: Vec::new(),
        naming: None,
        object_owner: None,
        inherit_this: None,
        fn_by_start: HashMap::new(),
        callback_starts: HashSet::new(),
        at: 0,
    };
    collector.visit_program(&parsed.program);
    let top = collector.lister().body(&parsed.program.body);
    collector.out.tops.push((index, top));
    Ok(())
}

/// Byte offset to (line, UTF-16 column), counting line terminators as V8 does, so that
/// positions match what DevTools reports and what [`super::JsAnalysis::function_at`]
/// expects.
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(source: &str) -> Self {
        let bytes = source.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i as u32 + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i as u32 + 1),
                0xE2 if bytes.get(i + 1) == Some(&0x80)
                    && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)) =>
                {
                    starts.push(i as u32 + 3);
                    i += 2;
                }
                _ => {}
            }
            i += 1;
        }
        LineIndex { starts }
    }

    /// The 0-based line and UTF-16 column of byte `offset` of `source`.
    pub fn position(&self, source: &str, offset: u32) -> (u32, u32) {
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.starts[line] as usize;
        let column = source
            .get(start..offset as usize)
            .map_or(0, |text| text.encode_utf16().count());
        (line as u32, column as u32)
    }
}

type Path = Vec<String>;

/// Where a path's root comes from; decides whether an unknown method may be looked up by
/// name.
#[derive(Debug, Clone)]
enum Root {
    /// An alias, a closure variable, a top-level binding of this script.
    App,
    /// `this`, recorded under its owner.
    This,
    /// A name not declared in this script: an application global from another script, or a
    /// library such as `Math`.
    Global(String),
    /// A DOM element.
    Dom,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Local {
    Param,
    Var,
    /// A function or class declared in this scope, or a variable initialised with one.
    Function,
}

#[derive(Debug, Clone)]
struct Alias {
    path: Option<(Path, Root)>,
    jquery: bool,
}

struct Frame<'a> {
    /// `None` for a script's top level, whose code belongs to no event handler.
    function: Option<usize>,
    locals: HashMap<&'a str, Local>,
    aliases: HashMap<&'a str, Alias>,
    /// The owner `this.x` is recorded under; `None` keeps `this`.
    this_owner: Option<String>,
    /// A callback or immediately called literal: it runs on behalf of the enclosing
    /// function, whose variables therefore stay locals inside it.
    runs_in_parent: bool,
}

/// How an identifier resolves from the innermost function.
enum Resolved {
    /// A parameter or variable of the current function (or of the function a callback
    /// runs for) that aliases nothing, with the depth of the frame declaring it.
    Local(Local, usize),
    /// An alias, and the depth of its frame when that frame is local in the above sense.
    Alias(Alias, Option<usize>),
    /// A function declared in some enclosing scope.
    FunctionName,
    /// A variable of an enclosing function.
    Closure,
    /// A top-level binding of this script.
    TopLevel,
    /// Declared nowhere in this script.
    Global,
}

/// Naming that the syntactic context gives a function, class or object literal about to
/// be visited, matched by the start of its span.
#[derive(Debug, Clone, Default)]
struct Naming {
    name: Option<String>,
    keys: Vec<String>,
    method: Option<String>,
    /// `Some(None)` forces the plain `this`; `None` leaves the default.
    this_owner: Option<Option<String>>,
    /// Start the function's extent here (a method's key) instead of at the function.
    start: Option<u32>,
}

struct Registration {
    via: String,
    types: Vec<String>,
    target: String,
    selector: Option<String>,
    function_arg: usize,
}

struct Collector<'a, 'o> {
    script: usize,
    source: &'a str,
    lines: LineIndex,
    config: &'o JsConfig,
    /// Names of calls whose function arguments are handlers, not callees (statements).
    registrations: &'o HashSet<String>,
    out: &'o mut Output,
    frames: Vec<Frame<'a>>,
    naming: Option<(u32, Naming)>,
    /// An object literal about to be visited and the path it is bound to.
    object_owner: Option<(u32, String)>,
    /// A function literal about to be visited that keeps the surrounding `this`
    /// (`function () {..}.bind(this)`).
    inherit_this: Option<u32>,
    fn_by_start: HashMap<u32, usize>,
    /// Starts of function literals about to be visited that run on behalf of the current
    /// function.
    callback_starts: HashSet<u32>,
    /// Byte offset of the innermost expression being visited: where the reads and writes
    /// recorded now happen.
    at: u32,
}

const MUTATORS: &[&str] = &[
    "push",
    "pop",
    "shift",
    "unshift",
    "splice",
    "sort",
    "reverse",
    "fill",
    "copyWithin",
    "set",
    "add",
    "delete",
    "clear",
    "remove",
    "toggle",
    "setItem",
    "removeItem",
    "setAttribute",
    "removeAttribute",
];

/// jQuery methods that take the event type as an argument rather than being named after it.
const JQUERY_TYPED: &[&str] = &["on", "one", "bind", "live", "delegate"];

fn string_value<'a>(expression: &Expression<'a>) -> Option<&'a str> {
    match expression.without_parentheses() {
        Expression::StringLiteral(s) => Some(s.value.as_str()),
        Expression::TemplateLiteral(t) if t.expressions.is_empty() && t.quasis.len() == 1 => {
            t.quasis[0].value.cooked.as_ref().map(|c| c.as_str())
        }
        _ => None,
    }
}

fn argument_expression<'b, 'a>(
    arguments: &'b [Argument<'a>],
    i: usize,
) -> Option<&'b Expression<'a>> {
    arguments.get(i).and_then(Argument::as_expression)
}

fn is_function_literal(expression: &Expression<'_>) -> bool {
    matches!(
        expression.without_parentheses(),
        Expression::FunctionExpression(_) | Expression::ArrowFunctionExpression(_)
    )
}

/// Where the function literal of `function () {..}` or `function () {..}.bind(x)` starts.
/// Walks `expression` for a visitor of one scope: function and class literals inside it
/// are scopes of their own and are not entered.
pub(super) fn walk_outside_functions<'a, V: Visit<'a>>(
    visitor: &mut V,
    expression: &Expression<'a>,
) {
    match expression {
        Expression::FunctionExpression(_)
        | Expression::ArrowFunctionExpression(_)
        | Expression::ClassExpression(_) => {}
        _ => walk::walk_expression(visitor, expression),
    }
}

pub(super) fn literal_start(expression: &Expression<'_>) -> Option<u32> {
    match expression.without_parentheses() {
        e @ (Expression::FunctionExpression(_) | Expression::ArrowFunctionExpression(_)) => {
            Some(e.span().start)
        }
        Expression::CallExpression(call) => match call.callee.without_parentheses() {
            Expression::StaticMemberExpression(m) if m.property.name == "bind" => {
                literal_start(&m.object).filter(|_| is_function_literal(&m.object))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Could this argument be a handler: a function literal, a name, a member, or a
/// `.bind(..)` of one of those.
fn is_function_like(expression: &Expression<'_>) -> bool {
    match expression.without_parentheses() {
        Expression::FunctionExpression(_)
        | Expression::ArrowFunctionExpression(_)
        | Expression::Identifier(_)
        | Expression::StaticMemberExpression(_) => true,
        Expression::CallExpression(call) => matches!(
            call.callee.without_parentheses(),
            Expression::StaticMemberExpression(m) if m.property.name == "bind"
        ),
        _ => false,
    }
}

/// `a.b.c` joined; `[]` segments attach without a dot; `prototype` is dropped so that
/// `Foo.prototype.m` and `Foo.m` are one key.
fn key_of(path: &[String]) -> String {
    join(path.iter().filter(|s| *s != "prototype"))
}

fn join<'s>(segments: impl Iterator<Item = &'s String>) -> String {
    let mut out = String::new();
    for segment in segments {
        if !out.is_empty() && segment != "[]" {
            out.push('.');
        }
        out.push_str(segment);
    }
    out
}

fn starts_upper(name: &str) -> bool {
    name.chars().next().is_some_and(char::is_uppercase)
}

/// The element root of a lookup call with a literal argument, e.g. `byId('x')` → `#x`.
fn dom_root(call: &CallExpression<'_>) -> Option<String> {
    let name = match call.callee.without_parentheses() {
        Expression::Identifier(id) => id.name.as_str(),
        Expression::StaticMemberExpression(m) => m.property.name.as_str(),
        _ => return None,
    };
    let literal = string_value(argument_expression(&call.arguments, 0)?)?.trim();
    let id_like = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_' || c == ':' || c == '.')
    };
    match name {
        "getElementById" | "byId" | "$id" => {
            let id = literal.strip_prefix('#').unwrap_or(literal);
            Some(format!("#{id}"))
        }
        "querySelector" | "querySelectorAll" | "$" | "jQuery" | "qs" | "qsa" | "$$" => {
            match literal.strip_prefix('#') {
                Some(id) if id_like(id) && !id.contains(['.', ':']) => Some(format!("#{id}")),
                _ if literal.starts_with('<') => None,
                _ => Some(format!("$({literal})")),
            }
        }
        "getElementsByClassName" => Some(format!("$(.{literal})")),
        "getElementsByTagName" => Some(format!("$({literal})")),
        "getElementsByName" => Some(format!("$([name={literal}])")),
        _ => None,
    }
}

/// A path that is just `this` (as its owner) or an element: passing `this` around or calling
/// `self.m()` is not a read of a field.
fn is_lone_owner(path: &[String], root: &Root) -> bool {
    path.len() == 1 && matches!(root, Root::This | Root::Dom)
}

/// The selector a handler's target stands for, from its root.
fn selector_of_root(root: &str) -> Option<String> {
    if root.starts_with('#') {
        Some(root.to_string())
    } else {
        root.strip_prefix("$(")
            .and_then(|s| s.strip_suffix(')'))
            .map(str::to_string)
    }
}

/// The access paths a use of `path` touches: a lone name itself, else every prefix of
/// two parts or more (`a.b.c` touches `a.b` and `a.b.c`; `a` alone is the owner).
fn prefixes(path: &[String]) -> Vec<String> {
    if path.len() == 1 {
        vec![path[0].clone()]
    } else {
        (2..=path.len()).map(|n| join(path[..n].iter())).collect()
    }
}

impl<'a> Collector<'a, '_> {
    /// The work of `visit_expression`, which first notes where the expression is.
    fn expression(&mut self, expression: &Expression<'a>) {
        match expression {
            Expression::FunctionExpression(function) => self.analyse_function(function, None),
            Expression::ArrowFunctionExpression(arrow) => self.analyse_arrow(arrow, None),
            Expression::ClassExpression(class) => self.analyse_class(class),
            Expression::Identifier(id) => match self.resolve(id.name.as_str()) {
                Resolved::Alias(
                    Alias {
                        path: Some((path, root)),
                        ..
                    },
                    _,
                ) if !is_lone_owner(&path, &root) => self.record_read(&path),
                Resolved::Closure => {
                    self.out.variables.insert(id.name.to_string());
                    self.record_read(&[id.name.to_string()]);
                }
                Resolved::TopLevel | Resolved::Global => self.record_read(&[id.name.to_string()]),
                _ => {}
            },
            Expression::StaticMemberExpression(_)
            | Expression::ComputedMemberExpression(_)
            | Expression::PrivateFieldExpression(_) => match self.path_of(expression) {
                Some((path, _)) => {
                    self.record_read(&path);
                    self.visit_path_parts(expression);
                }
                None => walk::walk_expression(self, expression),
            },
            Expression::ChainExpression(chain) => match &chain.expression {
                ChainElement::CallExpression(call) => self.visit_call_expression(call),
                _ => match self.path_of(expression) {
                    Some((path, _)) => {
                        self.record_read(&path);
                        self.visit_path_parts(expression);
                    }
                    None => walk::walk_expression(self, expression),
                },
            },
            _ => walk::walk_expression(self, expression),
        }
    }

    /// Source text of a node, on one line.
    fn text(&self, span: Span) -> String {
        let text = self
            .source
            .get(span.start as usize..span.end as usize)
            .unwrap_or_default();
        if text.contains(['\n', '\r']) {
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        } else {
            text.to_string()
        }
    }

    fn current(&mut self) -> Option<&mut RawFunction> {
        let index = self.frames.last()?.function?;
        self.out.functions.get_mut(index)
    }

    fn record_read(&mut self, path: &[String]) {
        let offset = self.at;
        let Some(function) = self.current() else {
            return;
        };
        for read in prefixes(path) {
            function.accesses.push(super::Access {
                offset,
                path: read,
                write: false,
            });
        }
    }

    fn record_write(&mut self, path: &[String]) {
        if path.len() == 1 {
            self.out.variables.insert(path[0].clone());
        }
        let offset = self.at;
        let Some(function) = self.current() else {
            return;
        };
        // Only the assigned path is written; the objects on the way to it are read, as
        // `GETFIELD mainWindow` and then `PUTFIELD text` in Listing 2.
        for n in 2..path.len() {
            function.accesses.push(super::Access {
                offset,
                path: join(path[..n].iter()),
                write: false,
            });
        }
        function.accesses.push(super::Access {
            offset,
            path: join(path.iter()),
            write: true,
        });
    }

    /// `path.push(x)` and the like write `path`, unless the call reaches an application
    /// method, whose own effects are then followed instead.
    fn record_mutation(&mut self, path: &[String], key: &CallKey) {
        let writes = prefixes(path);
        let at = self.at;
        if let Some(function) = self.current() {
            function.mutations.push((key.clone(), writes, at));
        }
    }

    fn record_call(&mut self, key: CallKey) {
        if let Some(function) = self.current() {
            function.calls.push(key);
        }
    }

    fn record_direct(&mut self, callee_start: u32) {
        if let Some(&callee) = self.fn_by_start.get(&callee_start)
            && let Some(function) = self.current()
            && !function.direct.contains(&callee)
        {
            function.direct.push(callee);
        }
    }

    fn resolve(&self, name: &str) -> Resolved {
        // Frames from `local_from` on are the current function and the functions it runs
        // on behalf of.
        let mut local_from = self.frames.len().saturating_sub(1);
        while local_from > 0 && self.frames[local_from].runs_in_parent {
            local_from -= 1;
        }
        for (depth, frame) in self.frames.iter().enumerate().rev() {
            let Some(&local) = frame.locals.get(name) else {
                continue;
            };
            if frame.function.is_none() {
                return if local == Local::Function {
                    Resolved::FunctionName
                } else {
                    Resolved::TopLevel
                };
            }
            let is_local = depth >= local_from;
            if let Some(alias) = frame.aliases.get(name) {
                return Resolved::Alias(alias.clone(), is_local.then_some(depth));
            }
            return match local {
                Local::Function => Resolved::FunctionName,
                _ if is_local => Resolved::Local(local, depth),
                _ => Resolved::Closure,
            };
        }
        Resolved::Global
    }

    fn this_root(&self) -> Option<(Path, Root)> {
        let frame = self.frames.last()?;
        frame.function?;
        let owner = frame.this_owner.clone().unwrap_or_else(|| "this".into());
        Some((vec![owner], Root::This))
    }

    /// The access path an expression denotes, if it is one.
    fn path_of(&self, expression: &Expression<'a>) -> Option<(Path, Root)> {
        match expression.without_parentheses() {
            Expression::Identifier(id) => {
                let name = id.name.as_str();
                match self.resolve(name) {
                    Resolved::Local(..) => None,
                    Resolved::Alias(alias, _) => alias.path,
                    Resolved::FunctionName | Resolved::Closure | Resolved::TopLevel => {
                        Some((vec![name.to_string()], Root::App))
                    }
                    Resolved::Global if matches!(name, "undefined" | "arguments") => None,
                    Resolved::Global => Some((vec![name.to_string()], Root::Global(name.into()))),
                }
            }
            Expression::ThisExpression(_) => self.this_root(),
            Expression::StaticMemberExpression(m) => {
                let (mut path, root) = self.path_of(&m.object)?;
                path.push(m.property.name.to_string());
                Some((path, root))
            }
            Expression::ComputedMemberExpression(m) => {
                let (mut path, root) = self.path_of(&m.object)?;
                path.push(string_value(&m.expression).map_or_else(|| "[]".into(), str::to_string));
                Some((path, root))
            }
            Expression::PrivateFieldExpression(m) => {
                let (mut path, root) = self.path_of(&m.object)?;
                path.push(format!("#{}", m.field.name));
                Some((path, root))
            }
            Expression::ChainExpression(chain) => chain
                .expression
                .as_member_expression()
                .and_then(|m| self.path_of(m.as_expression())),
            Expression::CallExpression(call) => dom_root(call).map(|root| (vec![root], Root::Dom)),
            _ => None,
        }
    }

    /// Visits the parts of a path expression that are not the path: computed indices and
    /// the lookup call at its root.
    fn visit_path_parts(&mut self, expression: &Expression<'a>) {
        match expression.without_parentheses() {
            Expression::StaticMemberExpression(m) => self.visit_path_parts(&m.object),
            Expression::PrivateFieldExpression(m) => self.visit_path_parts(&m.object),
            Expression::ComputedMemberExpression(m) => {
                self.visit_expression(&m.expression);
                self.visit_path_parts(&m.object);
            }
            Expression::ChainExpression(chain) => {
                if let Some(m) = chain.expression.as_member_expression() {
                    self.visit_path_parts(m.as_expression());
                }
            }
            Expression::CallExpression(call) => self.visit_call_expression(call),
            _ => {}
        }
    }

    fn is_jquery_like(&self, expression: &Expression<'a>) -> bool {
        match expression.without_parentheses() {
            Expression::CallExpression(call) => match call.callee.without_parentheses() {
                Expression::Identifier(id) => matches!(id.name.as_str(), "$" | "jQuery"),
                Expression::StaticMemberExpression(m) => self.is_jquery_like(&m.object),
                _ => false,
            },
            Expression::Identifier(id) => {
                (id.name.len() > 1 && id.name.starts_with('$'))
                    || matches!(self.resolve(id.name.as_str()), Resolved::Alias(a, _) if a.jquery)
            }
            Expression::StaticMemberExpression(m) => {
                m.property.name.len() > 1 && m.property.name.starts_with('$')
            }
            _ => false,
        }
    }

    fn is_param(&self, expression: &Expression<'a>) -> bool {
        match expression.without_parentheses() {
            Expression::Identifier(id) => {
                matches!(
                    self.resolve(id.name.as_str()),
                    Resolved::Local(Local::Param, _)
                )
            }
            _ => false,
        }
    }

    /// Lists statements of this script, with function literals known by their start.
    fn lister(&self) -> Lister<'_> {
        Lister {
            source: self.source,
            registrations: self.registrations,
            functions: &self.fn_by_start,
        }
    }

    // ----- functions -----

    fn take_naming(&mut self, start: u32) -> Option<Naming> {
        match &self.naming {
            Some((at, _)) if *at == start => self.naming.take().map(|(_, n)| n),
            _ => None,
        }
    }

    fn set_naming(&mut self, expression: &Expression<'a>, naming: Naming) {
        match expression.without_parentheses() {
            e @ (Expression::FunctionExpression(_)
            | Expression::ArrowFunctionExpression(_)
            | Expression::ClassExpression(_)) => self.naming = Some((e.span().start, naming)),
            Expression::ObjectExpression(o) => {
                if let Some(key) = naming.keys.first() {
                    self.object_owner = Some((o.span.start, key.clone()));
                }
            }
            _ => {}
        }
    }

    /// Names a function by the path it is assigned to: `obj.m = function` is `obj.m`, with
    /// `this` owned by `obj`; `Foo.prototype.m` is `Foo.m`, owned by `Foo`.
    fn naming_for_path(path: &[String]) -> Naming {
        let key = key_of(path);
        let owner = (path.len() > 1).then(|| key_of(&path[..path.len() - 1]));
        let method = (path.len() > 1).then(|| path[path.len() - 1].clone());
        let this_owner = match owner {
            Some(owner) => Some(Some(owner)),
            None if starts_upper(&key) => Some(Some(key.clone())),
            None => None,
        };
        Naming {
            name: Some(key.clone()),
            keys: vec![key],
            method,
            this_owner,
            start: None,
        }
    }

    fn new_function(&mut self, span: Span, naming: Naming, own_name: Option<&str>) -> usize {
        let start_offset = naming.start.unwrap_or(span.start);
        let name = naming.name.or_else(|| own_name.map(str::to_string));
        let start = self.lines.position(self.source, start_offset);
        let end = self.lines.position(self.source, span.end);
        let index = self.out.functions.len();
        self.out.functions.push(RawFunction {
            name,
            keys: naming.keys,
            method: naming.method,
            script: self.script,
            start,
            end,
            calls: Vec::new(),
            direct: Vec::new(),
            mutations: Vec::new(),
            accesses: Vec::new(),
            statements: Vec::new(),
        });
        self.fn_by_start.insert(span.start, index);
        index
    }

    fn enter(
        &mut self,
        function: usize,
        start: u32,
        this_owner: Option<String>,
        locals: HashMap<&'a str, Local>,
    ) {
        self.frames.push(Frame {
            function: Some(function),
            locals,
            aliases: HashMap::new(),
            this_owner,
            runs_in_parent: self.callback_starts.contains(&start),
        });
    }

    fn locals_of(
        params: &FormalParameters<'a>,
        body: Option<&FunctionBody<'a>>,
    ) -> HashMap<&'a str, Local> {
        let mut decls = Declarations {
            locals: HashMap::new(),
            kind: Local::Param,
        };
        decls.visit_formal_parameters(params);
        decls.kind = Local::Var;
        if let Some(body) = body {
            decls.visit_function_body(body);
        }
        decls.locals
    }

    fn analyse_function(&mut self, function: &Function<'a>, naming: Option<Naming>) {
        let naming = naming
            .or_else(|| self.take_naming(function.span.start))
            .unwrap_or_default();
        let own_name = function.id.as_ref().map(|id| id.name.as_str());
        let this_owner = match &naming.this_owner {
            Some(owner) => owner.clone(),
            None if self.inherit_this == Some(function.span.start) => {
                self.frames.last().and_then(|f| f.this_owner.clone())
            }
            None => naming
                .name
                .as_deref()
                .or(own_name)
                .filter(|n| starts_upper(n) && !n.contains('.'))
                .map(str::to_string),
        };
        let index = self.new_function(function.span, naming, own_name);
        let mut locals = Self::locals_of(&function.params, function.body.as_deref());
        locals.entry("arguments").or_insert(Local::Var);
        self.enter(index, function.span.start, this_owner, locals);
        self.visit_formal_parameters(&function.params);
        if let Some(body) = &function.body {
            self.visit_function_body(body);
            let statements = self.lister().body(&body.statements);
            self.out.functions[index].statements = statements;
        }
        self.frames.pop();
    }

    fn analyse_arrow(&mut self, arrow: &ArrowFunctionExpression<'a>, naming: Option<Naming>) {
        let naming = naming
            .or_else(|| self.take_naming(arrow.span.start))
            .unwrap_or_default();
        let this_owner = match &naming.this_owner {
            Some(owner) => owner.clone(),
            None => self.frames.last().and_then(|f| f.this_owner.clone()),
        };
        let index = self.new_function(arrow.span, naming, None);
        let body = match &arrow.body {
            ArrowFunctionBody::FunctionBody(body) => Some(&**body),
            _ => None,
        };
        let mut locals = Self::locals_of(&arrow.params, body);
        if let Some(expression) = arrow.body.as_expression() {
            let mut decls = Declarations {
                locals: HashMap::new(),
                kind: Local::Var,
            };
            decls.visit_expression(expression);
            locals.extend(decls.locals);
        }
        self.enter(index, arrow.span.start, this_owner, locals);
        self.visit_formal_parameters(&arrow.params);
        let statements = match body {
            Some(body) => {
                self.visit_function_body(body);
                self.lister().body(&body.statements)
            }
            None => match arrow.body.as_expression() {
                Some(expression) => {
                    self.visit_expression(expression);
                    vec![self.lister().expression(expression)]
                }
                None => Vec::new(),
            },
        };
        self.out.functions[index].statements = statements;
        self.frames.pop();
    }

    fn analyse_class(&mut self, class: &Class<'a>) {
        let naming = self.take_naming(class.span.start);
        let owner = class
            .id
            .as_ref()
            .map(|id| id.name.to_string())
            .or_else(|| naming.and_then(|n| n.keys.first().cloned()));
        if let Some(heritage) = &class.heritage {
            self.visit_expression(&heritage.expression);
        }
        for element in &class.body.body {
            match element {
                ClassElement::MethodDefinition(method) => {
                    if method.computed
                        && let Some(key) = method.key.as_expression()
                    {
                        self.visit_expression(key);
                    }
                    let name = method.key.static_name().map(|n| n.to_string());
                    let mut naming = Naming {
                        this_owner: Some(owner.clone()),
                        start: Some(method.span.start),
                        method: name.clone(),
                        ..Naming::default()
                    };
                    if let (Some(owner), Some(name)) = (&owner, &name) {
                        let key = format!("{owner}.{name}");
                        naming.name = Some(key.clone());
                        naming.keys.push(key);
                        if method.kind == MethodDefinitionKind::Constructor {
                            naming.keys.push(owner.clone());
                            naming.method = None;
                        }
                    } else {
                        naming.name = name;
                    }
                    self.analyse_function(&method.value, Some(naming));
                }
                ClassElement::PropertyDefinition(property) => {
                    let Some(value) = &property.value else {
                        continue;
                    };
                    if let (Some(owner), Some(name)) = (&owner, property.key.static_name())
                        && is_function_literal(value)
                    {
                        let key = format!("{owner}.{name}");
                        self.set_naming(
                            value,
                            Naming {
                                name: Some(key.clone()),
                                keys: vec![key],
                                method: Some(name.to_string()),
                                this_owner: Some(Some(owner.clone())),
                                start: Some(property.span.start),
                            },
                        );
                    }
                    self.visit_expression(value);
                }
                ClassElement::StaticBlock(block) => self.visit_statements(&block.body),
                _ => {}
            }
        }
    }

    // ----- assignments -----

    fn assign_identifier(&mut self, name: &'a str, compound: bool, value: Option<&Expression<'a>>) {
        match self.resolve(name) {
            Resolved::Local(_, depth) | Resolved::Alias(_, Some(depth)) => {
                if compound {
                    return;
                }
                let alias = value.map(|v| Alias {
                    path: self.path_of(v),
                    jquery: self.is_jquery_like(v),
                });
                if let Some(frame) = self.frames.get_mut(depth) {
                    match alias {
                        Some(alias) if alias.path.is_some() || alias.jquery => {
                            frame.aliases.insert(name, alias);
                        }
                        _ => {
                            frame.aliases.remove(name);
                        }
                    }
                }
            }
            Resolved::FunctionName => {}
            _ => {
                let path = vec![name.to_string()];
                if compound {
                    self.record_read(&path);
                }
                self.record_write(&path);
            }
        }
    }

    fn assign_member(&mut self, member: &MemberExpression<'a>, compound: bool) {
        let expression = member.as_expression();
        match self.path_of(expression) {
            Some((path, _)) => {
                if compound {
                    self.record_read(&path);
                }
                self.record_write(&path);
                self.visit_path_parts(expression);
            }
            None => {
                self.visit_expression(member.object());
                if let MemberExpression::ComputedMemberExpression(m) = member {
                    self.visit_expression(&m.expression);
                }
            }
        }
    }

    fn assign_simple(&mut self, target: &SimpleAssignmentTarget<'a>, compound: bool) {
        match target {
            SimpleAssignmentTarget::AssignmentTargetIdentifier(id) => {
                self.assign_identifier(id.name.as_str(), compound, None);
            }
            _ => {
                if let Some(member) = target.as_member_expression() {
                    self.assign_member(member, compound);
                }
            }
        }
    }

    fn assign_target(&mut self, target: &AssignmentTarget<'a>) {
        if let Some(simple) = target.as_simple_assignment_target() {
            self.assign_simple(simple, false);
            return;
        }
        match target {
            AssignmentTarget::ArrayAssignmentTarget(array) => {
                for element in array.elements.iter().flatten() {
                    self.assign_maybe_default(element);
                }
                if let Some(rest) = &array.rest {
                    self.assign_target(&rest.target);
                }
            }
            AssignmentTarget::ObjectAssignmentTarget(object) => {
                for property in &object.properties {
                    match property {
                        AssignmentTargetProperty::AssignmentTargetPropertyIdentifier(p) => {
                            if let Some(init) = &p.init {
                                self.visit_expression(init);
                            }
                            self.assign_identifier(p.binding.name.as_str(), false, None);
                        }
                        AssignmentTargetProperty::AssignmentTargetPropertyProperty(p) => {
                            if p.computed
                                && let Some(key) = p.name.as_expression()
                            {
                                self.visit_expression(key);
                            }
                            self.assign_maybe_default(&p.binding);
                        }
                    }
                }
                if let Some(rest) = &object.rest {
                    self.assign_target(&rest.target);
                }
            }
            _ => {}
        }
    }

    fn assign_maybe_default(&mut self, target: &AssignmentTargetMaybeDefault<'a>) {
        match target {
            AssignmentTargetMaybeDefault::AssignmentTargetWithDefault(d) => {
                self.visit_expression(&d.init);
                self.assign_target(&d.binding);
            }
            _ => {
                if let Some(target) = target.as_assignment_target() {
                    self.assign_target(target);
                }
            }
        }
    }

    // ----- calls and registrations -----

    fn handler_ref(&self, expression: &Expression<'a>) -> FnRef {
        match expression.without_parentheses() {
            e @ (Expression::FunctionExpression(_) | Expression::ArrowFunctionExpression(_)) => {
                self.fn_by_start
                    .get(&e.span().start)
                    .map_or(FnRef::Unknown, |&i| FnRef::Index(i))
            }
            Expression::CallExpression(call) => match call.callee.without_parentheses() {
                Expression::StaticMemberExpression(m) if m.property.name == "bind" => {
                    self.handler_ref(&m.object)
                }
                _ => FnRef::Unknown,
            },
            Expression::Identifier(id) => match self.resolve(id.name.as_str()) {
                Resolved::Local(..) | Resolved::Alias(..) => FnRef::Unknown,
                _ => FnRef::Key(CallKey::Name(id.name.to_string())),
            },
            Expression::StaticMemberExpression(m) => {
                FnRef::Key(self.method_key(&m.object, m.property.name.as_str()))
            }
            _ => FnRef::Unknown,
        }
    }

    fn method_key(&self, receiver: &Expression<'a>, method: &str) -> CallKey {
        let (qualifier, fallback) = match self.path_of(receiver) {
            Some((path, Root::App | Root::This)) => (Some(key_of(&path)), Fallback::Always),
            Some((path, Root::Global(root))) => (Some(key_of(&path)), Fallback::IfAppRoot(root)),
            Some((_, Root::Dom)) => (None, Fallback::Never),
            None if self.is_jquery_like(receiver) => (None, Fallback::Never),
            None => (None, Fallback::Always),
        };
        CallKey::Member {
            qualifier,
            method: method.to_string(),
            fallback,
        }
    }

    fn target_selector(&self, target: &Expression<'a>) -> Option<String> {
        match self.path_of(target) {
            // `byId('x')`, or `items[i]` of `items = querySelectorAll('.item')`.
            Some((path, Root::Dom)) if path[1..].iter().all(|s| s == "[]") => {
                selector_of_root(&path[0])
            }
            _ => None,
        }
    }

    fn event_types(literal: &str, jquery: bool) -> Vec<String> {
        if !jquery {
            return vec![literal.to_string()];
        }
        literal
            .split_whitespace()
            .map(|t| t.split('.').next().unwrap_or(t).to_string())
            .filter(|t| !t.is_empty())
            .collect()
    }

    /// Recognises a registration before its arguments are visited.
    fn registration(&self, call: &CallExpression<'a>) -> Option<Registration> {
        let args = &call.arguments;
        let arg = |i| argument_expression(args, i);
        let registration = match call.callee.without_parentheses() {
            Expression::StaticMemberExpression(m) => {
                let method = m.property.name.as_str();
                let receiver = &m.object;
                if method == "addEventListener" || method == "attachEvent" {
                    let literal = string_value(arg(0)?)?;
                    let event = if method == "attachEvent" {
                        literal.strip_prefix("on").unwrap_or(literal)
                    } else {
                        literal
                    };
                    Registration {
                        via: "addEventListener".into(),
                        types: vec![event.to_string()],
                        target: self.text(receiver.span()),
                        selector: self.target_selector(receiver),
                        function_arg: 1,
                    }
                } else if !self.config.helper_names.iter().any(|h| h == method) {
                    return None;
                } else if method.starts_with('$') {
                    self.helper_registration(call, method)?
                } else if self.is_jquery_like(receiver) {
                    let last = args.len().checked_sub(1)?;
                    if !is_function_like(arg(last)?) {
                        return None;
                    }
                    let (types, selector) = if method == "delegate" {
                        (string_value(arg(1)?)?, arg(0).and_then(string_value))
                    } else if JQUERY_TYPED.contains(&method) {
                        let selector = if last > 1 {
                            arg(1).and_then(string_value)
                        } else {
                            None
                        };
                        (string_value(arg(0)?)?, selector)
                    } else {
                        (method, None)
                    };
                    Registration {
                        via: "jquery".into(),
                        types: Self::event_types(types, true),
                        target: self.text(receiver.span()),
                        selector: selector
                            .map(str::to_string)
                            .or_else(|| self.target_selector(receiver)),
                        function_arg: last,
                    }
                } else {
                    return None;
                }
            }
            Expression::Identifier(id)
                if self
                    .config
                    .helper_names
                    .iter()
                    .any(|h| h == id.name.as_str()) =>
            {
                self.helper_registration(call, id.name.as_str())?
            }
            _ => return None,
        };
        // A registration that forwards a parameter is the body of a helper.
        if self.is_param(arg(registration.function_arg)?) {
            return None;
        }
        Some(registration)
    }

    /// `helper(target, 'type', fn)`, `helper(target, 'selector', 'type', fn)`, or
    /// `helper('selector', 'type', fn)` for helpers that delegate from the document
    /// (todomvc's `$live`).
    fn helper_registration(&self, call: &CallExpression<'a>, name: &str) -> Option<Registration> {
        let args = &call.arguments;
        let arg = |i| argument_expression(args, i);
        let target = arg(0)?;
        let literal = |i| arg(i).and_then(string_value);
        let (selector, event, rest) = match (literal(0), literal(1), literal(2)) {
            (Some(selector), Some(event), _) => (Some(selector.to_string()), event, 2),
            (Some(_), None, _) => return None,
            (None, Some(selector), Some(event)) => (Some(selector.to_string()), event, 3),
            (None, Some(event), None) => (self.target_selector(target), event, 2),
            (None, None, _) => return None,
        };
        let function_arg = (rest..args.len()).find(|&i| arg(i).is_some_and(is_function_like))?;
        Some(Registration {
            via: format!("helper:{name}"),
            types: Self::event_types(event, false),
            target: self.text(target.span()),
            selector,
            function_arg,
        })
    }

    fn add_handlers(&mut self, registration: Registration, function: &Expression<'a>, at: u32) {
        let line = self.lines.position(self.source, at).0;
        for event_type in registration.types {
            let function = self.handler_ref(function);
            self.out.handlers.push(RawHandler {
                script: self.script,
                line,
                event_type,
                target: registration.target.clone(),
                selector: registration.selector.clone(),
                function,
                via: registration.via.clone(),
            });
        }
    }

    fn visit_callee(&mut self, callee: &Expression<'a>) {
        match callee.without_parentheses() {
            Expression::Identifier(id) => {
                let name = id.name.as_str();
                match self.resolve(name) {
                    Resolved::Local(..) | Resolved::Alias(..) => {}
                    _ => self.record_call(CallKey::Name(name.to_string())),
                }
            }
            e @ (Expression::FunctionExpression(_) | Expression::ArrowFunctionExpression(_)) => {
                self.callback_starts.insert(e.span().start);
                self.visit_expression(e);
                self.record_direct(e.span().start);
            }
            Expression::StaticMemberExpression(m) => {
                let method = m.property.name.as_str();
                let receiver = m.object.without_parentheses();
                if matches!(method, "call" | "apply")
                    && matches!(
                        receiver,
                        Expression::Identifier(_)
                            | Expression::StaticMemberExpression(_)
                            | Expression::FunctionExpression(_)
                    )
                {
                    self.visit_callee(receiver);
                    return;
                }
                if method == "bind" && is_function_literal(receiver) {
                    self.visit_expression(receiver);
                    return;
                }
                match self.path_of(receiver) {
                    Some((path, root)) => {
                        if !is_lone_owner(&path, &root) {
                            self.record_read(&path);
                        }
                        let key = self.method_key(receiver, method);
                        if MUTATORS.contains(&method) && !is_lone_owner(&path, &root) {
                            self.record_mutation(&path, &key);
                        }
                        self.record_call(key);
                        self.visit_path_parts(receiver);
                    }
                    None => {
                        self.visit_expression(receiver);
                        let key = self.method_key(receiver, method);
                        self.record_call(key);
                    }
                }
            }
            e => self.visit_expression(e),
        }
    }
}

impl<'a> Visit<'a> for Collector<'a, '_> {
    fn visit_program(&mut self, program: &Program<'a>) {
        let mut decls = Declarations {
            locals: HashMap::new(),
            kind: Local::Var,
        };
        decls.visit_statements(&program.body);
        for (name, local) in &decls.locals {
            self.out.top_level_names.insert(name.to_string());
            if *local == Local::Var {
                self.out.variables.insert(name.to_string());
            }
        }
        self.frames.push(Frame {
            function: None,
            locals: decls.locals,
            aliases: HashMap::new(),
            this_owner: None,
            runs_in_parent: false,
        });
        self.visit_statements(&program.body);
        self.frames.pop();
    }

    fn visit_declaration(&mut self, declaration: &Declaration<'a>) {
        match declaration {
            Declaration::FunctionDeclaration(function) => {
                let naming = function.id.as_ref().map(|id| {
                    let name = id.name.to_string();
                    Naming {
                        name: Some(name.clone()),
                        keys: vec![name],
                        ..Naming::default()
                    }
                });
                self.analyse_function(function, naming);
            }
            Declaration::ClassDeclaration(class) => self.analyse_class(class),
            _ => walk::walk_declaration(self, declaration),
        }
    }

    fn visit_export_default_declaration_kind(&mut self, kind: &ExportDefaultDeclarationKind<'a>) {
        match kind {
            ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                self.analyse_function(function, None);
            }
            ExportDefaultDeclarationKind::ClassDeclaration(class) => self.analyse_class(class),
            _ => walk::walk_export_default_declaration_kind(self, kind),
        }
    }

    fn visit_expression(&mut self, expression: &Expression<'a>) {
        let outer = std::mem::replace(&mut self.at, expression.span().start);
        self.expression(expression);
        self.at = outer;
    }

    fn visit_call_expression(&mut self, call: &CallExpression<'a>) {
        let registration = self.registration(call);
        if let Expression::StaticMemberExpression(m) = call.callee.without_parentheses()
            && m.property.name == "bind"
            && matches!(
                argument_expression(&call.arguments, 0),
                Some(Expression::ThisExpression(_))
            )
        {
            self.inherit_this = Some(m.object.without_parentheses().span().start);
        }
        for (i, argument) in call.arguments.iter().enumerate() {
            let is_handler = registration.as_ref().is_some_and(|r| r.function_arg == i);
            if let Some(start) = argument.as_expression().and_then(literal_start)
                && !is_handler
            {
                self.callback_starts.insert(start);
            }
        }
        self.visit_callee(&call.callee);
        for (i, argument) in call.arguments.iter().enumerate() {
            let Some(expression) = argument.as_expression() else {
                walk::walk_argument(self, argument);
                continue;
            };
            self.visit_expression(expression);
            let is_handler = registration.as_ref().is_some_and(|r| r.function_arg == i);
            if let Some(start) = literal_start(expression)
                && !is_handler
            {
                self.record_direct(start);
            }
        }
        if let Some(registration) = registration
            && let Some(function) = argument_expression(&call.arguments, registration.function_arg)
        {
            self.add_handlers(registration, function, call.span.start);
        }
    }

    fn visit_new_expression(&mut self, new: &NewExpression<'a>) {
        // The constructor itself is not followed (see the module documentation); its
        // arguments are evaluated by the caller.
        if !matches!(
            new.callee.without_parentheses(),
            Expression::Identifier(_) | Expression::StaticMemberExpression(_)
        ) {
            self.visit_expression(&new.callee);
        }
        for argument in &new.arguments {
            match argument.as_expression() {
                Some(expression) => {
                    let start = literal_start(expression);
                    if let Some(start) = start {
                        self.callback_starts.insert(start);
                    }
                    self.visit_expression(expression);
                    if let Some(start) = start {
                        self.record_direct(start);
                    }
                }
                None => walk::walk_argument(self, argument),
            }
        }
    }

    fn visit_assignment_expression(&mut self, assignment: &AssignmentExpression<'a>) {
        let compound = assignment.operator != AssignmentOperator::Assign;
        let value = &assignment.right;
        let mut on_property = None;
        match &assignment.left {
            AssignmentTarget::AssignmentTargetIdentifier(id) => {
                let name = id.name.as_str();
                let global = !matches!(
                    self.resolve(name),
                    Resolved::Local(..) | Resolved::Alias(_, Some(_)) | Resolved::FunctionName
                );
                if global && !compound {
                    self.set_naming(value, Self::naming_for_path(&[name.to_string()]));
                }
                self.visit_expression(value);
                self.assign_identifier(name, compound, Some(value));
                return;
            }
            target => {
                if let Some(member) = target.as_member_expression() {
                    if !compound
                        && let Some((path, root)) = self.path_of(member.as_expression())
                        && !matches!(root, Root::Dom)
                    {
                        self.set_naming(value, Self::naming_for_path(&path));
                    }
                    if let MemberExpression::StaticMemberExpression(m) = member {
                        let property = m.property.name.as_str();
                        if !compound
                            && property.len() > 2
                            && property.starts_with("on")
                            && property.bytes().all(|b| b.is_ascii_lowercase())
                            && is_function_like(value)
                            && !self.is_param(value)
                        {
                            on_property = Some(Registration {
                                via: "on-property".into(),
                                types: vec![property[2..].to_string()],
                                target: self.text(m.object.span()),
                                selector: self.target_selector(&m.object),
                                function_arg: 0,
                            });
                        }
                    }
                    if is_function_literal(value) {
                        // `Foo.prototype.m = function ..` defines a method; it is not state.
                        self.visit_path_parts(member.as_expression());
                    } else {
                        self.assign_member(member, compound);
                    }
                } else {
                    self.assign_target(&assignment.left);
                }
            }
        }
        self.visit_expression(value);
        if let Some(registration) = on_property {
            self.add_handlers(registration, value, assignment.span.start);
        }
    }

    fn visit_update_expression(&mut self, update: &UpdateExpression<'a>) {
        self.assign_simple(&update.argument, true);
    }

    fn visit_unary_expression(&mut self, unary: &UnaryExpression<'a>) {
        if unary.operator == UnaryOperator::Delete
            && let Some(member) = unary.argument.without_parentheses().as_member_expression()
        {
            self.assign_member(member, false);
            return;
        }
        walk::walk_unary_expression(self, unary);
    }

    fn visit_variable_declarator(&mut self, declarator: &VariableDeclarator<'a>) {
        let Some(init) = &declarator.init else {
            walk::walk_variable_declarator(self, declarator);
            return;
        };
        let top_level = self.frames.last().is_some_and(|f| f.function.is_none());
        match &declarator.id {
            BindingPattern::BindingIdentifier(id) => {
                let name = id.name.as_str();
                let naming = Naming {
                    name: Some(name.to_string()),
                    keys: vec![name.to_string()],
                    ..Naming::default()
                };
                self.set_naming(init, naming);
                let alias = (!top_level).then(|| Alias {
                    path: self.path_of(init),
                    jquery: self.is_jquery_like(init),
                });
                self.visit_expression(init);
                if let (Some(alias), Some(frame)) = (alias, self.frames.last_mut())
                    && (alias.path.is_some() || alias.jquery)
                {
                    frame.aliases.insert(name, alias);
                }
            }
            BindingPattern::ObjectPattern(pattern) if !top_level => {
                let base = self.path_of(init);
                self.visit_expression(init);
                let Some((base, root)) = base else { return };
                for property in &pattern.properties {
                    let (Some(key), BindingPattern::BindingIdentifier(id)) =
                        (property.key.static_name(), &property.value)
                    else {
                        continue;
                    };
                    let mut path = base.clone();
                    path.push(key.to_string());
                    if let Some(frame) = self.frames.last_mut() {
                        frame.aliases.insert(
                            id.name.as_str(),
                            Alias {
                                path: Some((path, root.clone())),
                                jquery: false,
                            },
                        );
                    }
                }
            }
            _ => walk::walk_variable_declarator(self, declarator),
        }
    }

    fn visit_for_of_statement(&mut self, statement: &ForOfStatement<'a>) {
        // `for (const item of state.items)`: `item` stands for `state.items[]`.
        if let ForStatementLeft::VariableDeclaration(declaration) = &statement.left
            && let [declarator] = declaration.declarations.as_slice()
            && let BindingPattern::BindingIdentifier(id) = &declarator.id
            && self.frames.last().is_some_and(|f| f.function.is_some())
            && let Some((mut path, root)) = self.path_of(&statement.right)
        {
            path.push("[]".into());
            if let Some(frame) = self.frames.last_mut() {
                frame.aliases.insert(
                    id.name.as_str(),
                    Alias {
                        path: Some((path, root)),
                        jquery: false,
                    },
                );
            }
        }
        walk::walk_for_of_statement(self, statement);
    }

    fn visit_object_expression(&mut self, object: &ObjectExpression<'a>) {
        let owner = match &self.object_owner {
            Some((at, owner)) if *at == object.span.start => {
                let owner = owner.clone();
                self.object_owner = None;
                Some(owner)
            }
            _ => None,
        };
        for property in &object.properties {
            let ObjectPropertyKind::ObjectProperty(property) = property else {
                walk::walk_object_property_kind(self, property);
                continue;
            };
            if property.computed
                && let Some(key) = property.key.as_expression()
            {
                self.visit_expression(key);
            }
            let name = property.key.static_name().map(|n| n.to_string());
            if let Some(name) = &name
                && !property.computed
            {
                let key = owner.as_ref().map(|o| format!("{o}.{name}"));
                let naming = Naming {
                    name: key.clone().or_else(|| Some(name.clone())),
                    keys: key.into_iter().collect(),
                    method: Some(name.clone()),
                    this_owner: Some(owner.clone()),
                    start: property.method.then_some(property.span.start),
                };
                if matches!(
                    property.value.without_parentheses(),
                    Expression::ObjectExpression(_)
                ) {
                    if let Some(key) = naming.keys.first() {
                        self.object_owner = Some((
                            property.value.without_parentheses().span().start,
                            key.clone(),
                        ));
                    }
                } else if !property.shorthand {
                    self.set_naming(&property.value, naming);
                }
            }
            self.visit_expression(&property.value);
        }
    }
}

/// The names a function (or a script's top level) declares, without entering nested
/// functions: each syntax node is seen by the declaration pass of exactly one function,
/// so the passes add up to one walk of the script.
struct Declarations<'a> {
    locals: HashMap<&'a str, Local>,
    kind: Local,
}

impl<'a> Visit<'a> for Declarations<'a> {
    fn visit_binding_identifier(&mut self, id: &BindingIdentifier<'a>) {
        self.locals.entry(id.name.as_str()).or_insert(self.kind);
    }

    fn visit_expression(&mut self, expression: &Expression<'a>) {
        walk_outside_functions(self, expression);
    }

    fn visit_declaration(&mut self, declaration: &Declaration<'a>) {
        match declaration {
            Declaration::FunctionDeclaration(function) => {
                if let Some(id) = &function.id {
                    self.locals.insert(id.name.as_str(), Local::Function);
                }
            }
            Declaration::ClassDeclaration(class) => {
                if let Some(id) = &class.id {
                    self.locals.insert(id.name.as_str(), Local::Function);
                }
            }
            _ => walk::walk_declaration(self, declaration),
        }
    }

    fn visit_export_default_declaration_kind(&mut self, kind: &ExportDefaultDeclarationKind<'a>) {
        match kind {
            ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                if let Some(id) = &function.id {
                    self.locals.insert(id.name.as_str(), Local::Function);
                }
            }
            ExportDefaultDeclarationKind::ClassDeclaration(class) => {
                if let Some(id) = &class.id {
                    self.locals.insert(id.name.as_str(), Local::Function);
                }
            }
            _ => walk::walk_export_default_declaration_kind(self, kind),
        }
    }

    fn visit_variable_declarator(&mut self, declarator: &VariableDeclarator<'a>) {
        if let (BindingPattern::BindingIdentifier(id), Some(init)) =
            (&declarator.id, &declarator.init)
            && matches!(
                init.without_parentheses(),
                Expression::FunctionExpression(_)
                    | Expression::ArrowFunctionExpression(_)
                    | Expression::ClassExpression(_)
            )
        {
            self.locals.insert(id.name.as_str(), Local::Function);
            return;
        }
        walk::walk_variable_declarator(self, declarator);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units_and_every_line_terminator() {
        let source = "a\r\nbé😀x\rc\u{2028}d\ne";
        let lines = LineIndex::new(source);
        let at = |needle: &str| lines.position(source, source.find(needle).unwrap() as u32);
        assert_eq!(at("a"), (0, 0));
        assert_eq!(at("b"), (1, 0));
        // `é` is one UTF-16 unit, `😀` two.
        assert_eq!(at("x"), (1, 4));
        assert_eq!(at("c"), (2, 0));
        assert_eq!(at("d"), (3, 0));
        assert_eq!(at("e"), (4, 0));
    }

    #[test]
    fn lookups_with_literals_become_element_roots() {
        let root = |source: &str| {
            let allocator = Allocator::default();
            let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
            let Some(Statement::ExpressionStatement(statement)) = parsed.program.body.first()
            else {
                panic!("not an expression: {source}");
            };
            match statement.expression.without_parentheses() {
                Expression::CallExpression(call) => dom_root(call),
                _ => None,
            }
        };
        assert_eq!(
            root("document.getElementById('cart')").as_deref(),
            Some("#cart")
        );
        assert_eq!(root("byId('#cart')").as_deref(), Some("#cart"));
        assert_eq!(root("$('#cart')").as_deref(), Some("#cart"));
        assert_eq!(root("qs('.todo li')").as_deref(), Some("$(.todo li)"));
        assert_eq!(root("$('<div>')"), None);
        assert_eq!(root("byId(id)"), None);
        assert_eq!(root("load('x')"), None);
    }
}
