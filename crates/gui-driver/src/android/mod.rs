//! An Android phone or emulator as a [`Device`], through the `adb` program.
//!
//! Every call is one `adb` invocation bounded by [`AndroidConfig::call_timeout`]; one that
//! hangs is killed and reported as a lost device, so the exploration restarts instead of
//! waiting forever. Screenshots are `screencap -p`, input is the `input` command, crashes
//! and ANRs of the package are read from logcat, the view hierarchy is a UI Automator
//! dump.
//!
//! **Never run on a real device or emulator.** None can be obtained on the machines this
//! was written on; it is tested against a fake `adb` program
//! (`crates/gui-driver/tests/fake_adb/adb`) that answers with hand-written outputs in the
//! formats Android documents and prints. Where real phones differ from the fake, this is
//! where to look first.
//!
//! How the actions of PIRLTest's mobile column (Table 3) map to a phone:
//!
//! | action | adb |
//! |---|---|
//! | click | `input tap X Y` |
//! | double_click | `input tap X Y && input tap X Y`, in one shell call |
//! | long_click | `input swipe X Y X Y 800` (a swipe that stays put is a long press) |
//! | input | a tap on the target, `input text` (spaces as `%s`), `input keyevent 66` (Enter) for each newline |
//! | drag | `input swipe X Y X+DX Y+DY 1000` |
//! | swipe | `input swipe` over 40% of the screen height in 300 ms |
//! | split_screen | `input keyevent --longpress 187`: a long press on Overview, which docks and undocks the app on Androids with three-button navigation |
//! | orientation_switch | `settings put system accelerometer_rotation 0`, `settings put system user_rotation 1` (or back to 0) |
//! | return | `input keyevent 4` (back) |
//! | back_switch | `input keyevent 3` (home), then the launcher intent brings the app's task back |
//! | access_grant / access_deny | `pm grant` / `pm revoke` of each configured permission |
//! | network_switch | `svc wifi disable` + `svc data disable`, then enable on the next switch |
//! | phone_interrupt | an emulator: `adb emu gsm call`, ring, `gsm cancel`, app back to front; a phone: home and back, as back_switch (nothing can ring a real phone from adb) |

mod adb;
mod logcat;
mod uidump;

use std::path::PathBuf;
use std::time::Duration;

use gui_core::{
    Action, ActionKind, ActionParam, CoverageSnapshot, Platform, Point, Screenshot, Signal, Size,
    SwipeDirection, UiHierarchy,
};

use crate::{Device, Error, Result};
use adb::{Adb, sh_quote};
use logcat::LogcatReader;

pub use adb::find_adb;

/// The text parsers behind the Android device, for the fuzz targets in `fuzz/`. Not an API:
/// the device calls them itself.
#[doc(hidden)]
pub mod fuzzing {
    use gui_core::{Signal, UiHierarchy};

    /// A UI Automator dump as the device reads it; `path` names it in errors.
    pub fn parse_ui_dump(xml: &str, path: &str) -> crate::Result<UiHierarchy> {
        super::uidump::parse_dump(xml, path)
    }

    /// The crash and ANR signals of `package` in one drain of logcat output.
    pub fn logcat_signals(package: &str, output: &str) -> Vec<Signal> {
        super::logcat::LogcatReader::new(package).read(output)
    }
}

/// Where UI Automator writes its dump on the phone.
const DUMP_PATH: &str = "/sdcard/window_dump.xml";
/// The number an emulator's fake incoming call comes from.
const CALLER: &str = "5551234";
/// How long a long click presses, and how long a drag and a page swipe take.
const LONG_PRESS_MS: u32 = 800;
const DRAG_MS: u32 = 1000;
const SWIPE_MS: u32 = 300;
/// `KeyEvent.KEYCODE_APP_SWITCH`, the Overview (recent apps) key.
const KEYCODE_APP_SWITCH: u32 = 187;

/// How to reach the phone and which app to test.
#[derive(Debug, Clone)]
pub struct AndroidConfig {
    /// The `adb` program; `None` looks for it ([`find_adb`]).
    pub adb: Option<PathBuf>,
    /// Which device (`adb -s`); `None` takes the only one attached.
    pub serial: Option<String>,
    /// The app under test, e.g. `com.example.notes`.
    pub package: String,
    /// The activity to launch (`.MainActivity` or a full class name); `None` launches
    /// the package's launcher activity through `monkey`.
    pub activity: Option<String>,
    /// Wipe the app's data (`pm clear`) on every start, so each run begins the same.
    pub clear_data: bool,
    /// Runtime permissions the app declares, granted by access_grant and revoked by
    /// access_deny. With none, the device does not offer those two actions.
    pub permissions: Vec<String>,
    /// Bound of every adb call; one that takes longer is killed and the device is lost.
    pub call_timeout: Duration,
    /// How long the emulator's fake call rings before it is hung up (phone_interrupt).
    pub ring: Duration,
    /// Extra environment of every adb call (`ANDROID_ADB_SERVER_PORT`,
    /// `ADB_SERVER_SOCKET`, …).
    pub env: Vec<(String, String)>,
}

impl Default for AndroidConfig {
    fn default() -> Self {
        Self {
            adb: None,
            serial: None,
            package: String::new(),
            activity: None,
            clear_data: true,
            permissions: Vec::new(),
            call_timeout: Duration::from_secs(20),
            ring: Duration::from_secs(1),
            env: Vec::new(),
        }
    }
}

impl AndroidConfig {
    /// A config testing `package`, every other field at its default.
    pub fn new(package: impl Into<String>) -> Self {
        Self {
            package: package.into(),
            ..Self::default()
        }
    }
}

/// An app on an Android phone or emulator, driven through adb.
#[derive(Debug)]
pub struct AndroidDevice {
    config: AndroidConfig,
    adb: Adb,
    model: String,
    /// The screen in its natural orientation, in pixels.
    screen: Size,
    density: Option<u32>,
    /// The size the last screenshot had, which is where taps land.
    viewport: Size,
    rotated: bool,
    offline: bool,
    logcat: LogcatReader,
    signals: Vec<Signal>,
    /// Why the app is no longer usable (it crashed, it stopped answering, it left the
    /// screen), until the next restart.
    gone: Option<String>,
    /// A back press may have closed the app's last activity: look before the next action.
    check_foreground: bool,
    launches: u32,
}

impl AndroidDevice {
    /// Connects to the device, reads its screen, clears its log and starts the app
    /// fresh.
    ///
    /// Fails with [`Error::AdbNotFound`] without adb, with [`Error::Adb`] when the device
    /// is not ready (offline, unauthorized) or the app cannot be started, and with a lost
    /// device when adb does not answer within [`AndroidConfig::call_timeout`].
    pub fn connect(config: AndroidConfig) -> Result<Self> {
        if config.package.is_empty() {
            return Err(Error::Adb {
                command: "connect".into(),
                message: "no package to test: AndroidConfig::package is empty".into(),
            });
        }
        let program = match &config.adb {
            Some(p) if p.is_file() => p.clone(),
            Some(p) => {
                return Err(Error::AdbNotFound {
                    tried: p.display().to_string(),
                });
            }
            None => find_adb()?,
        };
        let mut adb = Adb {
            program,
            serial: config.serial.clone(),
            env: config.env.clone(),
            timeout: config.call_timeout,
        };
        let state = String::from_utf8_lossy(&adb.run(&["get-state"])?)
            .trim()
            .to_owned();
        if state != "device" {
            return Err(Error::Adb {
                command: "adb get-state".into(),
                message: format!("the device is `{state}`, not ready (`device`)"),
            });
        }
        if adb.serial.is_none() {
            // Later calls go to this device even if another one is plugged in meanwhile.
            let serial = String::from_utf8_lossy(&adb.run(&["get-serialno"])?)
                .trim()
                .to_owned();
            adb.serial = Some(serial);
        }
        let wm = adb.shell("wm size")?;
        let screen = parse_wm_size(&wm).ok_or_else(|| Error::Adb {
            command: "wm size".into(),
            message: format!("no screen size in {:?}", wm.trim()),
        })?;
        let density = adb
            .shell("wm density")?
            .lines()
            .filter_map(|l| l.rsplit(':').next()?.trim().parse().ok())
            .next_back();
        let model = adb.shell("getprop ro.product.model")?.trim().to_owned();
        adb.shell("logcat -c")?;
        let mut device = Self {
            logcat: LogcatReader::new(&config.package),
            config,
            adb,
            model,
            screen,
            density,
            viewport: screen,
            rotated: false,
            offline: false,
            signals: Vec::new(),
            gone: None,
            check_foreground: false,
            launches: 0,
        };
        device.start_fresh()?;
        tracing::info!("connected: {}", device.describe());
        Ok(device)
    }

    /// The device's serial number (`adb -s`).
    pub fn serial(&self) -> &str {
        self.adb.serial.as_deref().unwrap_or("")
    }

    /// The screen size in its natural orientation and the density in dpi, as the
    /// device reported them at connect.
    pub fn screen(&self) -> (Size, Option<u32>) {
        (self.screen, self.density)
    }

    /// How many times the app has been started (1 + restarts).
    pub fn launches(&self) -> u32 {
        self.launches
    }

    /// Runs one command in the device's shell and returns what it printed: an escape
    /// hatch for setup a test needs (`cmd` is quoted for the phone's shell by the caller).
    pub fn shell(&mut self, cmd: &str) -> Result<String> {
        self.adb.shell(cmd)
    }

    /// Stops the app, wipes its data if configured, puts the phone upright and online and
    /// starts the app.
    fn start_fresh(&mut self) -> Result<()> {
        let pkg = sh_quote(&self.config.package);
        self.adb.shell(&format!("am force-stop {pkg}"))?;
        if self.config.clear_data {
            let out = self.adb.shell(&format!("pm clear {pkg}"))?;
            if !out.contains("Success") {
                return Err(Error::Adb {
                    command: format!("pm clear {pkg}"),
                    message: out.trim().to_owned(),
                });
            }
        }
        self.set_rotation(false)?;
        self.set_network(true)?;
        self.gone = None;
        self.check_foreground = false;
        self.launch()?;
        self.launches += 1;
        Ok(())
    }

    /// Starts the app, or brings its task to the front the way the launcher does.
    fn launch(&mut self) -> Result<()> {
        let pkg = &self.config.package;
        let (cmd, out) = match &self.config.activity {
            Some(activity) => {
                let cmd = format!(
                    "am start -W -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -n {}",
                    sh_quote(&format!("{pkg}/{activity}"))
                );
                let out = self.adb.shell(&cmd)?;
                (cmd, out)
            }
            None => {
                let cmd = format!(
                    "monkey -p {} -c android.intent.category.LAUNCHER 1",
                    sh_quote(pkg)
                );
                let out = self.adb.shell(&cmd)?;
                (cmd, out)
            }
        };
        // `am` and `monkey` of older Androids report failures on stdout with exit code 0.
        let failed = out
            .lines()
            .any(|l| l.starts_with("Error") || l.contains("monkey aborted"));
        if failed {
            return Err(Error::Adb {
                command: cmd,
                message: out.trim().to_owned(),
            });
        }
        Ok(())
    }

    fn set_rotation(&mut self, rotated: bool) -> Result<()> {
        self.adb
            .shell("settings put system accelerometer_rotation 0")?;
        self.adb.shell(&format!(
            "settings put system user_rotation {}",
            u8::from(rotated)
        ))?;
        self.rotated = rotated;
        self.viewport = if rotated {
            Size::new(self.screen.height, self.screen.width)
        } else {
            self.screen
        };
        Ok(())
    }

    fn set_network(&mut self, online: bool) -> Result<()> {
        let verb = if online { "enable" } else { "disable" };
        self.adb.shell(&format!("svc wifi {verb}"))?;
        self.adb.shell(&format!("svc data {verb}"))?;
        self.offline = !online;
        Ok(())
    }

    fn input(&self, args: &str) -> Result<()> {
        self.adb.shell(&format!("input {args}")).map(drop)
    }

    fn key(&self, code: u32) -> Result<()> {
        self.input(&format!("keyevent {code}"))
    }

    /// The resumed activity as `(package, class)`, if the dump names one.
    fn resumed(&self) -> Result<Option<(String, String)>> {
        let out = self.adb.shell("dumpsys activity activities")?;
        Ok(uidump::resumed_activity(&out))
    }

    /// Fails with a lost device when the app crashed, froze or left the screen.
    fn app_usable(&mut self) -> Result<()> {
        if self.check_foreground {
            self.check_foreground = false;
            if let Some((pkg, _)) = self.resumed()?
                && pkg != self.config.package
            {
                self.gone = Some(format!("the app left the screen ({pkg} is in front)"));
            }
        }
        match &self.gone {
            Some(why) => Err(Error::DeviceLost { what: why.clone() }),
            None => Ok(()),
        }
    }

    /// Reads the log since the last read into `self.signals`.
    fn collect_signals(&mut self) -> Result<()> {
        let out = self.adb.shell(&self.logcat.command())?;
        let found = self.logcat.read(&out);
        if let Some(first) = found.first()
            && self.gone.is_none()
        {
            self.gone = Some(format!(
                "the app stopped working: {}",
                first.message.lines().next().unwrap_or("")
            ));
        }
        self.signals.extend(found);
        Ok(())
    }

    fn perform_inner(&mut self, action: &Action) -> Result<()> {
        use ActionKind::*;
        let target = || {
            action.point().ok_or(Error::BadAction {
                action: action.kind,
                what: "a target",
            })
        };
        let vp = self.viewport;
        match action.kind {
            Click => {
                let p = target()?;
                self.input(&format!("tap {} {}", p.x, p.y))?;
            }
            LongClick => {
                let p = target()?;
                self.input(&format!(
                    "swipe {x} {y} {x} {y} {LONG_PRESS_MS}",
                    x = p.x,
                    y = p.y
                ))?;
            }
            Input => {
                // Typing goes to the focused field; a tap on it gives it the focus.
                if let Some(p) = action.point() {
                    self.input(&format!("tap {} {}", p.x, p.y))?;
                }
                let text = crate::typed_text(action);
                for (i, line) in text.split('\n').enumerate() {
                    if i > 0 {
                        self.key(66)?;
                    }
                    if !line.is_empty() {
                        self.input(&format!("text {}", input_text_arg(line)))?;
                    }
                }
            }
            Drag => {
                let (dx, dy) = crate::drag_offset(action, vp);
                let from = target()?;
                let to = from.offset(dx, dy);
                self.input(&format!(
                    "swipe {} {} {} {} {DRAG_MS}",
                    from.x, from.y, to.x, to.y
                ))?;
            }
            Swipe => {
                // A finger moving up moves the content up: the page scrolls down.
                let up = !matches!(
                    action.param,
                    Some(ActionParam::Direction(SwipeDirection::Down))
                );
                let at = action
                    .point()
                    .unwrap_or(Point::new(vp.width as i32 / 2, vp.height as i32 / 2));
                let half = (vp.height as i32 * 2 / 10).max(1);
                let y = at.y.clamp(half, (vp.height as i32 - half).max(half));
                let (y0, y1) = if up {
                    (y + half, y - half)
                } else {
                    (y - half, y + half)
                };
                let y0 = y0.clamp(0, vp.height as i32 - 1);
                let y1 = y1.clamp(0, vp.height as i32 - 1);
                self.input(&format!("swipe {x} {y0} {x} {y1} {SWIPE_MS}", x = at.x))?;
            }
            OrientationSwitch => {
                let rotated = !self.rotated;
                self.set_rotation(rotated)?;
            }
            Return => {
                self.key(4)?;
                self.check_foreground = true;
            }
            BackSwitch => {
                self.key(3)?;
                self.launch()?;
            }
            PhoneInterrupt => {
                if self.serial().starts_with("emulator-") {
                    self.adb.run(&["emu", "gsm", "call", CALLER])?;
                    std::thread::sleep(self.config.ring);
                    self.adb.run(&["emu", "gsm", "cancel", CALLER])?;
                } else {
                    self.key(3)?;
                }
                self.launch()?;
            }
            AccessGrant | AccessDeny => {
                if self.config.permissions.is_empty() {
                    return Err(Error::BadAction {
                        action: action.kind,
                        what: "permissions to grant or revoke (none configured)",
                    });
                }
                let verb = if action.kind == AccessGrant {
                    "grant"
                } else {
                    "revoke"
                };
                let pkg = sh_quote(&self.config.package);
                for perm in &self.config.permissions {
                    self.adb
                        .shell(&format!("pm {verb} {pkg} {}", sh_quote(perm)))?;
                }
            }
            NetworkSwitch => {
                let online = self.offline;
                self.set_network(online)?;
            }
            DoubleClick => {
                // One shell call: two adb round trips could exceed the double-tap timeout
                // (300 ms); `input` is a quick `cmd input` call on Android 11 and later.
                let p = target()?;
                self.adb.shell(&format!(
                    "input tap {x} {y} && input tap {x} {y}",
                    x = p.x,
                    y = p.y
                ))?;
            }
            SplitScreen => {
                // A long press on Overview docks the app in split screen, and undocks it
                // again, on Androids with three-button navigation; there is no adb
                // command for it that works across versions.
                self.input(&format!("keyevent --longpress {KEYCODE_APP_SWITCH}"))?;
            }
            MidClick | RightClick | WindowSize => {
                return Err(Error::Unsupported {
                    action: action.kind,
                    platform: Platform::Android,
                });
            }
        }
        Ok(())
    }
}

/// `input text`'s argument: `input` reads `%s` as a space, and the phone's shell must see
/// one word.
fn input_text_arg(text: &str) -> String {
    sh_quote(&text.replace(' ', "%s"))
}

/// The size `wm size` reports: the override when one is set (`wm size 720x1280`), else
/// the physical size.
fn parse_wm_size(out: &str) -> Option<Size> {
    let size = |prefix: &str| {
        out.lines().find_map(|l| {
            let (w, h) = l.trim().strip_prefix(prefix)?.trim().split_once('x')?;
            Some(Size::new(w.trim().parse().ok()?, h.trim().parse().ok()?))
        })
    };
    size("Override size:").or_else(|| size("Physical size:"))
}

impl Device for AndroidDevice {
    fn platform(&self) -> Platform {
        Platform::Android
    }

    fn viewport(&self) -> Size {
        self.viewport
    }

    fn screenshot(&mut self) -> Result<Screenshot> {
        self.app_usable()?;
        let png = self.adb.exec_out("screencap -p")?;
        // Android's input coordinates are screen pixels: scale 1. The screenshot, not the
        // rotation setting, says how the screen stands (an app may lock its orientation).
        let shot = Screenshot::from_png(&png, "adb exec-out screencap -p", 1.0, crate::now_ms())?;
        self.viewport = shot.size();
        Ok(shot)
    }

    fn perform(&mut self, action: &Action) -> Result<()> {
        if !action.kind.supported_on(Platform::Android) {
            return Err(Error::Unsupported {
                action: action.kind,
                platform: Platform::Android,
            });
        }
        self.app_usable()?;
        self.perform_inner(action)
    }

    fn restart(&mut self) -> Result<()> {
        // What the app logged before it died belongs to this run; a device that does not
        // answer is found out by the start below.
        if let Err(e) = self.collect_signals() {
            tracing::warn!("could not read logcat before the restart: {e}");
        }
        self.start_fresh()
    }

    fn drain_signals(&mut self) -> Result<Vec<Signal>> {
        self.collect_signals()?;
        Ok(std::mem::take(&mut self.signals))
    }

    fn coverage(&mut self) -> Result<Option<CoverageSnapshot>> {
        Ok(None)
    }

    fn supported_actions(&self) -> Vec<ActionKind> {
        ActionKind::supported(Platform::Android)
            .filter(|k| {
                !self.config.permissions.is_empty()
                    || !matches!(k, ActionKind::AccessGrant | ActionKind::AccessDeny)
            })
            .collect()
    }

    fn describe(&self) -> String {
        format!(
            "Android {} ({}) package {} {}x{}",
            self.serial(),
            self.model,
            self.config.package,
            self.screen.width,
            self.screen.height
        )
    }

    fn ui_hierarchy(&mut self) -> Result<Option<UiHierarchy>> {
        let out = self.adb.shell(&format!("uiautomator dump {DUMP_PATH}"))?;
        if !out.contains("dumped to") {
            return Err(Error::UiDump {
                path: DUMP_PATH.into(),
                detail: format!("uiautomator did not write it: {}", out.trim()),
            });
        }
        let xml = self.adb.exec_out(&format!("cat {DUMP_PATH}"))?;
        let xml = String::from_utf8(xml).map_err(|e| Error::UiDump {
            path: DUMP_PATH.into(),
            detail: format!("not UTF-8: {e}"),
        })?;
        let mut hierarchy = uidump::parse_dump(&xml, DUMP_PATH)?;
        hierarchy.screen = match self.resumed()? {
            Some((_, class)) => class,
            None => hierarchy.app.clone(),
        };
        Ok(Some(hierarchy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_size_wins() {
        assert_eq!(
            parse_wm_size("Physical size: 1080x1920\n"),
            Some(Size::new(1080, 1920))
        );
        assert_eq!(
            parse_wm_size("Physical size: 1080x1920\nOverride size: 720x1280\n"),
            Some(Size::new(720, 1280))
        );
        assert_eq!(parse_wm_size("error"), None);
    }

    #[test]
    fn typed_text_is_one_shell_word_with_spaces_as_percent_s() {
        assert_eq!(input_text_arg("hello"), "hello");
        assert_eq!(input_text_arg("a b"), "a%sb");
        assert_eq!(input_text_arg("it's $HOME; ls"), r"'it'\''s%s$HOME;%sls'");
    }
}
