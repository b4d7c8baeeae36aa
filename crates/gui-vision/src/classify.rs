//! Widget kinds: the 14 classes of PIRLTest behind one trait.

use gui_core::{Rect, WidgetKind};
use image::RgbImage;

use crate::Result;

/// Tells the kind of each widget box on a screen.
///
/// Implementations: the candle CNN shipped with the crate (`CnnClassifier`, feature `cnn`)
/// and any ONNX image classifier loaded by path (`OnnxClassifier`, feature `onnx`), so a
/// user can plug in their own network (the paper uses a VGG-16).
pub trait WidgetClassifier: Send + Sync {
    /// The kind and its probability for every box, in the order given. All boxes of a
    /// screen are classified in one batch.
    fn classify(&self, screen: &RgbImage, boxes: &[Rect]) -> Result<Vec<(WidgetKind, f32)>>;
}
