//! Reports of run folders, for people and for CI: [`RunFolder::load`] reads what a run
//! wrote (steps, signals, events, summary, the agent's statistics); [`render_html`] turns
//! one or more runs into a single self-contained HTML page (summary, coverage over steps,
//! each bug with its stack, the screens around it and the command that replays it, what
//! the device handled for the app, such as native dialogs answered and tabs closed, the
//! device's restarts, and every step with a thumbnail); [`junit_xml`] and
//! [`json_summary`] give the same verdict to CI servers and scripts, and [`exit_code`]
//! gives it to the shell. Everything the app or the run wrote is escaped before it
//! reaches markup: an app's error message is data, never HTML.
//!
//! ```
//! use gui_driver::{SimApp, Simulator};
//! use gui_explore::{ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, RunRecorder, explore};
//! use gui_report::{HtmlOptions, RunFolder, exit_code, junit_xml, render_html};
//!
//! let dir = tempfile::tempdir()?;
//! let run_dir = dir.path().join("run");
//! let mut recorder = RunRecorder::create(&run_dir, &serde_json::json!({"strategy": "monkey", "seed": 7}))?;
//! let config = ExploreConfig { steps: Some(10), ..ExploreConfig::default() };
//! explore(
//!     &mut Simulator::new(SimApp::demo()),
//!     &mut Monkey::new(MonkeyConfig { seed: 7, ..MonkeyConfig::default() }),
//!     &mut FixedThrottle::none(),
//!     &mut recorder,
//!     &config,
//! )?;
//!
//! let runs = [RunFolder::load(&run_dir)?];
//! let html = render_html(&runs, &HtmlOptions::default())?;
//! assert!(html.contains("monkey seed 7: 10 steps"));
//! assert!(junit_xml(&runs).contains(r#"<testsuite name="monkey seed 7""#));
//! assert_eq!(exit_code(&runs), i32::from(runs[0].has_bugs()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod escape;
mod events;
mod graph;
mod html;
mod junit;
mod plot;
mod run;
pub mod suite;
mod summary;

pub use error::{Error, Result};
pub use graph::{PageEdge, PageGraph, PageNode};
pub use html::{HtmlOptions, render_html};
pub use junit::junit_xml;
pub use plot::{coverage_svg, coverage_time_svg};
pub use run::RunFolder;
pub use suite::{
    AppResult, RunResult, SplitResult, StrategyResult, Suite, SuiteRun, SuiteSettings,
};
pub use summary::{EXIT_BUGS, EXIT_CLEAN, exit_code, json_summary};

#[cfg(test)]
mod tests;
