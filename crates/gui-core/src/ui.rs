use serde::{Deserialize, Serialize};

use crate::Rect;

/// One element of an app's view hierarchy (the DOM, a UI Automator dump), with the
/// attributes VisionDroid reads (Section III-A1: text, hint, id, class, clickable,
/// long-clickable, checkable, scrollable, bounds). Bounds are in screenshot pixels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UiElement {
    pub bounds: Rect,
    /// Widget class: a tag such as `button` or `input[checkbox]` on the web, a class
    /// such as `android.widget.EditText` on Android.
    pub class: String,
    /// Resource id or DOM id; empty when the element has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// Visible text (for an input, its current value).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Hint text: placeholder, accessible label or content description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hint: String,
    #[serde(default)]
    pub clickable: bool,
    #[serde(default)]
    pub long_clickable: bool,
    #[serde(default)]
    pub checkable: bool,
    #[serde(default)]
    pub checked: bool,
    #[serde(default)]
    pub scrollable: bool,
    /// Takes typed text (an `EditText`, a text `<input>` or `<textarea>`).
    #[serde(default)]
    pub editable: bool,
}

impl UiElement {
    /// Whether a user can act on it at all (any of the five VisionDroid action types).
    pub fn actionable(&self) -> bool {
        self.clickable || self.long_clickable || self.checkable || self.scrollable || self.editable
    }
}

/// The hierarchy of the screen on show: which app, which screen, and its elements in
/// document order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UiHierarchy {
    /// The app's name (web: the document title; Android: the package).
    pub app: String,
    /// The screen's name (web: the path and fragment; Android: the activity).
    pub screen: String,
    pub elements: Vec<UiElement>,
}
