//! Is the screen fully rendered yet? The rendering-state classifier of AdaT (Feng et al.,
//! "Efficiency Matters: Speeding Up Automated Testing with GUI Rendering Inference",
//! Section III-B), so an exploration loop can act as soon as a screen has settled instead
//! of sleeping a fixed throttle.
//!
//! - [`RenderJudge`]: the seam the loop uses; three judges implement it.
//! - [`RenderNet`] (feature `cnn`): a small MobileNetV2-style binary classifier over one
//!   screenshot (inverted residual blocks, depthwise 3×3 convolutions, linear
//!   bottlenecks), or the paper's plain 3-layer CNN baseline ([`RenderArch::Cnn3`]).
//! - [`ConsecutiveFrameJudge`] and [`consecutive_frame_labels`]: the paper's heuristic
//!   baseline, a frame is fully rendered when the next frame equals it within a tolerance.
//! - [`RenderDataset`]: frames plus `labels.jsonl`, split by app; [`RenderMetrics`]:
//!   precision, recall and F1 with "fully rendered" as the positive class, as the paper
//!   scores RQ1.
//!
//! The defaults and where they come from are in `docs/adat.md`.
//!
//! ```
//! # #[cfg(feature = "cnn")] {
//! use gui_core::Screenshot;
//! use gui_vision::render::{ConsecutiveFrameJudge, RenderJudge, RenderNet, RenderNetConfig};
//! use image::{Rgb, RgbImage};
//!
//! let shot = Screenshot::new(RgbImage::from_pixel(640, 400, Rgb([250, 250, 250])), 1.0, 0)?;
//! // Any judge behind the one trait: a network (here untrained; `RenderNet::load` reads a
//! // trained one) or the heuristic, which needs a second, equal screenshot.
//! let mut judges: Vec<Box<dyn RenderJudge>> = vec![
//!     Box::new(RenderNet::new(RenderNetConfig::default())?),
//!     Box::new(ConsecutiveFrameJudge::default()),
//! ];
//! for judge in &mut judges {
//!     let p = judge.prob_full(&shot)?;
//!     assert!((0.0..=1.0).contains(&p), "{}", judge.name());
//! }
//! assert!(judges[1].fully_rendered(&shot)?);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "cnn")]
pub mod augment;
mod data;
mod frames;
#[cfg(feature = "cnn")]
mod kernels;
mod metrics;
#[cfg(feature = "cnn")]
mod net;
#[cfg(feature = "cnn")]
mod train;

use gui_core::Screenshot;
use serde::{Deserialize, Serialize};

use crate::Result;

pub use data::{AppSplit, FrameRecord, LABELS_FILE, RenderDataset, RenderFrame, split_apps};
pub use frames::{ConsecutiveFrameConfig, ConsecutiveFrameJudge, consecutive_frame_labels};
pub use metrics::RenderMetrics;
#[cfg(feature = "cnn")]
pub use net::{
    InputColor, InvertedResidualSpec, NamedValues, RenderArch, RenderNet, RenderNetConfig,
    shipped_render_net_path,
};
#[cfg(feature = "cnn")]
pub use train::{
    RenderSample, RenderTrainConfig, RenderTrainReport, evaluate, evaluate_by_app, prepare_samples,
    synthetic_samples, train, train_samples,
};

/// The two rendering states of the paper's classifier. The paper's three kinds of
/// partially rendered screen (transiting, explicit loading, implicit loading) all count
/// as [`RenderLabel::Partial`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenderLabel {
    /// Still transiting or loading: acting now may hit an out-of-sync widget.
    Partial,
    /// Every resource loaded and displayed: the positive class of the paper's metrics.
    Full,
}

impl RenderLabel {
    /// Both labels, in logit order.
    pub const ALL: [RenderLabel; 2] = [RenderLabel::Partial, RenderLabel::Full];

    /// The logit index: 0 partial, 1 full.
    pub fn index(self) -> usize {
        match self {
            RenderLabel::Partial => 0,
            RenderLabel::Full => 1,
        }
    }

    /// The name used in `labels.jsonl` and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RenderLabel::Partial => "partial",
            RenderLabel::Full => "full",
        }
    }

    /// `Full` when `prob_full` reaches one half.
    pub fn from_prob_full(prob_full: f32) -> Self {
        if prob_full >= 0.5 {
            RenderLabel::Full
        } else {
            RenderLabel::Partial
        }
    }
}

impl std::fmt::Display for RenderLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Tells whether a screenshot is fully rendered: the seam between an exploration loop's
/// adaptive throttle and the ways of judging a screen (the single-screen networks and the
/// consecutive-frame heuristic, which needs the previous screenshot and so takes `&mut`).
pub trait RenderJudge: Send {
    /// A short name for logs and tables (`mobilenet`, `cnn3`, `consecutive-frame`).
    fn name(&self) -> &str;

    /// The probability that `shot` is fully rendered.
    fn prob_full(&mut self, shot: &Screenshot) -> Result<f32>;

    /// Whether `shot` is fully rendered (probability at least one half).
    fn fully_rendered(&mut self, shot: &Screenshot) -> Result<bool> {
        Ok(self.prob_full(shot)? >= 0.5)
    }
}
