//! Laws of the tree edit distance, checked on many seeded random trees, and agreement with
//! a direct evaluation of the recursive definition on tiny trees.

use std::collections::HashMap;

use gui_layout::{
    LayoutTree, NodeId, TedCost, layout_similarity, random_layout, random_tree, tree_edit_distance,
    tree_edit_distance_with,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const LABELS: &[&str] = &["a", "b", "c"];

fn trees(seed: u64, count: usize, max_nodes: usize) -> Vec<LayoutTree> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.random_range(1..=max_nodes);
            random_tree(&mut rng, n, LABELS)
        })
        .collect()
}

/// A plain recursive tree, for the reference evaluation.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Node {
    label: String,
    children: Vec<Node>,
}

fn to_node(t: &LayoutTree, n: NodeId) -> Node {
    Node {
        label: t.label(n).to_owned(),
        children: t.children(n).iter().map(|c| to_node(t, *c)).collect(),
    }
}

/// Forest distance straight from its recursive definition (Zhang & Shasha 1989, Lemma 3),
/// memoised; exponential in general, fine for trees of a handful of nodes.
fn reference(f: &[Node], g: &[Node], memo: &mut HashMap<(Vec<Node>, Vec<Node>), u32>) -> u32 {
    if f.is_empty() && g.is_empty() {
        return 0;
    }
    let key = (f.to_vec(), g.to_vec());
    if let Some(&d) = memo.get(&key) {
        return d;
    }
    // Remove the root of the rightmost tree: its children take its place.
    let without_root = |forest: &[Node]| {
        let mut rest = forest[..forest.len() - 1].to_vec();
        rest.extend(forest[forest.len() - 1].children.iter().cloned());
        rest
    };
    let d = if g.is_empty() {
        1 + reference(&without_root(f), g, memo)
    } else if f.is_empty() {
        1 + reference(f, &without_root(g), memo)
    } else {
        let (v, w) = (&f[f.len() - 1], &g[g.len() - 1]);
        let delete = 1 + reference(&without_root(f), g, memo);
        let insert = 1 + reference(f, &without_root(g), memo);
        let matched = reference(&f[..f.len() - 1], &g[..g.len() - 1], memo)
            + reference(&v.children, &w.children, memo)
            + u32::from(v.label != w.label);
        delete.min(insert).min(matched)
    };
    memo.insert(key, d);
    d
}

#[test]
fn agrees_with_the_recursive_definition_on_tiny_trees() {
    let ts = trees(1, 40, 6);
    let mut memo = HashMap::new();
    for a in &ts {
        for b in &ts {
            let want = reference(&[to_node(a, a.root())], &[to_node(b, b.root())], &mut memo);
            assert_eq!(tree_edit_distance(a, b), f64::from(want), "{a} vs {b}");
        }
    }
}

#[test]
fn is_a_metric_bounded_by_the_sizes() {
    let ts = trees(2, 30, 25);
    for a in &ts {
        assert_eq!(tree_edit_distance(a, a), 0.0);
        for b in &ts {
            let d = tree_edit_distance(a, b);
            assert_eq!(d, tree_edit_distance(b, a), "symmetry: {a} {b}");
            assert!(d <= (a.len() + b.len()) as f64);
            // Never less than the size difference (each insert or delete changes size by 1).
            assert!(d >= (a.len() as f64 - b.len() as f64).abs());
            if a != b {
                assert!(d > 0.0);
            }
            let s = layout_similarity(a, b);
            assert!((0.0..=1.0).contains(&s));
            for c in ts.iter().step_by(3) {
                assert!(
                    d <= tree_edit_distance(a, c) + tree_edit_distance(c, b) + 1e-9,
                    "triangle: {a} {b} {c}"
                );
            }
        }
    }
}

#[test]
fn both_decompositions_give_the_same_distance() {
    // Mirroring both trees mirrors every edit script, so the distance is unchanged; the
    // algorithm picks a decomposition by cost, so this exercises both paths.
    let ts = trees(3, 25, 40);
    for a in &ts {
        for b in &ts {
            assert_eq!(
                tree_edit_distance(a, b),
                tree_edit_distance(&a.mirrored(), &b.mirrored())
            );
        }
    }
}

struct Weighted;

impl TedCost for Weighted {
    fn delete(&self, l: &str) -> f64 {
        if l == "a" { 2.0 } else { 1.0 }
    }
    fn insert(&self, l: &str) -> f64 {
        self.delete(l)
    }
    fn rename(&self, from: &str, to: &str) -> f64 {
        if from == to { 0.0 } else { 1.5 }
    }
}

#[test]
fn pluggable_costs_are_used() {
    let a = LayoutTree::parse("{a{a}{b}}").unwrap();
    let b = LayoutTree::parse("{a{b}}").unwrap();
    // Deleting the inner `a` costs 2 under these costs (1 with unit costs).
    assert_eq!(tree_edit_distance(&a, &b), 1.0);
    assert_eq!(tree_edit_distance_with(&a, &b, &Weighted), 2.0);
    let c = LayoutTree::parse("{c{a}{b}}").unwrap();
    assert_eq!(tree_edit_distance_with(&a, &c, &Weighted), 1.5);
    // Weighted costs still satisfy the metric laws on random trees.
    let ts = trees(4, 15, 15);
    for x in &ts {
        for y in &ts {
            let d = tree_edit_distance_with(x, y, &Weighted);
            assert_eq!(d, tree_edit_distance_with(y, x, &Weighted));
            for z in &ts {
                assert!(
                    d <= tree_edit_distance_with(x, z, &Weighted)
                        + tree_edit_distance_with(z, y, &Weighted)
                        + 1e-9
                );
            }
        }
    }
}

#[test]
fn layouts_round_trip_and_compare() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..50 {
        let t = random_layout(&mut rng, 4, 3, 5, true);
        assert_eq!(t.depth(), 4);
        let back = LayoutTree::parse(&t.to_bracket()).unwrap();
        assert_eq!(back, t);
        assert_eq!(layout_similarity(&t, &back), 1.0);
    }
}
