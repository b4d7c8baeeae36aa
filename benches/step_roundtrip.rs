//! Criterion benches of one exploration step's parts: a device round trip (action +
//! screenshot + coverage) on the simulator and on headless Chromium at a desktop and a
//! phone viewport, and the PNG encode/decode every recorded step pays.
//!
//! `cargo bench --bench step_roundtrip`; `cargo xtask bench-step` prints the same round
//! trip as medians over a Monkey run.

use criterion::{Criterion, criterion_group, criterion_main};
use gui_core::{Action, ActionKind, Screenshot};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, SimApp, Simulator, StaticServer};

fn round_trip(device: &mut dyn Device, action: &Action) {
    device.perform(action).expect("perform");
    let shot = device.screenshot().expect("screenshot");
    let _ = device.coverage().expect("coverage");
    let _ = device.drain_signals().expect("signals");
    std::hint::black_box(shot);
}

fn simulator(c: &mut Criterion) {
    let mut sim = Simulator::new(SimApp::demo());
    let target = sim.widgets()[0].rect.center();
    let action = Action::at(ActionKind::Click, target);
    c.bench_function("step/simulator", |b| {
        b.iter(|| round_trip(&mut sim, &action))
    });
}

fn chromium(c: &mut Criterion) {
    let server = StaticServer::demo().expect("serve demo");
    let mut group = c.benchmark_group("step/chromium");
    group.sample_size(20);
    for (label, config) in [
        ("1280x800", ChromiumConfig::default()),
        ("412x915", ChromiumConfig::mobile()),
    ] {
        let mut device = ChromiumDevice::launch(&server.url(), config)
            .unwrap_or_else(|e| panic!("the Chromium bench needs Chromium: {e}"));
        let counter = device
            .element_rect("#home-counter-btn")
            .expect("evaluate")
            .expect("counter button");
        let action = Action::at(ActionKind::Click, counter.center());
        group.bench_function(label, |b| b.iter(|| round_trip(&mut device, &action)));
    }
    group.finish();
}

fn png(c: &mut Criterion) {
    let img = image::RgbImage::from_fn(1280, 800, |x, y| {
        image::Rgb([(x / 40) as u8 * 8, (y / 25) as u8 * 8, 200])
    });
    let shot = Screenshot::new(img, 1.0, 0).expect("screenshot");
    let bytes = shot.to_png().expect("encode");
    c.bench_function("png/encode 1280x800", |b| {
        b.iter(|| shot.to_png().expect("encode"))
    });
    c.bench_function("png/decode 1280x800", |b| {
        b.iter(|| Screenshot::from_png(&bytes, "bench", 1.0, 0).expect("decode"))
    });
}

criterion_group!(benches, simulator, chromium, png);
criterion_main!(benches);
