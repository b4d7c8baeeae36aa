//! Canny on synthetic GUI screenshots: ours on one thread and on all threads, against
//! `imageproc::edges::canny`, at 1080x1920 (phone, portrait) and 1280x800 (desktop).
//!
//! `cargo bench -p gui-vision --no-default-features --bench canny`; `cargo xtask
//! canny-compare` adds OpenCV side by side.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gui_vision::{CannyConfig, canny, synthetic_gui_screen, to_gray};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let config = CannyConfig::default();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let mut group = c.benchmark_group("canny");
    // Unoptimised builds (`cargo test --all-targets` runs benches once) only need to work.
    if cfg!(debug_assertions) {
        group.sample_size(10);
    }
    for (w, h) in [(1080, 1920), (1280, 800)] {
        let rgb = synthetic_gui_screen(w, h, 1);
        let gray = to_gray(&rgb);
        let size = format!("{w}x{h}");
        group.bench_with_input(BenchmarkId::new("ours-1-thread", &size), &gray, |b, g| {
            b.iter(|| one.install(|| canny(black_box(g), &config).expect("valid input")));
        });
        group.bench_with_input(
            BenchmarkId::new("ours-all-threads", &size),
            &gray,
            |b, g| {
                b.iter(|| canny(black_box(g), &config).expect("valid input"));
            },
        );
        group.bench_with_input(BenchmarkId::new("imageproc", &size), &gray, |b, g| {
            b.iter(|| imageproc::edges::canny(black_box(g), config.low, config.high));
        });
        group.bench_with_input(BenchmarkId::new("to-gray-1-thread", &size), &rgb, |b, i| {
            b.iter(|| one.install(|| to_gray(black_box(i))));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
