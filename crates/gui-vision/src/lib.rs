//! The microscopic half of the PIRLTest page state (Section 3.1.1): from a screenshot alone,
//! find the widgets (Canny edges, connected boxes, noise filtering), tell their kinds
//! (14 classes), and embed each one (image, location, kind).
//!
//! It also tells whether a screenshot is fully rendered yet ([`render`], AdaT's
//! rendering-state classifier), so a tester can act as soon as the screen has settled.
//!
//! Pure functions of pixels: this crate never touches a device.
//!
//! ```
//! use gui_core::{Rect, Screenshot};
//! use gui_vision::{ExtractConfig, Vision, VisionConfig, extract_widgets};
//! use image::{Rgb, RgbImage};
//!
//! // A white screen with one blue button.
//! let mut img = RgbImage::from_pixel(320, 200, Rgb([255, 255, 255]));
//! for y in 40..80 {
//!     for x in 60..180 {
//!         img.put_pixel(x, y, Rgb([31, 95, 209]));
//!     }
//! }
//! let boxes = extract_widgets(&img, &ExtractConfig::web())?;
//! assert_eq!(boxes.len(), 1);
//! assert!(boxes[0].rect.iou(&Rect::new(60, 40, 120, 40)) > 0.9);
//!
//! // Boxes, kinds and embeddings in one call, with the shipped widget CNN.
//! let vision = Vision::shipped(VisionConfig::default())?;
//! let seen = vision.analyse(&Screenshot::new(img, 1.0, 0)?)?;
//! assert_eq!(seen.embeddings[0].len(), vision.embedding_dim());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod classify;
#[cfg(feature = "cnn")]
mod cnn;
#[cfg(feature = "cnn")]
mod cnn_infer;
#[cfg(feature = "cnn")]
mod cnn_input;
mod components;
pub mod dataset;
mod edges;
#[cfg(feature = "cnn")]
mod embed;
mod error;
pub mod eval;
mod extract;
mod ink;
#[cfg(feature = "ocr")]
mod ocr;
#[cfg(feature = "onnx")]
mod onnx;
pub mod render;
#[cfg(feature = "cnn")]
mod vision;

pub use classify::WidgetClassifier;
#[cfg(feature = "cnn")]
pub use cnn::{
    CONTEXT_MIN_PX, CnnClassifier, CnnOutput, CnnSample, CnnTrainConfig, CnnTrainReport, WidgetCnn,
    WidgetCnnConfig, argmax_kind, evaluate_cnn, prepare_crop, prepare_crop_for,
    prepare_crop_with_context, shipped_model_path, side_numbers, train_widget_cnn,
};
#[cfg(feature = "cnn")]
pub use cnn_input::CnnInput;
pub use components::{Component, connected_components};
pub use edges::{CannyConfig, canny, synthetic_gui_screen, to_gray};
#[cfg(feature = "cnn")]
pub use embed::{EmbedConfig, Embedder, LocationFeature, WidgetEmbedder, location_mask};
pub use error::{Error, Result};
pub use extract::{
    BoxOrigin, DetectedBox, ExtractConfig, boxes_from_edges, extract_screenshot, extract_widgets,
    merge_text_regions, snap_to_ink,
};
pub use ink::tighten_to_ink;
#[cfg(feature = "ocr")]
pub use ocr::{TextDetector, TextDetectorConfig, TextRecognizer, TextRecognizerConfig, TextRegion};
#[cfg(feature = "onnx")]
pub use onnx::{
    ChannelOrder, ONNX_RUNTIME_FILE, OnnxClassifier, OnnxClassifierConfig, init_onnx_runtime,
    init_onnx_runtime_from, models_dir, onnx_runtime_path,
};
pub use render::{ConsecutiveFrameJudge, RenderJudge, RenderLabel};
#[cfg(feature = "cnn")]
pub use render::{RenderNet, RenderNetConfig};
#[cfg(feature = "cnn")]
pub use vision::{ScreenVision, Vision, VisionConfig};
