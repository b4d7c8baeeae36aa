//! How long to wait after an action before the next screenshot is taken.
//!
//! Three policies share the [`Throttle`] trait:
//! - [`FixedThrottle`]: Monkey's `--throttle`, the same wait after every action;
//! - [`ConsecutiveFrames`]: poll screenshots and go on once two consecutive frames match,
//!   the "Consecutive Frame" baseline of AdaT (Section III-A's heuristic used online);
//! - [`Adaptive`]: AdaT (Sections III-C/D): poll frames, ask a [`RenderJudge`] whether
//!   the frame is fully rendered, go on as soon as it is, at most a cap after the event.
//!
//! The polling policies hand back the last frame they took ([`Waited::frame`]), which is
//! the settled screen, so the loop does not pay for one more screenshot. Time comes from
//! a [`Clock`], so the timing logic is tested with a [`FakeClock`] instead of real time.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gui_core::Screenshot;
use gui_device::Device;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The AdaT paper's maximum waiting threshold (Section III-D): 1000 ms.
pub const DEFAULT_CAP: Duration = Duration::from_millis(1000);

/// Time as a throttle sees it: a monotonic "now" and a way to let time pass.
pub trait Clock {
    /// Time since some fixed origin of this clock.
    fn now(&self) -> Duration;
    fn sleep(&self, d: Duration);
}

/// The real monotonic clock.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    fn sleep(&self, d: Duration) {
        if !d.is_zero() {
            std::thread::sleep(d);
        }
    }
}

/// A clock that only moves when told to: `sleep` and [`FakeClock::advance`] move it
/// forward at once. Clones share one time, so a test device can advance the clock the
/// throttle reads (a screenshot "takes" 40 ms).
#[derive(Debug, Clone, Default)]
pub struct FakeClock {
    nanos: Arc<AtomicU64>,
}

impl FakeClock {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(d.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::SeqCst))
    }

    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}

/// What one wait did, written into the step record (`timings.throttle`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ThrottleOutcome {
    /// Milliseconds from the end of the action until the throttle let the loop go on.
    pub waited_ms: f64,
    /// Screenshots the throttle took while it waited (0 for a fixed wait).
    pub frames: u32,
    /// True when the wait ended at its cap, not because the screen was judged ready.
    pub capped: bool,
}

/// The result of [`Throttle::wait`].
#[derive(Debug, Clone, Default)]
pub struct Waited {
    pub outcome: ThrottleOutcome,
    /// The last frame the throttle took, if any: the screen it judged settled (or the
    /// latest one when the cap was hit). The loop uses it as the step's screenshot.
    pub frame: Option<Screenshot>,
}

impl Waited {
    /// How long the wait took.
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.outcome.waited_ms.max(0.0) / 1e3)
    }
}

/// Decides how long to wait after an action before the next screenshot is taken.
///
/// The fixed wait is Monkey's `--throttle`; adaptive policies (AdaT, consecutive frames)
/// look at the device while they wait.
pub trait Throttle {
    /// Waits after an action; says how long and, for polling policies, hands back the
    /// last frame.
    fn wait(&mut self, device: &mut dyn Device) -> Result<Waited>;

    /// Name for run folders, e.g. `fixed:400` (the [`ThrottleSpec`] syntax).
    fn name(&self) -> String;
}

impl<T: Throttle + ?Sized> Throttle for Box<T> {
    fn wait(&mut self, device: &mut dyn Device) -> Result<Waited> {
        (**self).wait(device)
    }

    fn name(&self) -> String {
        (**self).name()
    }
}

fn ms_of(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// Waits a fixed time after every action.
#[derive(Debug, Clone, Copy)]
pub struct FixedThrottle<C: Clock = SystemClock> {
    pub wait: Duration,
    clock: C,
}

impl FixedThrottle {
    pub fn new(wait: Duration) -> Self {
        Self::with_clock(wait, SystemClock::new())
    }

    pub fn ms(ms: u64) -> Self {
        Self::new(Duration::from_millis(ms))
    }

    /// No wait at all (simulators, which render synchronously).
    pub fn none() -> Self {
        Self::new(Duration::ZERO)
    }
}

impl<C: Clock> FixedThrottle<C> {
    pub fn with_clock(wait: Duration, clock: C) -> Self {
        Self { wait, clock }
    }
}

impl<C: Clock> Throttle for FixedThrottle<C> {
    fn wait(&mut self, _device: &mut dyn Device) -> Result<Waited> {
        let start = self.clock.now();
        self.clock.sleep(self.wait);
        Ok(Waited {
            outcome: ThrottleOutcome {
                waited_ms: ms_of(self.clock.now() - start),
                frames: 0,
                capped: false,
            },
            frame: None,
        })
    }

    fn name(&self) -> String {
        format!("fixed:{}", self.wait.as_millis())
    }
}

/// When two frames count as the same screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameMatch {
    /// A pixel differs when any channel differs by more than this (PNG round trips and
    /// font anti-aliasing stay below it).
    pub channel_tolerance: u8,
    /// Frames match when at most this many pixels differ. The default (64) lets a
    /// blinking text caret (about 2x18 px) pass and catches a turning spinner (hundreds).
    pub max_changed_pixels: u64,
}

impl Default for FrameMatch {
    fn default() -> Self {
        Self {
            channel_tolerance: 8,
            max_changed_pixels: 64,
        }
    }
}

impl FrameMatch {
    /// True when `a` and `b` show the same screen within the tolerance.
    pub fn matches(&self, a: &Screenshot, b: &Screenshot) -> bool {
        if a.size() != b.size() {
            return false;
        }
        // Settled screens are byte-identical: one memcmp instead of a pixel loop.
        if a.pixels().as_raw() == b.pixels().as_raw() {
            return true;
        }
        let tol = self.channel_tolerance;
        let mut changed = 0u64;
        for (p, q) in a
            .pixels()
            .as_raw()
            .chunks_exact(3)
            .zip(b.pixels().as_raw().chunks_exact(3))
        {
            if p[0].abs_diff(q[0]) > tol || p[1].abs_diff(q[1]) > tol || p[2].abs_diff(q[2]) > tol {
                changed += 1;
                if changed > self.max_changed_pixels {
                    return false;
                }
            }
        }
        true
    }
}

/// Settings shared by the polling policies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PollConfig {
    /// Longest wait after the action (AdaT's maximum waiting threshold).
    pub cap: Duration,
    /// Shortest time between two polls. Chromium's screenshot takes 35-120 ms, so this
    /// only matters for devices whose screenshots are instant (one 60 Hz frame).
    pub min_interval: Duration,
}

impl Default for PollConfig {
    fn default() -> Self {
        Self {
            cap: DEFAULT_CAP,
            min_interval: Duration::from_millis(16),
        }
    }
}

impl PollConfig {
    pub fn with_cap(cap: Duration) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }
}

/// Polls frames until `ready` says the last one will do or the cap is reached.
fn poll(
    device: &mut dyn Device,
    clock: &dyn Clock,
    config: &PollConfig,
    mut ready: impl FnMut(&Screenshot) -> Result<bool>,
) -> Result<Waited> {
    let start = clock.now();
    let mut frames = 0;
    loop {
        let polled_at = clock.now();
        let shot = device.screenshot()?;
        frames += 1;
        let settled = ready(&shot)?;
        let now = clock.now();
        let capped = !settled && now - start >= config.cap;
        if settled || capped {
            return Ok(Waited {
                outcome: ThrottleOutcome {
                    waited_ms: ms_of(now - start),
                    frames,
                    capped,
                },
                frame: Some(shot),
            });
        }
        let next = (polled_at + config.min_interval).min(start + config.cap);
        clock.sleep(next.saturating_sub(now));
    }
}

/// Goes on as soon as two consecutive frames match ([`FrameMatch`]), at most
/// [`PollConfig::cap`] after the action: the "Consecutive Frame" baseline of the AdaT
/// paper. A screen that shows a static "loading" text fools it; a moving spinner does not.
#[derive(Debug, Clone)]
pub struct ConsecutiveFrames<C: Clock = SystemClock> {
    pub poll: PollConfig,
    pub matching: FrameMatch,
    clock: C,
}

impl ConsecutiveFrames {
    pub fn new(poll: PollConfig) -> Self {
        Self::with_clock(poll, SystemClock::new())
    }
}

impl<C: Clock> ConsecutiveFrames<C> {
    pub fn with_clock(poll: PollConfig, clock: C) -> Self {
        Self {
            poll,
            matching: FrameMatch::default(),
            clock,
        }
    }
}

impl<C: Clock> Throttle for ConsecutiveFrames<C> {
    fn wait(&mut self, device: &mut dyn Device) -> Result<Waited> {
        let matching = self.matching;
        let mut previous: Option<Screenshot> = None;
        poll(device, &self.clock, &self.poll, |shot| {
            let same = previous.as_ref().is_some_and(|p| matching.matches(p, shot));
            previous = Some(shot.clone());
            Ok(same)
        })
    }

    fn name(&self) -> String {
        format!("consecutive:{}", self.poll.cap.as_millis())
    }
}

/// Why a judge could not judge a frame.
pub type JudgeError = Box<dyn std::error::Error + Send + Sync>;

/// Says whether a screenshot shows a fully rendered GUI (AdaT Section III-B). The vision
/// classifier implements it; gui-explore knows only this trait.
pub trait RenderJudge {
    fn fully_rendered(&mut self, shot: &Screenshot) -> std::result::Result<bool, JudgeError>;

    /// For run folders and errors.
    fn name(&self) -> String {
        "judge".into()
    }
}

impl<F> RenderJudge for F
where
    F: FnMut(&Screenshot) -> bool,
{
    fn fully_rendered(&mut self, shot: &Screenshot) -> std::result::Result<bool, JudgeError> {
        Ok(self(shot))
    }
}

/// AdaT's adaptive throttle (Sections III-C/D): after the action, poll frames and go on at
/// the first one the [`RenderJudge`] calls fully rendered, at most [`PollConfig::cap`]
/// (1000 ms by default) after the event. A judge error ends the run ([`Error::Judge`]):
/// it is a fault of the tool, not of the app.
pub struct Adaptive<C: Clock = SystemClock> {
    pub poll: PollConfig,
    judge: Box<dyn RenderJudge>,
    clock: C,
}

impl<C: Clock> fmt::Debug for Adaptive<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adaptive")
            .field("poll", &self.poll)
            .field("judge", &self.judge.name())
            .finish()
    }
}

impl Adaptive {
    pub fn new(poll: PollConfig, judge: Box<dyn RenderJudge>) -> Self {
        Self::with_clock(poll, judge, SystemClock::new())
    }
}

impl<C: Clock> Adaptive<C> {
    pub fn with_clock(poll: PollConfig, judge: Box<dyn RenderJudge>, clock: C) -> Self {
        Self { poll, judge, clock }
    }
}

impl<C: Clock> Throttle for Adaptive<C> {
    fn wait(&mut self, device: &mut dyn Device) -> Result<Waited> {
        let judge = &mut self.judge;
        poll(device, &self.clock, &self.poll, |shot| {
            judge.fully_rendered(shot).map_err(|e| Error::Judge {
                judge: judge.name(),
                message: e.to_string(),
            })
        })
    }

    fn name(&self) -> String {
        format!("adat:{}", self.poll.cap.as_millis())
    }
}

/// A throttle policy as written on the command line and in run folders:
/// `fixed:400`, `400` (fixed, the old `--throttle MS`), `consecutive`, `consecutive:1000`,
/// `adat`, `adat:1000` (the number after a polling policy is its cap in ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottleSpec {
    Fixed(Duration),
    Consecutive { cap: Duration },
    Adaptive { cap: Duration },
}

impl Default for ThrottleSpec {
    fn default() -> Self {
        ThrottleSpec::Fixed(Duration::ZERO)
    }
}

impl ThrottleSpec {
    /// Builds the throttle. [`ThrottleSpec::Adaptive`] needs a judge; the other policies
    /// ignore it.
    pub fn build(&self, judge: Option<Box<dyn RenderJudge>>) -> Result<Box<dyn Throttle>> {
        Ok(match *self {
            ThrottleSpec::Fixed(d) => Box::new(FixedThrottle::new(d)),
            ThrottleSpec::Consecutive { cap } => {
                Box::new(ConsecutiveFrames::new(PollConfig::with_cap(cap)))
            }
            ThrottleSpec::Adaptive { cap } => {
                let judge = judge.ok_or_else(|| {
                    Error::Config(format!(
                        "throttle `{self}` needs a rendering-state judge (a GUI rendering \
                         classifier) and none was given"
                    ))
                })?;
                Box::new(Adaptive::new(PollConfig::with_cap(cap), judge))
            }
        })
    }

    /// The longest a wait can take: the fixed wait, or a polling policy's cap (plus one
    /// screenshot in flight).
    pub fn max_wait(&self) -> Duration {
        match *self {
            ThrottleSpec::Fixed(d) => d,
            ThrottleSpec::Consecutive { cap } | ThrottleSpec::Adaptive { cap } => cap,
        }
    }

    /// True for policies that need a [`RenderJudge`].
    pub fn needs_judge(&self) -> bool {
        matches!(self, ThrottleSpec::Adaptive { .. })
    }

    /// Whether the wait depends on what the screen shows and when (every policy but a
    /// fixed wait), so that a run under it is not fixed by its seed.
    pub fn waits_on_screen(&self) -> bool {
        !matches!(self, ThrottleSpec::Fixed(_))
    }
}

impl fmt::Display for ThrottleSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThrottleSpec::Fixed(d) => write!(f, "fixed:{}", d.as_millis()),
            ThrottleSpec::Consecutive { cap } => write!(f, "consecutive:{}", cap.as_millis()),
            ThrottleSpec::Adaptive { cap } => write!(f, "adat:{}", cap.as_millis()),
        }
    }
}

/// A throttle that could not be read; names the value and the accepted forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid throttle `{value}`: {reason}; use MS or fixed:MS, consecutive[:CAP_MS] or \
     adat[:CAP_MS] (for example fixed:400, consecutive:1000, adat)"
)]
pub struct ParseThrottleError {
    pub value: String,
    pub reason: String,
}

impl FromStr for ThrottleSpec {
    type Err = ParseThrottleError;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let bad = |reason: &str| ParseThrottleError {
            value: s.to_owned(),
            reason: reason.to_owned(),
        };
        let millis = |text: &str, what: &str| {
            text.trim()
                .parse::<u64>()
                .map(Duration::from_millis)
                .map_err(|_| bad(&format!("{what} must be a whole number of milliseconds")))
        };
        let t = s.trim();
        let (name, arg) = match t.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (t, None),
        };
        match (name.to_ascii_lowercase().as_str(), arg) {
            (_, None) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                Ok(ThrottleSpec::Fixed(millis(t, "the wait")?))
            }
            ("fixed", Some(a)) => Ok(ThrottleSpec::Fixed(millis(a, "the wait")?)),
            ("fixed", None) => Err(bad("fixed needs its wait, as in fixed:400")),
            ("consecutive", None) => Ok(ThrottleSpec::Consecutive { cap: DEFAULT_CAP }),
            ("consecutive", Some(a)) => Ok(ThrottleSpec::Consecutive {
                cap: millis(a, "the cap")?,
            }),
            ("adat", None) => Ok(ThrottleSpec::Adaptive { cap: DEFAULT_CAP }),
            ("adat", Some(a)) => Ok(ThrottleSpec::Adaptive {
                cap: millis(a, "the cap")?,
            }),
            ("", _) => Err(bad("it is empty")),
            (n, None) if n.starts_with('-') => Err(bad("a wait cannot be negative")),
            _ => Err(bad("unknown policy")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gui_core::{Action, CoverageSnapshot, Platform, Signal, Size};
    use image::{Rgb, RgbImage};

    /// A device whose screen is a function of fake time: each screenshot takes `shot_cost`
    /// of the clock, and the frame shows `script(now)`.
    struct ScriptedScreen {
        clock: FakeClock,
        shot_cost: Duration,
        script: Box<dyn Fn(Duration) -> u8>,
        shots: u32,
    }

    impl ScriptedScreen {
        fn new(clock: &FakeClock, script: impl Fn(Duration) -> u8 + 'static) -> Self {
            Self {
                clock: clock.clone(),
                shot_cost: Duration::from_millis(40),
                script: Box::new(script),
                shots: 0,
            }
        }
    }

    /// A 20x20 screen: grey level `v` in the top left 10x10 block, white elsewhere.
    fn frame(v: u8, at: Duration) -> Screenshot {
        let img = RgbImage::from_fn(20, 20, |x, y| {
            if x < 10 && y < 10 {
                Rgb([v, v, v])
            } else {
                Rgb([255, 255, 255])
            }
        });
        Screenshot::new(img, 1.0, at.as_millis() as u64).unwrap()
    }

    impl Device for ScriptedScreen {
        fn platform(&self) -> Platform {
            Platform::Web
        }
        fn viewport(&self) -> Size {
            Size::new(20, 20)
        }
        fn screenshot(&mut self) -> gui_device::Result<Screenshot> {
            self.shots += 1;
            // The frame shows the screen as it was when the capture began.
            let at = self.clock.now();
            self.clock.advance(self.shot_cost);
            Ok(frame((self.script)(at), at))
        }
        fn perform(&mut self, _action: &Action) -> gui_device::Result<()> {
            Ok(())
        }
        fn restart(&mut self) -> gui_device::Result<()> {
            Ok(())
        }
        fn drain_signals(&mut self) -> gui_device::Result<Vec<Signal>> {
            Ok(vec![])
        }
        fn coverage(&mut self) -> gui_device::Result<Option<CoverageSnapshot>> {
            Ok(None)
        }
        fn describe(&self) -> String {
            "scripted screen".into()
        }
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn fixed_waits_exactly_and_takes_no_frame() {
        let clock = FakeClock::new();
        let mut device = ScriptedScreen::new(&clock, |_| 0);
        let mut t = FixedThrottle::with_clock(MS(400), clock.clone());
        let w = t.wait(&mut device).unwrap();
        assert_eq!(clock.now(), MS(400));
        assert_eq!(w.outcome.waited_ms, 400.0);
        assert_eq!((w.outcome.frames, w.outcome.capped), (0, false));
        assert!(w.frame.is_none());
        assert_eq!(device.shots, 0);
        assert_eq!(t.name(), "fixed:400");
    }

    #[test]
    fn consecutive_goes_on_at_the_second_matching_frame() {
        let clock = FakeClock::new();
        // The screen changes every 10 ms until 300 ms, then stays.
        let mut device = ScriptedScreen::new(&clock, |t| {
            if t < MS(300) {
                (t.as_millis() / 10 % 20) as u8 * 12
            } else {
                250
            }
        });
        let mut t = ConsecutiveFrames::with_clock(PollConfig::default(), clock.clone());
        let w = t.wait(&mut device).unwrap();
        // Frames begin at 0, 40, ..., 280 (changing), 320 (settled), 360 (matches 320).
        assert_eq!(w.outcome.frames, 10);
        assert_eq!(device.shots, 10);
        assert!(!w.outcome.capped);
        assert_eq!(w.outcome.waited_ms, 400.0);
        assert_eq!(w.frame.unwrap().timestamp_ms, 360);
    }

    #[test]
    fn consecutive_on_a_static_screen_needs_two_frames() {
        let clock = FakeClock::new();
        let mut device = ScriptedScreen::new(&clock, |_| 7);
        let mut t = ConsecutiveFrames::with_clock(PollConfig::default(), clock.clone());
        let w = t.wait(&mut device).unwrap();
        assert_eq!((w.outcome.frames, w.outcome.capped), (2, false));
        assert_eq!(w.outcome.waited_ms, 80.0);
    }

    #[test]
    fn consecutive_ignores_changes_within_the_tolerance() {
        let clock = FakeClock::new();
        // The 10x10 block (100 pixels) blinks by one grey level, like a text caret.
        let mut device = ScriptedScreen::new(&clock, |t| (t.as_millis() / 40 % 2) as u8);
        let mut t = ConsecutiveFrames::with_clock(PollConfig::default(), clock.clone());
        t.matching = FrameMatch {
            channel_tolerance: 0,
            max_changed_pixels: 100,
        };
        assert_eq!(t.wait(&mut device).unwrap().outcome.frames, 2);
        t.matching.max_changed_pixels = 99;
        let w = t.wait(&mut device).unwrap();
        assert!(w.outcome.capped, "100 changed pixels are more than 99");
    }

    #[test]
    fn consecutive_hits_the_cap_on_an_always_changing_screen() {
        let clock = FakeClock::new();
        let mut device = ScriptedScreen::new(&clock, |t| (t.as_millis() % 251) as u8);
        let mut t = ConsecutiveFrames::with_clock(PollConfig::default(), clock.clone());
        let w = t.wait(&mut device).unwrap();
        assert!(w.outcome.capped);
        // Polls at 0, 40, ..., 960: the frame that ends at 1000 ms is the last one.
        assert_eq!(w.outcome.frames, 25);
        assert_eq!(w.outcome.waited_ms, 1000.0);
        assert!(w.frame.is_some());
    }

    #[test]
    fn polls_no_faster_than_the_min_interval() {
        let clock = FakeClock::new();
        let mut device = ScriptedScreen::new(&clock, |t| (t.as_millis() % 251) as u8);
        device.shot_cost = Duration::ZERO;
        let mut t = ConsecutiveFrames::with_clock(
            PollConfig {
                cap: MS(100),
                min_interval: MS(25),
            },
            clock.clone(),
        );
        let w = t.wait(&mut device).unwrap();
        // Frames at 0, 25, 50, 75 and 100 (the cap).
        assert_eq!(w.outcome.frames, 5);
        assert_eq!(w.outcome.waited_ms, 100.0);
        assert!(w.outcome.capped);
    }

    #[test]
    fn adat_goes_on_at_the_first_frame_judged_full() {
        let clock = FakeClock::new();
        let mut device = ScriptedScreen::new(&clock, |t| if t < MS(500) { 100 } else { 200 });
        // The judge calls a frame full once the block has turned light.
        let judge = |s: &Screenshot| s.pixels().get_pixel(0, 0)[0] > 150;
        let mut t = Adaptive::with_clock(PollConfig::default(), Box::new(judge), clock.clone());
        let w = t.wait(&mut device).unwrap();
        // Frames at 0, 40, ..., 480 are judged partial; the one begun at 520 is full.
        assert_eq!(w.outcome.frames, 14);
        assert_eq!(w.outcome.waited_ms, 560.0);
        assert!(!w.outcome.capped);
        assert_eq!(w.frame.unwrap().timestamp_ms, 520);
        assert_eq!(t.name(), "adat:1000");
    }

    #[test]
    fn adat_hits_the_cap_when_nothing_is_judged_full() {
        let clock = FakeClock::new();
        let mut device = ScriptedScreen::new(&clock, |_| 100);
        let judge = |_: &Screenshot| false;
        let mut t = Adaptive::with_clock(PollConfig::with_cap(MS(300)), Box::new(judge), clock);
        let w = t.wait(&mut device).unwrap();
        assert!(w.outcome.capped);
        assert_eq!(w.outcome.waited_ms, 320.0);
        assert_eq!(w.outcome.frames, 8);
    }

    struct Broken;
    impl RenderJudge for Broken {
        fn fully_rendered(&mut self, _: &Screenshot) -> std::result::Result<bool, JudgeError> {
            Err("model file missing".into())
        }
        fn name(&self) -> String {
            "broken".into()
        }
    }

    #[test]
    fn a_judge_error_is_reported_with_the_judge() {
        let clock = FakeClock::new();
        let mut device = ScriptedScreen::new(&clock, |_| 0);
        let mut t = Adaptive::with_clock(PollConfig::default(), Box::new(Broken), clock);
        let err = t.wait(&mut device).unwrap_err().to_string();
        assert!(
            err.contains("broken") && err.contains("model file missing"),
            "{err}"
        );
    }

    #[test]
    fn specs_parse_and_print() {
        for (text, spec, shown) in [
            ("400", ThrottleSpec::Fixed(MS(400)), "fixed:400"),
            ("0", ThrottleSpec::Fixed(MS(0)), "fixed:0"),
            ("fixed:400", ThrottleSpec::Fixed(MS(400)), "fixed:400"),
            (
                "consecutive",
                ThrottleSpec::Consecutive { cap: MS(1000) },
                "consecutive:1000",
            ),
            (
                "consecutive:600",
                ThrottleSpec::Consecutive { cap: MS(600) },
                "consecutive:600",
            ),
            (
                "adat",
                ThrottleSpec::Adaptive { cap: MS(1000) },
                "adat:1000",
            ),
            (
                "adat:1500",
                ThrottleSpec::Adaptive { cap: MS(1500) },
                "adat:1500",
            ),
        ] {
            let parsed: ThrottleSpec = text.parse().unwrap();
            assert_eq!(parsed, spec, "{text}");
            assert_eq!(parsed.to_string(), shown);
            assert_eq!(shown.parse::<ThrottleSpec>().unwrap(), spec);
            // Only a fixed wait leaves the run to the seed.
            let fixed = matches!(spec, ThrottleSpec::Fixed(_));
            assert_eq!(parsed.waits_on_screen(), !fixed, "{text}");
        }
        assert_eq!(
            "adat:700".parse::<ThrottleSpec>().unwrap().max_wait(),
            MS(700)
        );
        assert_eq!("250".parse::<ThrottleSpec>().unwrap().max_wait(), MS(250));
    }

    #[test]
    fn bad_specs_name_the_value() {
        for bad in [
            "-5",
            "fast",
            "fixed",
            "fixed:x",
            "adat:1s",
            "consecutive:-1",
            "",
        ] {
            let err = bad.parse::<ThrottleSpec>().unwrap_err().to_string();
            assert!(err.contains(&format!("`{bad}`")), "{err}");
            assert!(err.contains("fixed:MS"), "{err}");
        }
    }

    #[test]
    fn specs_build_their_policy() {
        for text in ["fixed:400", "consecutive:700"] {
            let spec: ThrottleSpec = text.parse().unwrap();
            assert_eq!(spec.build(None).unwrap().name(), text);
        }
        let adat: ThrottleSpec = "adat".parse().unwrap();
        let err = adat.build(None).err().unwrap().to_string();
        assert!(err.contains("adat:1000") && err.contains("judge"), "{err}");
        let judge = |_: &Screenshot| true;
        assert_eq!(
            adat.build(Some(Box::new(judge))).unwrap().name(),
            "adat:1000"
        );
    }
}
