//! A desktop app on its own Xvfb as a [`Device`]: screenshots of the root window, mouse
//! and keyboard through XTEST, exceptions read from the app's stderr.
//!
//! Each device owns one Xvfb, so apps under test never share a screen, a pointer or a
//! keyboard focus. There is no window manager: top-level windows sit where the app puts
//! them (0,0 unless it asks otherwise), have no decorations, and the keyboard goes to the
//! window under the pointer unless the app takes the focus itself.
//!
//! Every exit of the app process is reported as a [`SignalKind::Crash`] naming its exit
//! code or signal, a clean `exit(0)` too: a tester has no way to tell a Quit button from
//! an unexpected exit, and the exploration restarts the app either way.

mod x11;
mod xvfb;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gui_core::{
    Action, ActionKind, ActionParam, CoverageSnapshot, Platform, Point, Rect, Screenshot, Signal,
    SignalKind, Size, SwipeDirection,
};

use crate::traces::TraceParser;
use crate::{Device, Error, Result};
use x11::{XSession, keysym};

pub use x11::DesktopWindow;
pub use xvfb::{Xvfb, XvfbConfig, find_xvfb};

/// Lines of stdout and of stderr kept for reports and tests.
const TAIL_LINES: usize = 200;
/// Lines of stderr quoted in a crash signal.
const CRASH_TAIL_LINES: usize = 20;
/// A stack trace still open after this much silence on stderr is complete.
const TRACE_QUIET: Duration = Duration::from_millis(50);
/// Wheel clicks per swipe: about half a page in most toolkits (3 lines a click).
const SWIPE_CLICKS: u32 = 5;

/// How to start the app under test.
#[derive(Debug, Clone)]
pub struct DesktopConfig {
    /// Program and its arguments.
    pub command: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Extra environment variables; `DISPLAY` is set to the device's Xvfb.
    pub env: Vec<(String, String)>,
    pub xvfb: XvfbConfig,
    /// How long the app may take to map its first window.
    pub launch_timeout: Duration,
    /// Pause after the first window appears, for the app to draw it.
    pub settle: Duration,
}

impl Default for DesktopConfig {
    fn default() -> Self {
        Self {
            command: Vec::new(),
            cwd: None,
            env: Vec::new(),
            xvfb: XvfbConfig::default(),
            launch_timeout: Duration::from_secs(20),
            settle: Duration::from_millis(300),
        }
    }
}

impl DesktopConfig {
    /// A config running `command` (program first) with the other fields at their defaults.
    pub fn new<S: Into<String>>(command: impl IntoIterator<Item = S>) -> Self {
        Self {
            command: command.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
}

/// Named keys for [`DesktopDevice::press_key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Return,
    Escape,
    Tab,
    BackSpace,
    Delete,
    Home,
    End,
    Left,
    Up,
    Right,
    Down,
}

impl Key {
    fn keysym(self) -> u32 {
        match self {
            Key::Return => keysym::RETURN,
            Key::Escape => keysym::ESCAPE,
            Key::Tab => keysym::TAB,
            Key::BackSpace => keysym::BACKSPACE,
            Key::Delete => keysym::DELETE,
            Key::Home => keysym::HOME,
            Key::End => keysym::END,
            Key::Left => keysym::LEFT,
            Key::Up => keysym::UP,
            Key::Right => keysym::RIGHT,
            Key::Down => keysym::DOWN,
        }
    }
}

/// What the app printed, filled by reader threads so a chatty app never blocks on a full
/// pipe and the device never blocks on a silent one.
#[derive(Debug)]
struct Output {
    stdout: VecDeque<String>,
    stderr: VecDeque<String>,
    /// Stderr lines not yet given to the trace parser.
    unparsed: Vec<String>,
    last_line: Instant,
    open_pipes: u32,
}

impl Output {
    fn push(&mut self, line: String, is_stderr: bool) {
        self.last_line = Instant::now();
        let tail = if is_stderr {
            self.unparsed.push(line.clone());
            &mut self.stderr
        } else {
            &mut self.stdout
        };
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

fn tail_text(lines: &VecDeque<String>, n: usize) -> String {
    let skip = lines.len().saturating_sub(n);
    lines
        .iter()
        .skip(skip)
        .cloned()
        .collect::<Vec<_>>()
        .join("\n")
}

/// The app's process, in a process group of its own so helpers it starts die with it.
#[derive(Debug)]
struct App {
    child: Child,
    output: Arc<Mutex<Output>>,
    exit: Option<ExitStatus>,
}

impl App {
    fn spawn(config: &DesktopConfig, display: &str) -> Result<Self> {
        let Some((program, args)) = config.command.split_first() else {
            return Err(Error::DesktopStart {
                what: "no command to start: DesktopConfig::command is empty".into(),
                output: String::new(),
            });
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("DISPLAY", display)
            .envs(config.env.iter().map(|(k, v)| (k, v)))
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::die_with_parent(&mut cmd);
        if let Some(cwd) = &config.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|source| Error::Launch {
            path: program.into(),
            source,
        })?;
        let output = Arc::new(Mutex::new(Output {
            stdout: VecDeque::new(),
            stderr: VecDeque::new(),
            unparsed: Vec::new(),
            last_line: Instant::now(),
            open_pipes: 2,
        }));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        spawn_reader("app-stdout", stdout, output.clone(), false)?;
        spawn_reader("app-stderr", stderr, output.clone(), true)?;
        Ok(Self {
            child,
            output,
            exit: None,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status once the process has ended.
    fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit
    }

    fn output(&self) -> std::sync::MutexGuard<'_, Output> {
        self.output.lock().expect("app output lock")
    }
}

impl Drop for App {
    fn drop(&mut self) {
        // The whole group, also when its leader has exited: helpers the app started may
        // still hold the display. There is no signal call without unsafe code or a new
        // dependency, so ask kill(1).
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.pid())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_reader(
    name: &str,
    pipe: impl Read + Send + 'static,
    output: Arc<Mutex<Output>>,
    is_stderr: bool,
) -> Result<()> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']).to_owned();
                        output
                            .lock()
                            .expect("app output lock")
                            .push(line, is_stderr);
                    }
                }
            }
            output.lock().expect("app output lock").open_pipes -= 1;
        })
        .map_err(|e| Error::io("spawn app output reader", e))?;
    Ok(())
}

/// How a process ended, in words: the first line of a crash signal.
fn exit_words(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("the app exited with code {code}");
    }
    match status.signal() {
        Some(sig) => {
            let name = match sig {
                1 => " (SIGHUP)",
                2 => " (SIGINT)",
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                13 => " (SIGPIPE)",
                15 => " (SIGTERM)",
                _ => "",
            };
            format!("the app was killed by signal {sig}{name}")
        }
        None => format!("the app ended: {status}"),
    }
}

/// A desktop app under test on its own Xvfb.
#[derive(Debug)]
pub struct DesktopDevice {
    config: DesktopConfig,
    // Dropped in this order: the app, then our connection, then the server.
    app: Option<App>,
    x: XSession,
    xvfb: Xvfb,
    parser: TraceParser,
    signals: Vec<Signal>,
    /// The current app's exit has been turned into a signal.
    exit_reported: bool,
    /// The app's main window and its rectangle when the app started.
    start_window: Option<DesktopWindow>,
    split: bool,
    launches: u32,
}

impl DesktopDevice {
    /// Starts Xvfb, then the app on it, and waits until the app maps a window.
    ///
    /// Fails with [`Error::XvfbNotFound`] without Xvfb, with [`Error::Launch`] when the
    /// program cannot be started and with [`Error::DesktopStart`] when it exits or shows
    /// no window within [`DesktopConfig::launch_timeout`].
    pub fn launch(config: DesktopConfig) -> Result<Self> {
        let xvfb = Xvfb::start(&config.xvfb)?;
        let x = XSession::connect(&xvfb.display_name())?;
        let mut device = Self {
            config,
            app: None,
            x,
            xvfb,
            parser: TraceParser::default(),
            signals: Vec::new(),
            exit_reported: false,
            start_window: None,
            split: false,
            launches: 0,
        };
        device.start_app()?;
        tracing::info!(
            "started {} (screenshots via {})",
            device.describe(),
            if device.x.uses_shm() {
                "MIT-SHM"
            } else {
                "GetImage"
            }
        );
        Ok(device)
    }

    /// The Xvfb display number (`DISPLAY=:N`).
    pub fn display(&self) -> u32 {
        self.xvfb.display()
    }

    /// Mapped top-level windows, bottom to top in stacking order.
    pub fn windows(&mut self) -> Result<Vec<DesktopWindow>> {
        self.x.windows()
    }

    /// The last lines the app wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.app
            .as_ref()
            .map_or_else(String::new, |a| tail_text(&a.output().stderr, TAIL_LINES))
    }

    /// The last lines the app wrote to stdout.
    pub fn stdout_tail(&self) -> String {
        self.app
            .as_ref()
            .map_or_else(String::new, |a| tail_text(&a.output().stdout, TAIL_LINES))
    }

    /// The app's process id while it runs (also after it exited, until the restart).
    pub fn app_pid(&self) -> Option<u32> {
        self.app.as_ref().map(App::pid)
    }

    /// The Xvfb process id (it changes when a dead Xvfb is replaced on restart).
    pub fn xvfb_pid(&self) -> u32 {
        self.xvfb.pid()
    }

    /// How many times the app has been started (1 + restarts).
    pub fn launches(&self) -> u32 {
        self.launches
    }

    /// Whether screenshots go through MIT-SHM (else plain GetImage).
    pub fn uses_shm(&self) -> bool {
        self.x.uses_shm()
    }

    /// Presses and releases one key where the keyboard focus is.
    pub fn press_key(&mut self, key: Key) -> Result<()> {
        self.app_alive()?;
        self.x.key(key.keysym())?;
        self.x.barrier()
    }

    /// Types `text` where the keyboard focus is; `\n` is Return, `\t` is Tab.
    pub fn type_text(&mut self, text: &str) -> Result<()> {
        self.app_alive()?;
        self.x.type_text(text)
    }

    fn start_app(&mut self) -> Result<()> {
        self.split = false;
        self.exit_reported = false;
        self.parser = TraceParser::default();
        self.start_window = None;
        // A pointer left over a widget by the last run would change the start screen.
        let corner = Point::new(
            self.x.size().width as i32 - 1,
            self.x.size().height as i32 - 1,
        );
        self.x.move_pointer(corner)?;
        self.x.barrier()?;

        let app = App::spawn(&self.config, &self.xvfb.display_name())?;
        self.launches += 1;
        self.app = Some(app);
        let deadline = Instant::now() + self.config.launch_timeout;
        loop {
            if let Some(w) = main_window(&self.x.windows()?) {
                self.start_window = Some(w);
                break;
            }
            let app = self.app.as_mut().expect("app was just started");
            if let Some(status) = app.exited() {
                // Its last words, which usually say why, may still be in the pipe.
                let deadline = Instant::now() + Duration::from_millis(500);
                while app.output().open_pipes > 0 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let output = tail_text(&app.output().stderr, CRASH_TAIL_LINES);
                self.app = None;
                return Err(Error::DesktopStart {
                    what: format!(
                        "`{}` ended before it showed a window: {}",
                        self.command_line(),
                        exit_words(status)
                    ),
                    output,
                });
            }
            if Instant::now() >= deadline {
                let output = tail_text(&app.output().stderr, CRASH_TAIL_LINES);
                self.app = None;
                return Err(Error::DesktopStart {
                    what: format!(
                        "`{}` showed no window within {:?}",
                        self.command_line(),
                        self.config.launch_timeout
                    ),
                    output,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(self.config.settle);
        Ok(())
    }

    fn command_line(&self) -> String {
        self.config.command.join(" ")
    }

    /// Parses what the app printed since the last call and notices its exit.
    fn collect_signals(&mut self) {
        let command = self.command_line();
        // An app whose X server died exits with it; that exit is not the app's finding.
        if !self.exit_reported
            && self.app.as_mut().and_then(App::exited).is_some()
            && !(self.xvfb.is_running() && self.x.barrier().is_ok())
        {
            self.exit_reported = true;
        }
        let Some(app) = self.app.as_mut() else {
            return;
        };
        let exited = app.exited();
        let report_exit = exited.is_some() && !self.exit_reported;
        if report_exit {
            // Its last words may still be in the pipes.
            let deadline = Instant::now() + Duration::from_millis(500);
            while app.output().open_pipes > 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let feed = |parser: &mut TraceParser, app: &App| {
            let lines = std::mem::take(&mut app.output().unparsed);
            for line in &lines {
                parser.feed(line);
            }
        };
        feed(&mut self.parser, app);
        if self.parser.is_open() {
            // A trace is being printed: wait for the rest of it, briefly.
            let deadline = Instant::now() + Duration::from_millis(500);
            loop {
                let (quiet, closed) = {
                    let out = app.output();
                    (out.last_line.elapsed() >= TRACE_QUIET, out.open_pipes == 0)
                };
                feed(&mut self.parser, app);
                if quiet || closed || Instant::now() >= deadline {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            self.parser.finish();
        }
        self.signals.extend(self.parser.take());
        if let (true, Some(status)) = (report_exit, exited) {
            let message = format!(
                "{}\ncommand: {}\nstderr:\n{}",
                exit_words(status),
                command,
                tail_text(&app.output().stderr, CRASH_TAIL_LINES)
            );
            self.signals
                .push(Signal::new(SignalKind::Crash, message, Vec::new()));
            self.exit_reported = true;
        }
    }

    /// Fails with [`Error::DeviceLost`] once the app has exited, so the caller restarts it.
    fn app_alive(&mut self) -> Result<()> {
        let status = match self.app.as_mut() {
            None => {
                return Err(Error::DeviceLost {
                    what: "the app is not running".into(),
                });
            }
            Some(app) => app.exited(),
        };
        match status {
            None => Ok(()),
            Some(status) => {
                self.collect_signals();
                Err(Error::DeviceLost {
                    what: exit_words(status),
                })
            }
        }
    }

    /// The app's main window now: the topmost ordinary one. An app may have none for a
    /// moment (between two dialogs), which is not a lost device.
    fn main_window(&self) -> Result<Option<DesktopWindow>> {
        Ok(main_window(&self.x.windows()?))
    }

    /// Moves and resizes the main window; the size is relative to its start size.
    fn resize_main(
        &mut self,
        kind: ActionKind,
        rect: impl FnOnce(Rect) -> Result<Rect>,
    ) -> Result<()> {
        let w = self.main_window()?.ok_or(Error::BadAction {
            action: kind,
            what: "a window of the app to resize",
        })?;
        let start = match &self.start_window {
            Some(s) if s.id == w.id => s.rect,
            _ => w.rect,
        };
        let screen = self.x.size();
        let mut r = rect(start)?;
        r.width = r.width.clamp(1, screen.width);
        r.height = r.height.clamp(1, screen.height);
        self.x.configure(w.id, r)
    }

    fn perform_inner(&mut self, action: &Action) -> Result<()> {
        use ActionKind::*;
        let target = || {
            action.point().ok_or(Error::BadAction {
                action: action.kind,
                what: "a target",
            })
        };
        match action.kind {
            Click => self.x.click(target()?, 1, 1)?,
            DoubleClick => self.x.click(target()?, 1, 2)?,
            MidClick => self.x.click(target()?, 2, 1)?,
            RightClick => self.x.click(target()?, 3, 1)?,
            Input => {
                // Keyboard input goes where the focus is; a click on the field puts it
                // there, as a user would.
                if let Some(p) = action.point() {
                    self.x.click(p, 1, 1)?;
                }
                let text = crate::typed_text(action);
                self.x.type_text(text)?;
            }
            Drag => {
                let (dx, dy) = crate::drag_offset(action, self.x.size());
                let from = target()?;
                self.x.drag(from, from.offset(dx, dy))?;
            }
            Swipe => {
                // Swiping up moves the content up: wheel down (button 5).
                let button = match action.param {
                    Some(ActionParam::Direction(SwipeDirection::Down)) => 4,
                    _ => 5,
                };
                let screen = self.x.size();
                let at = match action.point() {
                    Some(p) => p,
                    None => self.main_window()?.map_or(
                        Point::new(screen.width as i32 / 2, screen.height as i32 / 2),
                        |w| w.rect.center(),
                    ),
                };
                self.x.click(at, button, SWIPE_CLICKS)?;
            }
            SplitScreen => {
                let split = !self.split;
                let screen = self.x.size();
                self.resize_main(SplitScreen, |start| {
                    Ok(if split {
                        Rect::new(0, 0, screen.width / 2, screen.height)
                    } else {
                        start
                    })
                })?;
                self.split = split;
            }
            WindowSize => {
                self.resize_main(WindowSize, |s| {
                    let size = crate::window_size_for(action, Size::new(s.width, s.height))?;
                    Ok(Rect::new(s.x, s.y, size.width, size.height))
                })?;
                self.split = false;
            }
            Return => {
                // Escape closes the dialog or menu on top. Without a window manager the
                // keyboard follows the pointer, so the pointer must be on the app.
                if self.x.window_under_pointer()?.is_none()
                    && let Some(w) = self.main_window()?
                {
                    self.x.move_pointer(w.rect.center())?;
                }
                self.x.key(keysym::ESCAPE)?;
                self.x.barrier()?;
            }
            BackSwitch => self.x.switch_away_and_back(Duration::from_millis(50))?,
            LongClick | OrientationSwitch | PhoneInterrupt | AccessGrant | AccessDeny
            | NetworkSwitch => unreachable!("filtered by supported_on"),
        }
        Ok(())
    }

    /// Replaces a dead Xvfb (and our connection to it) with a fresh one.
    fn ensure_server(&mut self) -> Result<()> {
        if self.xvfb.is_running() && self.x.barrier().is_ok() {
            return Ok(());
        }
        tracing::warn!(
            "Xvfb {} is gone; starting a new one",
            self.xvfb.display_name()
        );
        self.xvfb = Xvfb::start(&self.config.xvfb)?;
        self.x = XSession::connect(&self.xvfb.display_name())?;
        Ok(())
    }

    /// Waits until the windows of a killed app are gone, so the next launch does not take
    /// them for its own.
    fn wait_for_empty_screen(&mut self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(2);
        while !self.x.windows()?.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

/// The window the user works in, from windows in stacking order (bottom first): the
/// topmost ordinary window with an area, else the topmost of any kind (override-redirect
/// windows are tooltips and popups). Without a window manager a new window goes on top,
/// so a dialog that just opened is the one.
pub fn main_window(windows: &[DesktopWindow]) -> Option<DesktopWindow> {
    let sized = |w: &&DesktopWindow| w.rect.width > 1 && w.rect.height > 1;
    windows
        .iter()
        .rev()
        .filter(sized)
        .find(|w| !w.override_redirect)
        .or_else(|| windows.iter().rev().find(sized))
        .cloned()
}

impl Device for DesktopDevice {
    fn platform(&self) -> Platform {
        Platform::Desktop
    }

    fn viewport(&self) -> Size {
        self.x.size()
    }

    fn screenshot(&mut self) -> Result<Screenshot> {
        self.app_alive()?;
        let pixels = self.x.capture()?;
        Ok(Screenshot::new(pixels, 1.0, crate::now_ms())?)
    }

    fn perform(&mut self, action: &Action) -> Result<()> {
        if !action.kind.supported_on(Platform::Desktop) {
            return Err(Error::Unsupported {
                action: action.kind,
                platform: Platform::Desktop,
            });
        }
        self.app_alive()?;
        self.perform_inner(action)
    }

    fn restart(&mut self) -> Result<()> {
        // What the old app printed, and its exit if it died on its own, are findings.
        self.collect_signals();
        self.app = None;
        self.ensure_server()?;
        self.wait_for_empty_screen()?;
        self.start_app()
    }

    fn drain_signals(&mut self) -> Result<Vec<Signal>> {
        self.collect_signals();
        Ok(std::mem::take(&mut self.signals))
    }

    fn coverage(&mut self) -> Result<Option<CoverageSnapshot>> {
        Ok(None)
    }

    fn describe(&self) -> String {
        let size = self.x.size();
        format!(
            "desktop Xvfb {} {}x{}: {}",
            self.xvfb.display_name(),
            size.width,
            size.height,
            self.command_line()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_are_described_with_code_or_signal() {
        assert_eq!(
            exit_words(ExitStatus::from_raw(102 << 8)),
            "the app exited with code 102"
        );
        assert_eq!(
            exit_words(ExitStatus::from_raw(11)),
            "the app was killed by signal 11 (SIGSEGV)"
        );
    }

    #[test]
    fn a_missing_xvfb_says_how_to_install_it() {
        let e = Error::XvfbNotFound {
            tried: "/usr/bin/Xvfb".into(),
        };
        assert!(e.to_string().contains("install Xvfb: apt-get install xvfb"));
    }

    #[test]
    fn the_main_window_is_the_topmost_ordinary_one() {
        let w = |id, override_redirect, width| DesktopWindow {
            id,
            rect: Rect::new(0, 0, width, 50),
            title: String::new(),
            override_redirect,
            pid: None,
        };
        let stack = [
            w(1, false, 100),
            w(2, false, 80),
            w(3, true, 40),
            w(4, false, 1),
        ];
        assert_eq!(main_window(&stack).unwrap().id, 2);
        assert_eq!(main_window(&[w(3, true, 40)]).unwrap().id, 3);
        assert!(main_window(&[]).is_none());
    }
}
