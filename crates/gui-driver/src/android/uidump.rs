//! The UI Automator dump (`uiautomator dump`) as a [`UiHierarchy`], and the resumed
//! activity from `dumpsys activity activities`.

use gui_core::{Rect, UiElement, UiHierarchy};

use crate::{Error, Result};

/// Parses a dump: `<hierarchy><node bounds="[x1,y1][x2,y2]" class=… …>…</hierarchy>`.
/// Elements come in document order; `app` is the root node's package, `screen` is left to
/// the caller. `path` names the dump in errors. A dump nesting elements more than
/// [`UiHierarchy::MAX_DEPTH`] deep is refused.
pub(crate) fn parse_dump(xml: &str, path: &str) -> Result<UiHierarchy> {
    let bad = |detail: String| Error::UiDump {
        path: path.to_owned(),
        detail,
    };
    // Measured before parsing: roxmltree descends one stack frame per level.
    if let Some(at) = UiHierarchy::too_deep_at(xml) {
        let line = xml[..at].matches('\n').count() + 1;
        return Err(bad(format!(
            "elements nest more than {} levels deep (line {line})",
            UiHierarchy::MAX_DEPTH
        )));
    }
    let doc = roxmltree::Document::parse(xml).map_err(|e| bad(format!("not XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "hierarchy" {
        return Err(bad(format!(
            "the root element is <{}>, not <hierarchy>",
            root.tag_name().name()
        )));
    }
    let mut app = String::new();
    let mut elements = Vec::new();
    for node in root.descendants().filter(|n| n.has_tag_name("node")) {
        let attr = |name| node.attribute(name).unwrap_or("");
        let flag = |name| attr(name) == "true";
        let bounds = parse_bounds(attr("bounds")).ok_or_else(|| {
            bad(format!(
                "node {} ({}) has bounds {:?}, expected [x1,y1][x2,y2]",
                elements.len(),
                attr("class"),
                attr("bounds")
            ))
        })?;
        if app.is_empty() {
            app = attr("package").to_owned();
        }
        let class = attr("class").to_owned();
        // `hint` exists in dumps of newer Androids; the content description is what
        // screen readers announce, the closest older equivalent.
        let hint = match node.attribute("hint") {
            Some(h) if !h.is_empty() => h.to_owned(),
            _ => attr("content-desc").to_owned(),
        };
        elements.push(UiElement {
            bounds,
            editable: class.contains("EditText"),
            class,
            id: attr("resource-id").to_owned(),
            text: attr("text").to_owned(),
            hint,
            clickable: flag("clickable"),
            long_clickable: flag("long-clickable"),
            checkable: flag("checkable"),
            checked: flag("checked"),
            scrollable: flag("scrollable"),
        });
    }
    if elements.is_empty() {
        return Err(bad("it has no <node> elements".into()));
    }
    Ok(UiHierarchy {
        app,
        screen: String::new(),
        elements,
    })
}

/// `[x1,y1][x2,y2]` as a rectangle (at least 1x1: UI Automator reports empty views too).
fn parse_bounds(s: &str) -> Option<Rect> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?;
    let (a, b) = inner.split_once("][")?;
    let pair = |p: &str| -> Option<(i32, i32)> {
        let (x, y) = p.split_once(',')?;
        Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
    };
    let ((x1, y1), (x2, y2)) = (pair(a)?, pair(b)?);
    // Saturating: a corrupt dump can put the corners 2^31 apart.
    Some(Rect::new(
        x1,
        y1,
        x2.saturating_sub(x1).max(1) as u32,
        y2.saturating_sub(y1).max(1) as u32,
    ))
}

/// The resumed activity in `dumpsys activity activities`, as `(package, class)` with the
/// class written out in full: `ResumedActivity: ActivityRecord{5d1e2f0 u0
/// com.example/.Main t12}` gives `("com.example", "com.example.Main")`. Older Androids
/// write `mResumedActivity`, newer ones `topResumedActivity=` or `ResumedActivity:`.
pub(crate) fn resumed_activity(dumpsys: &str) -> Option<(String, String)> {
    dumpsys
        .lines()
        .filter(|l| l.contains("ResumedActivity"))
        .find_map(|l| {
            let record = &l[l.find("ActivityRecord{")?..];
            let component = record.split_whitespace().find(|w| w.contains('/'))?;
            let (pkg, class) = component.split_once('/')?;
            let class = match class.strip_prefix('.') {
                Some(short) => format!("{pkg}.{short}"),
                None => class.to_owned(),
            };
            Some((pkg.to_owned(), class.trim_end_matches('}').to_owned()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_flags_are_read() {
        let xml = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.x" content-desc="" checkable="false" checked="false" clickable="false" scrollable="true" long-clickable="false" bounds="[0,0][360,640]"><node text="Name" resource-id="com.x:id/name" class="android.widget.EditText" package="com.x" content-desc="Your name" clickable="true" long-clickable="true" checkable="false" checked="false" scrollable="false" bounds="[20,120][340,176]" /></node></hierarchy>"#;
        let h = parse_dump(xml, "/sdcard/d.xml").unwrap();
        assert_eq!(h.app, "com.x");
        assert_eq!(h.elements.len(), 2);
        assert!(h.elements[0].scrollable);
        let e = &h.elements[1];
        assert_eq!(e.bounds, Rect::new(20, 120, 320, 56));
        assert!(e.editable && e.clickable && e.long_clickable && !e.checkable);
        assert_eq!(
            (e.id.as_str(), e.text.as_str(), e.hint.as_str()),
            ("com.x:id/name", "Name", "Your name")
        );
    }

    #[test]
    fn a_broken_dump_is_named() {
        for (xml, says) in [
            ("<hierarchy><node", "not XML"),
            ("<html/>", "<html>"),
            ("<hierarchy/>", "no <node>"),
            (
                r#"<hierarchy><node class="V" bounds="[0,0]" /></hierarchy>"#,
                "bounds",
            ),
        ] {
            let e = parse_dump(xml, "/sdcard/d.xml").unwrap_err().to_string();
            assert!(e.contains("/sdcard/d.xml") && e.contains(says), "{e}");
        }
    }

    /// A dump whose single chain of `<node>`s is `depth` levels deep inside `<hierarchy>`.
    fn nested(depth: usize) -> String {
        let node = r#"<node class="V" package="p" bounds="[0,0][1,1]">"#;
        format!(
            "<hierarchy>\n{}{}</hierarchy>",
            node.repeat(depth),
            "</node>".repeat(depth)
        )
    }

    #[test]
    fn a_dump_nested_deeper_than_the_limit_is_refused_naming_it() {
        // `<hierarchy>` is one level of the limit.
        let most = UiHierarchy::MAX_DEPTH - 1;
        let h = parse_dump(&nested(most), "/sdcard/d.xml").unwrap();
        assert_eq!(h.elements.len(), most);
        for depth in [most + 1, 100_000] {
            let e = parse_dump(&nested(depth), "/sdcard/d.xml").unwrap_err();
            let Error::UiDump { path, detail } = &e else {
                panic!("not a dump error: {e}");
            };
            assert_eq!(path, "/sdcard/d.xml");
            assert!(
                detail.contains("more than 512 levels deep (line 2)"),
                "{detail}"
            );
        }
    }

    #[test]
    fn corners_at_the_ends_of_the_integer_range_do_not_overflow() {
        let xml = r#"<hierarchy><node class="V" package="p" bounds="[-2147483648,0][2147483647,1]" /></hierarchy>"#;
        let h = parse_dump(xml, "/sdcard/d.xml").unwrap();
        assert_eq!(h.elements[0].bounds.x, i32::MIN);
        assert_eq!(h.elements[0].bounds.width, i32::MAX as u32);
    }

    #[test]
    fn the_resumed_activity_is_found_in_old_and_new_formats() {
        let old = "    mResumedActivity: ActivityRecord{5d1e2f0 u0 com.x/.Main t12}\n";
        assert_eq!(
            resumed_activity(old),
            Some(("com.x".into(), "com.x.Main".into()))
        );
        let new = "  topResumedActivity=ActivityRecord{1 u0 com.x/com.y.Other t4}\n";
        assert_eq!(
            resumed_activity(new),
            Some(("com.x".into(), "com.y.Other".into()))
        );
        assert_eq!(resumed_activity("nothing here"), None);
    }
}
