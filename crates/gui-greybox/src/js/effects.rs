//! What a statement does to the screen on the web: navigations, and dialogs or other
//! elements shown and hidden. Statically, from the statement's own code; the page's
//! routes and dialogs are matched to these by the model that uses them (Monkey++).

use oxc_ast::ast::*;

/// What a statement does to the screen on the web (a model turns it into its own effects,
/// as it knows the screens).
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

/// The last name of a callee: `f`, `m` of `a.b.m`.
pub(super) fn callee_name<'a>(callee: &Expression<'a>) -> Option<&'a str> {
    match callee.without_parentheses() {
        Expression::Identifier(id) => Some(id.name.as_str()),
        e => e.as_member_expression()?.static_property_name(),
    }
}

/// The static path of an expression: `window.location.hash`, `this.view`.
pub(super) fn static_path(expression: &Expression<'_>) -> Option<Vec<String>> {
    match expression.without_parentheses() {
        Expression::Identifier(id) => Some(vec![id.name.to_string()]),
        Expression::ThisExpression(_) => Some(vec!["this".into()]),
        e => {
            let member = e.as_member_expression()?;
            let mut path = static_path(member.object())?;
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
    static_path(receiver)
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

pub(super) fn call_effect(call: &CallExpression<'_>) -> Option<WebEffect> {
    let member = call.callee.without_parentheses().as_member_expression()?;
    let method = member.static_property_name()?;
    let receiver = member.object();
    let place = static_path(receiver).map(page_path);
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
            && matches!(static_path(receiver).as_deref(), Some([w]) if w == "window") =>
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

pub(super) fn assignment_effect(assignment: &AssignmentExpression<'_>) -> Option<WebEffect> {
    if assignment.operator != AssignmentOperator::Assign {
        return None;
    }
    let right = &assignment.right;
    let (path, member) = match &assignment.left {
        AssignmentTarget::AssignmentTargetIdentifier(id) => (vec![id.name.to_string()], None),
        target => {
            let member = target.as_member_expression()?;
            // An object without a static path (`f().x`) must not pass for `location`.
            let mut path = static_path(member.object()).unwrap_or_else(|| vec!["?".into()]);
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
        "open" if !matches!(static_path(element).as_deref(), Some([w]) if w == "window") => boolean
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
