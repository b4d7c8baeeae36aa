//! The gauntlet on the Chromium device: each page of `tests/gauntlet/` does one thing real
//! web apps do (see `gui_testing::gauntlet`). Here the test clicks what causes it and
//! checks what the device made of it: the right events, no false crash or hang, no lost
//! device, and the app still shown and driven. The real failures (a handler that never
//! returns, a renderer out of memory) must still be reported, once each.
//!
//! `tests/gauntlet_runs.rs` runs the strategy binaries over the same pages.
//!
//! They need Debian's Chromium (`cargo xtask setup` installs it); without it they fail
//! with a message saying so.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use gui_core::{Action, ActionKind, DeviceEventKind, Signal, SignalKind};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, DialogPolicy};
use gui_testing::gauntlet::{Expect, GauntletServer, PAGES, page_named, pages_dir};

/// What a page made the device report after one click on it.
struct Seen {
    kinds: BTreeSet<DeviceEventKind>,
    details: Vec<String>,
    signals: Vec<Signal>,
    lost: Option<String>,
}

fn config_for(name: &str) -> ChromiumConfig {
    let page = page_named(name).expect("a gauntlet page");
    ChromiumConfig {
        extra_args: page.chromium_args.iter().map(|a| (*a).to_owned()).collect(),
        // The real hang is found after this long; the other pages must never get near.
        call_timeout: Duration::from_secs(3),
        ..ChromiumConfig::default()
    }
}

/// Opens page `name`, performs `kind` on its big button and watches the device for a
/// while: until the page's expected events are all seen, or `watch` is over.
fn run_page(
    server: &GauntletServer,
    name: &str,
    kind: ActionKind,
    config: ChromiumConfig,
) -> (ChromiumDevice, Seen) {
    let page = page_named(name).expect("a gauntlet page");
    let mut device = common::launch(&server.url(name), config);
    let mut seen = Seen {
        kinds: BTreeSet::new(),
        details: Vec::new(),
        signals: Vec::new(),
        lost: None,
    };
    let drain = |device: &mut ChromiumDevice, seen: &mut Seen| {
        for e in device.drain_events().expect("drain events") {
            seen.kinds.insert(e.kind);
            seen.details.push(e.to_string());
        }
        seen.signals
            .extend(device.drain_signals().expect("drain signals"));
    };
    drain(&mut device, &mut seen);
    let at = device
        .element_rect("#go")
        .expect("find #go")
        .unwrap_or_else(|| panic!("{name}: no #go on the page"))
        .center();
    if let Err(e) = device.perform(&Action::at(kind, at)) {
        assert!(
            e.is_device_lost(),
            "{name}: {kind} failed without losing the device: {e}"
        );
        seen.lost = Some(e.to_string());
    }
    let start = Instant::now();
    // Long enough for a timer's dialog (300 ms) and a download to begin.
    let (least, most) = (Duration::from_millis(900), Duration::from_secs(8));
    while seen.lost.is_none() {
        match device.screenshot() {
            Ok(_) => {}
            Err(e) if e.is_device_lost() => {
                seen.lost = Some(e.to_string());
                break;
            }
            Err(e) => panic!("{name}: screenshot failed: {e}"),
        }
        drain(&mut device, &mut seen);
        let all = page.events.iter().all(|k| seen.kinds.contains(k));
        let crashed = seen.signals.iter().any(|s| s.kind == SignalKind::Crash);
        if (all && start.elapsed() >= least) || crashed || start.elapsed() >= most {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    (device, seen)
}

/// A page where nothing is wrong: the expected events, no crash or hang, no lost device,
/// the app's page still shown, and a second action still works.
fn fine(name: &str) {
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    let page = page_named(name).unwrap();
    let (mut device, seen) = run_page(&server, name, page.trigger, config_for(name));
    assert_eq!(page.expect, Expect::Fine);
    assert!(
        seen.lost.is_none(),
        "{name}: the device was lost: {:?}",
        seen.lost
    );
    let crashes: Vec<_> = seen
        .signals
        .iter()
        .filter(|s| s.kind == SignalKind::Crash)
        .collect();
    assert!(crashes.is_empty(), "{name}: false crash: {crashes:?}");
    for k in page.events {
        assert!(
            seen.kinds.contains(k),
            "{name}: no {} event; saw {:?}",
            k.name(),
            seen.details
        );
    }
    assert_eq!(device.launches(), 1, "{name}: the browser was restarted");
    // Still the app, and still driven.
    let origin = device.evaluate("location.origin").expect("evaluate");
    assert_eq!(
        origin.as_str(),
        Some(server.url("x").trim_end_matches("/x.html")),
        "{name}: the page left the app: {:?}",
        seen.details
    );
    device
        .perform(&Action::at(ActionKind::Click, gui_core::Point::new(5, 5)))
        .unwrap_or_else(|e| panic!("{name}: a second click failed: {e}"));
    device
        .screenshot()
        .unwrap_or_else(|e| panic!("{name}: no screenshot after: {e}"));
}

/// A real failure: reported once, with the kind of crash the page causes, and the
/// device brought back by a restart.
fn failure(name: &str) {
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    let page = page_named(name).unwrap();
    let (mut device, mut seen) = run_page(&server, name, ActionKind::Click, config_for(name));
    device.restart().expect("restart after the failure");
    seen.signals.extend(device.drain_signals().unwrap());
    let crashes: Vec<&Signal> = seen
        .signals
        .iter()
        .filter(|s| s.kind == SignalKind::Crash)
        .collect();
    assert_eq!(crashes.len(), 1, "{name}: {crashes:?}");
    let want = match page.expect {
        Expect::Hang => "the page stopped answering (hang)",
        Expect::Crash => "the page's renderer process crashed",
        Expect::Fine => unreachable!(),
    };
    assert!(
        crashes[0].message.starts_with(want),
        "{name}: {}",
        crashes[0].message
    );
    device.screenshot().expect("a screenshot after the restart");
}

macro_rules! fine_pages {
    ($($test:ident: $name:literal;)*) => {$(
        #[test]
        fn $test() {
            fine($name);
        }
    )*};
}

fine_pages! {
    a_plain_page_is_clicked_without_events: "plain";
    an_alert_is_answered_at_once: "alert";
    a_confirm_is_answered_at_once: "confirm";
    a_prompt_gets_a_word: "prompt";
    a_dialog_from_a_timer_is_answered: "dialog-timer";
    a_dialog_every_ten_ms_does_not_stall_the_device: "dialog-flood";
    beforeunload_does_not_keep_the_device_on_the_page: "beforeunload";
    a_popup_is_closed: "popup";
    a_target_blank_link_does_not_leave_a_tab_open: "blank-link";
    a_middle_click_does_not_leave_a_tab_open: "middle-click";
    window_close_does_not_lose_the_device: "window-close";
    a_file_chooser_gets_a_file: "file-input";
    a_download_is_recorded: "download";
    print_does_not_block: "print";
    fullscreen_does_not_block: "fullscreen";
    permission_prompts_do_not_block: "permissions";
    a_basic_auth_challenge_does_not_block: "basic-auth";
    leaving_for_another_origin_brings_the_app_back: "other-origin";
    an_unreachable_host_brings_the_app_back: "unreachable";
    a_page_that_never_finishes_loading_is_used_as_it_is: "never-loads";
    a_cross_origin_iframe_is_no_trouble: "cross-origin-iframe";
}

#[test]
fn a_handler_that_never_returns_is_one_hang() {
    failure("hang");
}

#[test]
fn a_renderer_out_of_memory_is_one_crash() {
    failure("crash");
}

#[test]
fn every_page_is_tested_here() {
    let src = include_str!("gauntlet.rs");
    for p in PAGES {
        assert!(
            src.contains(&format!("\"{}\"", p.name)),
            "gauntlet page {} has no test here",
            p.name
        );
    }
}

#[test]
fn a_dismissed_confirm_returns_false_and_a_prompt_null() {
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    for (name, want) in [("confirm", "Kept"), ("prompt", "Name: null")] {
        let config = ChromiumConfig {
            dialogs: DialogPolicy::Dismiss,
            ..config_for(name)
        };
        let (mut device, seen) = run_page(&server, name, ActionKind::Click, config);
        assert!(seen.lost.is_none(), "{name}: {:?}", seen.lost);
        assert!(
            seen.details.iter().any(|d| d.ends_with("dismissed")),
            "{name}: {:?}",
            seen.details
        );
        let text = device
            .evaluate("document.getElementById('out').textContent")
            .unwrap();
        assert_eq!(text.as_str(), Some(want), "{name}");
    }
}

#[test]
fn an_accepted_prompt_gets_the_default_word() {
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    let (mut device, seen) = run_page(&server, "prompt", ActionKind::Click, config_for("prompt"));
    assert!(
        seen.details.iter().any(|d| d.contains("Your name?")),
        "{:?}",
        seen.details
    );
    let text = device
        .evaluate("document.getElementById('out').textContent")
        .unwrap();
    assert_eq!(
        text.as_str(),
        Some(format!("Name: {}", gui_driver::PROMPT_TEXT).as_str())
    );
}

#[test]
fn an_allowed_origin_is_explored_not_left() {
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    let other = server
        .url("x")
        .replace("127.0.0.1", "localhost")
        .replace("/x.html", "");
    let config = ChromiumConfig {
        allowed_origins: vec![other.clone()],
        ..config_for("other-origin")
    };
    let (mut device, seen) = run_page(&server, "other-origin", ActionKind::Click, config);
    assert!(
        !seen.kinds.contains(&DeviceEventKind::LeftApp),
        "{:?}",
        seen.details
    );
    let origin = device.evaluate("location.origin").unwrap();
    assert_eq!(origin.as_str(), Some(other.as_str()));
}

#[test]
fn an_input_on_a_link_out_neither_hangs_nor_loses_the_device() {
    // An `input` clicks first, then types: after a click that sends the page to another
    // origin there is nothing to type into, and the text must not wait on the old
    // document.
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    for _ in 0..3 {
        let (mut device, seen) = run_page(
            &server,
            "other-origin",
            ActionKind::Input,
            config_for("other-origin"),
        );
        assert!(seen.lost.is_none(), "{:?}", seen.lost);
        assert!(
            seen.kinds.contains(&DeviceEventKind::LeftApp),
            "{:?}",
            seen.details
        );
        assert_eq!(device.launches(), 1);
        device.screenshot().expect("a screenshot after");
    }
}

#[test]
fn a_beforeunload_of_the_devices_own_navigation_is_left_and_recorded_so() {
    // Under `dismiss`, the app's own link is cancelled by the dialog; a restart must still
    // leave the page, and the record must say what was answered.
    let server = GauntletServer::start(&pages_dir()).expect("serve the gauntlet");
    let config = ChromiumConfig {
        dialogs: DialogPolicy::Dismiss,
        ..config_for("beforeunload")
    };
    let (mut device, seen) = run_page(&server, "beforeunload", ActionKind::Click, config);
    assert!(
        seen.details
            .iter()
            .any(|d| d == "dialog: beforeunload \"\" dismissed"),
        "{:?}",
        seen.details
    );
    device
        .restart()
        .expect("restart past the beforeunload handler");
    let after: Vec<String> = device
        .drain_events()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        after
            .iter()
            .any(|d| d == "dialog: beforeunload \"\" accepted"),
        "{after:?}"
    );
    let title = device.evaluate("document.title").unwrap();
    assert_eq!(title.as_str(), Some("Leave this page?"));
    assert_eq!(device.launches(), 1);
}
