//! Equivalent events: which events the ripper may take one of for all.
//!
//! A real app repeats controls: the rows of a list, the buttons of a toolbar that one
//! dispatcher handles, the same header on every screen. Two events are taken as
//! **equivalent** when they sit in the same window, are fired the same way, and either
//!
//! * run the same handlers (the listener functions the grey box located), or,
//! * when no handler could be located (a framework's dispatcher, a plain link), are the
//!   same widget kind in the same structure: their selectors are equal once the sibling
//!   indices (`:nth-of-type(N)`) are left out, which puts the rows of one list, or the
//!   buttons of one toolbar row, together, while an element with an id of its own stays
//!   alone.
//!
//! The ripper fires one representative of each group first and fires the others only while
//! its budget lasts (`RipConfig::group_equivalent`, with `live`);
//! the others it did not fire are reported as equivalent to their representative, and
//! their successors in the EFG are taken to be the representative's. The paper's ripper
//! fires every widget; same handler does not mean same effect (the demo's navigation
//! buttons all run `navigate(el.dataset.route)`), which is why the ripper fires the
//! others of a group whose representative found new events before those of a group whose
//! representative found none.

use crate::{Event, EventKind};

/// The equivalence class of `event` (see the module documentation); events with the same
/// class are equivalent.
pub fn equivalence_class(event: &Event) -> String {
    let kind = match event.kind {
        EventKind::Click => "click",
        EventKind::Input => "type",
    };
    if event.handlers.is_empty() {
        format!("{} | {kind} | shape {}", event.window, shape(&event.id))
    } else {
        let handlers: Vec<String> = event
            .handlers
            .iter()
            .map(|h| serde_json::to_string(h).expect("handlers serialise"))
            .collect();
        format!("{} | {kind} | runs {}", event.window, handlers.join(" "))
    }
}

/// `selector` with every sibling index left out: `ul > li:nth-of-type(3) > a click`
/// becomes `ul > li:nth-of-type(*) > a click`.
fn shape(selector: &str) -> String {
    const NTH: &str = ":nth-of-type(";
    let mut out = String::with_capacity(selector.len());
    let mut rest = selector;
    while let Some(at) = rest.find(NTH) {
        out.push_str(&rest[..at + NTH.len()]);
        rest = &rest[at + NTH.len()..];
        match rest.find(')') {
            Some(end) if rest[..end].bytes().all(|b| b.is_ascii_digit()) => {
                out.push('*');
                rest = &rest[end..];
            }
            _ => {}
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HandlerRef;

    fn event(id: &str, handlers: Vec<HandlerRef>) -> Event {
        Event {
            id: id.into(),
            label: String::new(),
            window: "/index.html".into(),
            kind: EventKind::Click,
            handlers,
        }
    }

    fn js(line: u32) -> HandlerRef {
        HandlerRef::Js {
            script: "app.js".into(),
            line,
            column: 0,
        }
    }

    #[test]
    fn rows_of_one_list_are_equivalent_and_an_element_with_its_own_id_is_not() {
        let row = |i: u32| {
            event(
                &format!("#list > li:nth-of-type({i}) > a:nth-of-type(1) click"),
                vec![],
            )
        };
        assert_eq!(equivalence_class(&row(1)), equivalence_class(&row(17)));
        assert_ne!(
            equivalence_class(&event("#save click", vec![])),
            equivalence_class(&event("#open click", vec![]))
        );
        assert_ne!(
            equivalence_class(&row(1)),
            equivalence_class(&event(
                "#other > li:nth-of-type(1) > a:nth-of-type(1) click",
                vec![]
            ))
        );
    }

    #[test]
    fn the_same_handler_makes_events_equivalent_wherever_they_are() {
        assert_eq!(
            equivalence_class(&event("#a click", vec![js(3)])),
            equivalence_class(&event("nav > button:nth-of-type(2) click", vec![js(3)]))
        );
        assert_ne!(
            equivalence_class(&event("#a click", vec![js(3)])),
            equivalence_class(&event("#b click", vec![js(4)]))
        );
        let mut typed = event("#a click", vec![js(3)]);
        typed.kind = EventKind::Input;
        assert_ne!(
            equivalence_class(&typed),
            equivalence_class(&event("#a click", vec![js(3)]))
        );
    }
}
