//! The whole microscopic state of a screen: boxes, kinds and embeddings in one call.

use std::sync::Arc;

use gui_core::{Screenshot, Widget};
use serde::{Deserialize, Serialize};

use crate::cnn::{WidgetCnn, argmax_kind};
use crate::embed::{EmbedConfig, Embedder, WidgetEmbedder};
use crate::extract::{DetectedBox, ExtractConfig, extract_screenshot};
use crate::{Result, WidgetClassifier};

/// Settings of [`Vision`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VisionConfig {
    pub extract: ExtractConfig,
    pub embed: EmbedConfig,
}

/// What the vision pipeline sees on one screen.
#[derive(Debug, Clone, Default)]
pub struct ScreenVision {
    /// Widgets with kinds, in the order of `boxes`.
    pub widgets: Vec<Widget>,
    /// The boxes as extracted (with their origin: edges or text).
    pub boxes: Vec<DetectedBox>,
    /// One embedding per widget (image ‖ location ‖ kind).
    pub embeddings: Vec<Vec<f32>>,
}

/// Screenshot in, widgets with kinds and embeddings out.
///
/// One CNN pass over the widget crops gives both the kinds and the image features; a
/// custom [`WidgetClassifier`] can replace the CNN's kinds.
pub struct Vision {
    config: VisionConfig,
    embedder: WidgetEmbedder,
    classifier: Option<Box<dyn WidgetClassifier>>,
}

impl std::fmt::Debug for Vision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vision")
            .field("config", &self.config)
            .field("custom_classifier", &self.classifier.is_some())
            .finish()
    }
}

impl Vision {
    pub fn new(config: VisionConfig, cnn: Arc<WidgetCnn>) -> Result<Self> {
        config.extract.validate()?;
        let embedder = WidgetEmbedder::new(cnn, config.embed)?;
        Ok(Self {
            config,
            embedder,
            classifier: None,
        })
    }

    /// With the CNN committed in the crate.
    pub fn shipped(config: VisionConfig) -> Result<Self> {
        Self::new(config, Arc::new(WidgetCnn::shipped()?))
    }

    /// Kinds from `classifier` instead of the CNN (for example an ONNX VGG-16).
    pub fn with_classifier(mut self, classifier: Box<dyn WidgetClassifier>) -> Self {
        self.classifier = Some(classifier);
        self
    }

    pub fn config(&self) -> &VisionConfig {
        &self.config
    }

    /// Length of each embedding.
    pub fn embedding_dim(&self) -> usize {
        self.embedder.dim()
    }

    /// Boxes, kinds and embeddings of one screenshot.
    pub fn analyse(&self, shot: &Screenshot) -> Result<ScreenVision> {
        let boxes = extract_screenshot(shot, &self.config.extract)?;
        let screen = shot.pixels();
        let rects: Vec<_> = boxes.iter().map(|b| b.rect).collect();
        let cnn = self.embedder.cnn();
        let inputs = rects
            .iter()
            .map(|&r| cnn.prepare(screen, r))
            .collect::<Result<Vec<_>>>()?;
        let out = cnn.forward(&inputs)?;
        let kinds = match &self.classifier {
            Some(c) => c.classify(screen, &rects)?,
            None => out.probabilities.iter().map(argmax_kind).collect(),
        };
        let widgets: Vec<Widget> = rects
            .iter()
            .zip(kinds)
            .map(|(&r, (k, p))| Widget::new(r, k, p))
            .collect();
        let embeddings =
            self.embedder
                .embed_with_features(screen.dimensions(), &widgets, &out.features)?;
        Ok(ScreenVision {
            widgets,
            boxes,
            embeddings,
        })
    }
}
