//! Tree edit distance on seeded random trees of 50, 200 and 1000 nodes, and on layout
//! trees of the size the characterisation produces. `cargo xtask ted-compare` sets the
//! same sizes side by side with the PyPI apted package.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gui_layout::{random_layout, random_tree, tree_edit_distance};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn ted(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(2016);
    let labels = ["a", "b", "c", "d", "e"];
    let mut group = c.benchmark_group("ted/random");
    group.sample_size(10);
    let sizes: &[usize] = if cfg!(debug_assertions) {
        &[50]
    } else {
        &[50, 200, 1000]
    };
    for &n in sizes {
        let a = random_tree(&mut rng, n, &labels);
        let b = random_tree(&mut rng, n, &labels);
        group.bench_with_input(BenchmarkId::from_parameter(n), &(a, b), |bench, (a, b)| {
            bench.iter(|| tree_edit_distance(a, b))
        });
    }
    group.finish();

    // A screen: up to 6 groups of up to 4 lines of up to 6 widgets.
    let a = random_layout(&mut rng, 6, 4, 6, true);
    let b = random_layout(&mut rng, 6, 4, 6, true);
    c.bench_function(
        &format!("ted/layout {}x{} nodes", a.len(), b.len()),
        |bench| bench.iter(|| tree_edit_distance(&a, &b)),
    );
}

criterion_group!(benches, ted);
criterion_main!(benches);
