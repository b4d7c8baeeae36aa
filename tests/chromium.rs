//! End-to-end tests on a real headless Chromium and the bundled demo app.
//!
//! They need Debian's Chromium (`cargo xtask setup` installs it); without it they fail with
//! a message saying so, never skip.

mod common;
use common::{center_of, click, demo};

use gui_core::{Action, ActionKind, ActionParam, Point, SignalKind, Transition};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_explore::{
    ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, Observation, RunRecorder, Scripted,
    SignalRecord, Strategy, explore, read_steps,
};

fn text_of(device: &mut ChromiumDevice, selector: &str) -> String {
    let expr = format!("document.querySelector({selector:?}).textContent");
    device
        .evaluate(&expr)
        .unwrap()
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Polls the text of `selector` until it equals `want` (a loaded machine may be slow to
/// run the app's handlers); returns the last text seen.
fn wait_text(device: &mut ChromiumDevice, selector: &str, want: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let t = text_of(device, selector);
        if t == want || std::time::Instant::now() > deadline {
            return t;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Clicks the home screen's button `nav` and waits until the header names `screen`.
fn open_screen(device: &mut ChromiumDevice, nav: &str, screen: &str) {
    let button = center_of(device, nav);
    device.perform(&click(button)).unwrap();
    assert_eq!(wait_text(device, "#screen-name", screen), screen);
}

/// An `input` of `text` at `p`.
fn type_into(p: Point, text: &str) -> Action {
    Action::at(ActionKind::Input, p).with_param(ActionParam::Text(text.into()))
}

#[test]
fn a_click_changes_the_page_in_the_dom_and_in_the_pixels() {
    let (_server, mut device) = demo();
    let before_shot = device.screenshot().unwrap();
    assert_eq!((before_shot.width(), before_shot.height()), (1280, 800));
    let before = text_of(&mut device, "#home-counter");
    let button = center_of(&mut device, "#home-counter-btn");
    device.perform(&click(button)).unwrap();
    let want = (before.trim().parse::<u32>().unwrap() + 1).to_string();
    assert_eq!(
        wait_text(&mut device, "#home-counter", &want),
        want,
        "the counter text did not change"
    );
    let counter = device.element_rect("#home-counter").unwrap().unwrap();
    let after_shot = device.screenshot().unwrap();
    assert!(
        after_shot.diff_fraction(&before_shot, 8) > 0.0,
        "no pixel changed"
    );
    // The change is where the counter is drawn.
    let crop = |s: &gui_core::Screenshot| {
        let r = counter.clip_to(s.size()).unwrap();
        image::imageops::crop_imm(s.pixels(), r.x as u32, r.y as u32, r.width, r.height).to_image()
    };
    assert_ne!(
        crop(&before_shot),
        crop(&after_shot),
        "the counter's pixels did not change"
    );
}

#[test]
fn coverage_rises_with_new_code_and_never_double_counts() {
    let (_server, mut device) = demo();
    let c0 = device.coverage().unwrap().expect("web pages have coverage");
    assert!(c0.functions_total > 20, "app.js functions seen: {c0:?}");
    assert!(c0.functions_covered > 0 && c0.functions_covered < c0.functions_total);
    let button = center_of(&mut device, "#home-counter-btn");
    device.perform(&click(button)).unwrap();
    assert_eq!(wait_text(&mut device, "#home-counter", "1"), "1");
    let c1 = device.coverage().unwrap().unwrap();
    assert!(
        c1.functions_covered > c0.functions_covered,
        "{c0:?} -> {c1:?}"
    );
    assert!(c1.bytes_covered > c0.bytes_covered);
    // The same handler again covers nothing new, however often it runs.
    for _ in 0..3 {
        device.perform(&click(button)).unwrap();
    }
    assert_eq!(wait_text(&mut device, "#home-counter", "4"), "4");
    let c2 = device.coverage().unwrap().unwrap();
    assert_eq!(c2, c1);
    // Totals stay those of the app's own script: the tool's evaluations are not counted.
    device
        .evaluate("(function injected() { return 1 + 1; })()")
        .unwrap();
    assert_eq!(device.coverage().unwrap().unwrap(), c1);
}

#[test]
fn a_thrown_exception_is_reported_once_with_its_stack() {
    let (_server, mut device) = demo();
    let nav_list = center_of(&mut device, "#nav-list");
    open_screen(&mut device, "#nav-list", "Todo list");
    let [select_all, archive, undo] =
        ["#list-select-all", "#list-archive", "#list-undo"].map(|s| center_of(&mut device, s));
    device.restart().unwrap();
    // Bug A of the demo app: select all, archive, undo; a second undo throws again.
    let script = vec![
        click(nav_list),
        click(select_all),
        click(archive),
        click(undo),
        click(undo),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut run = RunRecorder::create(dir.path(), &serde_json::json!({})).unwrap();
    let config = ExploreConfig {
        steps: Some(script.len() as u64),
        ..ExploreConfig::default()
    };
    let summary = explore(
        &mut device,
        &mut Scripted::new(script),
        &mut FixedThrottle::ms(100),
        &mut run,
        &config,
    )
    .unwrap();

    let records: Vec<SignalRecord> = std::fs::read_to_string(dir.path().join("signals.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let exceptions: Vec<_> = records
        .iter()
        .filter(|r| r.kind == SignalKind::UncaughtException)
        .collect();
    assert_eq!(exceptions.len(), 1, "{records:#?}");
    let ex = exceptions[0];
    assert!(ex.message.starts_with("TypeError"), "{}", ex.message);
    assert_eq!(ex.first_step, 4);
    assert_eq!(ex.stack[0].function, "undoArchive", "{:?}", ex.stack);
    assert!(ex.stack[0].url.ends_with("/app.js") && ex.stack[0].line > 0);
    assert_eq!(
        summary.signal_counts[&ex.key], 2,
        "thrown twice, recorded once"
    );
    let steps = read_steps(dir.path()).unwrap();
    assert_eq!(steps[3].new_signals, vec![ex.key.clone()]);
    assert!(steps[4].new_signals.is_empty() && steps[4].signals_observed == 1);
}

/// Monkey, except that it kills the browser once, just before a chosen step.
struct KillOnce {
    inner: Monkey,
    pid: u32,
    at: u64,
    restarts_seen: u32,
}

impl Strategy for KillOnce {
    fn name(&self) -> &str {
        "monkey-with-kill"
    }
    fn choose(&mut self, obs: &Observation<'_>) -> Action {
        if obs.step == self.at && self.restarts_seen == 0 {
            let status = std::process::Command::new("kill")
                .args(["-9", &self.pid.to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        }
        self.inner.choose(obs)
    }
    fn learn(&mut self, t: &Transition) {
        self.inner.learn(t);
    }
    fn on_restart(&mut self) {
        self.restarts_seen += 1;
    }
}

#[test]
fn killing_the_browser_mid_run_restarts_it_and_loses_no_finished_step() {
    let (_server, mut device) = demo();
    let pid = device.browser_pid().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut run = RunRecorder::create(dir.path(), &serde_json::json!({})).unwrap();
    let mut strategy = KillOnce {
        inner: Monkey::new(MonkeyConfig {
            seed: 1,
            ..MonkeyConfig::default()
        }),
        pid,
        at: 4,
        restarts_seen: 0,
    };
    let config = ExploreConfig {
        steps: Some(8),
        ..ExploreConfig::default()
    };
    let summary = explore(
        &mut device,
        &mut strategy,
        &mut FixedThrottle::ms(50),
        &mut run,
        &config,
    )
    .unwrap();
    assert_eq!(summary.steps, 8);
    assert_eq!(summary.device_restarts, 1);
    assert_eq!(device.launches(), 2);
    assert_ne!(device.browser_pid(), Some(pid));
    let steps = read_steps(dir.path()).unwrap();
    assert_eq!(
        steps.iter().map(|s| s.step).collect::<Vec<_>>(),
        (1..=8).collect::<Vec<_>>()
    );
    for s in &steps {
        assert!(
            dir.path().join(&s.screenshot).is_file(),
            "{} missing",
            s.screenshot
        );
    }
    // The step whose action met the dead browser is kept, with the reason.
    assert!(
        steps[3]
            .error
            .as_deref()
            .unwrap_or("")
            .starts_with("device lost"),
        "{:?}",
        steps[3]
    );
    assert!(
        steps.iter().filter(|s| s.error.is_some()).count() <= 1 + summary.failed_actions as usize
    );
    let events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    assert!(
        events.contains("device_lost") && events.contains("device_restarted"),
        "{events}"
    );
    assert!(dir.path().join("summary.json").is_file());
    // The dead browser is reported as a crash of the step that met it.
    let crash = std::fs::read_to_string(dir.path().join("signals.jsonl")).unwrap();
    let crash: SignalRecord = crash
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .find(|r: &SignalRecord| r.kind == SignalKind::Crash)
        .expect("crash signal");
    assert!(
        crash.message.starts_with("Chromium exited unexpectedly"),
        "{}",
        crash.message
    );
    assert_eq!(crash.first_step, 4);
}

#[test]
fn the_same_monkey_seed_gives_the_same_actions_twice() {
    let server = StaticServer::demo().unwrap();
    let run_once = |seed: u64| {
        let mut device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut run = RunRecorder::create(dir.path(), &serde_json::json!({})).unwrap();
        let config = ExploreConfig {
            steps: Some(12),
            ..ExploreConfig::default()
        };
        let mut monkey = Monkey::new(MonkeyConfig {
            seed,
            ..MonkeyConfig::default()
        });
        explore(
            &mut device,
            &mut monkey,
            &mut FixedThrottle::ms(20),
            &mut run,
            &config,
        )
        .unwrap();
        read_steps(dir.path())
            .unwrap()
            .into_iter()
            .map(|s| s.action)
            .collect::<Vec<_>>()
    };
    let a = run_once(42);
    assert_eq!(a.len(), 12);
    assert_eq!(a, run_once(42));
}

#[test]
fn every_web_action_runs_on_chromium_and_the_others_are_refused() {
    let (_server, mut device) = demo();
    let input = center_of(&mut device, "#nav-form");
    for kind in ActionKind::ALL {
        let mut action = if kind.needs_target() {
            Action::at(kind, input)
        } else {
            Action::new(kind)
        };
        if kind == ActionKind::WindowSize {
            action = action.with_param(gui_core::ActionParam::Ratio(0.5));
        }
        let r = device.perform(&action);
        if kind.supported_on(gui_core::Platform::Web) {
            r.unwrap_or_else(|e| panic!("{kind}: {e}"));
        } else {
            assert!(
                matches!(r, Err(gui_driver::Error::Unsupported { .. })),
                "{kind}: {r:?}"
            );
        }
    }
    // Window size 0.5 then split screen toggled twice: the viewport follows.
    assert_eq!(device.viewport(), gui_core::Size::new(640, 400));
    assert_eq!(
        device.screenshot().unwrap().size(),
        gui_core::Size::new(640, 400)
    );
    device.restart().unwrap();
    assert_eq!(device.viewport(), gui_core::Size::new(1280, 800));
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");
}

#[test]
fn unreachable_urls_and_missing_browsers_give_clear_errors() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let msg = ChromiumDevice::launch(&url, ChromiumConfig::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&url) && msg.contains("ERR_CONNECTION_REFUSED"),
        "{msg}"
    );

    let config = ChromiumConfig {
        executable: Some("/nonexistent/chromium".into()),
        ..ChromiumConfig::default()
    };
    let msg = ChromiumDevice::launch("http://127.0.0.1:9/", config)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("/nonexistent/chromium") && msg.contains("apt-get install"),
        "{msg}"
    );
}

#[test]
fn system_actions_change_what_the_page_sees() {
    let (_server, mut device) = demo();
    let perm = "navigator.permissions.query({name: 'geolocation'}).then(p => p.state)";
    device
        .perform(&Action::new(ActionKind::AccessGrant))
        .unwrap();
    assert_eq!(device.evaluate(perm).unwrap(), "granted");
    device
        .perform(&Action::new(ActionKind::AccessDeny))
        .unwrap();
    assert_eq!(device.evaluate(perm).unwrap(), "prompt");

    device
        .perform(&Action::new(ActionKind::NetworkSwitch))
        .unwrap();
    assert_eq!(device.evaluate("navigator.onLine").unwrap(), false);
    device
        .perform(&Action::new(ActionKind::NetworkSwitch))
        .unwrap();
    assert_eq!(device.evaluate("navigator.onLine").unwrap(), true);

    device
        .evaluate("window.__seen = []; document.addEventListener('visibilitychange', () => __seen.push(document.visibilityState)); 0")
        .unwrap();
    device
        .perform(&Action::new(ActionKind::BackSwitch))
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while device.evaluate("__seen.length").unwrap() != 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        device.evaluate("__seen").unwrap(),
        serde_json::json!(["hidden", "visible"])
    );

    // Return goes back through the app's history, never out of the app.
    let form = center_of(&mut device, "#nav-form");
    device.perform(&click(form)).unwrap();
    assert_eq!(
        wait_text(&mut device, "#screen-name", "Profile form"),
        "Profile form"
    );
    device.perform(&Action::new(ActionKind::Return)).unwrap();
    assert_eq!(wait_text(&mut device, "#screen-name", "Home"), "Home");
    device.perform(&Action::new(ActionKind::Return)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");
    assert!(
        device
            .evaluate("location.href")
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1")
    );
}

#[test]
fn a_crashed_renderer_is_reported_and_the_device_comes_back() {
    let (_server, mut device) = demo();
    device.crash_renderer().unwrap();
    let signals = device.drain_signals().unwrap();
    assert!(
        signals.iter().any(|s| s.kind == SignalKind::Crash),
        "{signals:?}"
    );
    let err = device.screenshot().unwrap_err();
    assert!(err.is_device_lost(), "{err}");
    device.restart().unwrap();
    assert_eq!(device.screenshot().unwrap().width(), 1280);
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");
}

#[test]
fn a_hanging_page_is_reported_and_the_browser_relaunched() {
    let server = StaticServer::demo().unwrap();
    let config = ChromiumConfig {
        call_timeout: std::time::Duration::from_secs(2),
        ..ChromiumConfig::default()
    };
    let mut device = ChromiumDevice::launch(&server.url(), config).unwrap();
    device
        .evaluate("setTimeout(() => { for (;;) {} }, 0); 0")
        .unwrap();
    let err = device.screenshot().unwrap_err();
    assert!(err.is_device_lost(), "{err}");
    device.restart().unwrap();
    assert_eq!(device.launches(), 2);
    let signals = device.drain_signals().unwrap();
    assert!(
        signals
            .iter()
            .any(|s| s.kind == SignalKind::Crash
                && s.message.starts_with("the page stopped answering")),
        "{signals:?}"
    );
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");
}

#[test]
fn a_page_that_leaves_the_app_is_brought_back() {
    let (server, mut device) = demo();
    let form = center_of(&mut device, "#nav-form");
    device.perform(&click(form)).unwrap();
    assert_eq!(
        wait_text(&mut device, "#screen-name", "Profile form"),
        "Profile form"
    );
    // A link to another origin (nothing listens there, so Chromium shows its error page).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    device
        .evaluate(&format!(
            "location.href = 'http://127.0.0.1:{port}/elsewhere'; 0"
        ))
        .unwrap();
    // While a document is being swapped, evaluations fail ("Inspected target navigated or
    // closed"); ask again until the new document answers.
    let href = |d: &mut ChromiumDevice| {
        for _ in 0..100 {
            if let Ok(v) = d.evaluate("location.href") {
                return v.as_str().unwrap_or("").to_owned();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("the page never answered");
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while href(&mut device).starts_with(&server.origin()) {
        assert!(std::time::Instant::now() < deadline, "the page never left");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Looking at the screen brings the app back.
    let shot = device.screenshot().unwrap();
    assert!(
        href(&mut device).starts_with(&server.origin()),
        "{}",
        href(&mut device)
    );
    assert_eq!(shot.width(), 1280);
    assert_eq!(
        wait_text(&mut device, "#screen-name", "Profile form"),
        "Profile form"
    );
}

/// Offline (`network_switch`), a link to a page of the app's own origin fails and Chromium
/// shows its error page under the app's URL. Looking at the screen brings the network and
/// the app back, instead of leaving the rest of the run on the error page.
#[test]
fn an_offline_load_of_the_app_is_brought_back_online() {
    let (server, mut device) = demo();
    device
        .perform(&Action::new(ActionKind::NetworkSwitch))
        .unwrap();
    let url = format!("{}/index.html?again#/about", server.origin());
    device
        .evaluate(&format!("location.href = '{url}'; 0"))
        .unwrap();
    // The error page has no `#screen-name`; wait until the app's document is gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while device
        .evaluate("document.getElementById('screen-name') ? 1 : 0")
        .is_ok_and(|v| v.as_i64() == Some(1))
    {
        assert!(std::time::Instant::now() < deadline, "the page never left");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let shot = device.screenshot().unwrap();
    assert_eq!(shot.width(), 1280);
    assert_eq!(wait_text(&mut device, "#screen-name", "About"), "About");
    assert_eq!(
        device.evaluate("navigator.onLine").unwrap().as_bool(),
        Some(true)
    );
}

/// `input` with a trailing newline types the text and presses Enter: the demo's login form
/// is submitted from the password field.
#[test]
fn input_ending_in_a_newline_presses_enter() {
    let (_server, mut device) = demo();
    open_screen(&mut device, "#nav-login", "Login");
    let user = center_of(&mut device, "#login-user");
    device.perform(&type_into(user, "ann")).unwrap();
    let pass = center_of(&mut device, "#login-pass");
    device.perform(&type_into(pass, "demo\n")).unwrap();
    assert_eq!(
        wait_text(&mut device, "#header-user", "Signed in as ann"),
        "Signed in as ann"
    );
    assert_eq!(wait_text(&mut device, "#screen-name", "Account"), "Account");
}

/// An `input` replaces what the field holds, and an `input` on something that is no
/// text field (a label) leaves the page's selection alone.
#[test]
fn input_replaces_the_text_of_the_field() {
    let (_server, mut device) = demo();
    open_screen(&mut device, "#nav-form", "Profile form");
    let name = center_of(&mut device, "#form-name");
    device.perform(&type_into(name, "ann")).unwrap();
    device.perform(&type_into(name, "bob")).unwrap();
    let value = device
        .evaluate("document.getElementById('form-name').value")
        .unwrap();
    assert_eq!(value.as_str(), Some("bob"));
    let heading = center_of(&mut device, "#screen-name");
    device.perform(&type_into(heading, "x")).unwrap();
    let selected = device.evaluate("String(document.getSelection())").unwrap();
    assert_eq!(selected.as_str(), Some(""));
    let value = device
        .evaluate("document.getElementById('form-name').value")
        .unwrap();
    assert_eq!(value.as_str(), Some("bob"));
}

/// A phone-emulated page is a mobile app to the agent: the mobile action set, touch taps
/// and long presses, swipes by finger, and the orientation switching as a page action.
#[test]
fn a_phone_emulated_page_takes_touch_and_the_mobile_actions() {
    let server = StaticServer::demo().expect("serve demo app");
    let mut device = common::launch(&server.url(), ChromiumConfig::mobile());
    assert_eq!(device.platform(), gui_core::Platform::Android);
    let touch = device
        .evaluate("navigator.maxTouchPoints > 0 && 'ontouchstart' in window")
        .unwrap();
    assert_eq!(touch, serde_json::json!(true));

    // A tap on the Settings button navigates, as a click does on the desktop web.
    let at = center_of(&mut device, "#nav-settings");
    device.perform(&click(at)).unwrap();
    let hash = wait_text_eval(&mut device, "location.hash", "#/settings");
    assert_eq!(hash, "#/settings");
    device
        .perform(&Action::at(ActionKind::LongClick, at))
        .unwrap();

    // The orientation switch turns the viewport and the screenshot with it.
    let before = device.screenshot().unwrap();
    device
        .perform(&Action::new(ActionKind::OrientationSwitch))
        .unwrap();
    let after = device.screenshot().unwrap();
    assert_eq!(
        (after.width(), after.height()),
        (before.height(), before.width())
    );
    let landscape = device
        .evaluate("screen.orientation.type + ' ' + (innerWidth > innerHeight)")
        .unwrap();
    assert_eq!(landscape, serde_json::json!("landscape-primary true"));
    device.perform(&Action::new(ActionKind::Swipe)).unwrap();
    device
        .perform(&Action::new(ActionKind::PhoneInterrupt))
        .unwrap();
    // Desktop-only actions are refused, naming the platform.
    let err = device
        .perform(&Action::at(ActionKind::RightClick, at))
        .unwrap_err();
    assert!(err.to_string().contains("Android"), "{err}");
}

/// Polls a JS expression until it yields `want` (or 2 s pass); returns the last value.
fn wait_text_eval(device: &mut ChromiumDevice, expr: &str, want: &str) -> String {
    let mut last = String::new();
    for _ in 0..40 {
        last = device
            .evaluate(expr)
            .unwrap()
            .as_str()
            .unwrap_or("")
            .to_owned();
        if last == want {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    last
}

/// The DOM read as a view hierarchy (VisionDroid's GUI text): what each element is, what
/// it takes, and where it is, in screenshot pixels; hidden screens contribute nothing.
#[test]
fn the_view_hierarchy_names_every_visible_widget_and_what_it_takes() {
    let (_server, mut device) = demo();
    let home = device.ui_hierarchy().unwrap().expect("Chromium has a DOM");
    assert!(home.screen.ends_with("#/home"), "{}", home.screen);
    assert!(home.app.contains("Demo"), "{}", home.app);
    let by_id = |ui: &gui_core::UiHierarchy, id: &str| {
        ui.elements
            .iter()
            .find(|e| e.id == id)
            .unwrap_or_else(|| panic!("{id} missing from {:#?}", ui.elements))
            .clone()
    };
    let cart = by_id(&home, "nav-cart");
    assert!(cart.clickable && !cart.editable && !cart.checkable);
    assert_eq!(cart.text, "Cart");
    assert_eq!(cart.class, "button");
    assert_eq!(
        Some(cart.bounds),
        device.element_rect("#nav-cart").unwrap(),
        "bounds in screenshot pixels (scale 1)"
    );
    let counter = by_id(&home, "home-counter");
    assert!(!counter.actionable());
    assert_eq!(counter.text, "0");
    assert!(
        home.elements.iter().all(|e| e.id != "list-add"),
        "a hidden screen leaked"
    );

    let nav_form = center_of(&mut device, "#nav-form");
    device.perform(&click(nav_form)).unwrap();
    wait_text_eval(&mut device, "location.hash", "#/form");
    let form = device.ui_hierarchy().unwrap().unwrap();
    let name = by_id(&form, "form-name");
    assert!(name.editable && !name.clickable);
    assert_eq!(name.hint, "Name");
    let subscribe = by_id(&form, "form-subscribe");
    assert!(subscribe.checkable && !subscribe.checked);
    assert!(subscribe.hint.contains("newsletter"), "{}", subscribe.hint);
    assert!(by_id(&form, "form-plan-basic").checked);
    let colour = by_id(&form, "form-color");
    assert!(colour.clickable);
    assert_eq!(colour.text, "Blue");
    assert_eq!(by_id(&form, "form-volume-value").text, "50");
}

/// Chromium keeps its sandbox unless the tool runs as root, and says when it has none.
#[test]
fn the_sandbox_is_off_only_for_root_and_the_device_says_so() {
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    let (_server, device) = demo();
    assert_eq!(device.sandboxed(), !root);
    assert_eq!(device.describe().contains("no sandbox"), root);
    // Turned off on request, whoever runs it.
    let server = StaticServer::demo().unwrap();
    let off = common::launch(
        &server.url(),
        ChromiumConfig {
            sandbox: Some(false),
            ..ChromiumConfig::default()
        },
    );
    assert!(!off.sandboxed());
    assert!(off.describe().ends_with(", no sandbox"));
}
