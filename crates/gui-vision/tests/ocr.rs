//! PP-OCR text detection and recognition on a real Chromium screenshot:
//! `tests/data/ocr/settings.png`, rendered from `settings.html` beside it.
//!
//! Needs ONNX Runtime and the PP-OCR models: `cargo xtask models` downloads them.

use std::path::Path;

use gui_core::{Rect, Size};
use gui_vision::{
    Error, TextDetector, TextDetectorConfig, TextRecognizer, TextRecognizerConfig, TextRegion,
};
use image::RgbImage;

/// The text lines of the fixture with a zone that holds each line's ink and nothing else
/// (from the absolute positions in `settings.html`).
const LINES: &[(&str, Rect)] = &[
    ("Account settings", Rect::new(16, 16, 320, 42)),
    ("Email address", Rect::new(16, 80, 200, 24)),
    ("Hello world 42", Rect::new(16, 160, 200, 32)),
    // Inside the blue button (24..172, 220..256), off its rounded border.
    ("Save changes", Rect::new(28, 223, 140, 30)),
    ("Last saved on 3 March", Rect::new(16, 306, 230, 24)),
];

/// Places without text: the right half of the page and the empty input field.
const BLANK: &[Rect] = &[Rect::new(340, 0, 300, 360), Rect::new(27, 111, 216, 28)];

fn screenshot() -> RgbImage {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ocr/settings.png");
    image::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8()
}

fn detector() -> TextDetector {
    TextDetector::new(TextDetectorConfig::default())
        .unwrap_or_else(|e| panic!("the PP-OCR detector needs ONNX Runtime and its model: {e}"))
}

/// The box of the pixels inside `zone` that differ clearly from the zone's commonest
/// colour: the ink of the line drawn there.
fn ink_box(img: &RgbImage, zone: Rect) -> Rect {
    let mut counts = std::collections::HashMap::new();
    for y in zone.y..zone.bottom() {
        for x in zone.x..zone.right() {
            *counts
                .entry(img.get_pixel(x as u32, y as u32).0)
                .or_insert(0) += 1;
        }
    }
    let background = counts.into_iter().max_by_key(|c| c.1).unwrap().0;
    let mut ink: Option<Rect> = None;
    for y in zone.y..zone.bottom() {
        for x in zone.x..zone.right() {
            let p = img.get_pixel(x as u32, y as u32).0;
            let diff = (0..3).map(|c| p[c].abs_diff(background[c])).max().unwrap();
            if diff > 80 {
                let dot = Rect::new(x, y, 1, 1);
                ink = Some(ink.map_or(dot, |r| r.union(&dot)));
            }
        }
    }
    ink.unwrap_or_else(|| panic!("no ink in zone {zone:?}: was settings.png regenerated?"))
}

/// The share of the ink box inside the region. (Regions are taller than the ink: DB boxes
/// hold the whole line height, so the IoU of 13 px text with its ink is about 0.5.)
fn coverage(region: &Rect, ink: &Rect) -> f64 {
    region.intersection(ink).map_or(0, |r| r.area()) as f64 / ink.area() as f64
}

#[test]
fn finds_every_text_line_and_nothing_on_blank_areas() {
    let img = screenshot();
    let regions = detector().detect(&img).unwrap();
    for r in &regions {
        println!("{:?} score {:.3}", r.rect, r.score);
    }
    for (text, zone) in LINES {
        let ink = ink_box(&img, *zone);
        let best = regions
            .iter()
            .max_by(|a, b| a.rect.iou(&ink).total_cmp(&b.rect.iou(&ink)))
            .unwrap_or_else(|| panic!("no text regions at all"));
        assert!(
            coverage(&best.rect, &ink) > 0.95 && best.rect.iou(&ink) > 0.4,
            "`{text}` (ink {ink:?}) is not found: best region {:?} covers {:.2} of it, IoU {:.2}",
            best.rect,
            coverage(&best.rect, &ink),
            best.rect.iou(&ink)
        );
        assert!(
            (0.5..=1.0).contains(&best.score),
            "{text}: score {}",
            best.score
        );
    }
    for blank in BLANK {
        let hits: Vec<&TextRegion> = regions
            .iter()
            .filter(|r| r.rect.intersection(blank).is_some())
            .collect();
        assert!(hits.is_empty(), "text found on blank {blank:?}: {hits:?}");
    }
    assert_eq!(regions.len(), LINES.len(), "{regions:?}");
    // Reading order: top to bottom.
    assert!(regions.windows(2).all(|w| w[0].rect.y <= w[1].rect.y));
    let screen = Size::new(img.width(), img.height());
    assert!(
        regions
            .iter()
            .all(|r| r.rect.clip_to(screen) == Some(r.rect))
    );
}

/// The boxes rapidocr-onnxruntime 1.4.4 finds on the fixture with the same input size
/// (`python3 tests/data/ocr/rapidocr_compare.py`, last line): its rotated DB boxes, made
/// axis-aligned.
const RAPIDOCR_BOXES: &[Rect] = &[
    Rect::new(24, 22, 248, 30),
    Rect::new(22, 82, 117, 20),
    Rect::new(22, 165, 133, 23),
    Rect::new(40, 227, 117, 23),
    Rect::new(23, 310, 149, 17),
];

#[test]
fn boxes_agree_with_the_python_reference_implementation() {
    let regions = detector().detect(&screenshot()).unwrap();
    assert_eq!(regions.len(), RAPIDOCR_BOXES.len(), "{regions:?}");
    for (ours, theirs) in regions.iter().zip(RAPIDOCR_BOXES) {
        // Their boxes come from integer polygon offsetting and rotated rectangles; ours
        // from the same geometry on axis-aligned boxes: edges agree to a pixel or two.
        let r = ours.rect;
        let edges = [
            r.x - theirs.x,
            r.y - theirs.y,
            r.right() - theirs.right(),
            r.bottom() - theirs.bottom(),
        ];
        assert!(
            edges.iter().all(|e| e.abs() <= 2),
            "{r:?} vs rapidocr {theirs:?}: edges differ by {edges:?}"
        );
    }
}

#[test]
fn reads_the_text_of_the_detected_lines() {
    let img = screenshot();
    let mut regions = detector().detect(&img).unwrap();
    let recognizer = TextRecognizer::new(TextRecognizerConfig::default())
        .unwrap_or_else(|e| panic!("the PP-OCR recogniser needs ONNX Runtime and its model: {e}"));
    recognizer.annotate(&img, &mut regions).unwrap();
    let texts: Vec<&str> = regions.iter().filter_map(|r| r.text.as_deref()).collect();
    println!("{texts:?}");
    // Compared without spaces: the recogniser's spaces between words are its weakest part.
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    for (text, zone) in LINES {
        let ink = ink_box(&img, *zone);
        let read = regions
            .iter()
            .find(|r| coverage(&r.rect, &ink) > 0.95)
            .and_then(|r| r.text.clone())
            .unwrap_or_default();
        assert_eq!(squash(&read), squash(text), "read {read:?} for {text:?}");
    }
}

#[test]
fn recognition_of_given_boxes_keeps_their_order_and_names_empty_ones() {
    let img = screenshot();
    let recognizer = TextRecognizer::new(TextRecognizerConfig::default())
        .unwrap_or_else(|e| panic!("the PP-OCR recogniser needs ONNX Runtime and its model: {e}"));
    let boxes = [LINES[2].1, LINES[0].1];
    let texts = recognizer.recognise(&img, &boxes).unwrap();
    assert!(texts[0].contains("Hello"), "{texts:?}");
    assert!(texts[1].contains("settings"), "{texts:?}");
    let err = recognizer
        .recognise(&img, &[LINES[0].1, Rect::new(700, 0, 10, 10)])
        .unwrap_err();
    assert!(
        matches!(err, Error::Image { .. }) && err.to_string().contains("text box 1"),
        "{err}"
    );
}

#[test]
fn a_missing_detection_model_is_an_error_naming_it_and_the_xtask() {
    let model = Path::new("/nonexistent/det.onnx").to_path_buf();
    let err = TextDetector::new(TextDetectorConfig {
        model: model.clone(),
        ..TextDetectorConfig::default()
    })
    .unwrap_err();
    assert!(
        matches!(&err, Error::Model { path, .. } if *path == model),
        "{err}"
    );
    assert!(err.to_string().contains("cargo xtask models"), "{err}");
}

#[test]
fn an_empty_screenshot_is_refused() {
    let err = detector().detect(&RgbImage::new(0, 0)).unwrap_err();
    assert!(matches!(err, Error::Image { .. }), "{err}");
}
