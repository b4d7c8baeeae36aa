//! The consecutive-frame heuristic: the paper's multi-screenshot baseline (AdaT Section
//! III-A labels its data this way, and RQ2 runs it as "Consecutive Frame"). A frame is
//! fully rendered when the next frame equals it within a pixel tolerance: the screen has
//! stopped changing.

use gui_core::Screenshot;
use serde::{Deserialize, Serialize};

use super::{RenderJudge, RenderLabel};
use crate::Result;

/// When two frames count as equal: the same rule as the loop's `ConsecutiveFrames`
/// throttle (`gui_explore::FrameMatch`), so the baseline scored here is the one the loop
/// runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsecutiveFrameConfig {
    /// A pixel differs when any channel differs by more than this (absorbs PNG and
    /// scaling noise, antialiased text).
    pub tolerance: u8,
    /// Frames are equal when at most this many pixels differ: a blinking caret (about
    /// 2x18 px) passes, a turning spinner (hundreds of pixels) does not.
    pub max_changed_pixels: u64,
}

impl Default for ConsecutiveFrameConfig {
    fn default() -> Self {
        Self {
            tolerance: 8,
            max_changed_pixels: 64,
        }
    }
}

impl ConsecutiveFrameConfig {
    /// Whether `a` and `b` count as the same screen (never when their sizes differ).
    pub fn same(&self, a: &Screenshot, b: &Screenshot) -> bool {
        if a.size() != b.size() {
            return false;
        }
        // Settled screens are byte-identical: one comparison instead of a pixel loop.
        if a.pixels().as_raw() == b.pixels().as_raw() {
            return true;
        }
        let changed = a.diff_fraction(b, self.tolerance) * a.size().area() as f64;
        changed.round() as u64 <= self.max_changed_pixels
    }
}

/// Labels a frame sequence: frame `i` is [`RenderLabel::Full`] when frame `i + 1` equals
/// it. The last frame has no successor; it is judged against its predecessor (a screen
/// that equals the frame before it has settled), and a lone frame is `Full`.
pub fn consecutive_frame_labels(
    frames: &[Screenshot],
    config: &ConsecutiveFrameConfig,
) -> Vec<RenderLabel> {
    let n = frames.len();
    (0..n)
        .map(|i| {
            let settled = match (i + 1 < n, i > 0) {
                (true, _) => config.same(&frames[i], &frames[i + 1]),
                (false, true) => config.same(&frames[i], &frames[i - 1]),
                (false, false) => true,
            };
            if settled {
                RenderLabel::Full
            } else {
                RenderLabel::Partial
            }
        })
        .collect()
}

/// The heuristic as a streaming [`RenderJudge`]: a screenshot is fully rendered when it
/// equals the one judged before it. The first screenshot (and the first after a
/// [`reset`](ConsecutiveFrameJudge::reset)) is not, since nothing says it has settled: the
/// loop takes one more screenshot, which is the cost this baseline pays against a
/// single-screen classifier.
#[derive(Debug, Clone, Default)]
pub struct ConsecutiveFrameJudge {
    pub config: ConsecutiveFrameConfig,
    previous: Option<Screenshot>,
}

impl ConsecutiveFrameJudge {
    pub fn new(config: ConsecutiveFrameConfig) -> Self {
        Self {
            config,
            previous: None,
        }
    }

    /// Forgets the previous screenshot (after an action, the old screen says nothing).
    pub fn reset(&mut self) {
        self.previous = None;
    }
}

impl RenderJudge for ConsecutiveFrameJudge {
    fn name(&self) -> &str {
        "consecutive-frame"
    }

    fn prob_full(&mut self, shot: &Screenshot) -> Result<f32> {
        let same = self
            .previous
            .as_ref()
            .is_some_and(|prev| self.config.same(prev, shot));
        // Cheap: the pixels are shared, not copied.
        self.previous = Some(shot.clone());
        Ok(if same { 1.0 } else { 0.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage};

    fn shot(v: u8, spot: Option<(u32, u8)>) -> Screenshot {
        let mut img = RgbImage::from_pixel(40, 30, Rgb([v, v, v]));
        if let Some((x, c)) = spot {
            for y in 10..20 {
                for dx in 0..10 {
                    img.put_pixel(x + dx, y, Rgb([c, 0, 0]));
                }
            }
        }
        Screenshot::new(img, 1.0, 0).unwrap()
    }

    #[test]
    fn a_frame_is_full_when_the_next_one_equals_it() {
        let cfg = ConsecutiveFrameConfig::default();
        // A spinner moving, then the page settling (with 3 levels of noise).
        let frames = [
            shot(250, Some((0, 200))),
            shot(250, Some((10, 200))),
            shot(240, None),
            shot(243, None),
            shot(241, None),
        ];
        use RenderLabel::{Full, Partial};
        assert_eq!(
            consecutive_frame_labels(&frames, &cfg),
            [Partial, Partial, Full, Full, Full]
        );
        assert_eq!(consecutive_frame_labels(&frames[..1], &cfg), [Full]);
        assert_eq!(
            consecutive_frame_labels(&frames[..2], &cfg),
            [Partial, Partial]
        );
        assert!(consecutive_frame_labels(&[], &cfg).is_empty());

        let mut judge = ConsecutiveFrameJudge::default();
        let seen: Vec<bool> = frames
            .iter()
            .map(|f| judge.fully_rendered(f).unwrap())
            .collect();
        assert_eq!(seen, [false, false, false, true, true]);
        judge.reset();
        assert!(!judge.fully_rendered(&frames[4]).unwrap());
    }
}
