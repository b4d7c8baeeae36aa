//! Events and the event-flow graph (EFG, Definition 1).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use crate::{Error, ReadWrite, Result};

/// How an event is fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A click (buttons, links, check boxes, menu items).
    Click,
    /// Typing the run's input text into a field, then Enter.
    Input,
}

/// Where the code that handles an event lives, so its reads and writes can be looked up.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "lang", rename_all = "snake_case")]
pub enum HandlerRef {
    /// A JavaScript function, by the start of its source (0-based line and column, as the
    /// DevTools protocol reports listener locations).
    Js {
        script: String,
        line: u32,
        column: u32,
    },
    /// A Java method.
    Java {
        class: String,
        name: String,
        descriptor: String,
    },
}

/// One GUI event: a widget in a window and what is done to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Unique and stable across runs of the same app (a CSS selector and the event type on
    /// the web; the window and the widget's label on the desktop).
    pub id: String,
    /// What a person reads on the widget.
    pub label: String,
    /// The window, screen or dialog the widget belongs to when it was ripped.
    pub window: String,
    pub kind: EventKind,
    /// The handlers that run when the event fires (several listeners, or a delegated one).
    #[serde(default)]
    pub handlers: Vec<HandlerRef>,
}

/// The event-flow graph ⟨E, I, δ⟩: events, the initial events (available right after
/// launch) and which event may directly follow which.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Efg {
    pub events: Vec<Event>,
    /// Indices into `events` of I ⊆ E.
    pub initial: BTreeSet<usize>,
    /// δ as successor sets: `follows[e]` holds every e' with (e, e') ∈ δ.
    pub follows: Vec<BTreeSet<usize>>,
    /// What the ripper saw an event run beyond its handlers' own code, by event index: on
    /// the web, what the app executed when a click moved the page to another URL of the
    /// same document, the router included (see
    /// `GreyboxApp::observed_effects`, with `live`).
    /// [`Efg::read_writes`] adds them to the handlers' reads and writes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub effects: BTreeMap<usize, ReadWrite>,
}

/// Shortest paths from one event, as [`Efg::paths_from`] finds them.
#[derive(Debug, Clone)]
pub struct Paths {
    from: usize,
    /// Each event reached, and the event before it on its path.
    prev: BTreeMap<usize, usize>,
}

impl Paths {
    /// The path to `to`, both ends included; `None` when `to` cannot be reached.
    pub fn to(&self, to: usize) -> Option<Vec<usize>> {
        self.prev.get(&to)?;
        let mut path = vec![to];
        let mut at = to;
        while let Some(&p) = self.prev.get(&at) {
            path.push(p);
            if p == self.from {
                break;
            }
            at = p;
        }
        path.reverse();
        Some(path)
    }
}

impl Efg {
    /// Adds an event (or finds it by id) and returns its index.
    pub fn add_event(&mut self, event: Event) -> usize {
        if let Some(i) = self.index_of(&event.id) {
            return i;
        }
        self.events.push(event);
        self.follows.push(BTreeSet::new());
        self.events.len() - 1
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.events.iter().position(|e| e.id == id)
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn edge_count(&self) -> usize {
        self.follows.iter().map(BTreeSet::len).sum()
    }

    /// Checks that indices are in range and the successor table matches the event list.
    pub fn validate(&self) -> Result<()> {
        let n = self.events.len();
        let bad = |what: String| Err(Error::BadModel { what });
        if self.follows.len() != n {
            return bad(format!(
                "{} events but {} successor sets",
                n,
                self.follows.len()
            ));
        }
        if let Some(i) = self.initial.iter().find(|&&i| i >= n) {
            return bad(format!("initial event {i} does not exist ({n} events)"));
        }
        for (e, succ) in self.follows.iter().enumerate() {
            if let Some(s) = succ.iter().find(|&&s| s >= n) {
                return bad(format!(
                    "event {e} is followed by {s}, which does not exist"
                ));
            }
        }
        if let Some(e) = self.effects.keys().find(|&&e| e >= n) {
            return bad(format!(
                "effects are recorded for event {e}, which does not exist"
            ));
        }
        let mut ids = BTreeSet::new();
        for e in &self.events {
            if !ids.insert(e.id.as_str()) {
                return bad(format!("event id {:?} appears twice", e.id));
            }
        }
        Ok(())
    }

    /// The shortest EFG path from `from` to `to`, both included, by breadth-first search
    /// over successors in index order (so ties always break the same way). A path from
    /// an event to itself needs an edge (a self loop or a cycle): events are fired, not
    /// visited, so `e, e` fires `e` twice.
    pub fn shortest_path(&self, from: usize, to: usize) -> Option<Vec<usize>> {
        self.search(from, Some(to)).to(to)
    }

    /// The shortest paths from `from` to every event, as [`shortest_path`](Self::shortest_path)
    /// finds each: one search for many targets.
    pub fn paths_from(&self, from: usize) -> Paths {
        self.search(from, None)
    }

    /// Breadth first from `from`, stopping once `stop` is reached.
    fn search(&self, from: usize, stop: Option<usize>) -> Paths {
        let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([from]);
        while let Some(e) = queue.pop_front() {
            for &s in &self.follows[e] {
                if prev.contains_key(&s) {
                    continue;
                }
                prev.insert(s, e);
                if Some(s) == stop {
                    return Paths { from, prev };
                }
                queue.push_back(s);
            }
        }
        Paths { from, prev }
    }

    /// The shortest executable prefix that ends by firing `to`: `to` alone when it is an
    /// initial event, otherwise the shortest path from the initial event nearest to it
    /// (the lowest index among equally near ones).
    pub fn reach(&self, to: usize) -> Option<Vec<usize>> {
        if self.initial.contains(&to) {
            return Some(vec![to]);
        }
        self.initial
            .iter()
            .filter_map(|&i| self.shortest_path(i, to))
            .min_by_key(Vec::len)
    }

    /// The EFG as a petgraph graph (node weights are event indices), for callers that want
    /// graph algorithms or DOT output.
    pub fn to_petgraph(&self) -> petgraph::graph::DiGraph<usize, ()> {
        let mut g = petgraph::graph::DiGraph::new();
        let nodes: Vec<_> = (0..self.len()).map(|i| g.add_node(i)).collect();
        for (e, succ) in self.follows.iter().enumerate() {
            for &s in succ {
                g.add_edge(nodes[e], nodes[s], ());
            }
        }
        g
    }

    /// The reads and writes Algorithm 1 takes, one per event: `handlers(e)` (the static
    /// analysis of e's handlers) plus the effects the ripper observed for e.
    ///
    /// Observed writes all count. Observed reads count only of fields that some event's
    /// observed effects write: the router's own state (the current screen, the timers a
    /// screen starts on entry and stops on exit). The other reads a navigation makes are
    /// of the entered screen's data, which that screen's own events write and render
    /// themselves as they change it, so pairing every such event with the navigation
    /// that re-enters the screen would run the same rendering again; and of guards such
    /// as "is a dialog open", which every navigation checks and every dialog writes.
    pub fn read_writes(&self, mut handlers: impl FnMut(&Event) -> ReadWrite) -> Vec<ReadWrite> {
        let routed: BTreeSet<&String> = self.effects.values().flat_map(|rw| &rw.writes).collect();
        self.events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut rw = handlers(e);
                if let Some(seen) = self.effects.get(&i) {
                    rw.writes.extend(seen.writes.iter().cloned());
                    rw.reads
                        .extend(seen.reads.iter().filter(|f| routed.contains(f)).cloned());
                }
                rw
            })
            .collect()
    }

    /// Event ids of a sequence, for printing and snapshots.
    pub fn ids(&self, seq: &[usize]) -> Vec<&str> {
        seq.iter().map(|&i| self.events[i].id.as_str()).collect()
    }
}
