//! What the agent reports about itself: counters of what it did and where its time went.

use serde::{Deserialize, Serialize};

/// Where the agent's time went, in milliseconds summed over all decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentTimings {
    /// Widgets, kinds, embeddings (gui-vision).
    pub vision_ms: f64,
    /// Layout characterisation and LSTM embedding.
    pub layout_ms: f64,
    /// Page store lookup (similarity, tree edit distance).
    pub pages_ms: f64,
    /// Waiting for a Q-network retraining (they run on another thread while the device
    /// works).
    pub train_ms: f64,
    /// Time the retrainings took on their thread.
    pub training_thread_ms: f64,
    /// Q-values of the candidates and the choice.
    pub choose_ms: f64,
}

impl AgentTimings {
    pub fn total_ms(&self) -> f64 {
        self.vision_ms + self.layout_ms + self.pages_ms + self.train_ms + self.choose_ms
    }
}

/// A summary of what the agent learnt so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentStats {
    pub decisions: u64,
    /// Distinct pages found.
    pub pages: usize,
    /// Widgets known over all pages (each with its actions' embeddings).
    #[serde(default)]
    pub known_widgets: usize,
    pub memory: usize,
    pub retrainings: u64,
    /// Mean squared error of the last retraining's last step.
    pub last_loss: f32,
    /// Reward of the last transition.
    pub last_reward: f64,
    /// Steps that led to a screen the run had not seen (resizes: to a new page); with
    /// plug-in `code-novelty`, on a device that measures coverage, steps that ran code
    /// the run had not run.
    #[serde(default)]
    pub novel_steps: u64,
    /// Steps whose action changed nothing on the screen but its own widget's hover tint;
    /// with plug-in `code-novelty`, on a device that measures coverage, steps that ran no
    /// code the run had not run.
    #[serde(default)]
    pub idle_steps: u64,
    /// Steps that ran code the run had not run before, on a device that measures the
    /// app's coverage ([`PirlAgent::observe_coverage`](crate::PirlAgent::observe_coverage)),
    /// with or without plug-in `code-novelty`.
    #[serde(default)]
    pub code_steps: u64,
    /// Decisions made with a dialog open over a backdrop, among its widgets
    /// (plug-in `modal-focus`).
    #[serde(default)]
    pub dialog_steps: u64,
    /// Decisions made at a window size other than the first screen's
    /// (plug-in `resize-budget`).
    #[serde(default)]
    pub away_steps: u64,
    /// Decisions made by the prior alone after a stall (plug-in `stall-reset`).
    #[serde(default)]
    pub stalled_steps: u64,
    /// Decisions that ran a screen's commands in an order not yet run
    /// (plug-in `command-sequences`).
    #[serde(default)]
    pub sequence_steps: u64,
    pub timings: AgentTimings,
}
