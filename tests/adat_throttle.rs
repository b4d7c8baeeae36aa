//! Adaptive throttles on a real headless Chromium and the demo app's slow screens
//! (`examples/apps/demo/README.md`, "Slow rendering"): a loading screen makes the
//! consecutive-frame and AdaT policies wait, a static screen lets them go at once, and the
//! demo's bug E is missed by a 200 ms fixed throttle and found by waiting until rendered.
//!
//! They need Debian's Chromium (`cargo xtask setup` installs it); without it they fail with
//! a message saying so, never skip.

mod common;
use common::{center_of, click};

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use gui_core::{Point, Screenshot, Size};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_explore::{
    Adaptive, ConsecutiveFrames, ExploreConfig, FixedThrottle, PollConfig, RunRecorder, Scripted,
    Throttle, Waited, explore,
};

/// The demo's feed shows its skeleton cards for this long (`FEED_DELAY` in app.js).
const FEED_DELAY_MS: f64 = 700.0;

/// One browser at a time: the timings below are about the page, not about two Chromiums
/// sharing the machine's two cores.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// A cap well above the feed's load, so a loaded machine's slow screenshots do not turn
/// "waited for the feed" into "hit the cap".
fn poll() -> PollConfig {
    PollConfig {
        cap: Duration::from_millis(3000),
        ..PollConfig::default()
    }
}

/// The demo at the phone viewport (412x915), where a screenshot takes 35-65 ms.
fn demo() -> (MutexGuard<'static, ()>, StaticServer, ChromiumDevice) {
    let lock = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let server = StaticServer::demo().expect("serve demo app");
    let config = ChromiumConfig {
        coverage: false,
        ..ChromiumConfig::mobile()
    };
    let device = ChromiumDevice::launch(&server.url(), config).unwrap_or_else(|e| {
        panic!("cannot start Chromium for the browser tests (cargo xtask setup installs it): {e}")
    });
    (lock, server, device)
}

/// A stand-in for the rendering classifier that knows the demo's loading look: a frame is
/// fully rendered when it shows no grey skeleton card (`#aab3bd`, used by nothing else).
fn no_skeleton(shot: &Screenshot) -> bool {
    let grey = shot
        .pixels()
        .pixels()
        .filter(|p| p.0 == [0xaa, 0xb3, 0xbd])
        .count();
    grey < 500
}

/// Clicks `nav` on the home screen and lets `throttle` wait.
fn wait_after_click(
    device: &mut ChromiumDevice,
    nav: Point,
    throttle: &mut dyn Throttle,
) -> Waited {
    device.perform(&click(nav)).unwrap();
    throttle.wait(device).unwrap()
}

/// A click that changes one number on the home screen, which is still at once: the
/// throttle goes on after at most `max_frames` frames and far sooner than the feed loads.
fn goes_on_after_a_counter_click(
    device: &mut ChromiumDevice,
    counter: Point,
    throttle: &mut dyn Throttle,
    name: &str,
    max_frames: u32,
) {
    go_home(device);
    let w = wait_after_click(device, counter, throttle);
    eprintln!("{name} on the home counter: {:?}", w.outcome);
    assert!(
        w.outcome.frames <= max_frames && w.outcome.waited_ms < FEED_DELAY_MS / 2.0,
        "{name}: a static screen kept the throttle waiting: {:?}",
        w.outcome
    );
}

fn go_home(device: &mut ChromiumDevice) {
    device.evaluate("location.hash = '#/home'").unwrap();
    // The home screen has no animation; give the hash change a moment to paint.
    std::thread::sleep(Duration::from_millis(200));
}

#[test]
fn polling_throttles_wait_for_the_loading_feed_and_not_for_a_static_screen() {
    let (_lock, _server, mut device) = demo();
    let feed = center_of(&mut device, "#nav-feed");
    let counter = center_of(&mut device, "#home-counter-btn");
    let policies: Vec<(&str, Box<dyn Throttle>)> = vec![
        ("consecutive", Box::new(ConsecutiveFrames::new(poll()))),
        (
            "adat",
            Box::new(Adaptive::new(poll(), Box::new(no_skeleton))),
        ),
    ];
    for (name, mut throttle) in policies {
        go_home(&mut device);
        let w = wait_after_click(&mut device, feed, &mut throttle);
        eprintln!("{name} on the loading feed: {:?}", w.outcome);
        assert!(
            w.outcome.waited_ms >= FEED_DELAY_MS - 100.0 && w.outcome.frames > 1,
            "{name}: the feed loads for {FEED_DELAY_MS} ms but the throttle went on after {:?}",
            w.outcome
        );
        assert!(!w.outcome.capped, "{name}: {:?}", w.outcome);
        let frame = w.frame.expect("the last frame");
        assert!(
            no_skeleton(&frame),
            "{name}: went on while skeletons showed"
        );

        // Consecutive needs a pair (AdaT one), and on a loaded machine a slow capture can
        // straddle the button's short hover transition, which costs one more pair.
        goes_on_after_a_counter_click(&mut device, counter, &mut *throttle, name, 4);
    }
}

/// The shipped rendering network (`--throttle adat`), at the desktop size its training
/// frames have: it waits while the feed slides in and shows its spinner and skeleton
/// cards, clicks "Claim offer" once it is there (bug E), and goes on after the first
/// frame or two when a click only changes a number.
#[test]
fn the_shipped_network_waits_for_the_loading_feed_and_not_for_a_static_screen() {
    let lock = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let server = StaticServer::demo().expect("serve demo app");
    let config = ChromiumConfig {
        coverage: false,
        ..ChromiumConfig::default()
    };
    let mut device = common::launch(&server.url(), config);
    let judge = gui_testing::cli::adat_judge().expect("the shipped network loads");
    let mut throttle = Adaptive::new(poll(), judge);
    let feed = center_of(&mut device, "#nav-feed");
    let counter = center_of(&mut device, "#home-counter-btn");

    let w = wait_after_click(&mut device, feed, &mut throttle);
    eprintln!("adat on the loading feed: {:?}", w.outcome);
    assert!(
        w.outcome.waited_ms >= FEED_DELAY_MS - 100.0 && !w.outcome.capped,
        "the feed loads for {FEED_DELAY_MS} ms but AdaT went on after {:?}",
        w.outcome
    );
    assert!(
        no_skeleton(&w.frame.expect("the last frame")),
        "went on while skeletons showed"
    );
    device.drain_signals().unwrap();
    let claim = center_of(&mut device, "#feed-claim");
    device.perform(&click(claim)).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let found: Vec<String> = device
        .drain_signals()
        .unwrap()
        .into_iter()
        .map(|s| s.key)
        .collect();
    assert!(
        found.iter().any(|k| k.contains("claimOffer")),
        "the claim click after AdaT's wait did not raise bug E: {found:?}"
    );

    goes_on_after_a_counter_click(&mut device, counter, &mut throttle, "adat", 3);
    drop(lock);
}

/// Bug E of the demo: "Claim offer" appears 700 ms after the feed is entered, where a
/// grey skeleton card was. A 200 ms throttle clicks the skeleton; waiting until the screen
/// is rendered clicks the button, which throws.
#[test]
fn bug_e_needs_a_throttle_that_waits_for_rendering() {
    let (_lock, _server, mut device) = demo();
    let feed = center_of(&mut device, "#nav-feed");
    device.perform(&click(feed)).unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let claim = center_of(&mut device, "#feed-claim");
    let script = vec![click(feed), click(claim)];
    let run = |device: &mut ChromiumDevice, throttle: &mut dyn Throttle| {
        device.restart().unwrap();
        device.drain_signals().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut rec = RunRecorder::create(&dir.path().join("run"), &serde_json::json!({})).unwrap();
        rec.durable = false;
        let config = ExploreConfig {
            steps: Some(2),
            ..ExploreConfig::default()
        };
        let summary = explore(
            device,
            &mut Scripted::new(script.clone()),
            throttle,
            &mut rec,
            &config,
        )
        .unwrap();
        // Anything the last click raised after the step was recorded.
        std::thread::sleep(Duration::from_millis(100));
        let mut found: Vec<String> = summary.signal_counts.into_keys().collect();
        found.extend(device.drain_signals().unwrap().into_iter().map(|s| s.key));
        found
    };
    let found = run(&mut device, &mut FixedThrottle::ms(200));
    assert!(
        found.is_empty(),
        "fixed:200 clicked the skeleton: {found:?}"
    );
    let bug_e = |found: &[String]| {
        found.len() == 1 && found[0].contains("reading 'code'") && found[0].contains("claimOffer")
    };
    let found = run(&mut device, &mut ConsecutiveFrames::new(poll()));
    assert!(bug_e(&found), "consecutive: {found:?}");
    let found = run(
        &mut device,
        &mut Adaptive::new(poll(), Box::new(no_skeleton)),
    );
    assert!(bug_e(&found), "adat: {found:?}");
}

/// The screencast sends frames only when the page changes: one for a still screen, one
/// per drawn frame (about 60 a second) while the feed slides in and its spinner turns.
#[test]
fn the_screencast_records_a_transition() {
    let (_lock, _server, mut device) = demo();
    let feed = center_of(&mut device, "#nav-feed");
    let still = device
        .capture_frames(Duration::from_millis(500), Size::new(412, 915))
        .unwrap();
    device.perform(&click(feed)).unwrap();
    let moving = device
        .capture_frames(Duration::from_millis(1200), Size::new(412, 915))
        .unwrap();
    eprintln!(
        "static 500 ms: {} frames; feed 1200 ms: {} frames at {:?}",
        still.len(),
        moving.len(),
        moving.iter().map(|f| f.0).collect::<Vec<_>>()
    );
    let first = moving[0].1.decode().unwrap();
    assert_eq!(first.size(), Size::new(412, 915));
    assert!(
        still.len() <= 2,
        "a still screen sent {} frames",
        still.len()
    );
    assert!(
        moving.len() > 20,
        "only {} frames while the feed loaded",
        moving.len()
    );
}
