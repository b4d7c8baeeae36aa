//! Monkey's log, UI Automator dumps, and Monkey's run mapped onto the app model, on the
//! hand-written fixtures in `tests/data/android/` (see the README there).

use std::path::{Path, PathBuf};

use gui_model_search::{
    AppModel, CrashKind, DumpSet, Error, Gesture, MapConfig, MonkeyEvent, MotionAction, UiDump,
    map_monkey_log, parse_monkey_log,
};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/android")
        .join(name)
}

fn fixture_log() -> gui_model_search::MonkeyLog {
    let text = std::fs::read_to_string(data("monkey.log")).unwrap();
    parse_monkey_log(&text)
}

fn model() -> AppModel {
    AppModel::from_json_file(&data("notes.json")).unwrap()
}

fn dumps() -> DumpSet {
    DumpSet::load_dir(&data("")).unwrap()
}

fn dump(name: &str) -> UiDump {
    UiDump::load(&data(name)).unwrap()
}

#[test]
fn fixture_log_event_counts() {
    let log = fixture_log();
    let touch = |want: MotionAction| {
        log.events
            .iter()
            .filter(|e| matches!(e, MonkeyEvent::Touch { action, .. } if *action == want))
            .count()
    };
    let count = |f: fn(&MonkeyEvent) -> bool| log.events.iter().filter(|e| f(e)).count();
    let table: [(&str, usize); 10] = [
        ("all events", log.events.len()),
        ("touch down", touch(MotionAction::Down)),
        ("touch up", touch(MotionAction::Up)),
        ("touch move", touch(MotionAction::Move)),
        (
            "key down",
            count(|e| matches!(e, MonkeyEvent::Key { down: true, .. })),
        ),
        (
            "key up",
            count(|e| matches!(e, MonkeyEvent::Key { down: false, .. })),
        ),
        (
            "trackball",
            count(|e| matches!(e, MonkeyEvent::Trackball { .. })),
        ),
        ("switch", count(|e| matches!(e, MonkeyEvent::Switch { .. }))),
        (
            "rotation",
            count(|e| matches!(e, MonkeyEvent::Rotation { .. })),
        ),
        ("flip", count(|e| matches!(e, MonkeyEvent::Flip { .. }))),
    ];
    let expected = [68, 22, 21, 2, 6, 6, 5, 3, 2, 1];
    for ((what, got), want) in table.iter().zip(expected) {
        assert_eq!(*got, want, "{what}");
    }
}

#[test]
fn fixture_log_malformed_lines() {
    let log = fixture_log();
    let lines: Vec<usize> = log.malformed.iter().map(|m| m.line).collect();
    assert_eq!(lines, [51, 70]);
    assert_eq!(
        log.malformed[0].text,
        ":Sending Touch (ACTION_DOWN): 0:(540.0,"
    );
    for m in &log.malformed {
        assert!(m.reason.contains("pointer"), "{m:?}");
    }
}

#[test]
fn fixture_log_header_and_statistics() {
    let log = fixture_log();
    assert_eq!(log.seed, Some(1712));
    assert_eq!(log.count, Some(80));
    assert_eq!(log.packages, ["org.example.notes"]);
    assert_eq!(log.percentages.len(), 12);
    assert_eq!(log.percentages[0], (0, 15.0));
    assert_eq!(log.percentages[6], (6, 25.0));
    assert_eq!(log.percentages[11], (11, 13.0));
    let total: f64 = log.percentages.iter().map(|p| p.1).sum();
    assert!((total - 100.0).abs() < 1e-9);
    assert_eq!(log.injected, Some(80));
    let d = log.dropped.unwrap();
    assert_eq!(
        (d.keys, d.pointers, d.trackballs, d.flips, d.rotations),
        (0, 2, 0, 0, 0)
    );
    assert_eq!(log.elapsed_ms, Some(6134));
    assert!(log.finished);
    assert!(!log.aborted);
    assert!(log.crashes.is_empty());
}

#[test]
fn event_lines_parse_to_their_fields() {
    let cases: [(&str, MonkeyEvent); 8] = [
        (
            ":Sending Touch (ACTION_DOWN): 0:(540.0,960.0)",
            MonkeyEvent::Touch {
                action: MotionAction::Down,
                pointer: 0,
                x: 540.0,
                y: 960.0,
            },
        ),
        (
            ":Sending Touch (ACTION_POINTER_DOWN 1): 0:(100.0,200.0) 1:(300.0,400.0)",
            MonkeyEvent::Touch {
                action: MotionAction::PointerDown,
                pointer: 1,
                x: 300.0,
                y: 400.0,
            },
        ),
        (
            ":Sending Trackball (ACTION_MOVE): 0:(-4.0,2.0)",
            MonkeyEvent::Trackball {
                action: MotionAction::Move,
                dx: -4.0,
                dy: 2.0,
            },
        ),
        (
            ":Sending Key (ACTION_DOWN): 4    // KEYCODE_BACK",
            MonkeyEvent::Key {
                down: true,
                code: 4,
                name: Some("KEYCODE_BACK".into()),
            },
        ),
        (
            ":Sending Key (ACTION_UP): 82    // KEYCODE_MENU",
            MonkeyEvent::Key {
                down: false,
                code: 82,
                name: Some("KEYCODE_MENU".into()),
            },
        ),
        (
            ":Sending rotation degree=90, persist=false",
            MonkeyEvent::Rotation {
                degree: 90,
                persist: false,
            },
        ),
        (
            ":Sending Flip keyboardOpen=false",
            MonkeyEvent::Flip { open: false },
        ),
        (
            ":Switch: #Intent;action=android.intent.action.MAIN;category=android.intent.category.LAUNCHER;launchFlags=0x10200000;component=com.x/.MainActivity;end",
            MonkeyEvent::Switch {
                component: Some("com.x/.MainActivity".into()),
            },
        ),
    ];
    for (line, want) in cases {
        let log = parse_monkey_log(line);
        assert!(log.malformed.is_empty(), "{line}: {:?}", log.malformed);
        assert_eq!(log.events, [want], "{line}");
    }
}

#[test]
fn fixture_gestures() {
    let g = fixture_log().gestures();
    assert_eq!(g.len(), 36);
    let kind = |g: &Gesture| match g {
        Gesture::Tap { .. } => "tap",
        Gesture::Drag { .. } => "drag",
        Gesture::Key { .. } => "key",
        Gesture::Switch { .. } => "switch",
        Gesture::Other(_) => "other",
    };
    let n = |k: &str| g.iter().filter(|x| kind(x) == k).count();
    for (k, want) in [
        ("switch", 3),
        ("tap", 20),
        ("drag", 2),
        ("key", 6),
        ("other", 5),
    ] {
        assert_eq!(n(k), want, "{k}");
    }
    assert_eq!(
        g[0],
        Gesture::Switch {
            component: Some("org.example.notes/.MainActivity".into())
        }
    );
    assert_eq!(g[1], Gesture::Tap { x: 540.0, y: 300.0 });
    assert_eq!(g[4], Gesture::Other("trackball (3 events)".into()));
    assert_eq!(
        g[7],
        Gesture::Drag {
            from: (300.0, 800.0),
            to: (350.0, 1300.0)
        }
    );
    assert_eq!(
        g[8],
        Gesture::Key {
            code: 4,
            name: Some("KEYCODE_BACK".into())
        }
    );
    assert_eq!(g[10], Gesture::Other("rotation 1".into()));
    // The touch whose UP was cut off ends when the BACK key comes.
    assert_eq!(
        g[23],
        Gesture::Tap {
            x: 540.0,
            y: 1790.0
        }
    );
    assert!(matches!(g[24], Gesture::Key { code: 4, .. }));
    // The touch still down at the end of the log is a tap.
    assert_eq!(
        g[35],
        Gesture::Tap {
            x: 300.0,
            y: 1000.0
        }
    );
}

#[test]
fn gesture_grouping_rules() {
    let cases: [(&str, Vec<Gesture>); 5] = [
        (
            // Moved 9.9 px: still a tap, at the DOWN point.
            ":Sending Touch (ACTION_DOWN): 0:(100.0,100.0)\n:Sending Touch (ACTION_UP): 0:(109.9,100.0)",
            vec![Gesture::Tap { x: 100.0, y: 100.0 }],
        ),
        (
            // Wandered 40 px away and came back: a drag.
            ":Sending Touch (ACTION_DOWN): 0:(100.0,100.0)\n:Sending Touch (ACTION_MOVE): 0:(140.0,100.0)\n:Sending Touch (ACTION_UP): 0:(101.0,100.0)",
            vec![Gesture::Drag {
                from: (100.0, 100.0),
                to: (101.0, 100.0),
            }],
        ),
        (
            ":Sending Touch (ACTION_DOWN): 0:(1.0,1.0)\n:Sending Touch (ACTION_POINTER_DOWN 1): 0:(1.0,1.0) 1:(50.0,50.0)\n:Sending Touch (ACTION_POINTER_UP 1): 0:(1.0,1.0) 1:(60.0,60.0)\n:Sending Touch (ACTION_UP): 0:(1.0,1.0)",
            vec![Gesture::Other("multi-finger touch".into())],
        ),
        (
            ":Sending Touch (ACTION_UP): 0:(1.0,1.0)\n:Sending Key (ACTION_UP): 4    // KEYCODE_BACK\n:Sending Flip keyboardOpen=true",
            vec![Gesture::Other("keyboard opened".into())],
        ),
        (
            ":Sending Touch (ACTION_DOWN): 0:(5.0,5.0)\n:Sending Touch (ACTION_CANCEL): 0:(5.0,5.0)\n:Sending Touch (ACTION_DOWN): 0:(7.0,7.0)",
            vec![
                Gesture::Other("cancelled touch".into()),
                Gesture::Tap { x: 7.0, y: 7.0 },
            ],
        ),
    ];
    for (text, want) in cases {
        assert_eq!(parse_monkey_log(text).gestures(), want, "{text}");
    }
}

#[test]
fn crash_and_anr_blocks() {
    let text = "\
:Monkey: seed=7 count=50
:Sending Touch (ACTION_DOWN): 0:(10.0,20.0)
// CRASH: com.x (pid 1234)
// Short Msg: java.lang.NullPointerException
// Long Msg: java.lang.NullPointerException: Attempt to invoke virtual method 'int java.lang.String.length()' on a null object reference
// Build Label: google/sdk_gphone_x86/generic_x86:11/RSR1.201013.001/6903271:userdebug/dev-keys
// java.lang.NullPointerException: Attempt to invoke virtual method
// \tat com.x.MainActivity.onClick(MainActivity.java:42)
//
// NOT RESPONDING: com.y (pid 4321)
ANR in com.y (com.y/.MainActivity)
PID: 4321
Reason: Input dispatching timed out (Waiting to send non-key event)
Load: 2.14 / 1.98 / 1.32
** Monkey aborted due to error.
Events injected: 12
";
    let log = parse_monkey_log(text);
    assert_eq!(log.crashes.len(), 2);
    let c = &log.crashes[0];
    assert_eq!(c.kind, CrashKind::Crash);
    assert_eq!(c.package, "com.x");
    assert_eq!(c.pid, Some(1234));
    assert_eq!(
        c.message,
        "java.lang.NullPointerException: Attempt to invoke virtual method 'int java.lang.String.length()' on a null object reference"
    );
    let a = &log.crashes[1];
    assert_eq!(a.kind, CrashKind::Anr);
    assert_eq!(a.package, "com.y");
    assert_eq!(a.pid, Some(4321));
    assert_eq!(
        a.message,
        "Input dispatching timed out (Waiting to send non-key event)"
    );
    assert!(log.aborted);
    assert!(!log.finished);
    assert_eq!(log.injected, Some(12));
    assert_eq!(log.events.len(), 1);
}

#[test]
fn garbage_never_panics() {
    let nasty = [
        ":Sending",
        ":Sending ",
        ":Sending Touch",
        ":Sending Touch (",
        ":Sending Touch ()",
        ":Sending Touch (ACTION_DOWN):",
        ":Sending Touch (ACTION_DOWN): :",
        ":Sending Touch (ACTION_DOWN): 0:(NaN,1.0)",
        ":Sending Touch (ACTION_DOWN): 0:(1e999,1.0)",
        ":Sending Touch (ACTION_DOWN): x:(1.0,1.0)",
        ":Sending Touch (ACTION_DOWN): 0:(1.0,1.0",
        ":Sending Trackball (ACTION_MOVE): ",
        ":Sending Key (ACTION_DOWN): ",
        ":Sending Key (ACTION_DOWN): -4    // KEYCODE_BACK",
        ":Sending Key (ACTION_SIDEWAYS): 4",
        ":Sending Key ACTION_DOWN: 4",
        ":Sending rotation degree=",
        ":Sending rotation persist=true",
        ":Sending Flip keyboardOpen=perhaps",
        ":Sending Hover (ACTION_HOVER_MOVE): 0:(1.0,1.0)",
        ":Switch:",
        ":Switch: #Intent;component=com.x/.A",
        ":Switch: https://example.org",
        ":Monkey: seed=-1 count=lots",
        ":Dropped: keys=many",
        ":Dropped:",
        "Events injected: ",
        "## Network stats: elapsed time=ms",
        "// CRASH:",
        "// Long Msg: no crash open",
        "//   x: y%",
        "// Event percentages:",
        "//   0: %",
        "Reason: nothing open",
        "\u{0}\u{7f}\u{feff}:Sending Touch (ACTION_DOWN): 0:(1.0,1.0)",
        ":Sending Touch (ACTION_DOWN): 0:(１.0,2.0)",
        "ünïcödé :Sending 💥",
    ];
    let text = nasty.join("\n");
    let log = parse_monkey_log(&text);
    // Each line is tried alone too, so a line cannot hide behind its neighbours.
    for line in nasty {
        let one = parse_monkey_log(line);
        let _ = one.gestures();
    }
    let _ = log.gestures();
    assert!(log.events.is_empty(), "{:?}", log.events);
    let sending = nasty
        .iter()
        .filter(|l| l.starts_with(":Sending") || l.starts_with(":Switch:"))
        .count();
    assert_eq!(
        log.malformed
            .iter()
            .filter(|m| m.text.starts_with(":Sending") || m.text.starts_with(":Switch:"))
            .count(),
        sending
    );
}

#[test]
fn dump_parses_every_field() {
    let main = dump("MainActivity.xml");
    assert_eq!(main.rotation, 0);
    assert_eq!(main.roots.len(), 1);
    assert_eq!(main.roots[0].bounds, [0, 0, 1080, 1920]);
    let fab = main
        .nodes()
        .into_iter()
        .find(|n| n.resource_id == "org.example.notes:id/fab_new_note")
        .unwrap();
    assert_eq!(fab.class, "android.widget.ImageButton");
    assert_eq!(fab.package, "org.example.notes");
    assert_eq!(fab.content_desc, "New note");
    assert_eq!(fab.index, 2);
    assert_eq!(fab.bounds, [864, 1704, 1017, 1857]);
    assert!(fab.clickable && fab.enabled && fab.focusable);
    assert!(!fab.checkable && !fab.checked && !fab.long_clickable && !fab.scrollable);
    let settings = dump("SettingsActivity.xml");
    let sync = settings
        .nodes()
        .into_iter()
        .find(|n| n.text == "Sync notes")
        .unwrap();
    assert!(sync.checkable && sync.checked);
    assert_eq!(main.nodes().len(), 18);
}

#[test]
fn control_at_cases() {
    let main = dump("MainActivity.xml");
    let edit = dump("EditActivity.xml");
    // (dump, x, y, resource id of the control reached, or None)
    let cases: [(&UiDump, f64, f64, Option<&str>); 9] = [
        (
            &main,
            940.0,
            1780.0,
            Some("org.example.notes:id/fab_new_note"),
        ),
        // The top-left corner is inside, the bottom-right edge outside.
        (
            &main,
            864.0,
            1704.0,
            Some("org.example.notes:id/fab_new_note"),
        ),
        (&main, 1017.0, 1780.0, None),
        (
            &main,
            1026.0,
            136.0,
            Some("org.example.notes:id/action_settings"),
        ),
        // The menu's padding left of the first action: no control.
        (&main, 850.0, 100.0, None),
        // A text inside a clickable list row: the row takes the tap.
        (&main, 500.0, 260.0, Some("org.example.notes:id/note_row")),
        (&main, 540.0, 1200.0, None),
        (
            &edit,
            540.0,
            1800.0,
            Some("org.example.notes:id/button_save"),
        ),
        (&edit, -5.0, 3000.0, None),
    ];
    for (d, x, y, want) in cases {
        let got = d.control_at(x, y).map(|n| n.resource_id.as_str());
        assert_eq!(got, want, "tap at ({x}, {y})");
    }
}

#[test]
fn control_at_nesting_and_disabled() {
    let xml = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="x:id/card" class="android.widget.LinearLayout" package="x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][500,500]"><node index="0" text="OK" resource-id="x:id/ok" class="android.widget.Button" package="x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][100,100]" /><node index="1" text="" resource-id="x:id/over" class="android.widget.ImageView" package="x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[50,50][150,150]" /><node index="2" text="Off" resource-id="x:id/off" class="android.widget.Button" package="x" content-desc="" checkable="false" checked="false" clickable="true" enabled="false" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[300,300][400,400]" /><node index="3" text="" resource-id="x:id/check" class="android.widget.CheckBox" package="x" content-desc="Agree" checkable="true" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,400][100,500]" /></node></hierarchy>"#;
    let d = UiDump::parse(xml).unwrap();
    let at = |x, y| d.control_at(x, y).map(|n| n.resource_id.as_str());
    // The nested button wins over the clickable card around it.
    assert_eq!(at(10.0, 10.0), Some("x:id/ok"));
    // Where two siblings overlap, the later (drawn on top) one wins.
    assert_eq!(at(75.0, 75.0), Some("x:id/over"));
    // Off the children, the card itself.
    assert_eq!(at(250.0, 250.0), Some("x:id/card"));
    // A disabled button swallows the tap: nothing reacts.
    assert_eq!(at(350.0, 350.0), None);
    // A checkable view takes taps.
    assert_eq!(at(50.0, 450.0), Some("x:id/check"));
}

#[test]
fn bad_dumps_name_the_problem() {
    let cases = [
        ("<hierarchy><node", "not XML"),
        ("<html/>", "<html>"),
        (
            r#"<hierarchy rotation="0"><node index="0" bounds="[0,0][10,10]"><node index="3" bounds="[0,0][10"/></node></hierarchy>"#,
            "node 0/3: bounds `[0,0][10`",
        ),
        (
            r#"<hierarchy><node index="0" bounds="[10,10][0,0]"/></hierarchy>"#,
            "node 0: bounds",
        ),
        (
            r#"<hierarchy><node index="0" bounds="[0,0][1,1]"><node index="1"/></node></hierarchy>"#,
            "node 0/1 has no bounds",
        ),
        (
            r#"<hierarchy><node index="0" clickable="yes" bounds="[0,0][1,1]"/></hierarchy>"#,
            "node 0: clickable=`yes`",
        ),
    ];
    for (xml, want) in cases {
        let e = UiDump::parse(xml).unwrap_err();
        assert!(e.contains(want), "{xml}: {e}");
    }
}

#[test]
fn dumps_nested_deeper_than_the_limit_are_refused_without_overflowing_the_stack() {
    let max = gui_core::UiHierarchy::MAX_DEPTH;
    let nested = |depth: usize| {
        let node = r#"<node index="0" bounds="[0,0][1,1]">"#;
        format!(
            "<hierarchy>{}{}</hierarchy>",
            node.repeat(depth),
            "</node>".repeat(depth)
        )
    };
    // The deepest chain allowed (`<hierarchy>` counts as a level) reads in full.
    let d = UiDump::parse(&nested(max - 1)).unwrap();
    assert_eq!(d.nodes().len(), max - 1);
    for depth in [max, 100_000] {
        let e = UiDump::parse(&nested(depth)).unwrap_err();
        assert!(e.contains("more than 512 levels deep"), "{e}");
    }
}

#[test]
fn dump_files_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("MainActivity.xml");
    std::fs::write(
        &bad,
        "<hierarchy><node index=\"0\" bounds=\"[0,0]\"/></hierarchy>",
    )
    .unwrap();
    let e = UiDump::load(&bad).unwrap_err();
    assert!(
        matches!(e, Error::BadFile { ref path, .. } if *path == bad),
        "{e}"
    );
    assert!(e.to_string().contains("MainActivity.xml"), "{e}");
    let e = DumpSet::load_dir(dir.path()).unwrap_err();
    assert!(e.to_string().contains("MainActivity.xml"), "{e}");

    let missing = dir.path().join("no-such-dir");
    let e = DumpSet::load_dir(&missing).unwrap_err();
    assert!(
        matches!(e, Error::Io { ref path, .. } if *path == missing),
        "{e}"
    );
    assert!(e.to_string().contains("no-such-dir"), "{e}");
}

#[test]
fn dump_set_loads_one_dump_per_screen() {
    let set = dumps();
    let screens: Vec<&str> = set.screens().collect();
    assert_eq!(
        screens,
        ["EditActivity", "MainActivity", "SettingsActivity"]
    );
}

/// Gesture by gesture (numbers from 1), with the stack after it:
///
/// 1 switch → [Main]; 2 tap on a note row (no vertex) miss; 3 tap New note: hit
/// `ui:newNote` → [Main, Edit]; 4 tap the text field: hit `ui:noteText`; 5 trackball;
/// 6 tap Navigate up (no vertex) miss; 7 tap Save: hit `ui:save`, finish → [Main];
/// 8 drag; 9 BACK → [] (left 1); 10 tap outside the app; 11 rotation; 12 switch →
/// [Main]; 13 tap Settings: hit `ui:settings` → [Main, Settings]; 14 tap Dark theme:
/// hit `ui:darkTheme`; 15 tap below the switches, miss; (malformed DOWN, its UP is
/// dropped) 16 tap Dark theme again: hit; 17 BACK → [Main]; 18 tap Search (matched by
/// content description): hit `ui:search`; 19 flip; 20 tap the menu padding, miss;
/// 21 tap the title, miss; 22 MENU; 23 tap New note: hit → [Main, Edit]; 24 tap Save
/// (its UP malformed, ended by the BACK that follows): hit → [Main]; 25 BACK → []
/// (left 2); 26 tap and 27 BACK outside the app; 28 switch → [Main]; 29 tap a row,
/// miss; 30 trackball; 31 drag; 32 tap Settings: hit → [Main, Settings]; 33 rotation;
/// 34 tap Navigate up, miss; 35 BACK → [Main]; 36 unfinished tap on the empty list, miss.
#[test]
fn fixture_maps_onto_the_model() {
    let model = model();
    let run = map_monkey_log(&model, &fixture_log(), &dumps(), &MapConfig::default()).unwrap();
    assert_eq!(run.events, 36);
    assert_eq!(run.hits, 10);
    assert_eq!(
        run.covered,
        [
            "ui:newNote",
            "ui:noteText",
            "ui:save",
            "ui:settings",
            "ui:darkTheme",
            "ui:search"
        ]
    );
    assert_eq!(run.interface_coverage, 6.0 / 7.0);
    assert_eq!(run.left_app, 2);
    assert!(run.screens_without_dump.is_empty());
    assert_eq!(run.hit_rate(), 10.0 / 36.0);

    assert_eq!(run.curve.len(), 36);
    for (i, w) in run.curve.windows(2).enumerate() {
        assert_eq!(w[0].0, i + 1);
        assert!(w[1].1 >= w[0].1, "coverage fell at gesture {}", i + 2);
    }
    // Where coverage rose: after gestures 3, 4, 7, 13, 14 and 18.
    let rises: Vec<(usize, f64)> = std::iter::once((0, 0.0))
        .chain(run.curve.iter().copied())
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[1].1 > w[0].1)
        .map(|w| w[1])
        .collect();
    let want: Vec<(usize, f64)> = [3, 4, 7, 13, 14, 18]
        .iter()
        .enumerate()
        .map(|(k, &g)| (g, (k + 1) as f64 / 7.0))
        .collect();
    assert_eq!(rises, want);
    assert_eq!(run.curve.last().unwrap().1, run.interface_coverage);
}

#[test]
fn taps_on_a_screen_without_dump_are_misses() {
    let model = model();
    let mut set = dumps();
    set.remove("SettingsActivity");
    let run = map_monkey_log(&model, &fixture_log(), &set, &MapConfig::default()).unwrap();
    assert_eq!(run.screens_without_dump, ["SettingsActivity"]);
    // Gestures 14 and 16 (Dark theme) are no longer hits.
    assert_eq!(run.hits, 8);
    assert_eq!(
        run.covered,
        [
            "ui:newNote",
            "ui:noteText",
            "ui:save",
            "ui:settings",
            "ui:search"
        ]
    );
    assert_eq!(run.interface_coverage, 5.0 / 7.0);
}

#[test]
fn a_wider_tap_slop_turns_drags_into_taps() {
    let model = model();
    let log = parse_monkey_log(
        ":Sending Touch (ACTION_DOWN): 0:(940.0,1780.0)\n:Sending Touch (ACTION_UP): 0:(940.0,1760.0)",
    );
    let strict = map_monkey_log(&model, &log, &dumps(), &MapConfig::default()).unwrap();
    assert_eq!(strict.hits, 0);
    let loose = MapConfig { tap_slop_px: 30.0 };
    let run = map_monkey_log(&model, &log, &dumps(), &loose).unwrap();
    assert_eq!(run.hits, 1);
    assert_eq!(run.covered, ["ui:newNote"]);
}

#[test]
fn home_leaves_the_app_until_the_next_switch() {
    let model = model();
    let log = parse_monkey_log(
        "\
:Sending Key (ACTION_DOWN): 3    // KEYCODE_HOME
:Sending Key (ACTION_UP): 3    // KEYCODE_HOME
:Sending Touch (ACTION_DOWN): 0:(940.0,1780.0)
:Sending Touch (ACTION_UP): 0:(940.0,1780.0)
:Switch: #Intent;action=android.intent.action.MAIN;component=org.example.notes/.MainActivity;end
:Sending Touch (ACTION_DOWN): 0:(940.0,1780.0)
:Sending Touch (ACTION_UP): 0:(940.0,1780.0)
",
    );
    let run = map_monkey_log(&model, &log, &dumps(), &MapConfig::default()).unwrap();
    assert_eq!((run.events, run.hits, run.left_app), (4, 1, 1));
    assert_eq!(run.curve, [(1, 0.0), (2, 0.0), (3, 0.0), (4, 1.0 / 7.0)]);
}

#[test]
fn controls_match_vertices_by_id_before_text() {
    let model: AppModel = serde_json::from_str(
        r#"{
          "app": "x", "launch": "A", "screens": [{ "name": "A" }],
          "vertices": [
            { "id": "ui:plainOk", "type": "ui", "screens": ["A"], "label": "OK" },
            { "id": "ui:dialogOk", "type": "ui", "screens": ["A"], "label": "OK",
              "locator": { "resource_id": "x:id/dialog_ok" } },
            { "id": "ui:cancel", "type": "ui", "screens": ["A"], "label": "Cancel",
              "locator": { "resource_id": "x:id/cancel", "text": "CANCEL" } }
          ],
          "edges": []
        }"#,
    )
    .unwrap();
    let node = |id: &str, text: &str, x1: i32| {
        format!(
            r#"<node index="0" text="{text}" resource-id="{id}" class="android.widget.Button" package="x" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[{x1},0][{},100]" />"#,
            x1 + 100
        )
    };
    let xml = format!(
        r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="x" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1000,1000]">{}{}{}{}</node></hierarchy>"#,
        node("x:id/dialog_ok", "OK", 0),
        node("x:id/cancel", "Cancel?", 100),
        node("x:id/other_ok", "OK", 200),
        node("x:id/cancel_button", "CANCEL", 300),
    );
    let mut set = DumpSet::new();
    set.insert("A", UiDump::parse(&xml).unwrap());
    // (tap x, the vertex it should touch)
    let cases = [
        // The id wins over the vertex listed first with the same caption.
        (50.0, Some("ui:dialogOk")),
        // Same id, different text: still that vertex.
        (150.0, Some("ui:cancel")),
        // Another id with the caption "OK": only the vertex without an id can be it.
        (250.0, Some("ui:plainOk")),
        // The locator text matches but the ids differ: not that vertex.
        (350.0, None),
    ];
    for (x, want) in cases {
        let log = parse_monkey_log(&format!(
            ":Sending Touch (ACTION_DOWN): 0:({x},50.0)\n:Sending Touch (ACTION_UP): 0:({x},50.0)"
        ));
        let run = map_monkey_log(&model, &log, &set, &MapConfig::default()).unwrap();
        let got: Vec<&str> = run.covered.iter().map(String::as_str).collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "tap at x={x}");
    }
}
