//! The composition root of the strategy binaries: every binary reads the same options,
//! starts its device here, explores, and finishes its run folder the same way.
//!
//! In the order a run goes through them:
//! - `command_line`: `--config` files, `--resume`'s recorded settings, the line kept in
//!   `run.json` ([`parse`], [`parse_from`], [`recorded_command_line`]);
//! - `args`: the shared options, [`CommonArgs`], [`TargetArgs`] and [`RunArgs`], and the
//!   parsers of their values ([`parse_size`], [`parse_minutes`]);
//! - `device`: [`TargetArgs::start`] turns the options into a started [`Target`];
//! - `run_folder`: a new run folder or the one of `--resume` ([`RunArgs::recorder`],
//!   [`default_run_dir`], [`reopen_run`], [`refuse_existing_run`]);
//! - `throttle`: the `--throttle` policy and AdaT's judge ([`adat_judge`]);
//! - `workers`: one worker behind a [`WithProgress`] bar ([`explore_one`]) or `--workers`
//!   of them ([`explore_workers`], [`worker_seed`]);
//! - `finish`: the report and the closing lines ([`write_report`], [`summary_line`],
//!   [`coverage_text`], [`announce_run`]).
//!
//! Flags given on the command line win over a `--config` file's keys, which win over the
//! settings a `--resume`d run folder recorded; a run folder never starts a program the
//! user did not name again.

mod args;
mod command_line;
mod device;
mod finish;
mod progress;
mod run_folder;
mod throttle;
mod workers;

pub use args::{CommonArgs, DeviceKind, RunArgs, TargetArgs, parse_minutes, parse_size};
pub use command_line::{parse, parse_from, recorded_command_line};
pub use device::Target;
pub use finish::{announce_run, coverage_text, summary_line, write_report};
pub use progress::WithProgress;
pub use run_folder::{default_run_dir, refuse_existing_run, reopen_run};
pub use throttle::adat_judge;
pub use workers::{explore_one, explore_workers, worker_seed};

#[cfg(test)]
mod tests;
