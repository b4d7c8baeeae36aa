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

/// Every box clipped to the screen, or an error naming the first box (by its index, with
/// `what` saying which kind of box) that shows nothing once clipped. Shared by every
/// backend that crops boxes out of a screenshot.
#[cfg(feature = "onnx")]
pub(crate) fn clip_boxes(screen: &RgbImage, boxes: &[Rect], what: &str) -> Result<Vec<Rect>> {
    use crate::Error;
    use gui_core::Size;

    let size = Size::new(screen.width(), screen.height());
    boxes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            b.clip_to(size).ok_or_else(|| {
                Error::image(
                    format!("{what} {i} {b:?}"),
                    format!(
                        "is empty once clipped to the {}x{} screen",
                        size.width, size.height
                    ),
                )
            })
        })
        .collect()
}
