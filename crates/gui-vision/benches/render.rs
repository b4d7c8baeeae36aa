//! Time to tell one screen's rendering state (AdaT RQ1's inference time), resize
//! included, on one core: the MobileNet (RGB and gray input), the 3-layer CNN baseline
//! and the consecutive-frame check (one comparison with the previous screenshot, every
//! pixel compared) on a 1280x800 screen. Weights are freshly seeded: the time does not depend on their values.
//! Prints medians and ratios to the MobileNet before criterion's own measurements.
//!
//! `RAYON_NUM_THREADS=1 cargo bench -p gui-vision --bench render`
//! (candle's matrix products read the thread count from the environment; the bench also
//! runs everything in a one-thread rayon pool).

use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gui_core::Screenshot;
use gui_vision::render::{
    ConsecutiveFrameJudge, InputColor, RenderJudge, RenderNet, RenderNetConfig,
};
use gui_vision::synthetic_gui_screen;

fn judges() -> Vec<(&'static str, Box<dyn RenderJudge>)> {
    let net = |config| Box::new(RenderNet::new(config).unwrap()) as Box<dyn RenderJudge>;
    vec![
        ("mobilenet", net(RenderNetConfig::default())),
        (
            "mobilenet_gray",
            net(RenderNetConfig {
                color: InputColor::Gray,
                ..RenderNetConfig::default()
            }),
        ),
        ("cnn3", net(RenderNetConfig::cnn3())),
        (
            "consecutive_frame",
            Box::new(ConsecutiveFrameJudge::default()),
        ),
    ]
}

fn median_ms(judge: &mut dyn RenderJudge, shots: &[Screenshot; 2], runs: usize) -> f64 {
    judge.prob_full(&shots[1]).unwrap();
    let mut times: Vec<f64> = (0..runs)
        .map(|i| {
            let shot = &shots[i % 2];
            let t = Instant::now();
            std::hint::black_box(judge.prob_full(shot).unwrap());
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn bench(c: &mut Criterion) {
    if std::env::var("RAYON_NUM_THREADS").as_deref() != Ok("1") {
        eprintln!(
            "render bench: set RAYON_NUM_THREADS=1 to keep candle's matrix products on one core"
        );
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let shot = Screenshot::new(synthetic_gui_screen(1280, 800, 1), 1.0, 0).unwrap();
    // The same screen with faint noise: equal within the tolerance but not byte-identical,
    // so the consecutive-frame check compares every pixel (its worst case).
    let mut noisy = shot.pixels().clone();
    for (i, p) in noisy.pixels_mut().enumerate() {
        if i % 7 == 0 {
            p.0[0] = p.0[0].saturating_add(3);
        }
    }
    let shots = [shot.clone(), Screenshot::new(noisy, 1.0, 0).unwrap()];
    let runs = if cfg!(debug_assertions) { 21 } else { 201 };
    let mut judges = judges();
    let medians: Vec<(&str, f64)> = judges
        .iter_mut()
        .map(|(name, judge)| {
            (
                *name,
                pool.install(|| median_ms(judge.as_mut(), &shots, runs)),
            )
        })
        .collect();
    let base = medians[0].1;
    for (name, ms) in &medians {
        eprintln!(
            "render bench: {name:>18} {ms:7.3} ms per 1280x800 screen ({:.2}x mobilenet)",
            ms / base
        );
    }

    // The resize alone (part of every network's time above).
    let net = RenderNet::new(RenderNetConfig::default()).unwrap();
    let mut resize: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(net.prepare(shot.pixels()));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    resize.sort_by(f64::total_cmp);
    eprintln!(
        "render bench: {:>18} {:7.3} ms per 1280x800 screen (included above)",
        "resize_192x112",
        resize[runs / 2]
    );

    let mut group = c.benchmark_group("render_state");
    if cfg!(debug_assertions) {
        group.sample_size(10);
    }
    group.throughput(Throughput::Elements(1));
    group.bench_function("resize_192x112/1280x800", |b| {
        b.iter(|| net.prepare(shot.pixels()))
    });
    for (name, judge) in &mut judges {
        let mut i = 0;
        group.bench_function(format!("{name}/1280x800"), |b| {
            b.iter(|| {
                i += 1;
                pool.install(|| judge.prob_full(&shots[i % 2]).unwrap())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
