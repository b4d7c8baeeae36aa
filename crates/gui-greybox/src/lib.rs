//! Grey-box GUI testing (Arlt, Bertolini, Schäf, Banerjee, Memon, ISSTA 2012).
//!
//! The crate has two halves. The analysis is pure: the event-flow graph ([`Efg`]), the
//! handlers' reads and writes ([`js::JsAnalysis`] for JavaScript, [`java::ClassDb`] for
//! class files), the event-dependency graph ([`Edg::build`], Algorithm 1) and test-case
//! generation ([`plan`], Algorithms 2 and 3). The `live` feature (on by default) adds what
//! drives a running app through a device: the `GreyboxApp` trait, the ripper that builds
//! an EFG, the replayer, and the web app in Chromium; `desktop` adds Swing apps under Xvfb.
//! With `default-features = false` the crate compiles no device, so tools that only
//! analyse (Monkey++'s model of a web app's code, the fuzz targets) stay light.
//!
//! ```
//! use gui_greybox::{Edg, Efg, Event, EventKind, Mode, ReadWrite, plan};
//!
//! // Two buttons: `save` writes what `show` reads, so `save` then `show` is a test case.
//! let mut efg = Efg::default();
//! for id in ["save", "show"] {
//!     let kind = EventKind::Click;
//!     let (label, window) = (id.to_string(), "main".to_string());
//!     efg.add_event(Event { id: id.into(), label, window, kind, handlers: vec![] });
//! }
//! efg.initial = [0, 1].into();
//! efg.follows[0] = [0, 1].into();
//! efg.follows[1] = [0, 1].into();
//! let rw = [
//!     ReadWrite { reads: [].into(), writes: ["doc.text".to_string()].into() },
//!     ReadWrite { reads: ["doc.text".to_string()].into(), writes: [].into() },
//! ];
//! let edg = Edg::build(&rw);
//! let plan = plan(&efg, &edg, Mode::Greybox { len: 2, top: None });
//! let ids: Vec<Vec<&str>> = plan.generated.sequences.iter().map(|s| efg.ids(&s.events)).collect();
//! assert!(ids.contains(&vec!["save", "show"]));
//! ```

#[cfg(feature = "live")]
mod app;
#[cfg(feature = "desktop")]
pub mod desktop;
mod edg;
mod error;
mod generate;
mod group;
pub mod java;
pub mod js;
mod model;
#[cfg(feature = "live")]
mod replay;
#[cfg(feature = "live")]
mod rip;
mod rw;
#[cfg(feature = "live")]
mod timing;
#[cfg(feature = "live")]
pub mod web;

#[cfg(feature = "live")]
pub use app::{GreyboxApp, LiveEvent};
pub use edg::Edg;
pub use error::{Error, Result};
pub use generate::{
    Executable, Generated, Mode, Plan, abstract_sequences, blackbox_sequences,
    executable_sequences, plan,
};
pub use group::equivalence_class;
pub use model::{Efg, Event, EventKind, HandlerRef, Paths};
#[cfg(feature = "live")]
pub use replay::{CaseOutcome, ReplayConfig, ReplayOutcome, replay, replay_watched};
#[cfg(feature = "live")]
pub use rip::{
    Frontier, OfferedEvent, RipConfig, RipCut, RipGroup, RipOutcome, RipState, RipStep, RipTiming,
    Ripped, Ripper, rip,
};
pub use rw::ReadWrite;
#[cfg(feature = "live")]
pub use timing::{SettleClock, TimeBreakdown, largest_first, share_line};
