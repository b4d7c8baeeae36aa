//! Grey-box GUI testing (Arlt, Bertolini, Schäf, Banerjee, Memon, ISSTA 2012).

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
mod replay;
mod rip;
mod rw;
pub mod web;

pub use app::{GreyboxApp, LiveEvent};
pub use edg::Edg;
pub use error::{Error, Result};
pub use generate::{
    Executable, Generated, Mode, Plan, abstract_sequences, blackbox_sequences,
    executable_sequences, plan,
};
pub use group::equivalence_class;
pub use model::{Efg, Event, EventKind, HandlerRef, Paths};
pub use replay::{CaseOutcome, ReplayConfig, ReplayOutcome, replay, replay_watched};
pub use rip::{
    Frontier, OfferedEvent, RipConfig, RipCut, RipGroup, RipOutcome, RipState, RipStep, RipTiming,
    Ripped, Ripper, rip,
};
pub use rw::ReadWrite;
