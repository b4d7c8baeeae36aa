//! The committed labelled screens (`tests/data/screens`, made by
//! `cargo xtask vision-data --fixtures`) load, agree with their pictures, and hold what the
//! demo app is known to show.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gui_core::{Rect, WidgetKind};
use gui_vision::dataset::{DatasetEntry, LabelledScreen, Split, load_dataset, split_of};

fn screens_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/screens")
}

fn fixtures() -> Vec<DatasetEntry> {
    let root = screens_root();
    let entries = load_dataset(&root).unwrap_or_else(|e| {
        panic!("{e}\nregenerate the fixtures with `cargo xtask vision-data --fixtures`")
    });
    assert!(
        entries.len() >= 8,
        "expected at least 8 labelled screens under {}, found {}; run `cargo xtask vision-data --fixtures`",
        root.display(),
        entries.len()
    );
    entries
}

fn screen(app: &str, viewport: &str, page: &str) -> LabelledScreen {
    fixtures()
        .into_iter()
        .map(|e| e.labels)
        .find(|s| s.app == app && s.viewport == viewport && s.page == page)
        .unwrap_or_else(|| panic!("no fixture {app}/{viewport}/{page}"))
}

fn count(screen: &LabelledScreen, kind: WidgetKind) -> usize {
    screen.widgets.iter().filter(|w| w.kind == kind).count()
}

#[test]
fn every_fixture_matches_its_screenshot() {
    for entry in fixtures() {
        let s = &entry.labels;
        let what = entry.label_path.display();
        let img = image::open(&entry.screenshot_path)
            .unwrap_or_else(|e| panic!("{}: {e}", entry.screenshot_path.display()));
        assert_eq!(
            (img.width(), img.height()),
            (s.width, s.height),
            "{what}: picture size differs from the labels"
        );
        let expected = if s.viewport == "desktop" {
            (1280, 800)
        } else {
            (412, 915)
        };
        assert_eq!((s.width, s.height), expected, "{what}: viewport size");
        assert!(s.scale > 0.0, "{what}: scale {}", s.scale);
        assert_eq!(
            entry.label_path.file_stem().and_then(|f| f.to_str()),
            Some(s.page.as_str()),
            "{what}: file name and page differ"
        );
        assert!(!s.widgets.is_empty(), "{what}: no widgets");
        let screen_rect = Rect::new(0, 0, s.width, s.height);
        for w in &s.widgets {
            assert!(
                w.rect.width >= 4 && w.rect.height >= 4,
                "{what}: box {:?} of {} is smaller than 4x4",
                w.rect,
                w.element
            );
            assert_eq!(
                w.rect.intersection(&screen_rect),
                Some(w.rect),
                "{what}: box {:?} of {} leaves the screen",
                w.rect,
                w.element
            );
            assert!(
                w.source == "dom" || w.source == "hand",
                "{what}: source {}",
                w.source
            );
        }
    }
}

#[test]
fn every_app_is_captured_at_both_viewports() {
    let entries = fixtures();
    let apps: BTreeSet<&str> = entries.iter().map(|e| e.labels.app.as_str()).collect();
    for app in &apps {
        for viewport in ["desktop", "mobile"] {
            assert!(
                entries
                    .iter()
                    .any(|e| e.labels.app == *app && e.labels.viewport == viewport),
                "{app} has no {viewport} screen"
            );
        }
    }
    // Both sides of the split are represented, so tests of an evaluation can use either.
    let splits: BTreeSet<_> = apps.iter().map(|a| split_of(a) == Split::Test).collect();
    assert_eq!(splits.len(), 2, "fixtures cover only one split: {apps:?}");
}

#[test]
fn demo_form_has_every_form_control() {
    for viewport in ["desktop", "mobile"] {
        let s = screen("demo", viewport, "form");
        for (kind, at_least) in [
            (WidgetKind::CheckBox, 1),
            (WidgetKind::RadioButton, 3),
            (WidgetKind::Switch, 1),
            (WidgetKind::SeekBar, 1),
            (WidgetKind::ProgressBar, 1),
            (WidgetKind::Spinner, 1),
            (WidgetKind::EditText, 2),
            (WidgetKind::Button, 1),
            (WidgetKind::TextView, 5),
        ] {
            assert!(
                count(&s, kind) >= at_least,
                "demo/{viewport}/form: {} {kind:?}, expected at least {at_least}",
                count(&s, kind)
            );
        }
        // The switch is a checkbox drawn as a 56x30 pill (examples/apps/demo/style.css).
        let switch = s
            .widgets
            .iter()
            .find(|w| w.kind == WidgetKind::Switch)
            .expect("a switch");
        assert_eq!(switch.element, "input[type=checkbox]#form-public");
        let (sw, sh) = (s.scale * 56.0, s.scale * 30.0);
        assert!(
            (switch.rect.width as f32 - sw).abs() <= 1.0
                && (switch.rect.height as f32 - sh).abs() <= 1.0,
            "switch box {:?}",
            switch.rect
        );
        // Text inside a button is part of the button, not a TextView of its own.
        let help = s
            .widgets
            .iter()
            .find(|w| w.element == "button#help-open")
            .expect("the Help button");
        assert_eq!(help.text, "Help");
        assert!(
            !s.widgets.iter().any(
                |w| w.kind == WidgetKind::TextView && w.rect.intersection(&help.rect).is_some()
            ),
            "demo/{viewport}/form: a TextView overlaps the Help button"
        );
    }
}

#[test]
fn demo_canvas_has_the_four_painted_buttons() {
    for viewport in ["desktop", "mobile"] {
        let entry = fixtures()
            .into_iter()
            .find(|e| {
                e.labels.app == "demo" && e.labels.viewport == viewport && e.labels.page == "canvas"
            })
            .expect("demo canvas fixture");
        let s = &entry.labels;
        let painted: Vec<_> = s
            .widgets
            .iter()
            .filter(|w| w.source == "hand" && w.kind == WidgetKind::Button)
            .collect();
        let labels: Vec<&str> = painted.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(labels, ["Home", "Help", "Colour", "Count +1"], "{viewport}");
        let canvas = s
            .widgets
            .iter()
            .find(|w| w.element == "canvas#canvas-toolbar" && w.source == "dom")
            .expect("the canvas itself");
        let pixels = image::open(&entry.screenshot_path)
            .expect("canvas screenshot")
            .to_rgb8();
        for (i, b) in painted.iter().enumerate() {
            assert_eq!(
                b.rect.intersection(&canvas.rect),
                Some(b.rect),
                "{viewport}: painted button {i} outside the canvas"
            );
            // Same size, 147 canvas px apart (app.js canvasButtonRect), within rounding.
            let (w0, h0) = (painted[0].rect.width as i64, painted[0].rect.height as i64);
            assert!(
                (b.rect.width as i64 - w0).abs() <= 1 && (b.rect.height as i64 - h0).abs() <= 1
            );
            // The box sits on the painted button: its middle has the button's fill, which
            // is dark-ish and saturated, never the light canvas background.
            let (cx, cy) = (
                (b.rect.x + b.rect.width as i32 / 2) as u32,
                (b.rect.y + b.rect.height as i32 / 4) as u32,
            );
            let p = pixels.get_pixel(cx, cy).0;
            let spread = p.iter().max().unwrap() - p.iter().min().unwrap();
            assert!(
                spread > 60,
                "{viewport}: button {i} box middle ({cx},{cy}) is {p:?}, not a button fill"
            );
            // Just outside the box is the canvas background (light grey), not the button.
            let outside = pixels.get_pixel(cx, (b.rect.y - 3) as u32).0;
            assert!(
                outside.iter().all(|&c| c > 200),
                "{viewport}: above button {i} is {outside:?}, expected the light background"
            );
        }
        if viewport == "desktop" {
            // At scale 1 a button is 135x64 plus the 3 px stroke.
            assert_eq!((painted[0].rect.width, painted[0].rect.height), (138, 67));
            let step = painted[1].rect.x - painted[0].rect.x;
            assert_eq!(step, 147, "desktop: buttons are 147 px apart");
        }
    }
}

#[test]
fn split_keeps_the_todomvc_family_and_jquery_ui_out() {
    for app in [
        "todomvc-react",
        "todomvc-vanillajs",
        "todomvc-angularjs",
        "jquery-ui",
    ] {
        assert_eq!(split_of(app), Split::Test, "{app}");
    }
    for app in ["demo", "jsoneditor", "ace", "2048"] {
        assert_eq!(split_of(app), Split::Train, "{app}");
    }
}

#[test]
fn summary_files_are_not_labels_but_broken_labels_are_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let screens = dir.path().join("demo/desktop");
    std::fs::create_dir_all(&screens).unwrap();
    let src = screens_root().join("demo/desktop");
    for f in ["form.json", "form.png"] {
        std::fs::copy(src.join(f), screens.join(f)).unwrap();
    }
    std::fs::write(dir.path().join("summary.json"), r#"{"screens": 1}"#).unwrap();
    let entries = load_dataset(dir.path()).expect("summary.json is passed over");
    assert_eq!(entries.len(), 1);

    let bad = screens.join("broken.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let err = load_dataset(dir.path()).expect_err("a broken label file is an error");
    assert!(
        err.to_string().contains("broken.json"),
        "error does not name the file: {err}"
    );
}
