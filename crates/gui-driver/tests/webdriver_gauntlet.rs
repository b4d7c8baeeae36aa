//! The WebDriver device against what real web apps do besides drawing: native dialogs,
//! popups and new tabs, links out of the app and to hosts that do not answer, file inputs,
//! downloads, pages that never finish loading, and a handler that hangs.
//!
//! They need Debian's `chromium` and `chromium-driver` (`cargo xtask setup` installs both);
//! without them they fail with a message saying so, never skip.

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use gui_core::{Action, ActionKind, DeviceEvent, DeviceEventKind, Point, SignalKind, Size};
use gui_driver::{
    ChromeDriver, Device, DialogPolicy, StaticServer, WebDriverConfig, WebDriverDevice,
};
use serde_json::json;

/// The other origin a link leads out to.
const OTHER_PAGE: &str = "<!doctype html><title>Elsewhere</title><p>another site</p>";

/// The app: one button or link per thing a page can do to the browser. `{other}` is the
/// other origin's page, `{dead}` a port nobody listens on.
const APP_PAGE: &str = r#"<!doctype html>
<title>Gauntlet</title>
<style>button, a, input { display: block; margin: 4px; height: 28px; }</style>
<h1 id="title">Gauntlet</h1>
<p id="out">-</p>
<button id="confirm" onclick="out('confirm:' + confirm('Delete?'))">confirm</button>
<button id="prompt" onclick="out('prompt:' + prompt('Your name?'))">prompt</button>
<button id="timer" onclick="setTimeout(() => { alert('Saved!'); out('alerted'); }, 50)">timer</button>
<button id="popup" onclick="window.open('/popup.html?popup', 'pop', 'width=300,height=200')">popup</button>
<a id="blank" href="/popup.html?blank" target="_blank">new tab</a>
<a id="middle" href="/popup.html?middle">middle-click me</a>
<button id="close" onclick="window.close()">close</button>
<a id="away" href="{other}">other site</a>
<a id="dead" href="http://127.0.0.1:{dead}/">dead host</a>
<input id="file" type="file" onchange="out('file:' + this.files[0].name)">
<a id="download" href="/report.bin" download>download</a>
<a id="welcome" href="/welcome.html">welcome</a>
<script>function out(t) { document.getElementById('out').textContent = t; }</script>
"#;

const POPUP_PAGE: &str = "<!doctype html><title>Popup</title><p>a popup</p>";

/// Greets with an alert while it loads.
const WELCOME_PAGE: &str =
    "<!doctype html><title>Welcome</title><script>alert('Welcome back')</script><p>hi</p>";

/// Serves the app and the other origin; the servers must outlive the device.
struct Sites {
    app: StaticServer,
    _other: StaticServer,
    other_url: String,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write a test page");
}

fn sites() -> Sites {
    let other_dir = tempfile::tempdir().expect("temp dir");
    write(other_dir.path(), "other.html", OTHER_PAGE);
    let other = StaticServer::folder(other_dir.path(), "other.html").expect("serve");
    let other_url = other.url();
    // A port that was free a moment ago: nothing answers there.
    let dead = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let app_dir = tempfile::tempdir().expect("temp dir");
    let page = APP_PAGE
        .replace("{other}", &other_url)
        .replace("{dead}", &dead.to_string());
    write(app_dir.path(), "index.html", &page);
    write(app_dir.path(), "popup.html", POPUP_PAGE);
    write(app_dir.path(), "welcome.html", WELCOME_PAGE);
    write(app_dir.path(), "report.bin", "a report\n");
    let app = StaticServer::folder(app_dir.path(), "index.html").expect("serve");
    Sites {
        app,
        _other: other,
        other_url,
        _dirs: (app_dir, other_dir),
    }
}

fn chromedriver() -> ChromeDriver {
    ChromeDriver::spawn().unwrap_or_else(|e| {
        panic!(
            "{e}\nthese tests need a local chromedriver and Chromium: run `cargo xtask setup` \
             (or `apt-get install chromium chromium-driver` as root)"
        )
    })
}

fn connect(driver: &ChromeDriver, config: WebDriverConfig) -> WebDriverDevice {
    WebDriverDevice::connect(config)
        .unwrap_or_else(|e| panic!("{e}\nchromedriver said:\n{}", driver.output()))
}

fn text_of(device: &mut WebDriverDevice, selector: &str) -> String {
    let v = device
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;",
            &[json!(selector)],
        )
        .unwrap();
    v.as_str().unwrap_or("").to_owned()
}

fn center_of(device: &mut WebDriverDevice, selector: &str) -> Point {
    device
        .element_rect(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("{selector} is not rendered"))
        .center()
}

/// One step as the exploration loop takes it: the action, a screenshot, the signals and
/// the events. No step may lose the device or raise a crash.
fn step(device: &mut WebDriverDevice, kind: ActionKind, selector: &str) -> Vec<DeviceEvent> {
    let at = center_of(device, selector);
    device
        .perform(&Action::at(kind, at))
        .unwrap_or_else(|e| panic!("{kind} on {selector}: {e}"));
    look(device)
}

/// A screenshot, the signals (none may be a crash) and the events since the last look.
fn look(device: &mut WebDriverDevice) -> Vec<DeviceEvent> {
    let shot = device
        .screenshot()
        .unwrap_or_else(|e| panic!("screenshot: {e}"));
    assert_eq!(shot.size(), device.viewport());
    let signals = device.drain_signals().unwrap();
    assert!(
        signals.iter().all(|s| s.kind != SignalKind::Crash),
        "{signals:#?}"
    );
    device.drain_events().unwrap()
}

fn details(events: &[DeviceEvent], kind: DeviceEventKind) -> Vec<String> {
    events
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.detail.clone())
        .collect()
}

/// The app's page is on show, in the app's one window.
fn assert_on_app(device: &mut WebDriverDevice, sites: &Sites) {
    assert_eq!(text_of(device, "#title"), "Gauntlet");
    let url = device.execute("return location.href;", &[]).unwrap();
    assert_eq!(url, json!(sites.app.url()));
}

#[test]
fn dialogs_tabs_links_out_files_and_downloads_never_stop_the_run() {
    let driver = chromedriver();
    let sites = sites();
    let mut device = connect(&driver, WebDriverConfig::new(driver.url(), sites.app.url()));
    assert!(look(&mut device).is_empty());

    // Dialogs are answered (OK, a prompt gets the input text) and recorded with their
    // kinds and messages.
    let events = step(&mut device, ActionKind::Click, "#confirm");
    assert_eq!(text_of(&mut device, "#out"), "confirm:true");
    assert_eq!(
        details(&events, DeviceEventKind::Dialog),
        [r#"confirm "Delete?" accepted"#],
        "{events:?}"
    );
    let events = step(&mut device, ActionKind::Click, "#prompt");
    assert_eq!(text_of(&mut device, "#out"), "prompt:test");
    assert_eq!(
        details(&events, DeviceEventKind::Dialog),
        [r#"prompt "Your name?" accepted"#]
    );
    // An alert from a timer, after the step: the next screenshot answers it.
    let mut events = step(&mut device, ActionKind::Click, "#timer");
    std::thread::sleep(Duration::from_millis(300));
    events.extend(look(&mut device));
    // The page script notes the dialog's type as it opens; a dialog answered before the
    // note is read (a loaded machine) is recorded without it, as `dialog`.
    let timer = details(&events, DeviceEventKind::Dialog);
    assert!(
        timer == [r#"alert "Saved!" accepted"#] || timer == [r#"dialog "Saved!" accepted"#],
        "{timer:?}"
    );
    assert_eq!(text_of(&mut device, "#out"), "alerted");
    // An alert while a page loads holds up its load until it is answered.
    let events = step(&mut device, ActionKind::Click, "#welcome");
    assert_eq!(
        details(&events, DeviceEventKind::Dialog),
        [r#"alert "Welcome back" accepted"#]
    );
    assert_eq!(text_of(&mut device, "p"), "hi");
    device.perform(&Action::new(ActionKind::Return)).unwrap();
    assert!(look(&mut device).is_empty());
    assert_on_app(&mut device, &sites);

    // A popup, a target=_blank link and a middle click: each new window is closed and
    // the app's page kept.
    for (selector, kind, query) in [
        ("#popup", ActionKind::Click, "?popup"),
        ("#blank", ActionKind::Click, "?blank"),
        ("#middle", ActionKind::MidClick, "?middle"),
    ] {
        let events = step(&mut device, kind, selector);
        let closed = details(&events, DeviceEventKind::TabClosed);
        assert_eq!(closed.len(), 1, "{selector}: {events:?}");
        assert!(
            closed[0].ends_with(&format!("/popup.html{query}")),
            "{selector}: {closed:?}"
        );
        assert_on_app(&mut device, &sites);
    }

    // `window.close()` on the app's own window: Chromium refuses it for a window no
    // script opened; either way the run goes on in the app.
    let events = step(&mut device, ActionKind::Click, "#close");
    assert!(
        details(&events, DeviceEventKind::TabClosed).is_empty(),
        "{events:?}"
    );
    assert_on_app(&mut device, &sites);

    // A link to another origin and one to a host that does not answer: the app is
    // brought back, and the page left for is recorded.
    let events = step(&mut device, ActionKind::Click, "#away");
    assert_eq!(
        details(&events, DeviceEventKind::LeftApp),
        std::slice::from_ref(&sites.other_url)
    );
    assert_on_app(&mut device, &sites);
    let events = step(&mut device, ActionKind::Click, "#dead");
    let left = details(&events, DeviceEventKind::LeftApp);
    assert_eq!(left.len(), 1, "{events:?}");
    // The URL that failed, not Chromium's error page.
    assert!(
        left[0].starts_with("http://127.0.0.1:") && left[0].ends_with('/'),
        "{left:?}"
    );
    assert_on_app(&mut device, &sites);

    // A file input gets the upload file, as if chosen in the chooser.
    let events = step(&mut device, ActionKind::Click, "#file");
    assert_eq!(
        details(&events, DeviceEventKind::FileChooser),
        ["selectSingle: gave gui-testing-upload.txt"]
    );
    assert_eq!(text_of(&mut device, "#out"), "file:gui-testing-upload.txt");

    // A download lands in the device's folder and is recorded once it is complete.
    let mut events = step(&mut device, ActionKind::Click, "#download");
    for _ in 0..20 {
        if !details(&events, DeviceEventKind::Download).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        events.extend(look(&mut device));
    }
    assert_eq!(details(&events, DeviceEventKind::Download), ["report.bin"]);
    assert_on_app(&mut device, &sites);

    // The app's window closed under the device (as `window.close()` would where the
    // browser allows it): a new one on the app, not a lost device.
    let session = device.session_id().unwrap().to_owned();
    let base = format!("{}/session/{session}", driver.url());
    ureq::post(format!("{base}/window/new"))
        .send_json(json!({ "type": "tab" }))
        .expect("open a tab");
    ureq::delete(format!("{base}/window"))
        .call()
        .expect("close the app's window");
    let events = look(&mut device);
    assert_eq!(
        details(&events, DeviceEventKind::WindowReopened),
        [sites.app.url()],
        "{events:?}"
    );
    assert_eq!(
        details(&events, DeviceEventKind::TabClosed),
        ["about:blank"],
        "the tab that was left is closed: {events:?}"
    );
    assert_on_app(&mut device, &sites);
    assert_eq!(device.screenshot().unwrap().size(), Size::new(1280, 800));
    // Dialogs still work in the new window: its page has the hooks again.
    let events = step(&mut device, ActionKind::Click, "#confirm");
    assert_eq!(
        details(&events, DeviceEventKind::Dialog),
        [r#"confirm "Delete?" accepted"#]
    );

    // Nothing of this lost the session.
    device.restart().unwrap();
    assert_eq!(device.sessions(), 1);
    assert_on_app(&mut device, &sites);
    assert!(device.drain_signals().unwrap().is_empty());
}

#[test]
fn dismissing_dialogs_cancels_confirms_and_prompts() {
    let driver = chromedriver();
    let sites = sites();
    let mut config = WebDriverConfig::new(driver.url(), sites.app.url());
    config.dialogs = DialogPolicy::Dismiss;
    let mut device = connect(&driver, config);
    let events = step(&mut device, ActionKind::Click, "#confirm");
    assert_eq!(text_of(&mut device, "#out"), "confirm:false");
    assert_eq!(
        details(&events, DeviceEventKind::Dialog),
        [r#"confirm "Delete?" dismissed"#]
    );
    let events = step(&mut device, ActionKind::Click, "#prompt");
    assert_eq!(text_of(&mut device, "#out"), "prompt:null");
    assert_eq!(
        details(&events, DeviceEventKind::Dialog),
        [r#"prompt "Your name?" dismissed"#]
    );
    // An allowed origin is part of the app: a link there is not brought back.
    drop(device);
    let mut config = WebDriverConfig::new(driver.url(), sites.app.url());
    config.allowed_origins = vec![sites.other_url.clone()];
    let mut device = connect(&driver, config);
    let events = step(&mut device, ActionKind::Click, "#away");
    assert!(
        details(&events, DeviceEventKind::LeftApp).is_empty(),
        "{events:?}"
    );
    assert_eq!(text_of(&mut device, "title"), "Elsewhere");
}

/// A page whose last image never comes: the launch and restarts go on with what loaded.
/// A tab on a host that never answers is closed without waiting for it.
#[test]
fn a_page_that_never_finishes_loading_is_kept() {
    let driver = chromedriver();
    // Takes connections and never answers them.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = silent.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        &format!(
            "<!doctype html><h1 id=\"title\">Slow</h1>\
             <button id=\"tab\" onclick=\"window.open('http://127.0.0.1:{port}/tab')\">tab</button>\
             <img src=\"http://127.0.0.1:{port}/never.png\">"
        ),
    );
    let server = StaticServer::folder(dir.path(), "index.html").unwrap();
    let mut config = WebDriverConfig::new(driver.url(), server.url());
    config.load_timeout = Duration::from_secs(2);
    let mut device = connect(&driver, config);
    let events = look(&mut device);
    let incomplete = details(&events, DeviceEventKind::LoadIncomplete);
    assert_eq!(incomplete.len(), 1, "{events:?}");
    assert!(incomplete[0].starts_with(&server.url()), "{incomplete:?}");
    assert_eq!(text_of(&mut device, "#title"), "Slow");
    device.restart().unwrap();
    let events = look(&mut device);
    assert_eq!(
        details(&events, DeviceEventKind::LoadIncomplete).len(),
        1,
        "{events:?}"
    );
    assert_eq!(device.sessions(), 1);
    assert_eq!(text_of(&mut device, "#title"), "Slow");
    let events = step(&mut device, ActionKind::Click, "#tab");
    assert_eq!(
        details(&events, DeviceEventKind::TabClosed),
        ["a new tab without a URL yet"]
    );
    assert_eq!(text_of(&mut device, "#title"), "Slow");
    drop(silent);
}

/// A click handler that never returns is still a hang: reported once, as a crash, and
/// the device comes back.
#[test]
fn a_hanging_handler_is_still_reported_once() {
    let driver = chromedriver();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "index.html",
        "<!doctype html><h1 id=\"title\">Hang</h1>\
         <button id=\"hang\" style=\"height: 40px\" onclick=\"while (true) {}\">hang</button>",
    );
    let server = StaticServer::folder(dir.path(), "index.html").unwrap();
    let mut config = WebDriverConfig::new(driver.url(), server.url());
    config.call_timeout = Duration::from_secs(3);
    let mut device = connect(&driver, config);
    let at = center_of(&mut device, "#hang");
    let lost = device
        .perform(&Action::at(ActionKind::Click, at))
        .and_then(|()| device.screenshot().map(drop))
        .expect_err("a hung page cannot answer");
    assert!(lost.is_device_lost(), "{lost:?}");
    device.restart().unwrap();
    let signals = device.drain_signals().unwrap();
    let crashes = signals
        .iter()
        .filter(|s| s.kind == SignalKind::Crash)
        .count();
    assert_eq!(crashes, 1, "{signals:#?}");
    assert!(
        device
            .drain_events()
            .unwrap()
            .iter()
            .all(|e| e.kind != DeviceEventKind::Dialog),
        "a hang is no dialog"
    );
    assert_eq!(device.screenshot().unwrap().size(), Size::new(1280, 800));
    assert_eq!(text_of(&mut device, "#title"), "Hang");
}
