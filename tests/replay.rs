//! The `replay` binary on a real Chromium: the demo's bug A, recorded by a scripted run,
//! comes back when the run is replayed on a fresh browser and app server.
//!
//! Needs Debian's Chromium (`cargo xtask setup`); without it the test fails saying so.

use std::process::Command;

use gui_core::{Action, ActionKind};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_explore::{ExploreConfig, FixedThrottle, RunRecorder, Scripted, explore};

/// Records the bug-A sequence (list → select all → archive → undo) with two padding clicks
/// on the home counter first, and returns the run folder.
fn record_bug_a(dir: &std::path::Path) -> std::path::PathBuf {
    let server = StaticServer::demo().expect("serve demo app");
    let mut device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())
        .unwrap_or_else(|e| panic!("cannot start Chromium for the browser tests: {e}"));
    let center = |d: &mut ChromiumDevice, sel: &str| {
        d.element_rect(sel)
            .unwrap()
            .unwrap_or_else(|| panic!("{sel} not on the page"))
            .center()
    };
    let counter = center(&mut device, "#home-counter-btn");
    let nav_list = center(&mut device, "#nav-list");
    device
        .perform(&Action::at(ActionKind::Click, nav_list))
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let [all, archive, undo] =
        ["#list-select-all", "#list-archive", "#list-undo"].map(|s| center(&mut device, s));
    device.restart().unwrap();
    let script: Vec<Action> = [counter, counter, nav_list, all, archive, undo]
        .into_iter()
        .map(|p| Action::at(ActionKind::Click, p))
        .collect();
    let run_dir = dir.join("original");
    let mut recorder =
        RunRecorder::create(&run_dir, &serde_json::json!({"strategy": "scripted"})).unwrap();
    let config = ExploreConfig {
        steps: Some(script.len() as u64),
        ..ExploreConfig::default()
    };
    let summary = explore(
        &mut device,
        &mut Scripted::new(script),
        &mut FixedThrottle::ms(100),
        &mut recorder,
        &config,
    )
    .unwrap();
    assert_eq!(summary.unique_signals, 1, "{:?}", summary.signal_counts);
    run_dir
}

fn replay(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_replay"))
        .args(args)
        .output()
        .expect("run replay")
}

#[test]
fn a_recorded_bug_is_reproduced_by_replay_and_an_early_cut_has_none() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = record_bug_a(tmp.path());
    let run = run_dir.to_str().unwrap();

    let out_dir = tmp.path().join("replayed");
    let out = replay(&[run, "--throttle", "100", "--out", out_dir.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("reproduced at step 6 (originally step 6)"),
        "{stdout}"
    );
    assert!(stdout.contains("undoArchive@/app.js"), "{stdout}");
    assert!(out_dir.join("report.html").is_file());

    // Cut before the bug: nothing to reproduce.
    let cut = tmp.path().join("cut");
    let out = replay(&[
        run,
        "--until-step",
        "3",
        "--throttle",
        "100",
        "--out",
        cut.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("no bug up to step 3"), "{stdout}");

    let missing = tmp.path().join("missing");
    let out = replay(&[missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
}
