//! Grey-box GUI testing (Arlt, Bertolini, Schäf, Banerjee, Memon, ISSTA 2012).

mod edg;
mod error;
mod generate;
pub mod java;
pub mod js;
mod model;
mod rw;

pub use edg::Edg;
pub use error::{Error, Result};
pub use generate::{Executable, Generated, abstract_sequences, blackbox_sequences, executable_sequences};
pub use model::{Efg, Event, EventKind, HandlerRef};
pub use rw::ReadWrite;
