//! The PIRLTest agent (Sections 3.3 and 3.4): screenshot in, action out.
//!
//! [`PirlAgent`] reads a screen with gui-vision and gui-layout ([`ScreenReader`]), finds
//! its abstract page in the [`PageStore`] (widget and layout similarity, Section 3.3),
//! pays the previous step with the curiosity reward (Eq. 1, [`curiosity_reward`]), keeps
//! the transition in the [`ExplorationMemory`] (Section 3.4.2), retrains the
//! [`QNetwork`] (four fully connected layers of 512 in candle, fitted to Eq. 3's target,
//! [`q_target`]) and chooses with the [`BoltzmannPolicy`] (system actions weighted 0.5,
//! Sections 3.4 and 3.4.3). Everything this workspace adds to the paper's agent is a
//! plug-in listed once in [`PLUGINS`]; [`Preset`]s (`paper`, `default`, `random`) pick
//! among them.
//!
//! The crate sees screenshots, vectors and layout trees: no device and no browser. The
//! parts of the paper's equations are plain functions that can be used alone:
//!
//! ```
//! use gui_core::ActionKind;
//! use gui_rl::{BoltzmannPolicy, curiosity_reward, q_target};
//!
//! // A page with 4 actions, 1 executed, reached from a page seen 4 times.
//! let r = curiosity_reward(1, 4, 4);
//! assert_eq!(r, 0.375);
//! let target = q_target(r, 0.9, &[0.5, 1.0]);
//! assert!((target - 1.275).abs() < 1e-9);
//!
//! let policy = BoltzmannPolicy::default();
//! let p = policy.probabilities(&[1.0, 1.0], &[ActionKind::Click, ActionKind::Return])?;
//! assert!(p[0] > p[1]); // the system action is weighted 0.5
//! # Ok::<(), gui_rl::Error>(())
//! ```

mod agent;
mod config;
mod effect;
mod error;
mod frontier;
mod known;
mod learner;
mod memory;
mod pages;
mod plugins;
mod policy;
mod presets;
mod qnet;
mod reader;
mod reward;
mod sequences;
mod stats;

pub use agent::PirlAgent;
pub use config::AgentConfig;
pub use effect::{
    Aim, BACKDROP_DIMMING, BACKDROP_FIT, BACKDROP_MAX_BOX, BACKDROP_MIN_CHANGED, BACKDROP_MIN_SIDE,
    BACKDROP_OUTSIDE, CUT_SHARE, CUT_TOLERANCE, DIALOG_KEPT_SHARE, EffectPrior, SEEN_CELLS,
    SEEN_SHARE, SELECTION_SHARE, ScreenPrint, TARGET_MARGIN, had_effect, sets_a_value,
    shows_own_state,
};
pub use error::{Error, Result};
pub use frontier::Frontier;
pub use known::MAX_KNOWN_WIDGETS;
pub use learner::TRAINING_NICE;
pub use memory::{ExplorationMemory, MemoryConfig, MemoryEntry, SharedEntry};
pub use pages::{
    ActionKey, PageId, PageStats, PageStore, PageStoreConfig, PageView, page_similarity,
    widget_similarity,
};
pub use plugins::{PLUGINS, PluginInfo, Role, plugin};
pub use policy::BoltzmannPolicy;
pub use presets::{Choice, Preset};
pub use qnet::{FitReport, QBatch, QNetwork, QNetworkConfig};
pub use reader::{ScreenRead, ScreenReader, page_view};
pub use reward::{curiosity_reward, q_target};
pub use sequences::{
    COMMAND_SLACK, CommandSequences, Control, StepOutcome, TRIPLE_COMMANDS, VALUE_RENEWALS,
    same_control,
};
pub use stats::{AgentStats, AgentTimings};
