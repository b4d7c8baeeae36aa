//! Louvain community detection: hand-computed modularities, planted partitions, seeds
//! and weights.

use gui_llm::{LouvainConfig, Partition, WeightedGraph, louvain, modularity};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn graph(n: usize, edges: &[(usize, usize, f64)]) -> WeightedGraph {
    let mut g = WeightedGraph::new(n);
    for &(a, b, w) in edges {
        g.add_edge(a, b, w);
    }
    g
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Two 5-cliques, nodes 0..5 and 5..10, joined by the edge 4-5; weight 1 everywhere.
fn two_cliques() -> WeightedGraph {
    let mut g = WeightedGraph::new(10);
    for base in [0, 5] {
        for a in base..base + 5 {
            for b in a + 1..base + 5 {
                g.add_edge(a, b, 1.0);
            }
        }
    }
    g.add_edge(4, 5, 1.0);
    g
}

/// The Adjusted Rand Index of two labellings: 1 for the same partition, about 0 for
/// unrelated ones.
fn adjusted_rand_index(a: &[usize], b: &[usize]) -> f64 {
    assert_eq!(a.len(), b.len());
    let pairs = |x: f64| x * (x - 1.0) / 2.0;
    let (ka, kb) = (
        a.iter().max().map_or(0, |m| m + 1),
        b.iter().max().map_or(0, |m| m + 1),
    );
    let mut table = vec![vec![0.0; kb]; ka];
    let (mut rows, mut cols) = (vec![0.0; ka], vec![0.0; kb]);
    for (&x, &y) in a.iter().zip(b) {
        table[x][y] += 1.0;
        rows[x] += 1.0;
        cols[y] += 1.0;
    }
    let index: f64 = table.iter().flatten().map(|&c| pairs(c)).sum();
    let sum_rows: f64 = rows.iter().map(|&c| pairs(c)).sum();
    let sum_cols: f64 = cols.iter().map(|&c| pairs(c)).sum();
    let expected = sum_rows * sum_cols / pairs(a.len() as f64);
    let max = (sum_rows + sum_cols) / 2.0;
    (index - expected) / (max - expected)
}

#[test]
fn two_cliques_joined_by_an_edge_split_into_the_cliques() {
    let g = two_cliques();
    let p = louvain(&g, &LouvainConfig::default());
    assert_eq!(p.community, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    // m = 21; each clique holds 10 of it and has degree sum 2*10 + 1 = 21:
    // Q = 2 * (10/21 - (21/42)^2) = 20/21 - 1/2 = 19/42.
    assert!(close(p.modularity, 19.0 / 42.0), "{}", p.modularity);
    assert!(close(modularity(&g, &p.community, 1.0), p.modularity));
    assert!(p.levels >= 1);
}

#[test]
fn one_community_has_zero_modularity() {
    let mut g = two_cliques();
    g.add_edge(3, 3, 2.5);
    g.add_edge(0, 9, 0.5);
    // All weight is internal and the single degree sum is 2m: Q = 1 - (2m)^2/(2m)^2.
    assert!(close(modularity(&g, &[7; 10], 1.0), 0.0));
}

#[test]
fn modularity_of_small_partitions_matches_hand_computation() {
    // Path 0-1-2-3, partition {0,1} {2,3}: m = 3, internal 1 + 1, degree sums 3 and 3.
    let path = graph(4, &[(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)]);
    // Q = 2/3 - (9 + 9)/36 = 1/6; at resolution 2 the null term doubles: 2/3 - 1 = -1/3.
    assert!(close(modularity(&path, &[0, 0, 1, 1], 1.0), 1.0 / 6.0));
    assert!(close(modularity(&path, &[5, 5, 2, 2], 2.0), -1.0 / 3.0));
    // A self-loop of weight 1 on node 2: k = (1, 3, 4), m = 4. Partition {0} {1,2}:
    // internal 2 + 1 = 3, degree sums 1 and 7: Q = 3/4 - (1 + 49)/64 = -1/32
    // (networkx.community.modularity gives -0.03125 on the same graph).
    let looped = graph(3, &[(0, 1, 1.0), (1, 2, 2.0), (2, 2, 1.0)]);
    assert!(close(modularity(&looped, &[0, 1, 1], 1.0), -1.0 / 32.0));
    // Parallel edges add up: the same graph with 1-2 given as 0.5 + 1.5.
    let parallel = graph(3, &[(0, 1, 1.0), (1, 2, 0.5), (2, 1, 1.5), (2, 2, 1.0)]);
    assert!(close(modularity(&parallel, &[0, 1, 1], 1.0), -1.0 / 32.0));
}

/// Four groups of 25 nodes; an edge inside a group with probability 0.5, across with 0.02.
fn planted(seed: u64) -> (WeightedGraph, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let truth: Vec<usize> = (0..100).map(|i| i / 25).collect();
    let mut g = WeightedGraph::new(100);
    for a in 0..100 {
        for b in a + 1..100 {
            let p = if truth[a] == truth[b] { 0.5 } else { 0.02 };
            if rng.random_bool(p) {
                g.add_edge(a, b, 1.0);
            }
        }
    }
    (g, truth)
}

#[test]
fn planted_partition_is_recovered() {
    for graph_seed in 1..=5 {
        let (g, truth) = planted(graph_seed);
        for seed in 0..3 {
            let p = louvain(
                &g,
                &LouvainConfig {
                    seed,
                    ..LouvainConfig::default()
                },
            );
            let ari = adjusted_rand_index(&p.community, &truth);
            assert!(
                ari >= 0.95,
                "graph {graph_seed}, seed {seed}: ARI {ari}, {} communities",
                p.count()
            );
            assert!(p.modularity >= modularity(&g, &truth, 1.0) - 0.01);
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_partition() {
    let (g, _) = planted(9);
    let config = |seed| LouvainConfig {
        seed,
        ..LouvainConfig::default()
    };
    let runs: Vec<Partition> = (0..2).map(|_| louvain(&g, &config(42))).collect();
    assert_eq!(runs[0], runs[1]);
    // Other seeds visit nodes in other orders but still give a consistent result.
    for seed in 0..5 {
        let p = louvain(&g, &config(seed));
        assert!(close(p.modularity, modularity(&g, &p.community, 1.0)));
    }
}

#[test]
fn weights_decide_the_split() {
    // The same 4-cycle twice, with the heavy edges on opposite sides.
    let heavy_01_23 = graph(4, &[(0, 1, 5.0), (1, 2, 1.0), (2, 3, 5.0), (3, 0, 1.0)]);
    let heavy_12_30 = graph(4, &[(0, 1, 1.0), (1, 2, 5.0), (2, 3, 1.0), (3, 0, 5.0)]);
    let config = LouvainConfig::default();
    assert_eq!(louvain(&heavy_01_23, &config).community, [0, 0, 1, 1]);
    assert_eq!(louvain(&heavy_12_30, &config).community, [0, 1, 1, 0]);
    // m = 12, each pair holds 5 and has degree sum 12: Q = 10/12 - 2 * (12/24)^2 = 1/3.
    assert!(close(louvain(&heavy_01_23, &config).modularity, 1.0 / 3.0));
}

#[test]
fn a_graph_without_weight_leaves_every_node_alone() {
    let config = LouvainConfig::default();
    for g in [WeightedGraph::new(5), graph(5, &[(0, 1, 0.0), (3, 4, 0.0)])] {
        let p = louvain(&g, &config);
        assert_eq!(p.community, [0, 1, 2, 3, 4]);
        assert_eq!(p.modularity, 0.0);
        assert_eq!(p.levels, 0);
        assert_eq!(modularity(&g, &p.community, 1.0), 0.0);
    }
    assert!(
        louvain(&WeightedGraph::new(0), &config)
            .community
            .is_empty()
    );
}

#[test]
fn isolated_nodes_stay_alone() {
    // The two cliques on nodes 0..10, and nodes 10..13 without edges (12 with a
    // zero-weight edge to 0, 11 with only a self-loop).
    let mut g = WeightedGraph::new(13);
    for a in 0..10 {
        for b in a + 1..10 {
            if (a < 5) == (b < 5) {
                g.add_edge(a, b, 1.0);
            }
        }
    }
    g.add_edge(4, 5, 1.0);
    g.add_edge(12, 0, 0.0);
    g.add_edge(11, 11, 1.0);
    let p = louvain(&g, &LouvainConfig::default());
    assert_eq!(p.community, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 3, 4]);
}

#[test]
fn communities_are_numbered_by_their_first_node() {
    // Clique A on the even nodes, clique B on the odd ones.
    let mut g = WeightedGraph::new(8);
    for a in 0..8 {
        for b in (a + 2..8).step_by(2) {
            g.add_edge(a, b, 1.0);
        }
    }
    g.add_edge(0, 1, 0.1);
    let p = louvain(&g, &LouvainConfig::default());
    assert_eq!(p.community, [0, 1, 0, 1, 0, 1, 0, 1]);
    assert_eq!(p.members(), [vec![0, 2, 4, 6], vec![1, 3, 5, 7]]);
}

#[test]
fn resolution_trades_community_size() {
    // A ring of 12 triangles joined by single edges: at resolution 1 some neighbouring
    // triangles merge, at a high resolution each triangle is alone.
    let mut g = WeightedGraph::new(36);
    for t in 0..12 {
        let b = 3 * t;
        g.add_edge(b, b + 1, 1.0);
        g.add_edge(b + 1, b + 2, 1.0);
        g.add_edge(b, b + 2, 1.0);
        g.add_edge(b + 2, (b + 3) % 36, 1.0);
    }
    let at = |resolution| {
        louvain(
            &g,
            &LouvainConfig {
                resolution,
                ..LouvainConfig::default()
            },
        )
        .count()
    };
    assert_eq!(at(4.0), 12);
    assert!(at(1.0) < 12);
    assert!(at(0.05) < at(1.0));
}

/// Zachary's karate club (unweighted, 34 members, 78 friendships).
const KARATE: [(usize, usize); 78] = [
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 5),
    (0, 6),
    (0, 7),
    (0, 8),
    (0, 10),
    (0, 11),
    (0, 12),
    (0, 13),
    (0, 17),
    (0, 19),
    (0, 21),
    (0, 31),
    (1, 2),
    (1, 3),
    (1, 7),
    (1, 13),
    (1, 17),
    (1, 19),
    (1, 21),
    (1, 30),
    (2, 3),
    (2, 7),
    (2, 8),
    (2, 9),
    (2, 13),
    (2, 27),
    (2, 28),
    (2, 32),
    (3, 7),
    (3, 12),
    (3, 13),
    (4, 6),
    (4, 10),
    (5, 6),
    (5, 10),
    (5, 16),
    (6, 16),
    (8, 30),
    (8, 32),
    (8, 33),
    (9, 33),
    (13, 33),
    (14, 32),
    (14, 33),
    (15, 32),
    (15, 33),
    (18, 32),
    (18, 33),
    (19, 33),
    (20, 32),
    (20, 33),
    (22, 32),
    (22, 33),
    (23, 25),
    (23, 27),
    (23, 29),
    (23, 32),
    (23, 33),
    (24, 25),
    (24, 27),
    (24, 31),
    (25, 31),
    (26, 29),
    (26, 33),
    (27, 33),
    (28, 31),
    (28, 33),
    (29, 32),
    (29, 33),
    (30, 32),
    (30, 33),
    (31, 32),
    (31, 33),
    (32, 33),
];

#[test]
fn karate_club_reaches_the_known_modularity() {
    let mut g = WeightedGraph::new(34);
    for (a, b) in KARATE {
        g.add_edge(a, b, 1.0);
    }
    // The best partition has Q = 0.4198. Louvain is greedy: over 300 seeds networkx's
    // finds 0.4188 or 0.4198 in 57% of them, 0.4151 to 0.4156 in 34% and 0.389 to 0.398
    // in the rest (mean 0.4149). Ours must do as well over 100 seeds.
    let qs: Vec<f64> = (0..100)
        .map(|seed| {
            louvain(
                &g,
                &LouvainConfig {
                    seed,
                    ..LouvainConfig::default()
                },
            )
            .modularity
        })
        .collect();
    let mean = qs.iter().sum::<f64>() / qs.len() as f64;
    let best = qs.iter().copied().fold(f64::MIN, f64::max);
    let worst = qs.iter().copied().fold(f64::MAX, f64::min);
    assert!(mean >= 0.41, "mean Q {mean} over 100 seeds");
    assert!(worst >= 0.38, "worst Q {worst}");
    assert!((0.4197..=0.4198).contains(&best), "best Q {best}");
}
