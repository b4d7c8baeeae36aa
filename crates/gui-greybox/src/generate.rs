//! Sequence generation: Algorithm 2 (abstract sequences from the EDG), Algorithm 3
//! (executable sequences through the EFG) and the black-box baseline (every EFG path of a
//! given length, configurations A, B and C of Table 3).

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{Edg, Efg};

/// One test case's event sequence, ready to replay from a fresh start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Executable {
    /// Event indices, starting with an initial event.
    pub events: Vec<usize>,
    /// Positions in `events` of the events the sequence is about (the abstract sequence,
    /// or the sampled EFG path); the others are reaching steps.
    pub focus: Vec<usize>,
    /// Index of the abstract sequence (or EFG path) this came from.
    pub source: usize,
    /// 0 for the first part; 1, 2, ... when Algorithm 3 had to split the abstract sequence
    /// because no EFG path joins two of its events (run them one after the other).
    pub part: u32,
}

/// What generation produced and what it could not use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generated {
    pub sequences: Vec<Executable>,
    /// Events no path from an initial event reaches (the EFG is incomplete there).
    pub unreachable: BTreeSet<usize>,
    /// Executable sequences dropped because an earlier one had the same events.
    pub duplicates: usize,
}

impl Generated {
    fn push(&mut self, seen: &mut BTreeSet<Vec<usize>>, seq: Executable) {
        if seen.insert(seq.events.clone()) {
            self.sequences.push(seq);
        } else {
            self.duplicates += 1;
        }
    }
}

/// Algorithm 2: abstract event sequences, at most `len` events long and at most `top` per
/// start event (`None` is the paper's top = ∞).
///
/// For every event e, sequences are grown from ⟨e⟩ one successor at a time. `bestSucc`
/// ranks the successors of the last event by the minimax rule: a successor's score is the
/// weakest edge on the best path it allows within the remaining length (so a strong first
/// edge followed only by weak ones loses to a path whose every link is solid); then the
/// direct edge weight; then the lower event index, so ties break the same way every run.
/// It returns the best successor whose extension is not already the start of a sequence
/// collected for e, the second best when the best is taken, and so on; when every
/// extension is taken it returns the best, which makes the sequence repeat. A repeated
/// sequence ends the search for e (line 12 of the algorithm).
pub fn abstract_sequences(edg: &Edg, len: usize, top: Option<usize>) -> Vec<Vec<usize>> {
    let mut search = Minimax {
        edg,
        memo: HashMap::new(),
        ranked: HashMap::new(),
    };
    let mut all = Vec::new();
    if len == 0 {
        return all;
    }
    for e in 0..edg.len() {
        let mut mine: Vec<Vec<usize>> = Vec::new();
        let mut collected: HashSet<Vec<usize>> = HashSet::new();
        // For each proper prefix of a collected sequence, the events that follow it in
        // one: what `bestSucc` must not take again. Kept as sequences are collected, so
        // that an event with hundreds of successors (a dense EDG) costs a lookup per
        // extension instead of a scan of every sequence collected so far.
        let mut taken: HashMap<Vec<usize>, HashSet<usize>> = HashMap::new();
        while top.is_none_or(|t| mine.len() < t) {
            let mut pi = vec![e];
            while pi.len() < len {
                let last = *pi.last().expect("never empty");
                let remaining = len - pi.len();
                let ranked = search.ranked(last, remaining);
                let Some(&best) = ranked.first() else { break };
                let used = taken.get(&pi);
                let free = ranked
                    .iter()
                    .copied()
                    .find(|s| used.is_none_or(|u| !u.contains(s)));
                pi.push(free.unwrap_or(best));
            }
            if !collected.insert(pi.clone()) {
                break;
            }
            for k in 1..pi.len() {
                taken.entry(pi[..k].to_vec()).or_default().insert(pi[k]);
            }
            mine.push(pi);
        }
        all.extend(mine);
    }
    all
}

/// The minimax (weakest-link) scores of Algorithm 2's `bestSucc`, memoised per event and
/// remaining length.
struct Minimax<'a> {
    edg: &'a Edg,
    memo: HashMap<(usize, usize), usize>,
    /// [`Minimax::ranked`] per event and remaining length.
    ranked: HashMap<(usize, usize), Vec<usize>>,
}

impl Minimax<'_> {
    /// The best weakest link over paths of at most `remaining` more events from `e`
    /// (`usize::MAX` when nothing follows: no link constrains it).
    fn value(&mut self, e: usize, remaining: usize) -> usize {
        if remaining == 0 {
            return usize::MAX;
        }
        if let Some(&v) = self.memo.get(&(e, remaining)) {
            return v;
        }
        let edg = self.edg;
        let mut best = None;
        for (s, w) in edg.post(e) {
            let v = w.min(self.value(s, remaining - 1));
            best = Some(best.map_or(v, |b: usize| b.max(v)));
        }
        let v = best.unwrap_or(usize::MAX);
        self.memo.insert((e, remaining), v);
        v
    }

    /// Successors of `e`, best first, when `remaining` more events may be added
    /// (`remaining` ≥ 1 counts the successor itself).
    fn ranked(&mut self, e: usize, remaining: usize) -> &[usize] {
        if !self.ranked.contains_key(&(e, remaining)) {
            let edg = self.edg;
            let mut scored: Vec<(usize, usize, usize)> = edg
                .post(e)
                .map(|(s, w)| (w.min(self.value(s, remaining - 1)), w, s))
                .collect();
            scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
            let order = scored.into_iter().map(|(_, _, s)| s).collect();
            self.ranked.insert((e, remaining), order);
        }
        &self.ranked[&(e, remaining)]
    }
}

/// Algorithm 3: makes each abstract sequence executable. The sequence starts with the
/// shortest path from an initial event to its first event, and the shortest EFG path
/// between each pair of successive events is inserted. Where no path exists (the app
/// must have ended in between), the sequence is split and the next part starts again
/// from an initial event. Sequences whose start cannot be reached are left out and their
/// event is listed in `unreachable`.
pub fn executable_sequences(efg: &Efg, abstract_seqs: &[Vec<usize>]) -> Generated {
    let reach = Reach::new(efg);
    let mut out = Generated::default();
    let mut seen = BTreeSet::new();
    // One breadth-first search per event a path starts from, shared by every sequence
    // (a dense EDG gives hundreds of sequences per event).
    let mut paths: HashMap<usize, crate::Paths> = HashMap::new();
    'seqs: for (source, pi) in abstract_seqs.iter().enumerate() {
        let mut part = 0;
        let Some(first) = pi.first() else { continue };
        let Some(mut events) = reach.get(*first) else {
            out.unreachable.insert(*first);
            continue;
        };
        let mut focus = vec![events.len() - 1];
        for pair in pi.windows(2) {
            let from = paths
                .entry(pair[0])
                .or_insert_with(|| efg.paths_from(pair[0]));
            match from.to(pair[1]) {
                Some(path) => events.extend_from_slice(&path[1..]),
                None => {
                    let done = Executable {
                        events: std::mem::take(&mut events),
                        focus: std::mem::take(&mut focus),
                        source,
                        part,
                    };
                    out.push(&mut seen, done);
                    part += 1;
                    match reach.get(pair[1]) {
                        Some(r) => events = r,
                        None => {
                            out.unreachable.insert(pair[1]);
                            continue 'seqs;
                        }
                    }
                }
            }
            focus.push(events.len() - 1);
        }
        out.push(
            &mut seen,
            Executable {
                events,
                focus,
                source,
                part,
            },
        );
    }
    out
}

/// The black-box baseline: one executable sequence per EFG path of exactly `len` events
/// (configuration A: len 1, every event; B: len 2, every edge; C: len 3, every pair of
/// adjacent edges), each prefixed with the reaching steps from an initial event.
pub fn blackbox_sequences(efg: &Efg, len: usize) -> Generated {
    let reach = Reach::new(efg);
    let mut out = Generated::default();
    let mut seen = BTreeSet::new();
    let mut source = 0;
    if len == 0 {
        return out;
    }
    for e in 0..efg.len() {
        let Some(prefix) = reach.get(e) else {
            out.unreachable.insert(e);
            continue;
        };
        let mut stack = vec![vec![e]];
        while let Some(path) = stack.pop() {
            if path.len() == len {
                let mut events = prefix.clone();
                events.extend_from_slice(&path[1..]);
                let start = prefix.len() - 1;
                out.push(
                    &mut seen,
                    Executable {
                        focus: (start..events.len()).collect(),
                        events,
                        source,
                        part: 0,
                    },
                );
                source += 1;
                continue;
            }
            let last = *path.last().expect("never empty");
            // Pushed in reverse so paths come out in successor order.
            for &s in efg.follows[last].iter().rev() {
                let mut next = path.clone();
                next.push(s);
                stack.push(next);
            }
        }
    }
    out
}

/// Reaching steps per event, computed once.
struct Reach {
    paths: Vec<Option<Vec<usize>>>,
}

impl Reach {
    fn new(efg: &Efg) -> Reach {
        Reach {
            paths: (0..efg.len()).map(|e| efg.reach(e)).collect(),
        }
    }

    fn get(&self, e: usize) -> Option<Vec<usize>> {
        self.paths.get(e)?.clone()
    }
}

/// How test cases are chosen: the paper's Table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Mode {
    /// Algorithms 2 and 3 on the EDG and the EFG (configurations D, E, F).
    Greybox { len: usize, top: Option<usize> },
    /// Every EFG path of `len` events (configurations A, B, C).
    Blackbox { len: usize },
}

impl Mode {
    /// The paper's configuration letter, when this is one of Table 3's.
    pub fn configuration(&self) -> Option<char> {
        match *self {
            Mode::Blackbox { len: 1 } => Some('A'),
            Mode::Blackbox { len: 2 } => Some('B'),
            Mode::Blackbox { len: 3 } => Some('C'),
            Mode::Greybox { len: 2, top: None } => Some('D'),
            Mode::Greybox {
                len: 3,
                top: Some(50),
            } => Some('E'),
            Mode::Greybox {
                len: 3,
                top: Some(100),
            } => Some('F'),
            _ => None,
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Mode::Blackbox { len } => write!(f, "blackbox len={len}"),
            Mode::Greybox { len, top: None } => write!(f, "greybox len={len} top=inf"),
            Mode::Greybox { len, top: Some(t) } => write!(f, "greybox len={len} top={t}"),
        }?;
        if let Some(c) = self.configuration() {
            write!(f, " ({c})")?;
        }
        Ok(())
    }
}

/// The test cases of one configuration, and what producing them cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub mode: Mode,
    /// Abstract sequences (grey-box) or sampled EFG paths (black-box).
    pub abstract_sequences: usize,
    pub generated: Generated,
    /// Wall time of generation (Algorithms 2 and 3, or path enumeration), in ms.
    pub generation_ms: f64,
}

/// Generates the test cases of `mode` from the EFG and (for the grey-box modes) the EDG.
pub fn plan(efg: &Efg, edg: &Edg, mode: Mode) -> Plan {
    let started = std::time::Instant::now();
    let (abstract_count, generated) = match mode {
        Mode::Greybox { len, top } => {
            let pi = abstract_sequences(edg, len, top);
            (pi.len(), executable_sequences(efg, &pi))
        }
        Mode::Blackbox { len } => {
            let g = blackbox_sequences(efg, len);
            (g.sequences.len() + g.duplicates, g)
        }
    };
    Plan {
        mode,
        abstract_sequences: abstract_count,
        generated,
        generation_ms: started.elapsed().as_secs_f64() * 1e3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Event, EventKind};

    /// Figure 1(b): e1, e2, e3 in the main window (initial), e3 opens the modal dialog
    /// whose only event is e4, and e4 closes it.
    fn figure_1b() -> Efg {
        let mut efg = Efg::default();
        for (id, window) in [
            ("e1", "MainWindow"),
            ("e2", "MainWindow"),
            ("e3", "MainWindow"),
            ("e4", "Dialog"),
        ] {
            efg.add_event(Event {
                id: id.into(),
                label: id.into(),
                window: window.into(),
                kind: EventKind::Click,
                handlers: vec![],
            });
        }
        efg.initial = [0, 1, 2].into();
        let main: BTreeSet<usize> = [0, 1, 2].into();
        efg.follows = vec![main.clone(), main.clone(), [3].into(), main];
        efg.validate().unwrap();
        efg
    }

    fn names(efg: &Efg, seqs: &Generated) -> Vec<String> {
        seqs.sequences
            .iter()
            .map(|s| efg.ids(&s.events).join(","))
            .collect()
    }

    #[test]
    fn figure_2_with_len_2_and_unbounded_top_gives_the_papers_four_sequences() {
        let efg = figure_1b();
        // Figure 2: e1 writes `enabled` (read by e3); e2 and e4 write `text` (read by e2).
        let edg = Edg::from_edges(4, &[(0, 2, 1), (1, 1, 1), (3, 1, 1)]);
        let pi = abstract_sequences(&edg, 2, None);
        assert_eq!(pi, vec![vec![0, 2], vec![1, 1], vec![2], vec![3, 1]]);
        let exec = executable_sequences(&efg, &pi);
        assert_eq!(names(&efg, &exec), ["e1,e3", "e2,e2", "e3", "e3,e4,e2"]);
        assert_eq!(exec.sequences[3].focus, vec![1, 2]);
        assert!(exec.unreachable.is_empty());
    }

    #[test]
    fn black_box_len_2_gives_table_1_in_order() {
        let efg = figure_1b();
        let b = blackbox_sequences(&efg, 2);
        assert_eq!(
            names(&efg, &b),
            [
                "e1,e1", "e1,e2", "e1,e3", "e2,e1", "e2,e2", "e2,e3", "e3,e4", "e3,e4,e1",
                "e3,e4,e2", "e3,e4,e3"
            ]
        );
        let a = blackbox_sequences(&efg, 1);
        assert_eq!(names(&efg, &a), ["e1", "e2", "e3", "e3,e4"]);
        // Paths of three events: 7 from e1, 7 from e2, 3 from e3 (via e4), 7 from e4.
        assert_eq!(blackbox_sequences(&efg, 3).sequences.len(), 24);
    }

    #[test]
    fn second_best_successor_is_taken_once_the_best_path_is_used() {
        // a → b (3), a → c (2), a → d (1): top 2 gives the two strongest, top ∞ all three.
        let edg = Edg::from_edges(4, &[(0, 1, 3), (0, 2, 2), (0, 3, 1)]);
        let two = abstract_sequences(&edg, 2, Some(2));
        assert_eq!(&two[..2], &[vec![0, 1], vec![0, 2]]);
        let all = abstract_sequences(&edg, 2, None);
        assert_eq!(&all[..3], &[vec![0, 1], vec![0, 2], vec![0, 3]]);
    }

    #[test]
    fn minimax_prefers_the_path_whose_weakest_link_is_strongest() {
        // From a: via b the links are 5 then 1; via c they are 3 then 3. With len 3 the
        // weakest link decides (c), with len 2 only the first edge counts (b).
        let edg = Edg::from_edges(5, &[(0, 1, 5), (1, 3, 1), (0, 2, 3), (2, 4, 3)]);
        assert_eq!(abstract_sequences(&edg, 3, Some(1))[0], vec![0, 2, 4]);
        assert_eq!(abstract_sequences(&edg, 2, Some(1))[0], vec![0, 1]);
    }

    #[test]
    fn abstract_sequence_without_an_efg_path_is_split() {
        // e0 (initial) → e1; e2 is initial too, but nothing leads from e1 to e2.
        let mut efg = figure_1b();
        efg.follows = vec![[1].into(), BTreeSet::new(), [3].into(), BTreeSet::new()];
        efg.initial = [0, 2].into();
        let out = executable_sequences(&efg, &[vec![1, 3]]);
        assert_eq!(names(&efg, &out), ["e1,e2", "e3,e4"]);
        assert_eq!(out.sequences[1].part, 1);
        efg.initial = [0].into();
        let out = executable_sequences(&efg, &[vec![1, 3]]);
        assert_eq!(names(&efg, &out), ["e1,e2"]);
        assert_eq!(out.unreachable, [3].into());
    }
}
