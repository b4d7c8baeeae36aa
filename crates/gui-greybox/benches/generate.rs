//! Test-case generation at the size of the paper's smallest subject (TerpWord, Table 2:
//! 159 events, 4,229 EFG edges, 4,100 EDG edges), on seeded random graphs: configurations
//! B (black-box, len 2), D (grey-box, len 2, top ∞) and E (grey-box, len 3, top 50).
//! Criterion's throughput is test cases per second; the paper reports 0.12-0.32 s per
//! event sequence (Table 4), the target here is 1 ms. A second group times building the
//! EDG (Algorithm 1) with `Edg::drop_overwritten` on the same EFG.
//!
//! `cargo bench -p gui-greybox --bench generate`

use std::collections::BTreeSet;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gui_greybox::{Edg, Efg, Event, EventKind, Mode, ReadWrite, plan};

/// xorshift64*: enough randomness for graph shapes, and the same graph every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// An EFG of `windows` windows: the events of a window follow each other, the first
/// event of each window opens the next one, and its last event closes it.
fn graphs(events: usize, efg_edges: usize, edg_edges: usize, seed: u64) -> (Efg, Edg) {
    let mut rng = Rng(seed);
    let mut efg = Efg::default();
    for i in 0..events {
        efg.add_event(Event {
            id: format!("e{i}"),
            label: format!("e{i}"),
            window: String::new(),
            kind: EventKind::Click,
            handlers: vec![],
        });
    }
    efg.initial = (0..events / 8).collect();
    let mut edges = BTreeSet::new();
    while edges.len() < efg_edges {
        let a = rng.next(events);
        // Mostly within a neighbourhood, as windows group events.
        let b = (a + rng.next(events / 4) + events - events / 8) % events;
        edges.insert((a, b));
    }
    for (a, b) in edges {
        efg.follows[a].insert(b);
    }
    let mut dep = BTreeSet::new();
    while dep.len() < edg_edges {
        dep.insert((rng.next(events), rng.next(events), 1 + rng.next(3)));
    }
    let dep: Vec<_> = dep.into_iter().collect();
    (efg, Edg::from_edges(events, &dep))
}

fn bench(c: &mut Criterion) {
    let (efg, edg) = graphs(159, 4229, 4100, 7);
    let mut group = c.benchmark_group("generate-terpword-size");
    if cfg!(debug_assertions) {
        group.sample_size(10);
    }
    for (name, mode) in [
        ("B", Mode::Blackbox { len: 2 }),
        ("D", Mode::Greybox { len: 2, top: None }),
        (
            "E",
            Mode::Greybox {
                len: 3,
                top: Some(50),
            },
        ),
    ] {
        let n = plan(&efg, &edg, mode).generated.sequences.len();
        eprintln!("generate: configuration {name}: {n} test cases");
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(name), &mode, |b, &m| {
            b.iter(|| plan(black_box(&efg), black_box(&edg), m));
        });
    }
    group.finish();

    // Algorithm 1 plus dropping fields overwritten on the way, on the same EFG: every
    // event reads four and writes two of 50 fields, which gives an EDG of about TerpWord's
    // size.
    let mut rng = Rng(11);
    let field = |rng: &mut Rng| format!("f{}", rng.next(50));
    let rw: Vec<ReadWrite> = (0..efg.len())
        .map(|_| ReadWrite {
            reads: (0..4).map(|_| field(&mut rng)).collect(),
            writes: (0..2).map(|_| field(&mut rng)).collect(),
        })
        .collect();
    let mut edg = Edg::build(&rw);
    let before = edg.edge_count();
    let dropped = edg.drop_overwritten(&efg, &rw);
    eprintln!("generate: EDG of {before} edges, {dropped} dropped as overwritten on the way");
    let mut group = c.benchmark_group("edg-terpword-size");
    if cfg!(debug_assertions) {
        group.sample_size(10);
    }
    group.throughput(Throughput::Elements(before as u64));
    group.bench_function("build+drop_overwritten", |b| {
        b.iter(|| {
            let mut edg = Edg::build(black_box(&rw));
            edg.drop_overwritten(black_box(&efg), &rw);
            edg
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
