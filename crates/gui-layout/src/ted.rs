//! Exact tree edit distance.
//!
//! Zhang and Shasha's algorithm over keyroots, in the strategy-choosing spirit of RTED and
//! APTED (Pawlik & Augsten): the classic algorithm decomposes both trees along leftmost
//! paths; running it on the mirrored trees decomposes along rightmost paths instead. The
//! number of subproblems of each choice is known up front (the product of the keyroot
//! subtree sizes), so we run the cheaper one. Time O(n_A n_B · min(depth, leaves)²) at
//! worst for that choice, memory O(n_A n_B).

use crate::LayoutTree;

/// Costs of the three edit operations. Implementations must be non-negative, and for a
/// metric `rename(a, a) == 0` and `rename` symmetric with `delete == insert`.
pub trait TedCost {
    fn delete(&self, label: &str) -> f64;
    fn insert(&self, label: &str) -> f64;
    fn rename(&self, from: &str, to: &str) -> f64;
}

/// Every operation costs 1; renaming to the same label costs 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitCost;

impl TedCost for UnitCost {
    fn delete(&self, _: &str) -> f64 {
        1.0
    }
    fn insert(&self, _: &str) -> f64 {
        1.0
    }
    fn rename(&self, from: &str, to: &str) -> f64 {
        if from == to { 0.0 } else { 1.0 }
    }
}

/// Tree edit distance with unit costs.
pub fn tree_edit_distance(a: &LayoutTree, b: &LayoutTree) -> f64 {
    tree_edit_distance_with(a, b, &UnitCost)
}

/// Layout similarity, Eq. 2: `1 - d(A, B) / max(n_A, n_B)` with unit costs, in `[0, 1]`.
pub fn layout_similarity(a: &LayoutTree, b: &LayoutTree) -> f64 {
    let n = a.len().max(b.len()) as f64;
    (1.0 - tree_edit_distance(a, b) / n).clamp(0.0, 1.0)
}

/// Tree edit distance with pluggable costs.
pub fn tree_edit_distance_with(a: &LayoutTree, b: &LayoutTree, cost: &impl TedCost) -> f64 {
    let (la, lb) = (Indexed::new(a, false), Indexed::new(b, false));
    let (ra, rb) = (Indexed::new(a, true), Indexed::new(b, true));
    let (left, right) = (
        la.keyroot_work() * lb.keyroot_work(),
        ra.keyroot_work() * rb.keyroot_work(),
    );
    if left <= right {
        zhang_shasha(&la, &lb, cost)
    } else {
        zhang_shasha(&ra, &rb, cost)
    }
}

/// A tree in postorder: labels, leftmost leaf of each node, keyroots.
struct Indexed<'t> {
    labels: Vec<&'t str>,
    /// Postorder index (0-based) of the leftmost leaf below each node.
    lml: Vec<u32>,
    /// The highest node of each leftmost leaf: every node whose leftmost leaf differs from
    /// its parent's, plus the root. Ascending.
    keyroots: Vec<u32>,
}

impl<'t> Indexed<'t> {
    /// Postorder of `t`, or of its mirror image (children right to left) when `mirror`.
    fn new(t: &'t LayoutTree, mirror: bool) -> Self {
        let order = if mirror {
            t.mirrored_postorder()
        } else {
            t.postorder()
        };
        let n = order.len();
        let mut index = vec![0u32; n];
        for (i, node) in order.iter().enumerate() {
            index[node.0 as usize] = i as u32;
        }
        let mut lml = vec![0u32; n];
        for (i, node) in order.iter().enumerate() {
            // Children come before their parent in postorder, so theirs are known.
            let kids = t.children(*node);
            let first = if mirror { kids.last() } else { kids.first() };
            lml[i] = match first {
                Some(c) => lml[index[c.0 as usize] as usize],
                None => i as u32,
            };
        }
        // A node is a keyroot when no later (higher) node shares its leftmost leaf.
        let mut seen = vec![false; n];
        let mut keyroots = Vec::new();
        for i in (0..n).rev() {
            let l = lml[i] as usize;
            if !seen[l] {
                seen[l] = true;
                keyroots.push(i as u32);
            }
        }
        keyroots.reverse();
        let labels = order.iter().map(|n| t.label(*n)).collect();
        Self {
            labels,
            lml,
            keyroots,
        }
    }

    /// Sum of the keyroots' subtree sizes: the work of one side of Zhang–Shasha.
    fn keyroot_work(&self) -> u64 {
        self.keyroots
            .iter()
            .map(|&k| u64::from(k - self.lml[k as usize] + 1))
            .sum()
    }
}

fn zhang_shasha(a: &Indexed<'_>, b: &Indexed<'_>, cost: &impl TedCost) -> f64 {
    let (na, nb) = (a.labels.len(), b.labels.len());
    let del: Vec<f64> = a.labels.iter().map(|l| cost.delete(l)).collect();
    let ins: Vec<f64> = b.labels.iter().map(|l| cost.insert(l)).collect();
    // Labels interned so renames are looked up, not recomputed, in the inner loop.
    let (ids_a, ids_b, rename) = rename_table(&a.labels, &b.labels, cost);
    let stride_ids = ids_b.iter().copied().max().map_or(1, |m| m as usize + 1);

    let mut td = vec![0.0f64; na * nb];
    // Forest distances for one keyroot pair; row r = prefix of A's forest of length r.
    let mut fd = vec![0.0f64; (na + 1) * (nb + 1)];
    for &ka in &a.keyroots {
        let la = a.lml[ka as usize] as usize;
        let ka = ka as usize;
        let rows = ka - la + 2;
        for &kb in &b.keyroots {
            let lb = b.lml[kb as usize] as usize;
            let kb = kb as usize;
            let cols = kb - lb + 2;
            // fd[r][c]: distance between A[la..la+r) and B[lb..lb+c) as forests.
            fd[0] = 0.0;
            for c in 1..cols {
                fd[c] = fd[c - 1] + ins[lb + c - 1];
            }
            for r in 1..rows {
                let i = la + r - 1;
                let row = r * cols;
                let prev = row - cols;
                fd[row] = fd[prev] + del[i];
                let li = a.lml[i] as usize;
                let di = del[i];
                let rename_row = ids_a[i] as usize * stride_ids;
                for c in 1..cols {
                    let j = lb + c - 1;
                    let lj = b.lml[j] as usize;
                    let via_del = fd[prev + c] + di;
                    let via_ins = fd[row + c - 1] + ins[j];
                    let best = via_del.min(via_ins);
                    fd[row + c] = if li == la && lj == lb {
                        // Both prefixes are whole trees: match the roots.
                        let d = best.min(fd[prev + c - 1] + rename[rename_row + ids_b[j] as usize]);
                        td[i * nb + j] = d;
                        d
                    } else {
                        // Match the trees rooted at i and j as a unit, plus the forests
                        // before them.
                        best.min(fd[(li - la) * cols + (lj - lb)] + td[i * nb + j])
                    };
                }
            }
        }
    }
    td[(na - 1) * nb + (nb - 1)]
}

/// Dense ids for labels, in order of first appearance.
fn intern<'l>(labels: &[&'l str]) -> (Vec<u32>, Vec<&'l str>) {
    let mut ids: std::collections::HashMap<&'l str, u32> = std::collections::HashMap::new();
    let mut uniq = Vec::new();
    let v = labels
        .iter()
        .map(|&l| {
            *ids.entry(l).or_insert_with(|| {
                uniq.push(l);
                uniq.len() as u32 - 1
            })
        })
        .collect();
    (v, uniq)
}

/// Interns the labels of both trees and tabulates the rename cost between them.
fn rename_table(a: &[&str], b: &[&str], cost: &impl TedCost) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    let (ids_a, uniq_a) = intern(a);
    let (ids_b, uniq_b) = intern(b);
    let mut table = vec![0.0; uniq_a.len() * uniq_b.len()];
    for (i, la) in uniq_a.iter().enumerate() {
        for (j, lb) in uniq_b.iter().enumerate() {
            table[i * uniq_b.len() + j] = cost.rename(la, lb);
        }
    }
    (ids_a, ids_b, table)
}
