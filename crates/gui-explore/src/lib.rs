//! The exploration loop: a [`Device`](gui_device::Device), a [`Strategy`] and a
//! [`Throttle`], joined by [`explore`], with every finished step written durably to a
//! [`RunRecorder`] folder.
//!
//! One step: the strategy chooses an action from the current screenshot; the device
//! performs it; the throttle waits for the screen to settle; the device hands back a
//! screenshot, its coverage and the signals it saw; the recorder appends the step (the
//! screenshot file first, then one JSON line, both synced) so a crash of the tool loses no
//! finished step; the strategy learns from the transition. A device that dies is restarted
//! and the run goes on.
//!
//! A recorded run can be played again: [`Scripted`] replays its actions through the same
//! loop, [`reproductions`] tells which of its bugs came back, and [`ddmin`] with
//! [`reproduces`] shrinks the steps behind a bug to those it needs ([`Minimised`]).
//!
//! ```
//! use gui_driver::{SimApp, Simulator};
//! use gui_explore::{ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, RunRecorder, explore};
//!
//! let dir = tempfile::tempdir()?;
//! let mut device = Simulator::new(SimApp::demo());
//! let mut monkey = Monkey::new(MonkeyConfig { seed: 7, ..MonkeyConfig::default() });
//! let mut run = RunRecorder::create(&dir.path().join("run"), &serde_json::json!({"seed": 7}))?;
//! let config = ExploreConfig { steps: Some(20), ..ExploreConfig::default() };
//! let summary = explore(&mut device, &mut monkey, &mut FixedThrottle::none(), &mut run, &config)?;
//! assert_eq!(summary.steps, 20);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod explore;
mod minimise;
mod monkey;
mod record;
mod replay;
mod throttle;

pub use error::{Error, Result};
pub use explore::{
    ExploreConfig, Insight, Observation, StopReason, Strategy, Summary, Worker, WorkerParts,
    explore, explore_parallel,
};
pub use minimise::{DdminError, Minimised, Reduction, ddmin, reproduces};
pub use monkey::{EventCategory, EventWeights, Monkey, MonkeyConfig};
pub use record::{
    EventRecord, Prior, ReopenedRun, RunRecorder, SignalRecord, StepRecord, StepTimings,
    read_steps, write_atomic,
};
pub use replay::{Reproduction, portable_key, reproductions, shell_quote};
pub use throttle::{
    Adaptive, Clock, ConsecutiveFrames, DEFAULT_CAP, FakeClock, FixedThrottle, FrameMatch,
    JudgeError, ParseThrottleError, PollConfig, RenderJudge, SystemClock, Throttle,
    ThrottleOutcome, ThrottleSpec, Waited,
};

mod scripted;
pub use scripted::Scripted;
