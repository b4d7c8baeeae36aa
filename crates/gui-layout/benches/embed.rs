//! One embedding with the shipped LSTM layout embedder (target: ≤ 1 ms).
//!
//! `cargo bench -p gui-layout --features lstm --bench embed`

use criterion::{Criterion, criterion_group, criterion_main};
use gui_layout::{LayoutEmbedder, LayoutTree};

/// A settings-like page: 4 groups, 8 lines, 16 widgets (29 nodes, 42 tokens), about the
/// mean size of the training layouts.
const TYPICAL: &str = "{screen\
{group{line{w:image_button}{w:text_view}{w:icon}}}\
{group{line{w:text_view}}{line{w:edit_text}}{line{w:button}{w:button}}}\
{group{line{w:check_box}{w:text_view}}{line{w:switch}{w:text_view}}{line{w:list_item}}}\
{group{line{w:tab}{w:tab}{w:tab}{w:tab}}}}";

fn embed(c: &mut Criterion) {
    let embedder = LayoutEmbedder::shipped().expect("shipped weights in crates/gui-layout/models");
    let typical = LayoutTree::parse(TYPICAL).expect("valid bracket string");
    c.bench_function("embed typical layout (29 nodes)", |b| {
        b.iter(|| embedder.embed(std::hint::black_box(&typical)).unwrap())
    });
    // The largest layout the training generator can draw: 4 groups × 3 lines × 4 widgets.
    let mut large = LayoutTree::new("screen");
    for _ in 0..4 {
        let g = large.add_child(large.root(), "group");
        for _ in 0..3 {
            let l = large.add_child(g, "line");
            for _ in 0..4 {
                large.add_child(l, "w:button");
            }
        }
    }
    c.bench_function("embed largest training layout (65 nodes)", |b| {
        b.iter(|| embedder.embed(std::hint::black_box(&large)).unwrap())
    });
}

criterion_group!(benches, embed);
criterion_main!(benches);
