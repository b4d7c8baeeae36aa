//! Throughput of the whole microscopic state (edges, boxes, kinds, embeddings; no OCR) on
//! real screens from the fixture set: a 1280x800 desktop page and a phone page upscaled to
//! 1080x2400 (a 2.625 device-pixel-ratio phone). One rayon thread, as in the exploration
//! loop's budget (≤ 20 ms per 1280x800 screen on one core).
//!
//! `cargo bench -p gui-vision --bench vision`

use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gui_core::Screenshot;
use gui_vision::dataset::load_dataset;
use gui_vision::{EmbedConfig, ExtractConfig, Vision, VisionConfig, extract_screenshot};
use image::imageops::{FilterType, resize};

fn screens() -> Vec<(&'static str, Screenshot, ExtractConfig)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/screens");
    let entries = load_dataset(&dir).expect("fixture screens (cargo xtask vision-data --fixtures)");
    let find = |viewport: &str| {
        entries
            .iter()
            .find(|e| e.labels.viewport == viewport && e.labels.widgets.len() >= 10)
            .unwrap_or_else(|| panic!("no {viewport} fixture with 10 widgets"))
    };
    let desktop = Screenshot::load(&find("desktop").screenshot_path).unwrap();
    let phone = Screenshot::load(&find("mobile").screenshot_path).unwrap();
    let big = resize(phone.pixels(), 1080, 2400, FilterType::Triangle);
    let big = Screenshot::new(big, 2.625, 0).unwrap();
    vec![
        ("1280x800", desktop, ExtractConfig::web()),
        ("1080x2400", big, ExtractConfig::mobile()),
    ]
}

fn bench(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut group = c.benchmark_group("screen_vision");
    if cfg!(debug_assertions) {
        group.sample_size(10);
    }
    group.throughput(Throughput::Elements(1));
    for (name, shot, extract) in screens() {
        group.bench_function(format!("extract/{name}"), |b| {
            b.iter(|| pool.install(|| extract_screenshot(&shot, &extract).unwrap()))
        });
        for (label, embed) in [
            ("mask", EmbedConfig::default()),
            ("paper", EmbedConfig::paper()),
        ] {
            let vision = Vision::shipped(VisionConfig {
                extract: extract.clone(),
                embed,
            })
            .unwrap();
            group.bench_function(format!("state_{label}/{name}"), |b| {
                b.iter(|| pool.install(|| vision.analyse(&shot).unwrap()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
