//! The strategy binaries over every page of the gauntlet (`tests/gauntlet/`), as a user
//! runs them: `monkey` and `pirltest`, a few steps each. From the run folder they assert
//! what a user would see:
//! - no false crash or hang signal, and no lost device, on the pages where nothing is
//!   wrong;
//! - the real hang and the real renderer crash each reported exactly once;
//! - the dialog, tab and leave events of the pages that cause them on a click recorded
//!   (by one strategy at least: in a few steps, PIRLTest may middle-click a link where
//!   Monkey left-clicks it; `tests/gauntlet.rs` checks each event on the device).
//!
//! Step times are not asserted here; `cargo xtask gauntlet` measures them.
//! They need Debian's Chromium (`cargo xtask setup` installs it).

use std::process::Command;

use gui_explore::{EventRecord, SignalRecord};
use gui_report::RunFolder;
use gui_testing::gauntlet::{Expect, GauntletServer, PAGES, page_named, pages_dir};

/// Steps per run: enough for a strategy to click the page's button a few times. The real
/// failures cost a timeout and a browser restart each time they are hit, and need fewer.
const STEPS: &str = "10";
const FAILURE_STEPS: &str = "4";

/// Runs `strategy` on page `name`, checks its run folder and returns its events.
fn run(strategy: &str, name: &str) -> Vec<EventRecord> {
    let page = page_named(name).expect("a gauntlet page");
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let exe = match strategy {
        "monkey" => env!("CARGO_BIN_EXE_monkey"),
        _ => env!("CARGO_BIN_EXE_pirltest"),
    };
    let mut cmd = Command::new(exe);
    let steps = match page.expect {
        Expect::Fine => STEPS,
        Expect::Hang | Expect::Crash => FAILURE_STEPS,
    };
    cmd.args(["--url", &server.url(name), "--steps", steps, "--seed", "1"])
        .args(["--throttle", "100", "--hang-after", "3", "--out"])
        .arg(&out);
    if !page.chromium_args.is_empty() {
        cmd.args(["--js-heap-mb", "64"]);
    }
    let output = cmd.output().expect("run the strategy binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{strategy} on {name} failed (is Chromium installed? `cargo xtask setup`):\n{stderr}"
    );
    let run = RunFolder::load(&out).unwrap_or_else(|e| panic!("{strategy} on {name}: {e}"));
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
    let (signals, events) = (run.signals, run.events);
    let crashes: Vec<&SignalRecord> = signals
        .iter()
        .filter(|s| s.kind == gui_core::SignalKind::Crash)
        .collect();
    let lost: Vec<&EventRecord> = events.iter().filter(|e| e.event == "device_lost").collect();
    match page.expect {
        Expect::Fine => {
            assert!(
                crashes.is_empty(),
                "{strategy} on {name}: false crash {crashes:?}"
            );
            assert!(
                lost.is_empty(),
                "{strategy} on {name}: device lost {lost:?}"
            );
        }
        Expect::Hang | Expect::Crash => {
            let want = if page.expect == Expect::Hang {
                "the page stopped answering (hang)"
            } else {
                "the page's renderer process crashed"
            };
            assert_eq!(crashes.len(), 1, "{strategy} on {name}: {crashes:?}");
            assert!(
                crashes[0].message.starts_with(want),
                "{strategy} on {name}: {}",
                crashes[0].message
            );
            assert!(
                !lost.is_empty(),
                "{strategy} on {name}: the failure was not hit"
            );
        }
    }
    events
}

/// Both strategies on page `name`; the page's events (where a click causes them) must be
/// recorded by one of them at least.
fn both(name: &str) {
    let page = page_named(name).expect("a gauntlet page");
    let mut events = run("monkey", name);
    events.extend(run("pirltest", name));
    if page.trigger == gui_core::ActionKind::Click {
        for kind in page.events {
            assert!(
                events.iter().any(|e| e.event == kind.name()),
                "{name}: no {} event in {events:?}",
                kind.name()
            );
        }
    }
}

/// A test per page, each running both strategies.
macro_rules! pages {
    ($($test:ident: $name:literal;)*) => {$(
        #[test]
        fn $test() {
            both($name);
        }
    )*};
}

pages! {
    plain: "plain";
    alert: "alert";
    confirm: "confirm";
    prompt: "prompt";
    dialog_timer: "dialog-timer";
    dialog_flood: "dialog-flood";
    beforeunload: "beforeunload";
    popup: "popup";
    blank_link: "blank-link";
    middle_click: "middle-click";
    window_close: "window-close";
    file_input: "file-input";
    download: "download";
    print: "print";
    fullscreen: "fullscreen";
    permissions: "permissions";
    basic_auth: "basic-auth";
    other_origin: "other-origin";
    unreachable: "unreachable";
    never_loads: "never-loads";
    cross_origin_iframe: "cross-origin-iframe";
    hang: "hang";
    crash: "crash";
}

#[test]
fn every_page_is_run_here() {
    let src = include_str!("gauntlet_runs.rs");
    for p in PAGES {
        assert!(
            src.contains(&format!("\"{}\";", p.name)),
            "gauntlet page {} is not run here",
            p.name
        );
    }
}
