//! The Android device against the fake `adb` program (tests/fake_adb/adb), which plays a
//! scripted app from tests/data/android/app.json. Every test runs the real subprocesses;
//! none has seen a real phone or emulator.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gui_core::{
    Action, ActionKind, ActionParam, Platform, Point, Screenshot, SignalKind, Size, SwipeDirection,
};
use gui_driver::{AndroidConfig, AndroidDevice, Device, Error};

const PKG: &str = "com.example.fake";
const SERIAL: &str = "emulator-5554";
/// Centres of the start screen's buttons (app.json): open the form, crash, freeze, crash
/// another app; and a spot where nothing is.
const OPEN_FORM: Point = Point::new(180, 148);
const CRASH: Point = Point::new(180, 228);
const FREEZE: Point = Point::new(180, 308);
const OTHER_CRASH: Point = Point::new(180, 388);
const NOTHING: Point = Point::new(10, 600);

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/android")
        .join(name)
}

fn fake_adb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_adb/adb")
}

/// One pretend phone: its own state folder, so tests run in parallel.
struct Phone {
    dir: tempfile::TempDir,
    app: PathBuf,
    extra_env: Vec<(String, String)>,
}

impl Phone {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            app: data("app.json"),
            extra_env: Vec::new(),
        }
    }

    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn config(&self) -> AndroidConfig {
        let mut env = vec![
            ("FAKE_ADB_APP".to_owned(), self.app.display().to_string()),
            (
                "FAKE_ADB_STATE".to_owned(),
                self.state().display().to_string(),
            ),
        ];
        env.extend(self.extra_env.iter().cloned());
        AndroidConfig {
            adb: Some(fake_adb()),
            activity: Some(".MainActivity".into()),
            permissions: vec![
                "android.permission.CAMERA".into(),
                "android.permission.ACCESS_FINE_LOCATION".into(),
            ],
            ring: Duration::ZERO,
            call_timeout: Duration::from_secs(10),
            env,
            ..AndroidConfig::new(PKG)
        }
    }

    fn connect(&self) -> AndroidDevice {
        AndroidDevice::connect(self.config()).expect("connect to the fake adb")
    }

    /// Every invocation so far, arguments space-separated, without `-s SERIAL`.
    fn log(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.state().join("log.txt")).unwrap_or_default();
        let prefix = format!("-s {} ", self.serial());
        text.lines()
            .map(|l| l.strip_prefix(&prefix).unwrap_or(l).to_owned())
            .collect()
    }

    fn serial(&self) -> String {
        self.extra_env
            .iter()
            .find(|(k, _)| k == "FAKE_ADB_SERIAL")
            .map_or(SERIAL.to_owned(), |(_, v)| v.clone())
    }

    fn fake_state(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.state().join("state.json")).unwrap()).unwrap()
    }
}

fn launch_command() -> String {
    format!(
        "shell am start -W -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -n {PKG}/.MainActivity"
    )
}

fn same_pixels(a: &Screenshot, b: &Screenshot) -> bool {
    a.pixels() == b.pixels()
}

fn fixture(name: &str) -> Screenshot {
    Screenshot::load(&data(name)).unwrap()
}

#[test]
fn connect_reads_the_screen_and_starts_the_app_fresh() {
    let phone = Phone::new();
    let mut device = phone.connect();
    assert_eq!(device.platform(), Platform::Android);
    assert_eq!(device.viewport(), Size::new(360, 640));
    assert_eq!(device.screen(), (Size::new(360, 640), Some(160)));
    assert_eq!(device.serial(), SERIAL);
    assert_eq!(
        device.describe(),
        format!("Android {SERIAL} (Fake Pixel) package {PKG} 360x640")
    );
    let log = phone.log();
    let expect = [
        "get-state".to_owned(),
        "get-serialno".to_owned(),
        "shell wm size".to_owned(),
        "shell wm density".to_owned(),
        "shell getprop ro.product.model".to_owned(),
        "shell logcat -c".to_owned(),
        format!("shell am force-stop {PKG}"),
        format!("shell pm clear {PKG}"),
        "shell settings put system accelerometer_rotation 0".to_owned(),
        "shell settings put system user_rotation 0".to_owned(),
        "shell svc wifi enable".to_owned(),
        "shell svc data enable".to_owned(),
        launch_command(),
    ];
    assert_eq!(log, expect);
    assert!(same_pixels(
        &device.screenshot().unwrap(),
        &fixture("main.png")
    ));
    assert_eq!(device.launches(), 1);

    // Without an activity the launcher activity is started through monkey; without data
    // clearing there is no `pm clear`.
    let phone = Phone::new();
    let config = AndroidConfig {
        activity: None,
        clear_data: false,
        serial: Some(SERIAL.into()),
        ..phone.config()
    };
    let mut device = AndroidDevice::connect(config).unwrap();
    let log = phone.log();
    assert!(!log.iter().any(|l| l.contains("pm clear")), "{log:?}");
    assert!(!log.iter().any(|l| l.contains("get-serialno")), "{log:?}");
    assert_eq!(
        log.last().unwrap(),
        &format!("shell monkey -p {PKG} -c android.intent.category.LAUNCHER 1")
    );
    assert!(same_pixels(
        &device.screenshot().unwrap(),
        &fixture("main.png")
    ));
}

#[test]
fn a_tap_changes_the_screen_and_the_hierarchy() {
    let phone = Phone::new();
    let mut device = phone.connect();
    let before = device.screenshot().unwrap();
    let ui = device
        .ui_hierarchy()
        .unwrap()
        .expect("Android has a hierarchy");
    assert_eq!(ui.app, PKG);
    assert_eq!(ui.screen, format!("{PKG}.MainActivity"));
    let open = ui
        .elements
        .iter()
        .find(|e| e.text == "Open form")
        .expect("the button of the dump");
    assert!(open.clickable && open.long_clickable && !open.editable);
    assert_eq!(open.id, format!("{PKG}:id/open_form"));
    assert_eq!(open.bounds.center(), OPEN_FORM);

    device
        .perform(&Action::at(ActionKind::Click, OPEN_FORM))
        .unwrap();
    let after = device.screenshot().unwrap();
    assert!(
        after.diff_fraction(&before, 8) > 0.05,
        "the form looks like the start screen"
    );
    assert!(same_pixels(&after, &fixture("form.png")));
    let ui = device.ui_hierarchy().unwrap().unwrap();
    assert_eq!(ui.screen, format!("{PKG}.FormActivity"));
    let field = ui
        .elements
        .iter()
        .find(|e| e.editable)
        .expect("a text field");
    assert_eq!(
        (field.class.as_str(), field.hint.as_str()),
        ("android.widget.EditText", "Your name")
    );
    let check = ui
        .elements
        .iter()
        .find(|e| e.checkable)
        .expect("a checkbox");
    assert_eq!(check.hint, "I agree", "content-desc stands in for a hint");
    let log = phone.log();
    assert!(
        log.contains(&"shell input tap 180 148".to_owned()),
        "{log:?}"
    );
    assert!(log.contains(&"shell uiautomator dump /sdcard/window_dump.xml".to_owned()));
    assert!(log.contains(&"exec-out cat /sdcard/window_dump.xml".to_owned()));
    assert!(log.contains(&"exec-out screencap -p".to_owned()));
}

/// The adb commands each action ran.
fn commands(phone: &Phone, device: &mut AndroidDevice, action: Action) -> Vec<String> {
    let before = phone.log().len();
    device
        .perform(&action)
        .unwrap_or_else(|e| panic!("{action}: {e}"));
    phone.log()[before..].to_vec()
}

#[test]
fn every_supported_action_maps_to_its_adb_command() {
    for serial in [SERIAL, "0A1B2C3D"] {
        let mut phone = Phone::new();
        phone.extra_env = vec![("FAKE_ADB_SERIAL".into(), serial.into())];
        let mut device = phone.connect();
        let mut covered = Vec::new();
        let mut check = |device: &mut AndroidDevice, action: Action, expect: &[&str]| {
            covered.push(action.kind);
            let expect: Vec<String> = expect
                .iter()
                .map(|s| s.replace("{launch}", &launch_command()))
                .collect();
            assert_eq!(commands(&phone, device, action.clone()), expect, "{action}");
        };
        check(
            &mut device,
            Action::at(ActionKind::Click, NOTHING),
            &["shell input tap 10 600"],
        );
        check(
            &mut device,
            Action::at(ActionKind::Input, NOTHING)
                .with_param(ActionParam::Text("it's here\n".into())),
            &[
                "shell input tap 10 600",
                r"shell input text 'it'\''s%shere'",
                "shell input keyevent 66",
            ],
        );
        check(
            &mut device,
            Action::at(ActionKind::Drag, NOTHING)
                .with_param(ActionParam::Offset { dx: 50, dy: -20 }),
            &["shell input swipe 10 600 60 580 1000"],
        );
        check(
            &mut device,
            Action::at(ActionKind::DoubleClick, NOTHING),
            &["shell input tap 10 600 && input tap 10 600"],
        );
        check(
            &mut device,
            Action::new(ActionKind::SplitScreen),
            &["shell input keyevent --longpress 187"],
        );
        assert_eq!(phone.fake_state()["split"], true);
        check(
            &mut device,
            Action::at(ActionKind::LongClick, NOTHING),
            &["shell input swipe 10 600 10 600 800"],
        );
        // A finger moving up over 40% of the height from the middle, and back down.
        check(
            &mut device,
            Action::new(ActionKind::Swipe).with_param(ActionParam::Direction(SwipeDirection::Up)),
            &["shell input swipe 180 448 180 192 300"],
        );
        check(
            &mut device,
            Action::new(ActionKind::Swipe).with_param(ActionParam::Direction(SwipeDirection::Down)),
            &["shell input swipe 180 192 180 448 300"],
        );
        check(
            &mut device,
            Action::new(ActionKind::OrientationSwitch),
            &[
                "shell settings put system accelerometer_rotation 0",
                "shell settings put system user_rotation 1",
            ],
        );
        assert_eq!(device.viewport(), Size::new(640, 360));
        let shot = device.screenshot().unwrap();
        assert_eq!(shot.size(), Size::new(640, 360));
        assert!(same_pixels(&shot, &fixture("main-land.png")));
        check(
            &mut device,
            Action::new(ActionKind::OrientationSwitch),
            &[
                "shell settings put system accelerometer_rotation 0",
                "shell settings put system user_rotation 0",
            ],
        );
        assert_eq!(device.viewport(), Size::new(360, 640));
        check(
            &mut device,
            Action::new(ActionKind::AccessGrant),
            &[
                "shell pm grant com.example.fake android.permission.CAMERA",
                "shell pm grant com.example.fake android.permission.ACCESS_FINE_LOCATION",
            ],
        );
        assert_eq!(phone.fake_state()["granted"].as_array().unwrap().len(), 2);
        check(
            &mut device,
            Action::new(ActionKind::AccessDeny),
            &[
                "shell pm revoke com.example.fake android.permission.CAMERA",
                "shell pm revoke com.example.fake android.permission.ACCESS_FINE_LOCATION",
            ],
        );
        check(
            &mut device,
            Action::new(ActionKind::NetworkSwitch),
            &["shell svc wifi disable", "shell svc data disable"],
        );
        assert_eq!(phone.fake_state()["wifi"], false);
        check(
            &mut device,
            Action::new(ActionKind::NetworkSwitch),
            &["shell svc wifi enable", "shell svc data enable"],
        );
        check(
            &mut device,
            Action::new(ActionKind::BackSwitch),
            &["shell input keyevent 3", "{launch}"],
        );
        // Only an emulator can ring; a phone gets home-and-back.
        let interrupt: &[&str] = if serial.starts_with("emulator-") {
            &["emu gsm call 5551234", "emu gsm cancel 5551234", "{launch}"]
        } else {
            &["shell input keyevent 3", "{launch}"]
        };
        check(
            &mut device,
            Action::new(ActionKind::PhoneInterrupt),
            interrupt,
        );
        // Back from the form returns to the start screen.
        device
            .perform(&Action::at(ActionKind::Click, OPEN_FORM))
            .unwrap();
        check(
            &mut device,
            Action::new(ActionKind::Return),
            &["shell input keyevent 4"],
        );
        assert!(same_pixels(
            &device.screenshot().unwrap(),
            &fixture("main.png")
        ));

        let mut all = device.supported_actions();
        all.sort();
        covered.sort();
        covered.dedup();
        assert_eq!(covered, all, "every supported action is checked");
        assert_eq!(
            phone.fake_state()["typed"],
            serde_json::json!(["it's here"]),
            "the phone typed the text"
        );
    }
}

#[test]
fn unsupported_actions_are_refused_and_permissions_need_configuring() {
    let phone = Phone::new();
    let mut device = phone.connect();
    let before = phone.log().len();
    for kind in [
        ActionKind::MidClick,
        ActionKind::RightClick,
        ActionKind::WindowSize,
    ] {
        let action = Action::at(kind, NOTHING).with_param(ActionParam::Ratio(0.5));
        match device.perform(&action) {
            Err(Error::Unsupported {
                action,
                platform: Platform::Android,
            }) => assert_eq!(action, kind),
            other => panic!("{kind}: {other:?}"),
        }
    }
    assert_eq!(phone.log().len(), before, "nothing reached the phone");
    assert_eq!(
        device.supported_actions().len(),
        14,
        "Table 3's mobile column"
    );
    let err = device.perform(&Action::new(ActionKind::Click)).unwrap_err();
    assert!(matches!(err, Error::BadAction { .. }), "{err}");

    let config = AndroidConfig {
        permissions: Vec::new(),
        ..phone.config()
    };
    let mut device = AndroidDevice::connect(config).unwrap();
    let offered = device.supported_actions();
    assert!(!offered.contains(&ActionKind::AccessGrant));
    assert!(!offered.contains(&ActionKind::AccessDeny));
    assert_eq!(offered.len(), 12);
    let err = device
        .perform(&Action::new(ActionKind::AccessGrant))
        .unwrap_err();
    assert!(err.to_string().contains("permissions"), "{err}");

    // A permission the app does not declare: pm's own complaint, naming the command.
    let config = AndroidConfig {
        permissions: vec!["android.permission.READ_SMS".into()],
        ..phone.config()
    };
    let mut device = AndroidDevice::connect(config).unwrap();
    let err = device
        .perform(&Action::new(ActionKind::AccessGrant))
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Adb { .. }), "{text}");
    assert!(
        text.contains("pm grant") && text.contains("has not requested permission"),
        "{text}"
    );
    assert!(!err.is_device_lost());
}

#[test]
fn a_crash_is_one_signal_with_its_app_frames_and_the_same_key_each_time() {
    let phone = Phone::new();
    let mut device = phone.connect();
    assert!(device.drain_signals().unwrap().is_empty(), "a clean start");
    let mut keys = Vec::new();
    for round in 0..2 {
        device
            .perform(&Action::at(ActionKind::Click, CRASH))
            .unwrap();
        // The app is gone: the screen shows the launcher.
        assert!(same_pixels(
            &device.screenshot().unwrap(),
            &fixture("home.png")
        ));
        let signals = device.drain_signals().unwrap();
        assert_eq!(signals.len(), 1, "round {round}: {signals:?}");
        let s = &signals[0];
        assert_eq!(s.kind, SignalKind::Crash);
        assert!(
            s.message
                .starts_with("java.lang.IllegalStateException: Could not execute method"),
            "{}",
            s.message
        );
        assert!(
            s.message.contains(
                "Caused by: java.lang.NullPointerException: Attempt to invoke virtual method"
            ),
            "{}",
            s.message
        );
        let frame = s
            .stack
            .iter()
            .find(|f| f.function == "com.example.fake.MainActivity.countLetters")
            .expect("the app's frame");
        assert_eq!((frame.url.as_str(), frame.line), ("MainActivity.java", 58));
        assert!(
            s.key.contains("java.lang.NullPointerException")
                && s.key.contains("countLetters@MainActivity.java:58")
                && s.key.contains("onCrashClicked@MainActivity.java:41")
                && !s.key.contains("performClick"),
            "{}",
            s.key
        );
        keys.push(s.key.clone());
        // Nothing new on the next read.
        assert!(device.drain_signals().unwrap().is_empty());
        let err = device
            .perform(&Action::at(ActionKind::Click, NOTHING))
            .unwrap_err();
        assert!(err.is_device_lost(), "{err}");
        assert!(err.to_string().contains("stopped working"), "{err}");
        device.restart().unwrap();
    }
    assert_eq!(keys[0], keys[1], "the same crash, another pid, one key");
    let reads: Vec<_> = phone
        .log()
        .into_iter()
        .filter(|l| l.contains("logcat -d"))
        .collect();
    assert!(
        !reads[0].contains("-T") && reads.last().unwrap().contains("-T '11-30 12:00:00."),
        "once lines were read, reads start where the last ended: {reads:?}"
    );
}

#[test]
fn an_anr_is_detected_and_other_apps_crashes_are_not_ours() {
    let phone = Phone::new();
    let mut device = phone.connect();
    device
        .perform(&Action::at(ActionKind::Click, OTHER_CRASH))
        .unwrap();
    assert!(device.drain_signals().unwrap().is_empty());
    device
        .perform(&Action::at(ActionKind::Click, NOTHING))
        .expect("our app is fine");

    device
        .perform(&Action::at(ActionKind::Click, FREEZE))
        .unwrap();
    let signals = device.drain_signals().unwrap();
    assert_eq!(signals.len(), 1, "{signals:?}");
    let s = &signals[0];
    assert_eq!(s.kind, SignalKind::Crash);
    assert!(
        s.message.starts_with(
            "Application Not Responding: ANR in com.example.fake (com.example.fake/.MainActivity)"
        ),
        "{}",
        s.message
    );
    assert!(s.message.contains("Reason: Input dispatching timed out"));
    assert!(!s.key.contains("5001ms"), "{}", s.key);
    // A frozen app is restarted like a crashed one.
    assert!(
        device
            .perform(&Action::at(ActionKind::Click, NOTHING))
            .unwrap_err()
            .is_device_lost()
    );
}

#[test]
fn a_malformed_dump_is_an_error_naming_it() {
    let mut phone = Phone::new();
    let mut app: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data("app.json")).unwrap()).unwrap();
    let broken = phone.dir.path().join("broken.xml");
    std::fs::write(&broken, "<hierarchy rotation=\"0\"><node bounds=").unwrap();
    app["dir"] = data("").display().to_string().into();
    app["screens"][".MainActivity"]["dump"] = broken.display().to_string().into();
    let path = phone.dir.path().join("app.json");
    std::fs::write(&path, app.to_string()).unwrap();
    phone.app = path;
    let mut device = phone.connect();
    let err = device.ui_hierarchy().unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::UiDump { .. }), "{text}");
    assert!(
        text.contains("/sdcard/window_dump.xml") && text.contains("malformed"),
        "{text}"
    );
    // The screenshot still works: the hierarchy is optional.
    device.screenshot().unwrap();
}

#[test]
fn a_missing_adb_says_what_to_install() {
    let phone = Phone::new();
    let config = AndroidConfig {
        adb: Some("/nonexistent/platform-tools/adb".into()),
        ..phone.config()
    };
    let err = AndroidDevice::connect(config).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::AdbNotFound { .. }), "{text}");
    assert!(
        text.contains("/nonexistent/platform-tools/adb") && text.contains("apt-get install adb"),
        "{text}"
    );
    let config = AndroidConfig {
        package: String::new(),
        ..phone.config()
    };
    let err = AndroidDevice::connect(config).unwrap_err().to_string();
    assert!(err.contains("no package"), "{err}");
}

#[test]
fn a_hung_adb_is_killed_after_the_timeout_and_the_device_is_lost() {
    let mut phone = Phone::new();
    phone.extra_env = vec![("FAKE_ADB_HANG".into(), "1".into())];
    let config = AndroidConfig {
        call_timeout: Duration::from_secs(1),
        ..phone.config()
    };
    let t = Instant::now();
    let err = AndroidDevice::connect(config).unwrap_err();
    assert!(err.is_device_lost(), "{err}");
    assert!(err.to_string().contains("get-state"), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );

    // A device that hangs in the middle of a run, and comes back.
    let phone = Phone::new();
    let config = AndroidConfig {
        call_timeout: Duration::from_secs(1),
        ..phone.config()
    };
    let mut device = AndroidDevice::connect(config).unwrap();
    std::fs::write(phone.state().join("hang"), "").unwrap();
    let t = Instant::now();
    let err = device.screenshot().unwrap_err();
    assert!(err.is_device_lost(), "{err}");
    assert!(err.to_string().contains("screencap"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(5));
    std::fs::remove_file(phone.state().join("hang")).unwrap();
    device.restart().unwrap();
    device.screenshot().unwrap();
}

#[test]
fn restart_brings_back_the_start_screen_upright_and_online() {
    let phone = Phone::new();
    let mut device = phone.connect();
    device
        .perform(&Action::at(ActionKind::Click, OPEN_FORM))
        .unwrap();
    device
        .perform(&Action::new(ActionKind::OrientationSwitch))
        .unwrap();
    device
        .perform(&Action::new(ActionKind::NetworkSwitch))
        .unwrap();
    assert!(same_pixels(
        &device.screenshot().unwrap(),
        &fixture("form-land.png")
    ));
    let before = phone.log().len();
    device.restart().unwrap();
    let log = phone.log()[before..].to_vec();
    for expect in [
        format!("shell am force-stop {PKG}"),
        format!("shell pm clear {PKG}"),
        "shell settings put system user_rotation 0".to_owned(),
        "shell svc wifi enable".to_owned(),
        "shell svc data enable".to_owned(),
        launch_command(),
    ] {
        assert!(log.contains(&expect), "{expect} missing from {log:?}");
    }
    let shot = device.screenshot().unwrap();
    assert!(same_pixels(&shot, &fixture("main.png")));
    assert_eq!(device.viewport(), Size::new(360, 640));
    assert_eq!(device.launches(), 2);

    // A back press on the start screen closes the app: the next call says so.
    device.perform(&Action::new(ActionKind::Return)).unwrap();
    let err = device.screenshot().unwrap_err();
    assert!(err.is_device_lost(), "{err}");
    assert!(err.to_string().contains("left the screen"), "{err}");
    device.restart().unwrap();
    assert!(same_pixels(
        &device.screenshot().unwrap(),
        &fixture("main.png")
    ));
}
