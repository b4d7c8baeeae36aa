//! The desktop device on a real Xvfb: xmessage for clicks, exits and restarts, a small
//! Swing app for typing, window actions and Java exceptions. Without Xvfb (or the apps)
//! these tests fail and say what to install.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use gui_core::{
    Action, ActionKind, ActionParam, Platform, Point, Rect, Screenshot, Signal, SignalKind, Size,
    SwipeDirection,
};
use gui_driver::{DesktopConfig, DesktopDevice, Device, Error, XvfbConfig, find_xvfb};

fn require(program: &str, package: &str) {
    if let Err(e) = find_xvfb() {
        panic!("{e}");
    }
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join(program).is_file());
    assert!(
        found,
        "{program} not found on PATH; install it: apt-get install {package}"
    );
}

fn config(command: &[&str], size: Size) -> DesktopConfig {
    DesktopConfig {
        xvfb: XvfbConfig {
            size,
            display: None,
        },
        ..DesktopConfig::new(command.iter().copied())
    }
}

/// Polls `f` until it yields something, failing after `timeout` with `what`.
fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "no {what} within {timeout:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Signals of `kind`, polled until one arrives.
fn wait_for_signal(dev: &mut DesktopDevice, kind: SignalKind) -> (Signal, Vec<Signal>) {
    let mut all = Vec::new();
    let found = wait_for(&format!("{kind:?} signal"), Duration::from_secs(5), || {
        all.extend(dev.drain_signals().unwrap());
        all.iter().find(|s| s.kind == kind).cloned()
    });
    (found, all)
}

fn is_dark(shot: &Screenshot, x: i32, y: i32) -> bool {
    let p = shot.pixels().get_pixel(x as u32, y as u32);
    p.0.iter().map(|&c| u32::from(c)).sum::<u32>() < 3 * 128
}

/// The centres of the outlined boxes in the lowest row of dark pixels inside `win`, left
/// to right: xmessage's buttons, found by their pixels.
fn bottom_buttons(shot: &Screenshot, win: Rect) -> Vec<Point> {
    // One pixel of window border, one of margin.
    let (x0, x1) = (win.x + 2, win.x + win.width as i32 - 3);
    let row_dark = |y: i32| (x0..=x1).any(|x| is_dark(shot, x, y));
    let mut bottom = win.y + win.height as i32 - 3;
    while bottom > win.y + 2 && !row_dark(bottom) {
        bottom -= 1;
    }
    let mut top = bottom;
    while top > win.y + 2 && row_dark(top - 1) {
        top -= 1;
    }
    let mut boxes = Vec::new();
    let mut start = None;
    for x in x0..=x1 + 1 {
        let dark = x <= x1 && (top..=bottom).any(|y| is_dark(shot, x, y));
        match (dark, start) {
            (true, None) => start = Some(x),
            (false, Some(s)) => {
                boxes.push(Point::new((s + x - 1) / 2, (top + bottom) / 2));
                start = None;
            }
            _ => {}
        }
    }
    boxes
}

#[test]
fn xmessage_button_exit_is_a_crash_and_restart_brings_the_window_back() {
    require("xmessage", "x11-utils");
    let mut dev = DesktopDevice::launch(config(
        &[
            "xmessage",
            "-buttons",
            "yes,no",
            "-geometry",
            "300x120+0+0",
            "hello",
        ],
        Size::new(640, 480),
    ))
    .unwrap();
    assert_eq!(dev.platform(), Platform::Desktop);
    assert_eq!(dev.viewport(), Size::new(640, 480));
    assert_eq!(
        dev.describe(),
        format!(
            "desktop Xvfb :{} 640x480: xmessage -buttons yes,no -geometry 300x120+0+0 hello",
            dev.display()
        )
    );

    let windows = dev.windows().unwrap();
    assert_eq!(windows.len(), 1, "{windows:?}");
    let win = windows[0].clone();
    assert_eq!(win.title, "xmessage");
    assert_eq!((win.rect.x, win.rect.y), (0, 0));
    assert!(win.rect.width >= 300 && win.rect.height >= 120, "{win:?}");

    let shot = dev.screenshot().unwrap();
    assert_eq!(shot.size(), Size::new(640, 480));
    // A light window on the dark root.
    let inside = shot.pixels().get_pixel(150, 60).0;
    let outside = shot.pixels().get_pixel(500, 400).0;
    assert_ne!(inside, outside, "the screen is uniform");

    let buttons = bottom_buttons(&shot, win.rect);
    assert_eq!(buttons.len(), 2, "buttons yes and no, found {buttons:?}");
    let old_pid = dev.app_pid().unwrap();

    // Android-only actions are refused before anything happens.
    let long = dev.perform(&Action::at(ActionKind::LongClick, buttons[1]));
    assert!(matches!(long, Err(Error::Unsupported { .. })), "{long:?}");

    // xmessage exits with 101 + the button's index.
    dev.perform(&Action::at(ActionKind::Click, buttons[1]))
        .unwrap();
    let (crash, all) = wait_for_signal(&mut dev, SignalKind::Crash);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(
        crash.message.starts_with("the app exited with code 102\n"),
        "{}",
        crash.message
    );
    let lost = dev.screenshot().unwrap_err();
    assert!(lost.is_device_lost(), "{lost}");

    dev.restart().unwrap();
    assert_eq!(dev.launches(), 2);
    assert_ne!(dev.app_pid(), Some(old_pid));
    let windows = dev.windows().unwrap();
    assert_eq!(windows.len(), 1, "{windows:?}");
    assert_eq!(windows[0].title, "xmessage");
    // The exit was reported once, and a restart of a running app is no crash.
    assert!(dev.drain_signals().unwrap().is_empty());
    let again = dev.screenshot().unwrap();
    assert!(again.diff_fraction(&shot, 0) < 0.001);
    dev.restart().unwrap();
    assert!(dev.drain_signals().unwrap().is_empty());
    assert_eq!(dev.windows().unwrap().len(), 1);

    // A dead X server is replaced on restart.
    let status = Command::new("kill")
        .args(["-s", "KILL", &dev.xvfb_pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let lost = wait_for("a lost device", Duration::from_secs(5), || {
        dev.screenshot().err()
    });
    assert!(lost.is_device_lost(), "{lost}");
    dev.restart().unwrap();
    assert_eq!(dev.windows().unwrap().len(), 1);
    // The app lost its display with the server: that is no crash of the app.
    assert!(dev.drain_signals().unwrap().is_empty());
    assert!(
        dev.uses_shm(),
        "Xvfb has MIT-SHM; screenshots should use it"
    );
    dev.screenshot().unwrap();
}

#[test]
fn an_app_that_exits_before_showing_a_window_fails_the_launch_with_its_output() {
    require("sh", "dash");
    let err = DesktopDevice::launch(config(
        &["sh", "-c", "echo 'cannot open the database' >&2; exit 3"],
        Size::new(320, 240),
    ))
    .unwrap_err();
    assert!(matches!(err, Error::DesktopStart { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("exited with code 3") && text.contains("cannot open the database"),
        "{text}"
    );
}

/// Compiles the Swing test app into a fresh directory.
fn compile_echo_field() -> tempfile::TempDir {
    require("javac", "openjdk-17-jdk-headless");
    let out = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/desktop/EchoField.java");
    let status = Command::new("javac")
        .arg("-d")
        .arg(out.path())
        .arg(&source)
        .status()
        .expect("run javac");
    assert!(status.success(), "javac failed on {}", source.display());
    out
}

/// The 1-based line of the source that holds `marker`.
fn line_of(marker: &str) -> u32 {
    let source = include_str!("data/desktop/EchoField.java");
    source
        .lines()
        .position(|l| l.contains(marker))
        .expect("marker in source") as u32
        + 1
}

#[test]
fn swing_app_takes_typed_text_window_actions_and_reports_its_exception() {
    let classes = compile_echo_field();
    let mut dev = DesktopDevice::launch(config(
        &[
            "java",
            "-Xshare:auto",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classes.path().to_str().unwrap(),
            "EchoField",
        ],
        Size::new(640, 480),
    ))
    .unwrap();
    wait_for("`ready` from the app", Duration::from_secs(10), || {
        dev.stdout_tail().contains("ready").then_some(())
    });
    let main = dev.windows().unwrap().last().cloned().unwrap();
    assert_eq!(main.title, "echo field");
    assert_eq!(main.rect, Rect::new(0, 0, 300, 100));

    // '+' and the capital need Shift; the trailing newline is Return.
    let field = Point::new(150, 25);
    dev.perform(
        &Action::at(ActionKind::Input, field).with_param(ActionParam::Text("Hello+1\n".into())),
    )
    .unwrap();
    wait_for("the typed line", Duration::from_secs(5), || {
        dev.stdout_tail()
            .lines()
            .any(|l| l == "typed: Hello+1")
            .then_some(())
    });

    // Two BackSpaces, then characters the keyboard map lacks, which are bound to spare
    // keycodes first.
    dev.perform(
        &Action::at(ActionKind::Input, field)
            .with_param(ActionParam::Text("\u{8}\u{8}é€\n".into())),
    )
    .unwrap();
    wait_for(
        "the line typed with a borrowed keycode",
        Duration::from_secs(5),
        || {
            dev.stdout_tail()
                .lines()
                .any(|l| l == "typed: Helloé€")
                .then_some(())
        },
    );

    // The button's handler dereferences null on the event dispatch thread.
    dev.perform(&Action::at(ActionKind::Click, Point::new(70, 65)))
        .unwrap();
    let (npe, all) = wait_for_signal(&mut dev, SignalKind::UncaughtException);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(
        npe.message
            .starts_with("java.lang.NullPointerException: Cannot invoke \"String.length()\""),
        "{}",
        npe.message
    );
    let top = &npe.stack[0];
    assert_eq!(top.function, "EchoField.explode");
    assert_eq!(top.url, "EchoField.java");
    assert_eq!(top.line, line_of("// throws here"));
    assert!(
        npe.stack
            .iter()
            .any(|f| f.function == "java.awt.EventDispatchThread.run"),
        "{}",
        npe.stack_text()
    );

    // Window actions resize the main window; the screen stays the viewport.
    let main_rect = |dev: &mut DesktopDevice| dev.windows().unwrap().last().unwrap().rect;
    dev.perform(&Action::new(ActionKind::WindowSize).with_param(ActionParam::Ratio(0.5)))
        .unwrap();
    wait_for("the half-size window", Duration::from_secs(2), || {
        (main_rect(&mut dev) == Rect::new(0, 0, 150, 50)).then_some(())
    });
    dev.perform(&Action::new(ActionKind::SplitScreen)).unwrap();
    wait_for("the split window", Duration::from_secs(2), || {
        (main_rect(&mut dev) == Rect::new(0, 0, 320, 480)).then_some(())
    });
    dev.perform(&Action::new(ActionKind::SplitScreen)).unwrap();
    wait_for("the start-size window", Duration::from_secs(2), || {
        (main_rect(&mut dev) == Rect::new(0, 0, 300, 100)).then_some(())
    });
    assert_eq!(dev.viewport(), Size::new(640, 480));

    // The rest of the desktop's actions run without error and leave the app alive.
    let p = Point::new(100, 25);
    for action in [
        Action::at(ActionKind::DoubleClick, p),
        Action::at(ActionKind::RightClick, p),
        Action::at(ActionKind::MidClick, p),
        Action::at(ActionKind::Drag, p).with_param(ActionParam::Offset { dx: 60, dy: 0 }),
        Action::at(ActionKind::Swipe, p).with_param(ActionParam::Direction(SwipeDirection::Up)),
        Action::new(ActionKind::Swipe).with_param(ActionParam::Direction(SwipeDirection::Down)),
        Action::new(ActionKind::Return),
        Action::new(ActionKind::BackSwitch),
    ] {
        dev.perform(&action)
            .unwrap_or_else(|e| panic!("{action}: {e}"));
    }
    assert_eq!(
        dev.supported_actions().len(),
        11,
        "{:?}",
        dev.supported_actions()
    );
    for kind in [ActionKind::NetworkSwitch, ActionKind::OrientationSwitch] {
        assert!(matches!(
            dev.perform(&Action::new(kind)),
            Err(Error::Unsupported { .. })
        ));
    }
    // Typing still reaches the field after focus went away and came back.
    dev.perform(&Action::at(ActionKind::Input, field).with_param(ActionParam::Text("ok\n".into())))
        .unwrap();
    wait_for("the second typed line", Duration::from_secs(5), || {
        dev.stdout_tail()
            .lines()
            .any(|l| l.starts_with("typed: ") && l.ends_with("ok"))
            .then_some(())
    });
    assert!(dev.screenshot().is_ok());
    assert!(
        dev.drain_signals()
            .unwrap()
            .iter()
            .all(|s| s.kind != SignalKind::Crash)
    );
}
