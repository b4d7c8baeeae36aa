//! The WebDriver device against a real local chromedriver and the bundled demo app.
//!
//! They need Debian's `chromium` and `chromium-driver` (`cargo xtask setup` installs both);
//! without them they fail with a message saying so, never skip.

use std::time::{Duration, Instant};

use gui_core::{Action, ActionKind, ActionParam, Platform, Point, SignalKind, Size};
use gui_driver::{ChromeDriver, Device, Error, StaticServer, WebDriverConfig, WebDriverDevice};

/// A chromedriver, the demo app and a device on both; the driver and server must outlive
/// the device, so they come first and are dropped last.
fn demo() -> (ChromeDriver, StaticServer, WebDriverDevice) {
    demo_with(|_| {})
}

fn demo_with(
    adjust: impl FnOnce(&mut WebDriverConfig),
) -> (ChromeDriver, StaticServer, WebDriverDevice) {
    let driver = ChromeDriver::spawn().unwrap_or_else(|e| {
        panic!(
            "{e}\nthese tests need a local chromedriver: run `cargo xtask setup` \
             (or `apt-get install chromium chromium-driver` as root)"
        )
    });
    let server = StaticServer::demo().expect("serve the demo app");
    let mut config = WebDriverConfig::new(driver.url(), server.url());
    adjust(&mut config);
    let device = WebDriverDevice::connect(config)
        .unwrap_or_else(|e| panic!("{e}\nchromedriver said:\n{}", driver.output()));
    (driver, server, device)
}

fn text_of(device: &mut WebDriverDevice, selector: &str) -> String {
    let v = device
        .execute(
            "const e = document.querySelector(arguments[0]); \
             return e ? (e.value !== undefined ? e.value : e.textContent) : null;",
            &[serde_json::json!(selector)],
        )
        .unwrap();
    v.as_str().unwrap_or("").to_owned()
}

/// Polls the text of `selector` until it equals `want`; returns the last text seen.
fn wait_text(device: &mut WebDriverDevice, selector: &str, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let t = text_of(device, selector);
        if t == want || Instant::now() > deadline {
            return t;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn center_of(device: &mut WebDriverDevice, selector: &str) -> Point {
    device
        .element_rect(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("{selector} is not rendered"))
        .center()
}

fn click(p: Point) -> Action {
    Action::at(ActionKind::Click, p)
}

fn go(device: &mut WebDriverDevice, hash: &str, screen: &str) {
    device
        .execute(&format!("location.hash = {hash:?}; return null;"), &[])
        .unwrap();
    assert_eq!(wait_text(device, "#screen-name", screen), screen);
}

#[test]
fn screenshots_clicks_typing_coverage_and_restart() {
    let (_driver, _server, mut device) = demo();
    assert!(device.describe().starts_with("WebDriver http://127.0.0.1:"));
    assert!(
        device.describe().contains(" chrome "),
        "{}",
        device.describe()
    );
    let before = device.screenshot().unwrap();
    assert_eq!(before.size(), Size::new(1280, 800));
    assert_eq!(device.viewport(), Size::new(1280, 800));

    let c0 = device
        .coverage()
        .unwrap()
        .expect("chromedriver passes DevTools through");
    assert!(c0.functions_total > 20, "app.js functions seen: {c0:?}");
    assert!(c0.functions_covered > 0);

    let button = center_of(&mut device, "#home-counter-btn");
    device.perform(&click(button)).unwrap();
    assert_eq!(wait_text(&mut device, "#home-counter", "1"), "1");
    let after = device.screenshot().unwrap();
    let counter = device.element_rect("#home-counter").unwrap().unwrap();
    assert!(after.diff_fraction(&before, 8) > 0.0, "no pixel changed");
    let crop = |s: &gui_core::Screenshot| {
        let r = counter.clip_to(s.size()).unwrap();
        image_rows(s, r)
    };
    assert_ne!(
        crop(&before),
        crop(&after),
        "the counter's pixels did not change"
    );
    let c1 = device.coverage().unwrap().unwrap();
    assert!(
        c1.functions_covered > c0.functions_covered,
        "{c0:?} -> {c1:?}"
    );
    // The same handler again adds nothing.
    device.perform(&click(button)).unwrap();
    assert_eq!(wait_text(&mut device, "#home-counter", "2"), "2");
    assert_eq!(device.coverage().unwrap().unwrap(), c1);

    // Typing, key by key, into a text field.
    go(&mut device, "#/form", "Profile form");
    let name = center_of(&mut device, "#form-name");
    device
        .perform(
            &Action::at(ActionKind::Input, name).with_param(ActionParam::Text("Ann Lee".into())),
        )
        .unwrap();
    assert_eq!(wait_text(&mut device, "#form-name", "Ann Lee"), "Ann Lee");
    // Another input replaces the text.
    device
        .perform(&Action::at(ActionKind::Input, name).with_param(ActionParam::Text("Bo".into())))
        .unwrap();
    assert_eq!(wait_text(&mut device, "#form-name", "Bo"), "Bo");

    // Restart: the start page again, with a fresh counter, in the same session.
    let session = device.session_id().unwrap().to_owned();
    device.restart().unwrap();
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");
    assert_eq!(text_of(&mut device, "#home-counter"), "0");
    assert_eq!(device.session_id(), Some(session.as_str()));
    assert_eq!(device.sessions(), 1);
    // Coverage is cumulative over restarts.
    assert!(device.coverage().unwrap().unwrap().functions_covered >= c1.functions_covered);
}

/// The pixels of `r`, row by row.
fn image_rows(s: &gui_core::Screenshot, r: gui_core::Rect) -> Vec<u8> {
    let img = s.pixels();
    let mut out = Vec::new();
    for y in r.y as u32..r.y as u32 + r.height {
        for x in r.x as u32..r.x as u32 + r.width {
            out.extend_from_slice(&img.get_pixel(x, y).0);
        }
    }
    out
}

#[test]
fn exceptions_and_console_errors_arrive_once_with_their_messages() {
    let (_driver, _server, mut device) = demo();
    let stack = seeded_errors_arrive_once(&mut device);
    // The log gives the thrower's position only.
    assert_eq!(stack.len(), 1, "{stack:?}");
}

/// Without the browser log, the collector script in the page catches the same errors,
/// with whole stacks.
#[test]
fn the_in_page_collector_catches_the_same_errors_with_stacks() {
    let (_driver, _server, mut device) = demo_with(|c| c.browser_log = false);
    let stack = seeded_errors_arrive_once(&mut device);
    assert_eq!(stack[0].function, "checkout", "{stack:?}");
}

/// Bugs B and D of the demo app; returns the stack of B's exception.
fn seeded_errors_arrive_once(device: &mut WebDriverDevice) -> Vec<gui_core::StackFrame> {
    assert!(device.drain_signals().unwrap().is_empty());
    // Bug B of the demo app: a coupon applied, then checkout reads a field it lacks.
    go(device, "#/cart", "Cart");
    let coupon = center_of(device, "#cart-coupon");
    device
        .perform(
            &Action::at(ActionKind::Input, coupon).with_param(ActionParam::Text("save10".into())),
        )
        .unwrap();
    let apply = center_of(device, "#cart-apply");
    device.perform(&click(apply)).unwrap();
    assert!(
        wait_text(
            device,
            "#cart-coupon-status",
            "Coupon SAVE10 applied (10% off at checkout)."
        )
        .starts_with("Coupon SAVE10")
    );
    let checkout = center_of(device, "#cart-checkout");
    device.perform(&click(checkout)).unwrap();
    let signals = device.drain_signals().unwrap();
    assert_eq!(signals.len(), 1, "{signals:#?}");
    let s = &signals[0];
    assert_eq!(s.kind, SignalKind::UncaughtException);
    assert_eq!(
        s.message,
        "TypeError: Cannot read properties of undefined (reading 'percent')"
    );
    assert!(
        s.stack[0].url.ends_with("/app.js") && s.stack[0].line > 1,
        "{:?}",
        s.stack
    );
    let stack = s.stack.clone();
    assert!(device.drain_signals().unwrap().is_empty(), "drained once");

    // Bug D: console.error on an empty email.
    go(device, "#/form", "Profile form");
    let submit = center_of(device, "#form-submit");
    device.perform(&click(submit)).unwrap();
    let signals = device.drain_signals().unwrap();
    assert_eq!(signals.len(), 1, "{signals:#?}");
    assert_eq!(signals[0].kind, SignalKind::ConsoleError);
    assert_eq!(signals[0].message, "invalid email: ");
    stack
}

#[test]
fn every_web_action_performs_and_the_others_are_refused() {
    let (_driver, _server, mut device) = demo();
    let supported = device.supported_actions();
    assert_eq!(
        supported,
        ActionKind::supported(Platform::Web).collect::<Vec<_>>(),
        "with DevTools every web action is offered"
    );
    let target = center_of(&mut device, "#nav-form");
    // What the page saw of each input: the events count per type.
    device
        .execute(
            "window.seen = {}; for (const t of ['dblclick', 'contextmenu', 'auxclick', 'wheel', \
             'pointermove', 'keydown', 'visibilitychange', 'resize']) \
             addEventListener(t, () => { seen[t] = (seen[t] || 0) + 1; }, true); return null;",
            &[],
        )
        .unwrap();
    for kind in ActionKind::ALL {
        let mut action = if kind.needs_target() {
            Action::at(kind, target)
        } else {
            Action::new(kind)
        };
        match kind {
            ActionKind::WindowSize => action = action.with_param(ActionParam::Ratio(0.5)),
            ActionKind::Drag => action = action.with_param(ActionParam::Offset { dx: 40, dy: 10 }),
            _ => {}
        }
        let r = device.perform(&action);
        if supported.contains(&kind) {
            r.unwrap_or_else(|e| panic!("{kind}: {e}"));
            device
                .screenshot()
                .unwrap_or_else(|e| panic!("after {kind}: {e}"));
        } else {
            assert!(matches!(r, Err(Error::Unsupported { .. })), "{kind}: {r:?}");
        }
    }
    let seen = device.execute("return window.seen;", &[]).unwrap();
    for t in [
        "dblclick",
        "contextmenu",
        "auxclick",
        "wheel",
        "pointermove",
        "keydown",
        "visibilitychange",
        "resize",
    ] {
        assert!(seen[t].as_u64().unwrap_or(0) > 0, "no {t} event: {seen}");
    }
    // Window size 0.5, then split screen on and off: the viewport follows, and so do the
    // screenshots. The network switch left the page offline.
    assert_eq!(device.viewport(), Size::new(640, 400));
    assert_eq!(device.screenshot().unwrap().size(), Size::new(640, 400));
    let online = device.execute("return navigator.onLine;", &[]).unwrap();
    assert_eq!(online, serde_json::json!(false));
    device.restart().unwrap();
    assert_eq!(device.viewport(), Size::new(1280, 800));
    assert_eq!(device.screenshot().unwrap().size(), Size::new(1280, 800));
    assert_eq!(
        device.execute("return navigator.onLine;", &[]).unwrap(),
        true
    );
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");

    // Return goes back inside the app, and not out of it from the start page.
    go(&mut device, "#/cart", "Cart");
    device.perform(&Action::new(ActionKind::Return)).unwrap();
    assert_eq!(wait_text(&mut device, "#screen-name", "Home"), "Home");
    device.perform(&Action::new(ActionKind::Return)).unwrap();
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");

    // The view hierarchy comes from the same script as on Chromium.
    let ui = device.ui_hierarchy().unwrap().unwrap();
    let button = ui
        .elements
        .iter()
        .find(|e| e.id == "home-counter-btn")
        .expect("the counter button is listed");
    assert!(button.clickable && button.text == "Add one", "{button:?}");
}

#[test]
fn lost_sessions_endpoints_and_crashes_are_device_errors() {
    // An endpoint nobody listens on: a clear error naming it.
    let url = "http://127.0.0.1:9";
    let err =
        WebDriverDevice::connect(WebDriverConfig::new(url, "http://127.0.0.1:9/app")).unwrap_err();
    assert!(matches!(err, Error::WebDriver { .. }), "{err:?}");
    assert!(err.to_string().contains(url), "{err}");
    assert!(err.to_string().contains("unreachable"), "{err}");

    // A crashed tab: commands fail as a lost device, and restart reports the crash and
    // opens a new session.
    let (mut driver, _server, mut device) = demo();
    device.crash_tab().unwrap();
    let err = device.screenshot().unwrap_err();
    assert!(err.is_device_lost(), "{err:?}");
    device.restart().unwrap();
    assert_eq!(device.sessions(), 2);
    let signals = device.drain_signals().unwrap();
    assert!(
        signals.iter().any(|s| s.kind == SignalKind::Crash),
        "{signals:#?}"
    );
    assert_eq!(device.screenshot().unwrap().size(), Size::new(1280, 800));
    assert_eq!(text_of(&mut device, "#screen-name"), "Home");

    // chromedriver killed mid-run: the next call is a lost device.
    driver.kill();
    let err = device.screenshot().unwrap_err();
    assert!(err.is_device_lost(), "{err:?}");
    let err = device.perform(&click(Point::new(10, 10))).unwrap_err();
    assert!(err.is_device_lost(), "{err:?}");
}
