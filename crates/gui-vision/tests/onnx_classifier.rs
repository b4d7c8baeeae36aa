//! `OnnxClassifier` on real ONNX models: the tiny colour classifiers of
//! `tests/data/onnx/make_tiny_classifier.py` (class = f(mean colour of the crop)).
//!
//! Needs ONNX Runtime: `cargo xtask models` downloads it.

use std::path::{Path, PathBuf};

use gui_core::{Rect, WidgetKind};
use gui_vision::{
    ChannelOrder, Error, OnnxClassifier, OnnxClassifierConfig, WidgetClassifier, init_onnx_runtime,
    init_onnx_runtime_from, onnx_runtime_path,
};
use image::{Rgb, RgbImage};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/onnx")
        .join(name)
}

fn runtime() {
    if let Err(e) = init_onnx_runtime() {
        panic!("ONNX Runtime is needed: {e}");
    }
}

/// A white 200x120 screen with a red, a green, a blue and a near-black widget.
fn screen() -> (RgbImage, Vec<Rect>, Vec<WidgetKind>) {
    let mut img = RgbImage::from_pixel(200, 120, Rgb([255, 255, 255]));
    let widgets = [
        (
            Rect::new(10, 10, 60, 30),
            Rgb([230, 20, 30]),
            WidgetKind::Button,
        ),
        (
            Rect::new(100, 10, 20, 20),
            Rgb([10, 200, 40]),
            WidgetKind::CheckBox,
        ),
        (
            Rect::new(150, 60, 24, 24),
            Rgb([20, 30, 220]),
            WidgetKind::Icon,
        ),
        (
            Rect::new(10, 70, 120, 16),
            Rgb([30, 30, 30]),
            WidgetKind::TextView,
        ),
    ];
    for (rect, colour, _) in &widgets {
        for y in rect.y..rect.bottom() {
            for x in rect.x..rect.right() {
                img.put_pixel(x as u32, y as u32, *colour);
            }
        }
    }
    (
        img,
        widgets.iter().map(|w| w.0).collect(),
        widgets.iter().map(|w| w.2).collect(),
    )
}

#[test]
fn predicts_the_kind_from_the_crop_colour_in_one_batch() {
    runtime();
    let classifier = OnnxClassifier::new(
        &data("tiny_classifier.onnx"),
        OnnxClassifierConfig {
            softmax_applied: true,
            ..OnnxClassifierConfig::default()
        },
    )
    .unwrap();
    let (img, boxes, expected) = screen();
    let got = classifier.classify(&img, &boxes).unwrap();
    let kinds: Vec<WidgetKind> = got.iter().map(|g| g.0).collect();
    assert_eq!(kinds, expected);
    // Saturated colours give one large logit; the dark crop wins only by the bias of 1
    // over twelve zero logits, e / (e + 12 + ...) ~ 0.21, still above uniform (1/14).
    for (i, (kind, p)) in got.iter().enumerate() {
        let floor = if i < 3 { 0.9 } else { 1.0 / 14.0 };
        assert!(*p > floor && *p <= 1.0, "{kind:?} with probability {p}");
    }
    assert!(classifier.classify(&img, &[]).unwrap().is_empty());
}

#[test]
fn logits_get_the_softmax_the_model_lacks() {
    runtime();
    let (img, boxes, expected) = screen();
    let with = OnnxClassifier::new(
        &data("tiny_classifier.onnx"),
        OnnxClassifierConfig {
            softmax_applied: true,
            ..OnnxClassifierConfig::default()
        },
    )
    .unwrap()
    .classify(&img, &boxes)
    .unwrap();
    let without = OnnxClassifier::new(
        &data("tiny_classifier_logits.onnx"),
        OnnxClassifierConfig::default(),
    )
    .unwrap()
    .classify(&img, &boxes)
    .unwrap();
    for ((a, b), kind) in with.iter().zip(&without).zip(&expected) {
        assert_eq!((a.0, b.0), (*kind, *kind));
        assert!((a.1 - b.1).abs() < 1e-5, "{a:?} vs {b:?}");
    }
}

#[test]
fn bgr_order_and_class_table_are_honoured() {
    runtime();
    // Fed as BGR, a red crop lands on the blue weight (column 13); with the class table
    // reversed, column 13 means the first kind of `ALL`.
    let mut classes = WidgetKind::ALL.to_vec();
    classes.reverse();
    let classifier = OnnxClassifier::new(
        &data("tiny_classifier.onnx"),
        OnnxClassifierConfig {
            channel_order: ChannelOrder::Bgr,
            classes,
            softmax_applied: true,
            ..OnnxClassifierConfig::default()
        },
    )
    .unwrap();
    let (img, boxes, _) = screen();
    let got = classifier.classify(&img, &boxes[..1]).unwrap();
    assert_eq!(got[0].0, WidgetKind::ALL[0]);
}

#[test]
fn boxes_are_clipped_and_empty_ones_are_named() {
    runtime();
    let classifier = OnnxClassifier::new(
        &data("tiny_classifier.onnx"),
        OnnxClassifierConfig {
            softmax_applied: true,
            ..OnnxClassifierConfig::default()
        },
    )
    .unwrap();
    let (img, _, _) = screen();
    // Half off the left edge: only the red part is seen.
    let got = classifier
        .classify(&img, &[Rect::new(-30, 10, 60, 30)])
        .unwrap();
    assert_eq!(got[0].0, WidgetKind::Button);
    let outside = Rect::new(500, 10, 20, 20);
    let err = classifier
        .classify(&img, &[Rect::new(10, 10, 60, 30), outside])
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, Error::Image { .. }) && text.contains("box 1") && text.contains("500"),
        "{text}"
    );
    let err = classifier
        .classify(&img, &[Rect::new(10, 10, 0, 30)])
        .unwrap_err();
    assert!(err.to_string().contains("box 0"), "{err}");
}

#[test]
fn an_output_that_does_not_match_the_classes_is_a_backend_error() {
    runtime();
    let classifier = OnnxClassifier::new(
        &data("tiny_classifier.onnx"),
        OnnxClassifierConfig {
            classes: vec![WidgetKind::Button, WidgetKind::Icon],
            ..OnnxClassifierConfig::default()
        },
    )
    .unwrap();
    let (img, boxes, _) = screen();
    let err = classifier.classify(&img, &boxes).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, Error::Backend { .. }) && text.contains("[4, 14]") && text.contains("[4, 2]"),
        "{text}"
    );
}

#[test]
fn a_missing_model_is_an_error_naming_its_path() {
    runtime();
    let path = data("no_such_classifier.onnx");
    let err = OnnxClassifier::new(&path, OnnxClassifierConfig::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Model { path: p, .. } if *p == path),
        "{err}"
    );
    assert!(err.to_string().contains("no_such_classifier.onnx"), "{err}");
}

#[test]
fn a_file_that_is_not_onnx_is_a_model_error() {
    runtime();
    // The generator script is a file, but not a model.
    let path = data("make_tiny_classifier.py");
    let err = OnnxClassifier::new(&path, OnnxClassifierConfig::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Model { path: p, .. } if *p == path),
        "{err}"
    );
}

#[test]
fn a_missing_runtime_library_is_an_error_naming_its_path_and_the_fix() {
    // Checked before the process-wide runtime is touched, so it holds in any test order.
    let bogus = Path::new("/nonexistent/gui-vision/libonnxruntime.so");
    let err = init_onnx_runtime_from(bogus).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(&err, Error::Model { path, .. } if path == bogus),
        "{text}"
    );
    assert!(text.contains("cargo xtask models"), "{text}");
    // The default location is inside the workspace's target/models (or set by env).
    let default = onnx_runtime_path();
    let overridden = ["GUI_ORT_DYLIB", "ORT_DYLIB_PATH", "GUI_MODELS_DIR"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
    if !overridden {
        assert!(
            default.ends_with("target/models/onnxruntime/libonnxruntime.so.1.31.1"),
            "{}",
            default.display()
        );
    }
}
