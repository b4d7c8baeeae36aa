//! The transition graph of abstract pages, from the pages strategies record per step
//! (`StepRecord::seen`).

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::RunFolder;

/// One abstract page of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageNode {
    /// The strategy's page number.
    pub page: u64,
    /// Steps whose action was chosen on this page.
    pub steps: Vec<u64>,
    /// Column (breadth-first distance from the start page) and row in the drawing.
    pub column: usize,
    pub row: usize,
}

impl PageNode {
    /// The first screen seen of the page: the one after the step before its first step.
    pub fn first_step(&self) -> u64 {
        self.steps[0]
    }
}

/// Transitions from one page to another, with the steps that took them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageEdge {
    pub from: u64,
    pub to: u64,
    pub steps: Vec<u64>,
}

/// Pages and transitions of one run, laid out in columns by distance from the start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageGraph {
    /// In drawing order (column, then row).
    pub nodes: Vec<PageNode>,
    pub edges: Vec<PageEdge>,
    /// For each step with a page: the page its action was chosen on and the page of the
    /// next screen the strategy looked at (`None` after the last step or a restart).
    pub moves: BTreeMap<u64, (u64, Option<u64>)>,
}

impl PageGraph {
    /// The graph of a run; empty when its strategy records no pages (Monkey).
    pub fn of(run: &RunFolder) -> Self {
        let pages: Vec<(u64, u64)> = run
            .steps
            .iter()
            .filter_map(|s| Some((s.step, s.seen.as_ref()?.page?)))
            .collect();
        if pages.is_empty() {
            return Self::default();
        }
        let mut steps_of: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let mut edges: BTreeMap<(u64, u64), Vec<u64>> = BTreeMap::new();
        let mut moves = BTreeMap::new();
        for (i, &(step, page)) in pages.iter().enumerate() {
            steps_of.entry(page).or_default().push(step);
            // Only consecutive steps are a transition: a gap means the strategy saw no
            // page for a step in between.
            let next = pages
                .get(i + 1)
                .filter(|(s, _)| *s == step + 1)
                .map(|&(_, p)| p);
            moves.insert(step, (page, next));
            if let Some(to) = next {
                edges.entry((page, to)).or_default().push(step);
            }
        }
        // Breadth-first columns from the first page seen.
        let mut out: HashMap<u64, Vec<u64>> = HashMap::new();
        for &(from, to) in edges.keys() {
            if from != to {
                out.entry(from).or_default().push(to);
            }
        }
        let mut column: HashMap<u64, usize> = HashMap::new();
        let mut queue = VecDeque::new();
        let start = pages[0].1;
        column.insert(start, 0);
        queue.push_back(start);
        let visit = |queue: &mut VecDeque<u64>, column: &mut HashMap<u64, usize>| {
            while let Some(p) = queue.pop_front() {
                let c = column[&p];
                for &q in out.get(&p).map_or(&[][..], |v| &v[..]) {
                    column.entry(q).or_insert_with(|| {
                        queue.push_back(q);
                        c + 1
                    });
                }
            }
        };
        visit(&mut queue, &mut column);
        // Pages reached only after a restart start new trees in column 0.
        for &(_, page) in &pages {
            if let std::collections::hash_map::Entry::Vacant(e) = column.entry(page) {
                e.insert(0);
                queue.push_back(page);
                visit(&mut queue, &mut column);
            }
        }
        let mut nodes: Vec<PageNode> = steps_of
            .into_iter()
            .map(|(page, steps)| PageNode {
                page,
                column: column[&page],
                row: 0,
                steps,
            })
            .collect();
        nodes.sort_by_key(|n| (n.column, n.first_step()));
        let mut rows: HashMap<usize, usize> = HashMap::new();
        for n in &mut nodes {
            let r = rows.entry(n.column).or_insert(0);
            n.row = *r;
            *r += 1;
        }
        Self {
            nodes,
            edges: edges
                .into_iter()
                .map(|((from, to), steps)| PageEdge { from, to, steps })
                .collect(),
            moves,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}
