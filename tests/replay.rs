//! The `replay` binary on a real Chromium: the demo's bug A, recorded by a scripted run,
//! comes back when the run is replayed on a fresh browser and app server.
//!
//! Needs Debian's Chromium (`cargo xtask setup`); without it the test fails saying so.

mod common;
use common::{center_of, launch};

use std::process::Command;

use gui_core::{Action, ActionKind, Point};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_explore::{ExploreConfig, FixedThrottle, RunRecorder, Scripted, explore};

/// Clicks `points` in order on a fresh start of `device`, recorded into `dir/name`, and
/// checks the run found exactly one bug.
fn record_clicks(
    device: &mut ChromiumDevice,
    points: Vec<Point>,
    throttle_ms: u64,
    dir: &std::path::Path,
    name: &str,
) -> std::path::PathBuf {
    device.restart().unwrap();
    let script: Vec<Action> = points
        .into_iter()
        .map(|p| Action::at(ActionKind::Click, p))
        .collect();
    let steps = script.len() as u64;
    let run_dir = dir.join(name);
    let mut recorder =
        RunRecorder::create(&run_dir, &serde_json::json!({"strategy": "scripted"})).unwrap();
    let config = ExploreConfig {
        steps: Some(steps),
        ..ExploreConfig::default()
    };
    let summary = explore(
        device,
        &mut Scripted::new(script),
        &mut FixedThrottle::ms(throttle_ms),
        &mut recorder,
        &config,
    )
    .unwrap();
    assert_eq!(summary.steps, steps);
    assert_eq!(summary.unique_signals, 1, "{:?}", summary.signal_counts);
    run_dir
}

/// Records the bug-A sequence (list → select all → archive → undo) with two padding clicks
/// on the home counter first, and returns the run folder.
fn record_bug_a(dir: &std::path::Path) -> std::path::PathBuf {
    let server = StaticServer::demo().expect("serve demo app");
    let mut device = launch(&server.url(), ChromiumConfig::default());
    let counter = center_of(&mut device, "#home-counter-btn");
    let nav_list = center_of(&mut device, "#nav-list");
    device
        .perform(&Action::at(ActionKind::Click, nav_list))
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let [all, archive, undo] =
        ["#list-select-all", "#list-archive", "#list-undo"].map(|s| center_of(&mut device, s));
    let points = vec![counter, counter, nav_list, all, archive, undo];
    record_clicks(&mut device, points, 100, dir, "original")
}

fn replay(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_replay"))
        .args(args)
        .output()
        .expect("run replay")
}

/// Runs `replay`, checks it exited 0 (every bug came back), and returns its stdout.
fn replay_ok(args: &[&str]) -> String {
    let out = replay(args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn a_recorded_bug_is_reproduced_by_replay_and_an_early_cut_has_none() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = record_bug_a(tmp.path());
    let run = run_dir.to_str().unwrap();

    let out_dir = tmp.path().join("replayed");
    let stdout = replay_ok(&[run, "--throttle", "100", "--out", out_dir.to_str().unwrap()]);
    assert!(
        stdout.contains("reproduced at step 6 (originally step 6)"),
        "{stdout}"
    );
    assert!(stdout.contains("undoArchive@/app.js"), "{stdout}");
    assert!(out_dir.join("report.html").is_file());

    // Cut before the bug: nothing to reproduce.
    let cut = tmp.path().join("cut");
    let stdout = replay_ok(&[
        run,
        "--until-step",
        "3",
        "--throttle",
        "100",
        "--out",
        cut.to_str().unwrap(),
    ]);
    assert!(stdout.contains("no bug up to step 3"), "{stdout}");

    let missing = tmp.path().join("missing");
    let out = replay(&[missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
}

/// Records bug A's three clicks on a fresh `#/list`, hidden among 37 clicks that change
/// nothing (the heading, the item count, the empty text field), and returns the run folder.
fn record_padded_bug_a(dir: &std::path::Path, server: &StaticServer) -> std::path::PathBuf {
    let mut device = launch(
        &format!("{}#/list", server.url()),
        ChromiumConfig::default(),
    );
    let pads = ["#screen-list h2", "#list-count", "#list-new"].map(|s| center_of(&mut device, s));
    let [all, archive, undo] =
        ["#list-select-all", "#list-archive", "#list-undo"].map(|s| center_of(&mut device, s));
    let mut points: Vec<_> = (0..37).map(|i| pads[i % pads.len()]).collect();
    points.insert(12, all);
    points.insert(25, archive);
    points.push(undo);
    record_clicks(&mut device, points, 30, dir, "padded")
}

#[test]
fn minimisation_shrinks_a_padded_40_step_sequence_to_the_3_steps_of_bug_a() {
    let tmp = tempfile::tempdir().unwrap();
    let server = StaticServer::demo().expect("serve demo app");
    let run_dir = record_padded_bug_a(tmp.path(), &server);
    let run = run_dir.to_str().unwrap();
    let url = format!("{}#/list", server.url());
    let out_dir = tmp.path().join("minimised");
    let stdout = replay_ok(&[
        run,
        "--url",
        &url,
        "--throttle",
        "30",
        "--minimise",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    eprintln!("{stdout}");
    assert!(stdout.contains("minimised 40 steps to 3 in "), "{stdout}");
    let found: Vec<gui_explore::Minimised> =
        serde_json::from_slice(&std::fs::read(out_dir.join("minimised.json")).unwrap()).unwrap();
    assert_eq!(found.len(), 1);
    // Select all, Archive and Undo were steps 13, 26 and 40 of the padded run.
    assert_eq!(found[0].steps, vec![13, 26, 40]);
    assert!(found[0].confirmed);
    assert!(
        found[0].key.contains("undoArchive@/app.js"),
        "{}",
        found[0].key
    );
    let report = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        report.contains("--only-steps 13,26,40"),
        "the report shows the minimised replay"
    );

    // The minimised steps alone reproduce the bug.
    let again = tmp.path().join("again");
    let stdout = replay_ok(&[
        run,
        "--url",
        &url,
        "--only-steps",
        "13,26,40",
        "--throttle",
        "30",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(
        stdout.contains("reproduced at step 3 (originally step 40)"),
        "{stdout}"
    );
}
