//! The DOM read as a view hierarchy (VisionDroid's GUI text), shared by the two web
//! devices: `ui_hierarchy.js` lists the elements, [`parse`] turns its answer into a
//! [`UiHierarchy`] with bounds in screenshot pixels.

use gui_core::{Rect, UiElement, UiHierarchy};
use serde_json::Value;

use crate::{Error, Result};

/// One JavaScript expression whose value is the hierarchy (CSS-pixel bounds).
pub(crate) const SCRIPT: &str = include_str!("ui_hierarchy.js");

/// The script's answer as a hierarchy; `scale` is screenshot pixels per CSS pixel and
/// `method` names the call in errors.
pub(crate) fn parse(value: Value, scale: f64, method: &str) -> Result<UiHierarchy> {
    let raw: RawHierarchy = serde_json::from_value(value).map_err(|e| Error::BadReply {
        method: format!("{method} (view hierarchy)"),
        detail: format!("not a hierarchy: {e}"),
    })?;
    let elements = raw
        .elements
        .into_iter()
        .map(|e| {
            let [x, y, w, h] = e.bounds.map(|v| v * scale);
            UiElement {
                bounds: Rect::new(
                    x.round() as i32,
                    y.round() as i32,
                    w.round().max(1.0) as u32,
                    h.round().max(1.0) as u32,
                ),
                class: e.class,
                id: e.id,
                text: e.text,
                hint: e.hint,
                clickable: e.clickable,
                long_clickable: e.long_clickable,
                checkable: e.checkable,
                checked: e.checked,
                scrollable: e.scrollable,
                editable: e.editable,
            }
        })
        .collect();
    Ok(UiHierarchy {
        app: raw.app,
        screen: raw.screen,
        elements,
    })
}

#[derive(serde::Deserialize)]
struct RawHierarchy {
    app: String,
    screen: String,
    elements: Vec<RawElement>,
}

#[derive(serde::Deserialize)]
struct RawElement {
    bounds: [f64; 4],
    class: String,
    id: String,
    text: String,
    hint: String,
    clickable: bool,
    long_clickable: bool,
    checkable: bool,
    checked: bool,
    scrollable: bool,
    editable: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_scaled_and_bad_answers_named() {
        let v = serde_json::json!({"app": "A", "screen": "/#/x", "elements": [{
            "bounds": [10.4, 20.0, 30.0, 0.2], "class": "button", "id": "b", "text": "Go",
            "hint": "", "clickable": true, "long_clickable": false, "checkable": false,
            "checked": false, "scrollable": false, "editable": false }]});
        let ui = parse(v, 2.0, "Runtime.evaluate").unwrap();
        assert_eq!(ui.elements[0].bounds, Rect::new(21, 40, 60, 1));
        assert!(ui.elements[0].clickable);
        let e = parse(serde_json::json!({"app": 1}), 1.0, "Runtime.evaluate").unwrap_err();
        assert!(
            e.to_string().contains("Runtime.evaluate (view hierarchy)"),
            "{e}"
        );
    }
}
