//! PP-OCR text detection at a desktop (1280x800) and a phone (1080x2400) screenshot size,
//! and recognition of the five lines of the test fixture.
//!
//! `cargo bench -p gui-vision --no-default-features --features ocr --bench ocr`
//! (after `cargo xtask models`). The screens tile `tests/data/ocr/settings.png`, a Chromium
//! rendering, so they are dense with real text.

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gui_core::Rect;
use gui_vision::{TextDetector, TextDetectorConfig, TextRecognizer, TextRecognizerConfig};
use image::RgbImage;

fn fixture() -> RgbImage {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ocr/settings.png");
    image::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_rgb8()
}

/// A `w`x`h` screen covered with copies of the fixture.
fn tiled(tile: &RgbImage, w: u32, h: u32) -> RgbImage {
    RgbImage::from_fn(w, h, |x, y| {
        *tile.get_pixel(x % tile.width(), y % tile.height())
    })
}

fn bench(c: &mut Criterion) {
    let detector = TextDetector::new(TextDetectorConfig::default())
        .unwrap_or_else(|e| panic!("text detection needs ONNX Runtime and its model: {e}"));
    let tile = fixture();
    let mut group = c.benchmark_group("ocr");
    group.sample_size(10);
    for (w, h) in [(1280, 800), (1080, 2400)] {
        let screen = tiled(&tile, w, h);
        let found = detector.detect(&screen).expect("detection runs").len();
        println!("{w}x{h}: {found} text regions");
        group.bench_with_input(
            BenchmarkId::new("detect", format!("{w}x{h}")),
            &screen,
            |b, s| b.iter(|| detector.detect(black_box(s)).expect("detection runs")),
        );
    }
    let recognizer = TextRecognizer::new(TextRecognizerConfig::default())
        .unwrap_or_else(|e| panic!("text recognition needs ONNX Runtime and its model: {e}"));
    let lines: Vec<Rect> = detector
        .detect(&tile)
        .expect("detection runs")
        .into_iter()
        .map(|r| r.rect)
        .collect();
    group.bench_with_input(
        BenchmarkId::new("recognise", format!("{}-lines", lines.len())),
        &lines,
        |b, l| {
            b.iter(|| {
                recognizer
                    .recognise(&tile, black_box(l))
                    .expect("recognition runs")
            })
        },
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
