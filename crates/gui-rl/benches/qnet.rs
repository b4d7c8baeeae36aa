//! The Q-network at the paper's sizes (state 8718, action 8224: 16942 inputs → 4x512 → 1):
//! one Adam step on a dense batch of 64, and the Q-values of 40 candidate actions of one
//! state. `cargo xtask rl-bench` times the same against PyTorch in one run.
//!
//! `cargo bench -p gui-rl --bench qnet`

use criterion::{Criterion, criterion_group, criterion_main};
use gui_rl::{QBatch, QNetwork, QNetworkConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

// An unoptimised build (the test suite runs benches once) uses small sizes.
#[cfg(debug_assertions)]
const SIZES: (usize, usize) = (64, 32);
#[cfg(not(debug_assertions))]
const SIZES: (usize, usize) = (8718, 8224);

fn qnet(c: &mut Criterion) {
    let (state, action) = SIZES;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut vector =
        |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
    let states: Vec<Vec<f32>> = (0..64).map(|_| vector(state)).collect();
    let actions: Vec<Vec<f32>> = (0..64).map(|_| vector(action)).collect();
    let s: Vec<&[f32]> = states.iter().map(Vec::as_slice).collect();
    let a: Vec<&[f32]> = actions.iter().map(Vec::as_slice).collect();
    let state_of: Vec<usize> = (0..64).collect();
    let targets = vec![0.5f32; 64];
    let mut net = QNetwork::new(QNetworkConfig::new(state, action)).expect("valid config");
    let mut group = c.benchmark_group("q-network");
    group.sample_size(10);
    group.bench_function("adam step, batch 64", |b| {
        b.iter(|| {
            net.train_step(&QBatch {
                states: &s,
                state_of: &state_of,
                actions: &a,
                targets: &targets,
            })
            .unwrap()
        })
    });
    group.bench_function("q-values of 40 candidates of one state", |b| {
        b.iter(|| net.q_values(s[0], &a[..40]).unwrap())
    });
    group.finish();
}

criterion_group!(benches, qnet);
criterion_main!(benches);
