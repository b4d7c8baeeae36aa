use std::path::PathBuf;
use std::time::Duration;

use gui_core::{ActionKind, Platform};

/// Errors of devices and their backends.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "Chromium not found (looked for {tried}). Install it with `cargo xtask setup` \
         (runs `apt-get install -y chromium chromium-driver` as root) or point GUI_CHROMIUM \
         at a Chromium binary"
    )]
    BrowserNotFound { tried: String },

    #[error("cannot start {path}: {source}")]
    Launch {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "{path} did not announce its DevTools endpoint within {after:?}; its last output:\n{stderr}"
    )]
    LaunchTimeout {
        path: PathBuf,
        after: Duration,
        stderr: String,
    },

    #[error("DevTools call {method} failed: {message}")]
    Protocol { method: String, message: String },

    #[error("DevTools call {method} got no answer within {after:?}")]
    Timeout { method: String, after: Duration },

    /// The device is gone: browser process exited, socket closed, renderer crashed.
    #[error("device lost: {what}")]
    DeviceLost { what: String },

    #[error("cannot open {url}: {reason}")]
    Navigation { url: String, reason: String },

    #[error("{action} is not supported on {platform:?}")]
    Unsupported {
        action: ActionKind,
        platform: Platform,
    },

    #[error("action {action} needs {what}")]
    BadAction {
        action: ActionKind,
        what: &'static str,
    },

    #[error(transparent)]
    Image(#[from] gui_core::Error),

    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },

    #[error("unexpected DevTools answer to {method}: {detail}")]
    BadReply { method: String, detail: String },

    #[error("Xvfb not found (looked for {tried}); install Xvfb: apt-get install xvfb")]
    XvfbNotFound { tried: String },

    /// Xvfb or the desktop app did not come up: it exited early or showed no window in time.
    #[error("{what}; its last output:\n{output}")]
    DesktopStart { what: String, output: String },

    /// The X server refused a request (a window vanished, a bad value).
    #[error("X11 request {request} failed: {detail}")]
    X11 { request: String, detail: String },

    #[error(
        "adb not found (looked for {tried}). Install the Debian package `adb` \
         (apt-get install adb), set ANDROID_HOME to an SDK with platform-tools, or give \
         the program's path (--adb)"
    )]
    AdbNotFound { tried: String },

    /// An adb command ran but failed: non-zero exit, or an error the command printed.
    #[error("`{command}` failed: {message}")]
    Adb { command: String, message: String },

    /// The UI Automator dump of an Android screen is not the XML it should be.
    #[error("the UI Automator dump {path} is malformed: {detail}")]
    UiDump { path: String, detail: String },

    #[error(
        "chromedriver not found (looked for {tried}). Install it with `cargo xtask setup` \
         (runs `apt-get install -y chromium chromium-driver` as root) or put it on PATH"
    )]
    DriverNotFound { tried: String },

    /// A WebDriver endpoint could not be reached, or would not open a browser session.
    #[error("WebDriver endpoint {url}: {reason}")]
    WebDriver { url: String, reason: String },
}

impl Error {
    /// Whether the device must be relaunched before it can be used again.
    pub fn is_device_lost(&self) -> bool {
        matches!(self, Error::DeviceLost { .. } | Error::Timeout { .. })
    }

    /// An [`Error::Io`] saying what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
