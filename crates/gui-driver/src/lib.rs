//! Devices: the backends that show an application and take actions on it.
//!
//! Every backend implements [`Device`] (defined in `gui-device` and re-exported here):
//! take a screenshot, perform one of the 17 actions, restart the app to its start state,
//! hand over the signals it observed (uncaught exceptions, error logs, crashes) and a
//! coverage snapshot where the platform has one. Strategies never see which backend they
//! drive.
//!
//! Backends, each behind the cargo feature of the same name so that a user compiles only
//! the protocol stacks it drives:
//! - `ChromiumDevice` (`chromium`): Debian Chromium, headless, over the DevTools protocol
//!   with our own small synchronous client (`cdp` module docs say why); JS precise coverage
//!   per step.
//! - `DesktopDevice` (`desktop`): an X11 app on its own `Xvfb`, driven through XTEST,
//!   with Java and Python exceptions read from its stderr.
//! - `WebDriverDevice` (`webdriver`): a browser behind any W3C WebDriver endpoint (a local
//!   chromedriver, a Selenium Grid), with JS coverage and network and permission actions
//!   where the endpoint passes DevTools commands through; `ChromeDriver` starts a local
//!   chromedriver.
//! - `AndroidDevice` (`android`): an app on an Android phone or emulator through the
//!   `adb` program (screencap, input, logcat crashes and ANRs, UI Automator dumps); tested
//!   only against a fake `adb`, never on a real device.
//! - `Simulator` (`simulator`, off by default): an in-process app model drawn to pixels,
//!   deterministic and fast, with seeded faults, for tests of strategies.
//!
//! [`StaticServer`] serves an app folder (or the bundled demo app, [`StaticServer::demo`])
//! on 127.0.0.1 at a free port.
//!
//! ```no_run
//! # #[cfg(feature = "chromium")] {
//! use gui_core::{Action, ActionKind, Point};
//! use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
//!
//! let server = StaticServer::demo()?;
//! let mut device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())?;
//! device.perform(&Action::at(ActionKind::Click, Point::new(200, 150)))?;
//! let shot = device.screenshot()?;
//! println!("{}x{}, coverage {:?}", shot.width(), shot.height(), device.coverage()?);
//! # }
//! # Ok::<(), gui_driver::Error>(())
//! ```

#[cfg(feature = "android")]
mod android;
#[cfg(feature = "chromium")]
mod cdp;
#[cfg(feature = "chromium")]
mod chromium;
#[cfg(feature = "desktop")]
mod desktop;
#[cfg(feature = "chromium")]
mod dom_hierarchy;
#[cfg(feature = "chromium")]
mod jscov;
mod serve;
#[cfg(feature = "simulator")]
mod simulator;
// Android reads Java traces from logcat with the desktop's frame parser.
#[cfg(any(feature = "desktop", feature = "android"))]
#[cfg_attr(not(feature = "desktop"), allow(dead_code))]
mod traces;
#[cfg(feature = "chromium")]
mod web_policy;
#[cfg(feature = "webdriver")]
mod webdriver;

#[cfg(any(feature = "chromium", feature = "desktop"))]
use gui_core::ActionKind;
#[cfg(any(feature = "chromium", feature = "desktop", feature = "android"))]
use gui_core::Size;
#[cfg(any(
    feature = "chromium",
    feature = "desktop",
    feature = "android",
    feature = "simulator"
))]
use gui_core::{Action, ActionParam};
#[cfg(feature = "chromium")]
use gui_core::{Point, SwipeDirection};

#[cfg(feature = "android")]
#[doc(hidden)]
pub use android::fuzzing;
#[cfg(feature = "android")]
pub use android::{AndroidConfig, AndroidDevice, find_adb};
#[cfg(feature = "chromium")]
pub use chromium::{ChromiumConfig, ChromiumDevice, ScreencastFrame, find_chromium};
#[cfg(feature = "desktop")]
pub use desktop::{
    DesktopConfig, DesktopDevice, DesktopWindow, Key, Xvfb, XvfbConfig, find_xvfb, main_window,
};
pub use gui_device::{Device, Error, Result};
#[cfg(feature = "chromium")]
pub use jscov::{JsCoverage, RanFunction};
pub use serve::StaticServer;
#[cfg(feature = "simulator")]
pub use simulator::{
    FUNCTION_BYTES, HEADER_HEIGHT, SimApp, SimFault, SimPage, SimWidget, Simulator,
};
#[cfg(feature = "chromium")]
pub use web_policy::{AppOrigins, DialogPolicy, PROMPT_TEXT};
#[cfg(feature = "webdriver")]
pub use webdriver::{ChromeDriver, WebDriverConfig, WebDriverDevice, find_chromedriver};

/// Milliseconds since the Unix epoch, the timestamp of screenshots.
#[cfg(any(feature = "chromium", feature = "desktop", feature = "android"))]
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Selects the text of the focused text field or editable element (through open shadow
/// roots and same-origin frames), so that the text an `input` inserts next replaces it.
/// Does nothing when the focus is elsewhere: a click on a label or a button leaves the
/// page's selection alone. A JS expression; the Chromium and WebDriver devices run it.
#[cfg(feature = "chromium")]
pub(crate) const SELECT_FOCUSED_TEXT: &str = r#"(() => {
  let doc = document, e = doc.activeElement;
  for (;;) {
    if (e && e.shadowRoot && e.shadowRoot.activeElement) { e = e.shadowRoot.activeElement; continue; }
    if (e && e.tagName === 'IFRAME') {
      try { doc = e.contentDocument; } catch (_) { return false; }
      if (!doc) return false;
      e = doc.activeElement;
      continue;
    }
    break;
  }
  if (!e) return false;
  if (e.tagName === 'TEXTAREA' || (e.tagName === 'INPUT' && typeof e.select === 'function'
      && ['text', 'search', 'email', 'url', 'tel', 'password', 'number', ''].includes(e.type))) {
    e.select();
    return true;
  }
  if (e.isContentEditable) {
    const range = doc.createRange();
    range.selectNodeContents(e);
    const sel = doc.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    return true;
  }
  return false;
})()"#;

/// Text typed by an `input` action that carries none.
#[cfg(any(
    feature = "chromium",
    feature = "desktop",
    feature = "android",
    feature = "simulator"
))]
pub(crate) const DEFAULT_TEXT: &str = "test";

/// The text an `input` action types: its parameter, else [`DEFAULT_TEXT`]. Every device
/// uses it.
#[cfg(any(
    feature = "chromium",
    feature = "desktop",
    feature = "android",
    feature = "simulator"
))]
pub(crate) fn typed_text(action: &Action) -> &str {
    match &action.param {
        Some(ActionParam::Text(t)) => t,
        _ => DEFAULT_TEXT,
    }
}

/// How far a `drag` moves: its offset parameter, else an eighth of `screen`'s width to
/// the right. Every device uses it.
#[cfg(any(feature = "chromium", feature = "desktop", feature = "android"))]
pub(crate) fn drag_offset(action: &Action, screen: Size) -> (i32, i32) {
    match action.param {
        Some(ActionParam::Offset { dx, dy }) => (dx, dy),
        _ => (screen.width as i32 / 8, 0),
    }
}

/// Where a mouse-wheel `swipe` turns the wheel and by how much (CSS pixels, positive
/// scrolls the page down): swiping up moves the content up, so the page scrolls down,
/// by 60% of the viewport. The two web devices use it.
#[cfg(feature = "chromium")]
pub(crate) fn wheel_scroll(action: &Action, viewport: Size) -> (Point, f64) {
    let sign = match action.param {
        Some(ActionParam::Direction(SwipeDirection::Down)) => -1.0,
        _ => 1.0,
    };
    let at = action.point().unwrap_or(Point::new(
        viewport.width as i32 / 2,
        viewport.height as i32 / 2,
    ));
    (at, sign * 0.6 * f64::from(viewport.height))
}

/// The size a `window_size` action asks for: `base` scaled by the action's ratio, the ratio
/// kept within 0.25-2 and each side at least 1. Every device that resizes a window uses it.
#[cfg(any(feature = "chromium", feature = "desktop"))]
pub(crate) fn window_size_for(action: &Action, base: Size) -> Result<Size> {
    let r = match action.param {
        Some(gui_core::ActionParam::Ratio(r)) if r.is_finite() => r.clamp(0.25, 2.0),
        _ => {
            return Err(Error::BadAction {
                action: ActionKind::WindowSize,
                what: "a finite ratio parameter",
            });
        }
    };
    let scaled = |v: u32| ((v as f32 * r).round() as u32).max(1);
    Ok(Size::new(scaled(base.width), scaled(base.height)))
}

/// Asks the kernel to kill the child of `cmd` when the thread that starts it ends, so that
/// a browser or X server never outlives a tool killed with `kill -9`. (Linux ties this to
/// the starting thread, not the process: devices are started and restarted on the thread
/// that drives them, which lives as long as they do.)
// The one unsafe block of the workspace: std offers no safe way to set a death signal.
#[cfg(any(feature = "chromium", feature = "desktop"))]
#[allow(unsafe_code)]
pub(crate) fn die_with_parent(cmd: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the forked child before exec and only calls prctl,
        // which is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// The DevTools commands that switch the network off or back on, with `Network.enable`
/// first when it has not been sent yet. Chromium and WebDriver (through its DevTools
/// passthrough) send the same ones.
#[cfg(feature = "chromium")]
pub(crate) fn offline_commands(
    network_enabled: bool,
    offline: bool,
) -> Vec<(&'static str, serde_json::Value)> {
    let mut commands = Vec::with_capacity(2);
    if !network_enabled {
        commands.push(("Network.enable", serde_json::json!({})));
    }
    commands.push((
        "Network.emulateNetworkConditions",
        serde_json::json!({ "offline": offline, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1 }),
    ));
    commands
}

/// `text` with the user and password of any `scheme://user:password@host` in it replaced
/// by `***`, for logs and run folders: grid URLs often carry an access key.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let authority_end = tail.find(['/', '?', '#', ' ']).unwrap_or(tail.len());
        match tail[..authority_end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                rest = &tail[at..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod redact_tests {
    use super::redact_userinfo;

    #[test]
    fn user_and_password_of_urls_are_hidden() {
        assert_eq!(
            redact_userinfo("https://me:k3y@hub.example.com/wd/hub"),
            "https://***@hub.example.com/wd/hub"
        );
        assert_eq!(
            redact_userinfo("http://127.0.0.1:9515 and http://a@b/c?d=e@f"),
            "http://127.0.0.1:9515 and http://***@b/c?d=e@f"
        );
        assert_eq!(redact_userinfo("no url here"), "no url here");
    }
}
