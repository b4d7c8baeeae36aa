//! Umbrella crate of the workspace: re-exports the libraries under one name and hosts the
//! strategy binaries (`monkey`, ...), the command-line plumbing they share ([`cli`]), the
//! cross-crate integration tests and the benches.
pub use gui_core as core;
pub use gui_driver as driver;
pub use gui_explore as explore;
pub use gui_greybox as greybox;
pub use gui_llm as llm;
pub use gui_report as report;
pub use gui_rl as rl;
pub use gui_vision as vision;

pub mod cli;
pub mod pirltest;
pub mod visiondroid;
