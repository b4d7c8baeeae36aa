//! Widget embeddings (PIRLTest Section 3.1.1): image feature ‖ location feature ‖ kind
//! one-hot, one vector per widget, all widgets of a screen in one batch.

use std::sync::Arc;

use gui_core::{Rect, Widget, WidgetKind};
use image::RgbImage;
use serde::{Deserialize, Serialize};

use crate::cnn::{WidgetCnn, shape_numbers};
use crate::cnn_input::CnnInput;
use crate::{Error, Result};

/// Turns the widgets of one screen into vectors.
pub trait Embedder: Send + Sync {
    /// Length of every vector.
    fn dim(&self) -> usize;
    /// One vector per widget, in order.
    fn embed(&self, screen: &RgbImage, widgets: &[Widget]) -> Result<Vec<Vec<f32>>>;
}

/// How a widget's place on the screen is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum LocationFeature {
    /// The paper's way: a black screen with the widget's box in white, fed through the
    /// same CNN as the widget image; its feature layer is the location vector.
    Cnn,
    /// The same mask averaged onto a `grid × grid` raster: each value is the exact
    /// fraction of that cell the widget covers. Cheaper, and distances between these
    /// vectors follow box overlap directly.
    Mask { grid: usize },
}

/// Which parts make up a widget vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedConfig {
    pub location: LocationFeature,
    /// Append the 14-length kind one-hot (the paper does).
    pub kind_one_hot: bool,
}

impl Default for EmbedConfig {
    /// The paper's three parts with the cheap exact location (a 16 × 16 mask).
    fn default() -> Self {
        Self {
            location: LocationFeature::Mask { grid: 16 },
            kind_one_hot: true,
        }
    }
}

impl EmbedConfig {
    /// The paper's composition: CNN image feature ‖ CNN location feature ‖ one-hot. With a
    /// 4096-wide feature layer this is the paper's 4096 + 4096 + 14 = 8206 dimensions.
    pub fn paper() -> Self {
        Self {
            location: LocationFeature::Cnn,
            kind_one_hot: true,
        }
    }

    fn check(&self) -> Result<()> {
        if let LocationFeature::Mask { grid } = self.location
            && !(1..=256).contains(&grid)
        {
            return Err(Error::Config {
                field: "location.grid",
                message: format!("{grid} is not in 1..=256"),
            });
        }
        Ok(())
    }
}

/// The widget embedder over the widget CNN.
#[derive(Debug, Clone)]
pub struct WidgetEmbedder {
    cnn: Arc<WidgetCnn>,
    config: EmbedConfig,
}

impl WidgetEmbedder {
    pub fn new(cnn: Arc<WidgetCnn>, config: EmbedConfig) -> Result<Self> {
        config.check()?;
        Ok(Self { cnn, config })
    }

    pub fn config(&self) -> &EmbedConfig {
        &self.config
    }

    pub fn cnn(&self) -> &WidgetCnn {
        &self.cnn
    }

    fn location_dim(&self) -> usize {
        match self.config.location {
            LocationFeature::Cnn => self.cnn.config().feature_dim,
            LocationFeature::Mask { grid } => grid * grid,
        }
    }

    /// Joins precomputed parts: `image` features from the CNN pass over the crops (which
    /// also gave the kinds), so a caller that classified already pays only for location.
    pub fn embed_with_features(
        &self,
        screen_size: (u32, u32),
        widgets: &[Widget],
        image_features: &[Vec<f32>],
    ) -> Result<Vec<Vec<f32>>> {
        if image_features.len() != widgets.len() {
            return Err(Error::Config {
                field: "image_features",
                message: format!(
                    "{} feature rows for {} widgets",
                    image_features.len(),
                    widgets.len()
                ),
            });
        }
        let locations: Vec<Vec<f32>> = match self.config.location {
            LocationFeature::Mask { grid } => widgets
                .iter()
                .map(|w| location_mask(screen_size, w.rect, grid))
                .collect(),
            LocationFeature::Cnn => {
                let side = self.cnn.config().input;
                let channels = self.cnn.config().in_channels();
                let inputs: Vec<CnnInput> = widgets
                    .iter()
                    .map(|w| mask_input(screen_size, w.rect, side, channels))
                    .collect();
                self.cnn.forward(&inputs)?.features
            }
        };
        let dim = self.dim();
        Ok(widgets
            .iter()
            .zip(image_features)
            .zip(locations)
            .map(|((w, img), loc)| {
                let mut v = Vec::with_capacity(dim);
                v.extend_from_slice(img);
                v.extend_from_slice(&loc);
                if self.config.kind_one_hot {
                    v.extend_from_slice(&w.kind.one_hot());
                }
                v
            })
            .collect())
    }
}

impl Embedder for WidgetEmbedder {
    fn dim(&self) -> usize {
        self.cnn.config().feature_dim
            + self.location_dim()
            + if self.config.kind_one_hot {
                WidgetKind::COUNT
            } else {
                0
            }
    }

    fn embed(&self, screen: &RgbImage, widgets: &[Widget]) -> Result<Vec<Vec<f32>>> {
        let inputs = widgets
            .iter()
            .map(|w| self.cnn.prepare(screen, w.rect))
            .collect::<Result<Vec<_>>>()?;
        let features = self.cnn.forward(&inputs)?.features;
        self.embed_with_features(screen.dimensions(), widgets, &features)
    }
}

/// The fraction of each cell of a `grid × grid` raster over the screen that `rect` covers,
/// row by row.
pub fn location_mask(screen: (u32, u32), rect: Rect, grid: usize) -> Vec<f32> {
    let (sw, sh) = (screen.0.max(1) as f64, screen.1.max(1) as f64);
    // Coverage along one axis; the 2-D coverage of a box is the product of its axes'.
    let cover = |lo: i32, hi: i32, full: f64| -> Vec<f64> {
        (0..grid)
            .map(|i| {
                let a = i as f64 * full / grid as f64;
                let b = (i + 1) as f64 * full / grid as f64;
                let overlap = (hi as f64).min(b) - (lo as f64).max(a);
                (overlap / (b - a)).clamp(0.0, 1.0)
            })
            .collect()
    };
    let xs = cover(rect.x, rect.right(), sw);
    let ys = cover(rect.y, rect.bottom(), sh);
    let mut out = Vec::with_capacity(grid * grid);
    for fy in &ys {
        for fx in &xs {
            out.push((fx * fy) as f32);
        }
    }
    out
}

/// The white-box-on-black mask of the paper, already squashed to the CNN's input size.
fn mask_input(screen: (u32, u32), rect: Rect, side: usize, channels: usize) -> CnnInput {
    // Same value range as image crops: black -0.5, white 0.5.
    let plane: Vec<f32> = location_mask(screen, rect, side)
        .into_iter()
        .map(|v| v - 0.5)
        .collect();
    // The whole screen is the crop: its context channels show the same mask.
    let mut pixels = Vec::with_capacity(channels * plane.len());
    for _ in 0..channels {
        pixels.extend_from_slice(&plane);
    }
    let (w, h) = (screen.0.max(1) as f32, screen.1.max(1) as f32);
    // The mask has no sides to read: they stay 0.
    CnnInput {
        pixels,
        geometry: shape_numbers(w, h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WidgetCnnConfig;

    #[test]
    fn mask_is_exact_coverage() {
        // A 100x100 screen on a 4x4 grid has 25 px cells; a box over cell (1,1) and half
        // of cell (2,1).
        let m = location_mask((100, 100), Rect::new(25, 25, 37, 25), 4);
        assert_eq!(m.len(), 16);
        assert!((m[5] - 1.0).abs() < 1e-6);
        assert!((m[6] - 0.48).abs() < 1e-6);
        assert_eq!(m[0], 0.0);
        let total: f32 = m.iter().sum();
        assert!((total - 37.0 * 25.0 / 625.0).abs() < 1e-5);
    }

    #[test]
    fn dimensions_follow_the_config() {
        let cnn = Arc::new(
            WidgetCnn::new(
                WidgetCnnConfig {
                    input: 16,
                    channels: [4, 4, 4],
                    feature_dim: 10,
                    context: 0.0,
                    sides: false,
                },
                1,
            )
            .unwrap(),
        );
        let screen = RgbImage::new(200, 100);
        let widgets = [
            Widget::new(Rect::new(0, 0, 50, 20), WidgetKind::Button, 1.0),
            Widget::new(Rect::new(60, 40, 30, 30), WidgetKind::Icon, 1.0),
        ];
        let paper = WidgetEmbedder::new(cnn.clone(), EmbedConfig::paper()).unwrap();
        assert_eq!(paper.dim(), 10 + 10 + 14);
        let v = paper.embed(&screen, &widgets).unwrap();
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|r| r.len() == 34));
        assert_eq!(v[1][20 + WidgetKind::Icon.index()], 1.0);
        let cheap = WidgetEmbedder::new(cnn, EmbedConfig::default()).unwrap();
        assert_eq!(cheap.dim(), 10 + 256 + 14);
        assert!(cheap.embed(&screen, &[]).unwrap().is_empty());
        assert!(
            WidgetEmbedder::new(
                cheap.cnn.clone(),
                EmbedConfig {
                    location: LocationFeature::Mask { grid: 0 },
                    kind_one_hot: false
                }
            )
            .is_err()
        );
    }
}
