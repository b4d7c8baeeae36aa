//! The statements of each function body and of each script's top level, for models whose
//! vertices are statements (Monkey++'s statement vertices). The analysis walk lists a
//! function's statements as it leaves the function, so a script is parsed and walked once
//! for its handlers, its reads and writes and its statements alike.
//!
//! A body is flattened in source order. A compound statement (`if`, loops, `switch`,
//! `try`, a block, a label, `with`) is one statement for its header, followed by the
//! statements of all its branches; the header only carries what its own expressions do
//! (the test of an `if`, the parts of a `for` head), so a call inside a branch belongs to
//! the branch's statement alone. Function declarations and imports run nothing where they
//! stand and are left out. The bodies of nested functions, arrows and classes belong to
//! their own functions.
//!
//! Call sites are kept by name ([`CallSite`]); resolving them is left to the model, which
//! narrows them with the analysis's call graph.

use std::collections::{HashMap, HashSet};

use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};
use oxc_span::{GetSpan, Span};

use super::JsConfig;
use super::collect::{literal_start, walk_outside_functions};
use super::effects::{WebEffect, assignment_effect, call_effect, callee_name, static_path};

/// One statement, with what its own code (not that of nested functions) calls and does to
/// the screen.
#[derive(Debug, Clone, PartialEq)]
pub struct JsStatement {
    /// The statement's first line, trimmed, at most 80 characters.
    pub text: String,
    /// Call sites and function names passed as values, in source order.
    pub calls: Vec<CallSite>,
    /// The function literals the statement runs, called on the spot or passed to a call
    /// that is not an event registration, as indices into
    /// [`JsAnalysis::functions`](super::JsAnalysis::functions), in source order.
    pub runs: Vec<usize>,
    /// The first effect on the screen, in source order.
    pub effect: Option<WebEffect>,
}

/// A call site, or a function name passed as a value, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSite {
    /// The callee's last name segment: `m` of `obj.m()`, `f` of `f()` or of
    /// `setTimeout(f, 10)`.
    pub name: String,
    /// The callee's whole static path (`obj.m`, with `prototype` dropped), when it has one;
    /// `None` for a name passed as a value.
    pub path: Option<String>,
    /// A function name passed as an argument rather than called.
    pub argument: bool,
}

/// The top-level statements of one script that parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct TopLevel {
    /// [`Script::name`](super::Script::name).
    pub script: String,
    pub statements: Vec<JsStatement>,
}

/// Names of calls whose function arguments are event handlers rather than callees: the
/// analysis's registration helpers and jQuery shortcuts, plus the DOM's.
pub(super) fn registration_names(config: &JsConfig) -> HashSet<String> {
    let dom = [
        "addEventListener",
        "removeEventListener",
        "off",
        "unbind",
        "undelegate",
        "die",
    ];
    config
        .helper_names
        .iter()
        .cloned()
        .chain(dom.iter().map(|name| name.to_string()))
        .collect()
}

/// Lists the statements of one script's bodies.
pub(super) struct Lister<'l> {
    pub source: &'l str,
    pub registrations: &'l HashSet<String>,
    /// Function index by the start of its literal, for the literals a statement runs.
    pub functions: &'l HashMap<u32, usize>,
}

impl<'a> Lister<'_> {
    /// The statements of a function body or a script's top level, flattened.
    pub fn body(&self, statements: &[Statement<'a>]) -> Vec<JsStatement> {
        let mut out = Vec::new();
        self.flatten(statements, &mut out);
        out
    }

    /// The one statement of an arrow function whose body is an expression.
    pub fn expression(&self, expression: &Expression<'a>) -> JsStatement {
        let mut scan = Scan::new(self.registrations);
        scan.visit_expression(expression);
        self.finish(expression.span(), scan)
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

    fn finish(&self, span: Span, scan: Scan<'_>) -> JsStatement {
        JsStatement {
            text: self.text(span),
            calls: scan.calls,
            runs: scan
                .literals
                .iter()
                .filter_map(|start| self.functions.get(start).copied())
                .collect(),
            effect: scan.effect.map(|(_, effect)| effect),
        }
    }

    fn flatten(&self, statements: &[Statement<'a>], out: &mut Vec<JsStatement>) {
        for statement in statements {
            self.statement(statement, out);
        }
    }

    /// A branch of a compound statement: a block's statements stand for themselves.
    fn branch(&self, statement: &Statement<'a>, out: &mut Vec<JsStatement>) {
        match statement {
            Statement::BlockStatement(block) => self.flatten(&block.body, out),
            other => self.statement(other, out),
        }
    }

    fn statement(&self, statement: &Statement<'a>, out: &mut Vec<JsStatement>) {
        let mut scan = Scan::new(self.registrations);
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
                out.push(self.finish(span, scan));
                self.flatten(&block.body, out);
            }
            Statement::IfStatement(s) => {
                scan.visit_expression(&s.test);
                out.push(self.finish(span, scan));
                self.branch(&s.consequent, out);
                if let Some(alternate) = &s.alternate {
                    self.branch(alternate, out);
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
                out.push(self.finish(span, scan));
                self.branch(&s.body, out);
            }
            Statement::ForInStatement(s) => {
                scan.visit_for_statement_left(&s.left);
                scan.visit_expression(&s.right);
                out.push(self.finish(span, scan));
                self.branch(&s.body, out);
            }
            Statement::ForOfStatement(s) => {
                scan.visit_for_statement_left(&s.left);
                scan.visit_expression(&s.right);
                out.push(self.finish(span, scan));
                self.branch(&s.body, out);
            }
            Statement::WhileStatement(s) => {
                scan.visit_expression(&s.test);
                out.push(self.finish(span, scan));
                self.branch(&s.body, out);
            }
            Statement::DoWhileStatement(s) => {
                scan.visit_expression(&s.test);
                out.push(self.finish(span, scan));
                self.branch(&s.body, out);
            }
            Statement::WithStatement(s) => {
                scan.visit_expression(&s.object);
                out.push(self.finish(span, scan));
                self.branch(&s.body, out);
            }
            Statement::LabeledStatement(s) => {
                out.push(self.finish(span, scan));
                self.branch(&s.body, out);
            }
            Statement::SwitchStatement(s) => {
                scan.visit_expression(&s.discriminant);
                for case in &s.cases {
                    if let Some(test) = &case.test {
                        scan.visit_expression(test);
                    }
                }
                out.push(self.finish(span, scan));
                for case in &s.cases {
                    self.flatten(&case.consequent, out);
                }
            }
            Statement::TryStatement(s) => {
                out.push(self.finish(span, scan));
                self.flatten(&s.block.body, out);
                if let Some(handler) = &s.handler {
                    self.flatten(&handler.body.body, out);
                }
                if let Some(finalizer) = &s.finalizer {
                    self.flatten(&finalizer.body, out);
                }
            }
            other => {
                scan.visit_statement(other);
                out.push(self.finish(span, scan));
            }
        }
    }
}

/// What one statement's own code (not nested functions) calls and does to the screen.
struct Scan<'r> {
    registrations: &'r HashSet<String>,
    calls: Vec<CallSite>,
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
            calls: Vec::new(),
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
            Expression::Identifier(id) => self.calls.push(CallSite {
                name: id.name.to_string(),
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
                self.calls.push(CallSite {
                    name: name.to_string(),
                    path: static_path(e).map(|p| {
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
                self.calls.push(CallSite {
                    name: id.name.to_string(),
                    path: None,
                    argument: true,
                });
            }
        }
    }
}

impl<'a> Visit<'a> for Scan<'_> {
    fn visit_expression(&mut self, expression: &Expression<'a>) {
        walk_outside_functions(self, expression);
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

#[cfg(test)]
mod tests {
    use crate::js::{JsAnalysis, JsConfig, Script, WebEffect};

    #[test]
    fn the_analysis_walk_lists_statements_with_calls_literals_and_effects() {
        let source = "\
function go() {
  if (ok) { location.hash = 'a'; }
  setTimeout(function () { done(); }, 5);
}
button.addEventListener('click', function () {});
go();
";
        let scripts = [Script {
            name: "a.js".into(),
            source: source.into(),
        }];
        let analysis = JsAnalysis::analyse(&scripts, &JsConfig::default());
        let functions = analysis.functions();
        let go = &functions[analysis.function_named("go").unwrap()];
        let texts: Vec<&str> = go.statements.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "if (ok) { location.hash = 'a'; }",
                "location.hash = 'a';",
                "setTimeout(function () { done(); }, 5);"
            ]
        );
        // The header of the `if` carries nothing of its branch.
        assert_eq!(go.statements[0].effect, None);
        assert_eq!(
            go.statements[1].effect,
            Some(WebEffect::Navigate(Some("#a".into())))
        );
        // The timer's callback runs; its own body is its own function's.
        let [callback] = go.statements[2].runs[..] else {
            panic!("one literal expected: {:?}", go.statements[2]);
        };
        assert_eq!(functions[callback].statements[0].text, "done();");
        assert_eq!(go.statements[2].calls[0].name, "setTimeout");

        let [top] = analysis.top_levels() else {
            panic!("one script");
        };
        assert_eq!(top.script, "a.js");
        let texts: Vec<&str> = top.statements.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            ["button.addEventListener('click', function () {});", "go();"]
        );
        // A registered handler is not run by the statement that registers it.
        assert!(top.statements[0].runs.is_empty());
        assert_eq!(top.statements[1].calls[0].path.as_deref(), Some("go"));
    }
}
