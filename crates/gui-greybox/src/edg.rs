//! The event-dependency graph (EDG, Section 3.1) and Algorithm 1.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ReadWrite;

/// ⟨E, ψ⟩: the same events as the EFG (by index) and weighted edges e → e' where the
/// handler of e writes fields the handler of e' reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edg {
    /// `edges[e]` maps each successor e' to the weight |R(e') ∩ W(e)| ≥ 1.
    pub edges: Vec<BTreeMap<usize, usize>>,
    /// The shared fields behind each edge, for reports: `(e, e') -> R(e') ∩ W(e)`.
    #[serde(default)]
    pub fields: BTreeMap<(usize, usize), Vec<String>>,
}

impl Edg {
    /// Algorithm 1: for every ordered pair of events (e, e'), an edge weighted by how
    /// many of the fields written by e's handler are read by e''s. `rw[e]` holds the
    /// handler's reads and writes, calls followed. No edge where nothing is shared, so the
    /// EDG is not complete.
    pub fn build(rw: &[ReadWrite]) -> Edg {
        let mut edg = Edg {
            edges: vec![BTreeMap::new(); rw.len()],
            fields: BTreeMap::new(),
        };
        for (e, earlier) in rw.iter().enumerate() {
            if earlier.writes.is_empty() {
                continue;
            }
            for (e2, later) in rw.iter().enumerate() {
                let shared: Vec<String> =
                    earlier.writes.intersection(&later.reads).cloned().collect();
                if !shared.is_empty() {
                    edg.edges[e].insert(e2, shared.len());
                    edg.fields.insert((e, e2), shared);
                }
            }
        }
        edg
    }

    pub fn len(&self) -> usize {
        self.edges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    pub fn edge_count(&self) -> usize {
        self.edges.iter().map(BTreeMap::len).sum()
    }

    pub fn weight(&self, from: usize, to: usize) -> Option<usize> {
        self.edges.get(from)?.get(&to).copied()
    }

    /// post(e): the successors of e.
    pub fn post(&self, e: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.edges[e].iter().map(|(&s, &w)| (s, w))
    }

    /// From explicit edges `(from, to, weight)` over `n` events (tests, hand-made models).
    pub fn from_edges(n: usize, edges: &[(usize, usize, usize)]) -> Edg {
        let mut edg = Edg {
            edges: vec![BTreeMap::new(); n],
            fields: BTreeMap::new(),
        };
        for &(a, b, w) in edges {
            edg.edges[a].insert(b, w);
        }
        edg
    }
}
