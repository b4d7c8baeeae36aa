//! The event-dependency graph (EDG, Section 3.1) and Algorithm 1.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Efg, ReadWrite};

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

    /// Drops the fields of each edge e → e' that an event in between overwrites, and the
    /// edges left with none; returns how many edges went. "In between" are the events
    /// Algorithm 3 inserts to get from e to e': the inner events of the shortest EFG path
    /// ([`Efg::shortest_path`], the same path the test case will take; one search per e). A value e writes
    /// that such an event writes again never reaches e' in that test case, so the pair
    /// tests nothing Algorithm 1's weight promised. Without this, on the web every
    /// navigation writes and reads the router's current screen, and every pair of screens
    /// would look dependent although the way from one to the other always passes home.
    /// Pairs with no EFG path keep their fields (Algorithm 3 splits them anyway).
    pub fn drop_overwritten(&mut self, efg: &Efg, rw: &[ReadWrite]) -> usize {
        let mut dropped = 0;
        for (e, successors) in self.edges.iter_mut().enumerate() {
            if successors.is_empty() {
                continue;
            }
            let paths = efg.paths_from(e);
            successors.retain(|&e2, weight| {
                let Some(path) = paths.to(e2) else {
                    return true;
                };
                let inner = &path[1..path.len() - 1];
                let Some(fields) = self.fields.get_mut(&(e, e2)) else {
                    return true;
                };
                fields.retain(|f| !inner.iter().any(|&i| rw[i].writes.contains(f)));
                *weight = fields.len();
                if fields.is_empty() {
                    self.fields.remove(&(e, e2));
                    dropped += 1;
                    false
                } else {
                    true
                }
            });
        }
        dropped
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rw::rw;
    use crate::{Event, EventKind};

    /// Two screens reached from home: `a` opens screen A, `back` returns home, `b` opens
    /// screen B. Every navigation reads and writes the router's `route`; `a` also starts a
    /// timer that `back` stops.
    #[test]
    fn a_field_rewritten_on_the_way_does_not_make_an_edge() {
        let mut efg = Efg::default();
        for id in ["a", "b", "back"] {
            efg.add_event(Event {
                id: id.into(),
                label: id.into(),
                window: "home".into(),
                kind: EventKind::Click,
                handlers: vec![],
            });
        }
        let (a, b, back) = (0, 1, 2);
        efg.initial.extend([a, b]);
        efg.follows[a].insert(back);
        efg.follows[b].insert(back);
        efg.follows[back].extend([a, b]);
        let rws = vec![
            rw(&["route"], &["route", "timer"]),
            rw(&["route"], &["route"]),
            rw(&["route", "timer"], &["route", "timer"]),
        ];
        let mut edg = Edg::build(&rws);
        assert_eq!(edg.edge_count(), 9);
        let dropped = edg.drop_overwritten(&efg, &rws);
        // a -> back and b -> back follow directly; back -> a and back -> b too. a -> b
        // passes `back`, which rewrites the route, and so do the self pairs.
        assert_eq!(dropped, 5);
        assert_eq!(edg.weight(a, back), Some(2));
        assert_eq!(edg.weight(b, back), Some(1));
        assert_eq!(edg.weight(back, a), Some(1));
        assert_eq!(edg.weight(back, b), Some(1));
        assert_eq!(edg.weight(a, b), None);
        assert_eq!(edg.weight(back, back), None);
        assert_eq!(edg.fields[&(a, back)], ["route", "timer"]);
    }
}
