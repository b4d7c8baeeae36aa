//! The grey-box pipeline on the real Swing app of Listing 1 (tests/data/listing1/java)
//! under Xvfb: rip it through its pixels, analyse its class files, build the EDG,
//! generate sequences (Algorithms 1-3) and replay them until the NullPointerException of
//! ⟨e3, e4, e2⟩ shows up. `tests/listing1_model.rs` checks the same steps on a model.
//!
//! Needs Xvfb, a JDK and the PP-OCR models; without them it fails saying what to install.

use std::path::Path;
use std::time::Instant;

use gui_core::{Rect, SignalKind, Size};
use gui_greybox::desktop::SwingApp;
use gui_greybox::java::compile_java;
use gui_greybox::{
    Edg, Efg, HandlerRef, ReplayConfig, RipConfig, abstract_sequences, blackbox_sequences,
    executable_sequences, replay, rip,
};

/// Labels of a set of event indices, in index order.
fn labels<'e>(efg: &'e Efg, events: impl IntoIterator<Item = &'e usize>) -> Vec<&'e str> {
    events
        .into_iter()
        .map(|&i| efg.events[i].label.as_str())
        .collect()
}

fn launch(classes: &Path) -> SwingApp {
    SwingApp::launch(&[classes.to_path_buf()], "MainWindow", Size::new(640, 480)).unwrap_or_else(
        |e| {
            panic!(
                "cannot run the Swing app of Listing 1; it needs Xvfb (apt-get install xvfb), \
                 a JDK with AWT (apt-get install default-jdk) and the PP-OCR models \
                 (cargo xtask models): {e}"
            )
        },
    )
}

#[test]
fn listing1_swing_app_is_ripped_analysed_and_replayed_end_to_end() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/listing1/java");
    let classes = compile_java(&sources, tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    let compiled = started.elapsed();
    let mut app = launch(&classes);
    assert!(app.class_errors().is_empty(), "{:?}", app.class_errors());
    let launched = started.elapsed();

    // The ripper sees the main window's three buttons, by OCR, in reading order.
    let seen = app.widgets().unwrap();
    let read: Vec<Option<&str>> = seen.iter().map(|w| w.label.as_deref()).collect();
    assert_eq!(read, [Some("e1"), Some("e2"), Some("e3")], "{seen:#?}");
    for (w, x) in seen.iter().zip([20, 140, 260]) {
        // The edge box around each label is its 100x50 button (README.md), so the click
        // lands in the button's middle.
        let button = Rect::new(x, 20, 100, 50);
        assert!(w.rect.iou(&button) > 0.8, "{w:?} is not {button:?}");
    }

    // Figure 1(b).
    let ripped = rip(&mut app, &RipConfig::default()).unwrap();
    let efg = &ripped.efg;
    efg.validate().unwrap();
    assert_eq!(labels(efg, &[0, 1, 2, 3]), ["e1", "e2", "e3", "e4"]);
    let ids: Vec<&str> = efg.events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        ["Listing 1/e1", "Listing 1/e2", "Listing 1/e3", "Dialog/e4"]
    );
    assert_eq!(labels(efg, &efg.initial), ["e1", "e2", "e3"]);
    let follows: Vec<Vec<&str>> = efg.follows.iter().map(|f| labels(efg, f)).collect();
    assert_eq!(
        follows,
        [
            vec!["e1", "e2", "e3"],
            vec!["e1", "e2", "e3"],
            vec!["e4"],
            vec!["e1", "e2", "e3"],
        ]
    );
    assert_eq!(ripped.broken_paths, 0);
    assert!(ripped.signals.is_empty(), "{:?}", ripped.signals);
    for (event, owner) in
        efg.events
            .iter()
            .zip(["MainWindow", "MainWindow", "MainWindow", "Dialog"])
    {
        match event.handlers.as_slice() {
            [HandlerRef::Java { class, name, .. }] => {
                assert_eq!(class, owner, "{event:?}");
                assert!(name.starts_with("lambda$"), "{event:?}");
            }
            other => panic!("{}: one Java handler expected, got {other:?}", event.id),
        }
    }
    let ripped_at = started.elapsed();

    // Algorithm 1 on the handlers' fields. e3's else branch reads `text`, which Figure 2
    // leaves out, so the analysis adds e2 → e3 and e4 → e3 to the paper's three edges.
    let edg = Edg::build(&app.read_writes(efg));
    let mut edges: Vec<(&str, &str)> = (0..edg.len())
        .flat_map(|e| edg.post(e).map(move |(s, _)| (e, s)))
        .map(|(e, s)| (efg.events[e].label.as_str(), efg.events[s].label.as_str()))
        .collect();
    edges.sort();
    assert_eq!(
        edges,
        [
            ("e1", "e3"),
            ("e2", "e2"),
            ("e2", "e3"),
            ("e4", "e2"),
            ("e4", "e3")
        ]
    );

    // Algorithms 2 and 3: the paper's s1..s4.
    let generated = executable_sequences(efg, &abstract_sequences(&edg, 2, Some(1)));
    let sequences: Vec<String> = generated
        .sequences
        .iter()
        .map(|s| labels(efg, &s.events).join(","))
        .collect();
    assert_eq!(sequences, ["e1,e3", "e2,e2", "e3", "e3,e4,e2"]);

    // The replayer finds the bug in ⟨e3, e4, e2⟩ and nowhere else.
    let out = replay(
        &mut app,
        efg,
        &generated.sequences,
        None,
        &ReplayConfig::default(),
    )
    .unwrap();
    assert_eq!(out.broken, 0, "{:?}", out.cases);
    let crashed: Vec<usize> = out
        .cases
        .iter()
        .filter(|c| !c.signals.is_empty())
        .map(|c| c.sequence)
        .collect();
    assert_eq!(crashed, [3], "{:?}", out.cases);
    assert_eq!(out.steps, 2 + 2 + 1 + 3);
    assert_eq!(out.signals.len(), 1, "{:?}", out.signals);
    let (case, signal) = out.signals.values().next().unwrap();
    assert_eq!(*case, 3);
    assert_eq!(signal.kind, SignalKind::UncaughtException);
    assert!(
        signal.message.contains("java.lang.NullPointerException"),
        "{signal:?}"
    );
    assert_eq!(signal.stack[0].function, "MainWindow.e2", "{signal:?}");

    // Table 1: the black-box baseline of length 2.
    assert_eq!(blackbox_sequences(efg, 2).sequences.len(), 10);

    eprintln!(
        "javac {:.1} s, launch {:.1} s, rip {:.1} s ({} events fired), replay {:.1} s, total {:.1} s",
        compiled.as_secs_f64(),
        (launched - compiled).as_secs_f64(),
        (ripped_at - launched).as_secs_f64(),
        ripped.fired,
        out.duration_ms as f64 / 1e3,
        started.elapsed().as_secs_f64()
    );
}
