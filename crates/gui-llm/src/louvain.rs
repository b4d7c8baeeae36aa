//! Louvain community detection (Blondel et al. 2008), which VisionDroid uses to cut the
//! testing history into logically cohesive sub-sequences (Section III-C1).
//!
//! The graph is undirected and weighted. The quantity maximised is the modularity
//!
//! ```text
//! Q = 1/(2m) * sum_ij [ A_ij - gamma * k_i * k_j / (2m) ] * delta(c_i, c_j)
//! ```
//!
//! with `m` the total edge weight, `k_i` the weighted degree of node `i` and `gamma` the
//! resolution. The paper prints the null-model term without `k_i k_j`; this is the
//! standard formula, the one networkx and the original paper use. A self-loop of weight
//! `w` counts `2w` in its node's degree and `w` in its community's internal weight, as in
//! networkx.
//!
//! The algorithm alternates a local moving phase (each node, in a seeded random order,
//! joins the neighbouring community that raises `Q` most, until no node moves) with an
//! aggregation phase (communities become the nodes of a smaller graph whose self-loops
//! hold the internal weight), until a level raises `Q` by less than
//! [`LouvainConfig::min_gain`]. Both phases are linear in the number of edges: adjacency
//! is kept in compressed rows and the weights towards neighbouring communities are
//! gathered in a dense buffer that is reset through the list of entries it touched.

use std::collections::HashMap;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// An undirected weighted graph on the nodes `0..nodes`, built edge by edge.
///
/// Parallel edges add their weights; self-loops are allowed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WeightedGraph {
    nodes: usize,
    edges: Vec<(u32, u32, f64)>,
    total_weight: f64,
}

impl WeightedGraph {
    /// A graph with `nodes` nodes and no edges.
    ///
    /// # Panics
    /// If `nodes` does not fit in a `u32` (the adjacency is stored with 32-bit indices).
    pub fn new(nodes: usize) -> Self {
        assert!(
            u32::try_from(nodes).is_ok(),
            "WeightedGraph supports at most {} nodes, got {nodes}",
            u32::MAX
        );
        Self {
            nodes,
            edges: Vec::new(),
            total_weight: 0.0,
        }
    }

    /// Adds the undirected edge `a`–`b` with weight `w`. An edge that is already there gets
    /// `w` added to its weight; `a == b` is a self-loop.
    ///
    /// # Panics
    /// If `a` or `b` is not a node, or `w` is negative or not finite: modularity is only
    /// defined for non-negative weights.
    pub fn add_edge(&mut self, a: usize, b: usize, w: f64) {
        assert!(
            a < self.nodes && b < self.nodes,
            "edge {a}-{b} in a graph of {} nodes",
            self.nodes
        );
        assert!(
            w.is_finite() && w >= 0.0,
            "edge {a}-{b} has weight {w}; weights must be finite and non-negative"
        );
        // Both fit: `new` checked that the node count fits in a u32.
        self.edges.push((a as u32, b as u32, w));
        self.total_weight += w;
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The number of edges added (parallel edges counted separately).
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// The sum of all edge weights, `m` in the modularity (a self-loop counts once).
    pub fn total_weight(&self) -> f64 {
        self.total_weight
    }
}

/// Settings of [`louvain`].
#[derive(Debug, Clone, PartialEq)]
pub struct LouvainConfig {
    /// Seeds the order in which nodes are visited; the same seed gives the same partition.
    pub seed: u64,
    /// `gamma`, the weight of the null-model term: above 1 favours smaller communities,
    /// below 1 larger ones.
    pub resolution: f64,
    /// Stop aggregating once a level raises the modularity by no more than this
    /// (networkx's `threshold`).
    pub min_gain: f64,
}

impl Default for LouvainConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            resolution: 1.0,
            min_gain: 1e-7,
        }
    }
}

/// The communities [`louvain`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// The community of each node; communities are numbered from 0 in the order of their
    /// lowest node.
    pub community: Vec<usize>,
    /// The modularity of `community` on the input graph, at the configured resolution.
    pub modularity: f64,
    /// Levels of the algorithm whose partition was kept (0 for a graph without weight).
    pub levels: usize,
}

impl Partition {
    /// The number of communities.
    pub fn count(&self) -> usize {
        self.community.iter().max().map_or(0, |&c| c + 1)
    }

    /// The nodes of each community, in increasing order.
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.count()];
        for (node, &c) in self.community.iter().enumerate() {
            out[c].push(node);
        }
        out
    }
}

/// The modularity `Q` of `community` (one label per node, any numbering) on `graph` at
/// `resolution`. Zero when the graph has no weight.
///
/// # Panics
/// If `community` does not have one entry per node.
pub fn modularity(graph: &WeightedGraph, community: &[usize], resolution: f64) -> f64 {
    assert_eq!(
        community.len(),
        graph.nodes,
        "one community per node is needed"
    );
    let m = graph.total_weight;
    if m <= 0.0 {
        return 0.0;
    }
    let mut internal = 0.0;
    let mut degree: HashMap<usize, f64> = HashMap::new();
    for &(a, b, w) in &graph.edges {
        let (ca, cb) = (community[a as usize], community[b as usize]);
        *degree.entry(ca).or_default() += w;
        *degree.entry(cb).or_default() += w;
        if ca == cb {
            internal += w;
        }
    }
    let null: f64 = degree.values().map(|d| d * d).sum();
    internal / m - resolution * null / (4.0 * m * m)
}

/// Partitions `graph` into communities of high modularity with the Louvain method.
///
/// A graph without weight leaves every node in its own community, with modularity 0;
/// nodes without weighted edges always stay alone.
///
/// ```
/// use gui_llm::{LouvainConfig, WeightedGraph, louvain};
///
/// // Two triangles of similar steps, joined by a weak transition.
/// let mut g = WeightedGraph::new(6);
/// for (a, b) in [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)] {
///     g.add_edge(a, b, 1.0);
/// }
/// g.add_edge(2, 3, 0.1);
/// let p = louvain(&g, &LouvainConfig::default());
/// assert_eq!(p.community, [0, 0, 0, 1, 1, 1]);
/// assert!(p.modularity > 0.4);
/// ```
pub fn louvain(graph: &WeightedGraph, config: &LouvainConfig) -> Partition {
    let n = graph.nodes;
    let m = graph.total_weight;
    if m <= 0.0 {
        return Partition {
            community: (0..n).collect(),
            modularity: 0.0,
            levels: 0,
        };
    }
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut level_graph = Csr::from_graph(graph);
    // The super-node of the current level each input node belongs to.
    let mut node_of: Vec<u32> = (0..n as u32).collect();
    let mut levels = 0;
    let mut q = level_graph.singleton_modularity(m, config.resolution);
    loop {
        let mut moving = LocalMoving::new(&level_graph, m, config.resolution);
        let moved = moving.run(&level_graph, &mut rng);
        // A level that moved nothing repeats the previous partition.
        if !moved && levels > 0 {
            break;
        }
        let (community, count) = compact(&moving.community);
        for v in &mut node_of {
            *v = community[*v as usize];
        }
        levels += 1;
        let next = level_graph.aggregate(&community, count);
        let next_q = next.singleton_modularity(m, config.resolution);
        level_graph = next;
        // Like networkx: the level is kept, but a small gain ends the search.
        if next_q - q <= config.min_gain {
            break;
        }
        q = next_q;
    }
    let community: Vec<usize> = compact(&node_of)
        .0
        .into_iter()
        .map(|c| c as usize)
        .collect();
    let modularity = modularity(graph, &community, config.resolution);
    Partition {
        community,
        modularity,
        levels,
    }
}

/// Compressed adjacency rows without self-loops (each undirected edge stored at both
/// ends, parallel edges merged), with the self-loop weight and the degree of each node.
#[derive(Debug, Clone)]
struct Csr {
    offsets: Vec<usize>,
    targets: Vec<u32>,
    weights: Vec<f64>,
    self_loop: Vec<f64>,
    degree: Vec<f64>,
}

impl Csr {
    fn nodes(&self) -> usize {
        self.self_loop.len()
    }

    fn row(&self, u: usize) -> (&[u32], &[f64]) {
        let r = self.offsets[u]..self.offsets[u + 1];
        (&self.targets[r.clone()], &self.weights[r])
    }

    fn from_graph(graph: &WeightedGraph) -> Self {
        let n = graph.nodes;
        let mut self_loop = vec![0.0; n];
        let mut count = vec![0usize; n + 1];
        for &(a, b, w) in &graph.edges {
            if a == b {
                self_loop[a as usize] += w;
            } else {
                count[a as usize + 1] += 1;
                count[b as usize + 1] += 1;
            }
        }
        for i in 0..n {
            count[i + 1] += count[i];
        }
        // Counting sort of the half-edges into rows, then a merge of parallel edges.
        let mut fill = count.clone();
        let mut targets = vec![0u32; count[n]];
        let mut weights = vec![0.0; count[n]];
        for &(a, b, w) in &graph.edges {
            if a != b {
                for (from, to) in [(a, b), (b, a)] {
                    let slot = &mut fill[from as usize];
                    targets[*slot] = to;
                    weights[*slot] = w;
                    *slot += 1;
                }
            }
        }
        let mut rows = RowBuilder::new(n);
        for u in 0..n {
            for i in count[u]..count[u + 1] {
                rows.add(targets[i], weights[i]);
            }
            rows.finish_row();
        }
        rows.into_csr(self_loop)
    }

    /// The modularity of the partition with every node of this graph alone; `m` is the
    /// total weight, which aggregation preserves.
    fn singleton_modularity(&self, m: f64, resolution: f64) -> f64 {
        let internal: f64 = self.self_loop.iter().sum();
        let null: f64 = self.degree.iter().map(|d| d * d).sum();
        internal / m - resolution * null / (4.0 * m * m)
    }

    /// The graph whose nodes are the `count` communities of `community`: weights between
    /// communities add up, and weights inside one become its self-loop.
    fn aggregate(&self, community: &[u32], count: usize) -> Csr {
        // Members of each community, by counting sort, so that rows are built in order.
        let mut start = vec![0usize; count + 1];
        for &c in community {
            start[c as usize + 1] += 1;
        }
        for c in 0..count {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut members = vec![0u32; community.len()];
        for (u, &c) in community.iter().enumerate() {
            members[fill[c as usize]] = u as u32;
            fill[c as usize] += 1;
        }
        let mut self_loop = vec![0.0; count];
        let mut rows = RowBuilder::new(count);
        for c in 0..count {
            let mut inside = 0.0;
            for &u in &members[start[c]..start[c + 1]] {
                let u = u as usize;
                self_loop[c] += self.self_loop[u];
                let (targets, weights) = self.row(u);
                for (&v, &w) in targets.iter().zip(weights) {
                    let cv = community[v as usize];
                    if cv as usize == c {
                        inside += w;
                    } else {
                        rows.add(cv, w);
                    }
                }
            }
            // Every internal edge was seen from both of its ends.
            self_loop[c] += inside / 2.0;
            rows.finish_row();
        }
        rows.into_csr(self_loop)
    }
}

/// Builds compressed rows one at a time, merging entries to the same target with a dense
/// accumulator and the list of targets it touched.
struct RowBuilder {
    offsets: Vec<usize>,
    targets: Vec<u32>,
    weights: Vec<f64>,
    acc: Vec<f64>,
    seen: Vec<bool>,
    touched: Vec<u32>,
}

impl RowBuilder {
    fn new(nodes: usize) -> Self {
        Self {
            offsets: vec![0],
            targets: Vec::new(),
            weights: Vec::new(),
            acc: vec![0.0; nodes],
            seen: vec![false; nodes],
            touched: Vec::new(),
        }
    }

    fn add(&mut self, target: u32, w: f64) {
        let t = target as usize;
        if !self.seen[t] {
            self.seen[t] = true;
            self.touched.push(target);
        }
        self.acc[t] += w;
    }

    fn finish_row(&mut self) {
        for &t in &self.touched {
            let i = t as usize;
            self.targets.push(t);
            self.weights.push(self.acc[i]);
            self.acc[i] = 0.0;
            self.seen[i] = false;
        }
        self.touched.clear();
        self.offsets.push(self.targets.len());
    }

    fn into_csr(self, self_loop: Vec<f64>) -> Csr {
        let degree = (0..self_loop.len())
            .map(|u| {
                let row = self.offsets[u]..self.offsets[u + 1];
                self.weights[row].iter().sum::<f64>() + 2.0 * self_loop[u]
            })
            .collect();
        Csr {
            offsets: self.offsets,
            targets: self.targets,
            weights: self.weights,
            self_loop,
            degree,
        }
    }
}

/// The local moving phase on one level: every node starts alone.
struct LocalMoving {
    community: Vec<u32>,
    /// Sum of the degrees of each community's nodes (`Sigma_tot`).
    total: Vec<f64>,
    m: f64,
    resolution: f64,
}

impl LocalMoving {
    fn new(graph: &Csr, m: f64, resolution: f64) -> Self {
        Self {
            community: (0..graph.nodes() as u32).collect(),
            total: graph.degree.clone(),
            m,
            resolution,
        }
    }

    /// Moves nodes until a full pass moves none; true when any node moved.
    fn run(&mut self, graph: &Csr, rng: &mut ChaCha8Rng) -> bool {
        let n = graph.nodes();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        let mut link = vec![0.0; n];
        let mut seen = vec![false; n];
        let mut touched: Vec<u32> = Vec::new();
        let (m, gamma) = (self.m, self.resolution);
        let scale = gamma / (2.0 * m * m);
        let mut any = false;
        loop {
            let mut moved = false;
            for &u in &order {
                let u = u as usize;
                let k = graph.degree[u];
                let own = self.community[u] as usize;
                let (targets, weights) = graph.row(u);
                for (&v, &w) in targets.iter().zip(weights) {
                    let c = self.community[v as usize];
                    if !seen[c as usize] {
                        seen[c as usize] = true;
                        touched.push(c);
                    }
                    link[c as usize] += w;
                }
                // Gain of taking `u` out of its community, then of putting it into
                // community `c`: dQ = (k_u,c - k_u,own) / m
                //   - gamma * k_u * (Sigma_c - (Sigma_own - k_u)) / (2 m^2).
                self.total[own] -= k;
                let remove = -link[own] / m + scale * self.total[own] * k;
                let (mut best, mut best_gain) = (own, 0.0);
                for &c in &touched {
                    let c = c as usize;
                    let gain = remove + link[c] / m - scale * self.total[c] * k;
                    if gain > best_gain {
                        best = c;
                        best_gain = gain;
                    }
                }
                self.total[best] += k;
                if best != own {
                    self.community[u] = best as u32;
                    moved = true;
                }
                for &c in &touched {
                    link[c as usize] = 0.0;
                    seen[c as usize] = false;
                }
                touched.clear();
            }
            if !moved {
                return any;
            }
            any = true;
        }
    }
}

/// Renumbers labels (each below `labels.len()`) `0..` in order of first appearance;
/// returns them and their count.
fn compact(labels: &[u32]) -> (Vec<u32>, usize) {
    let mut map = vec![u32::MAX; labels.len()];
    let mut next = 0u32;
    let out = labels
        .iter()
        .map(|&l| {
            let slot = &mut map[l as usize];
            if *slot == u32::MAX {
                *slot = next;
                next += 1;
            }
            *slot
        })
        .collect();
    (out, next as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(usize, usize, f64)]) -> WeightedGraph {
        let mut g = WeightedGraph::new(n);
        for &(a, b, w) in edges {
            g.add_edge(a, b, w);
        }
        g
    }

    #[test]
    fn csr_merges_parallel_edges_and_keeps_self_loops_apart() {
        let g = graph(3, &[(0, 1, 1.0), (1, 0, 2.0), (1, 1, 0.5), (1, 2, 1.0)]);
        let csr = Csr::from_graph(&g);
        assert_eq!(csr.row(0), (&[1u32][..], &[3.0][..]));
        assert_eq!(csr.row(1), (&[0u32, 2][..], &[3.0, 1.0][..]));
        assert_eq!(csr.self_loop, vec![0.0, 0.5, 0.0]);
        // A self-loop counts twice in the degree.
        assert_eq!(csr.degree, vec![3.0, 5.0, 1.0]);
        let total: f64 = csr.degree.iter().sum();
        assert!((total - 2.0 * g.total_weight()).abs() < 1e-12);
    }

    #[test]
    fn aggregation_keeps_weight_and_modularity() {
        let g = graph(
            5,
            &[
                (0, 1, 1.0),
                (1, 2, 2.0),
                (2, 3, 0.5),
                (3, 4, 1.5),
                (4, 0, 0.25),
                (2, 2, 0.75),
            ],
        );
        let community = [0u32, 0, 1, 1, 2];
        let csr = Csr::from_graph(&g);
        let agg = csr.aggregate(&community, 3);
        let m = g.total_weight();
        let as_usize: Vec<usize> = community.iter().map(|&c| c as usize).collect();
        for gamma in [0.5, 1.0, 2.0] {
            let direct = modularity(&g, &as_usize, gamma);
            let through = agg.singleton_modularity(m, gamma);
            assert!((direct - through).abs() < 1e-12, "{direct} vs {through}");
        }
        assert_eq!(agg.self_loop, vec![1.0, 0.5 + 0.75, 0.0]);
        let degree: f64 = agg.degree.iter().sum();
        assert!((degree - 2.0 * m).abs() < 1e-12);
    }

    #[test]
    fn local_moving_raises_modularity_and_keeps_community_totals() {
        // A ring of triangles: moves happen, and after the phase Q must exceed the
        // singleton partition's.
        let mut edges = Vec::new();
        for t in 0..6 {
            let b = 3 * t;
            edges.extend([(b, b + 1, 1.0), (b + 1, b + 2, 1.0), (b, b + 2, 1.0)]);
            edges.push((b + 2, (b + 3) % 18, 0.3));
        }
        let g = graph(18, &edges);
        let csr = Csr::from_graph(&g);
        let m = g.total_weight();
        let before = csr.singleton_modularity(m, 1.0);
        let mut moving = LocalMoving::new(&csr, m, 1.0);
        assert!(moving.run(&csr, &mut ChaCha8Rng::seed_from_u64(3)));
        let labels: Vec<usize> = moving.community.iter().map(|&c| c as usize).collect();
        let after = modularity(&g, &labels, 1.0);
        assert!(after > before + 0.1, "{before} -> {after}");
        // Sigma_tot stays consistent with the labels.
        let mut total = [0.0; 18];
        for (u, &c) in labels.iter().enumerate() {
            total[c] += csr.degree[u];
        }
        for (a, b) in total.iter().zip(&moving.total) {
            assert!((a - b).abs() < 1e-9);
        }
    }

    #[test]
    fn compact_numbers_by_first_appearance() {
        assert_eq!(compact(&[4, 4, 1, 0, 1]), (vec![0, 0, 1, 2, 1], 3));
    }

    #[test]
    #[should_panic(expected = "non-negative")]
    fn negative_weights_are_refused() {
        graph(2, &[(0, 1, -1.0)]);
    }
}
