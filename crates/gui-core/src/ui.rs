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

impl UiHierarchy {
    /// The deepest nesting of elements, the root counted, that a markup dump of a
    /// hierarchy (a UI Automator dump) may have. Real screens nest a few dozen levels; a
    /// deeper dump is corrupt or crafted, and XML parsers that descend one stack frame a
    /// level (roxmltree does) would overflow the stack on it, so the readers refuse it
    /// ([`too_deep_at`](Self::too_deep_at)).
    pub const MAX_DEPTH: usize = 512;

    /// The byte offset of the first start tag in `xml` nested more than
    /// [`MAX_DEPTH`](Self::MAX_DEPTH) deep, or `None`. A scan of the tags alone, without
    /// recursion, to run before handing the text to an XML parser: it skips comments,
    /// CDATA, processing instructions and declarations, and `>` or `/` inside quoted
    /// attribute values. On well-formed XML it measures what a parser would; on anything
    /// else it errs towards more depth, and the parser then refuses the text anyway.
    pub fn too_deep_at(xml: &str) -> Option<usize> {
        let bytes = xml.as_bytes();
        // The index just past `end`, searching from `from`; the end of the text without it.
        let past = |from: usize, end: &str| {
            xml.get(from..)
                .and_then(|rest| rest.find(end))
                .map_or(xml.len(), |i| from + i + end.len())
        };
        let mut depth = 0usize;
        let mut i = 0;
        while let Some(offset) = xml.get(i..).and_then(|rest| rest.find('<')) {
            let at = i + offset;
            let tag = &xml[at..];
            i = if tag.starts_with("<!--") {
                past(at + 4, "-->")
            } else if tag.starts_with("<![CDATA[") {
                past(at + 9, "]]>")
            } else if tag.starts_with("<?") {
                past(at + 2, "?>")
            } else if tag.starts_with("<!") {
                past(at + 2, ">")
            } else if tag.starts_with("</") {
                depth = depth.saturating_sub(1);
                past(at + 2, ">")
            } else {
                let mut end = at + 1;
                let mut quote = None;
                while let Some(&c) = bytes.get(end) {
                    match quote {
                        Some(q) if c == q => quote = None,
                        Some(_) => {}
                        None if c == b'"' || c == b'\'' => quote = Some(c),
                        None if c == b'>' => break,
                        None => {}
                    }
                    end += 1;
                }
                // `end` is past the `<`, so `end - 1` is inside the tag.
                let self_closing = bytes.get(end - 1) == Some(&b'/');
                if !self_closing {
                    depth += 1;
                    if depth > Self::MAX_DEPTH {
                        return Some(at);
                    }
                }
                end + 1
            };
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `depth` nested `<v>` elements around `inner`.
    fn nested(depth: usize, inner: &str) -> String {
        format!("{}{inner}{}", "<v>".repeat(depth), "</v>".repeat(depth))
    }

    #[test]
    fn nesting_up_to_the_limit_passes_and_one_level_more_is_found() {
        let max = UiHierarchy::MAX_DEPTH;
        assert_eq!(UiHierarchy::too_deep_at(&nested(max, "text")), None);
        assert_eq!(UiHierarchy::too_deep_at(&nested(max, "<leaf/>")), None);
        let deep = nested(max + 1, "");
        assert_eq!(UiHierarchy::too_deep_at(&deep), Some(3 * max));
        // Siblings do not add up.
        let wide = format!("<r>{}</r>", nested(max - 1, "").repeat(3));
        assert_eq!(UiHierarchy::too_deep_at(&wide), None);
        assert!(UiHierarchy::too_deep_at(&nested(100_000, "")).is_some());
    }

    #[test]
    fn tags_inside_comments_cdata_and_attribute_values_do_not_count() {
        let max = UiHierarchy::MAX_DEPTH;
        let hidden = format!(
            "<?xml version='1.0'?><!DOCTYPE x><!-- {open} --><![CDATA[{open}]]>",
            open = "<v>".repeat(max + 1)
        );
        let quoted = r#"<n text="a > b" desc='</v><v>' bounds="[0,0][1,1]/">"#;
        let xml = format!("{hidden}{}", nested(max - 1, &format!("{quoted}</n>")));
        assert_eq!(UiHierarchy::too_deep_at(&xml), None);
        // The same element one level further down is one too many.
        let xml = format!("{hidden}{}", nested(max, &format!("{quoted}</n>")));
        assert!(UiHierarchy::too_deep_at(&xml).is_some());
    }
}
