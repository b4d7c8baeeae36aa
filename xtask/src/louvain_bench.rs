//! `cargo xtask louvain-bench`: gui-llm's Louvain against networkx's
//! `louvain_communities` on the same seeded testing-history graph: time and modularity.
//!
//! The graph imitates the one VisionDroid segments (Section III-C1): nodes are explored
//! screens in time order, visited in runs that belong to one function at a time and come
//! back to functions seen before; a function's screens are linked with similarity weights
//! near 1, different functions sparsely with weights near 0, and consecutive screens by
//! the similarity of their function names (0 when the functions share nothing).
//!
//! Options: `--nodes N` (2000), `--seed S` (1; the graph and both Louvain runs),
//! `--runs N` (5 timed runs per side), `--out DIR` (target/louvain-bench).
//! Writes `graph.tsv`, `ours.txt` (our communities) and `report.md` there.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use gui_llm::{LouvainConfig, WeightedGraph, louvain, modularity};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const USAGE: &str =
    "usage: cargo xtask louvain-bench [--nodes N] [--seed S] [--runs N] [--out DIR]";

/// The targets of the issue: modularity within this of networkx's ...
const MAX_MODULARITY_GAP: f64 = 0.01;
/// ... and at least this many times faster.
const MIN_SPEEDUP: f64 = 10.0;

#[derive(Debug)]
struct Options {
    nodes: usize,
    seed: u64,
    runs: usize,
    out: PathBuf,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        nodes: 2000,
        seed: 1,
        runs: 5,
        out: crate::root().join("target/louvain-bench"),
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        match flag {
            "--nodes" => o.nodes = value.parse().context("--nodes takes a number")?,
            "--seed" => o.seed = value.parse().context("--seed takes a number")?,
            "--runs" => o.runs = value.parse().context("--runs takes a number")?,
            "--out" => o.out = PathBuf::from(value),
            other => bail!("unknown option `{other}`\n{USAGE}"),
        }
    }
    if o.nodes < 2 || o.runs == 0 {
        bail!("--nodes must be at least 2 and --runs at least 1\n{USAGE}");
    }
    Ok(o)
}

/// Functions explored in a history of `nodes` screens: about one per 50 screens.
fn function_count(nodes: usize) -> usize {
    (nodes / 50).max(2)
}

/// A seeded testing-history graph on `nodes` screens: undirected edges `(a, b, w)` with
/// `a < b`, each pair once.
fn history_graph(nodes: usize, seed: u64) -> Vec<(usize, usize, f64)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Functions of varied popularity: function f is picked with weight 1/(f+1)^0.7, so a
    // few are explored often (large communities) and many rarely.
    let functions = function_count(nodes);
    let popularity: Vec<f64> = (0..functions)
        .map(|f| 1.0 / ((f + 1) as f64).powf(0.7))
        .collect();
    let total: f64 = popularity.iter().sum();
    let pick = |rng: &mut ChaCha8Rng| {
        let mut x = rng.random::<f64>() * total;
        for (f, p) in popularity.iter().enumerate() {
            x -= p;
            if x < 0.0 {
                return f;
            }
        }
        functions - 1
    };
    // Screens in time order, explored in runs of 5 to 40 steps on one function.
    let mut function_of = Vec::with_capacity(nodes);
    while function_of.len() < nodes {
        let f = pick(&mut rng);
        let run = rng.random_range(5..=40).min(nodes - function_of.len());
        function_of.extend(std::iter::repeat_n(f, run));
    }
    let mut members = vec![Vec::new(); functions];
    for (node, &f) in function_of.iter().enumerate() {
        members[f].push(node);
    }

    let mut edges: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    let mut add = |a: usize, b: usize, w: f64| {
        if a != b {
            *edges.entry((a.min(b), a.max(b))).or_default() += w;
        }
    };
    // Transitions: similar names within a function, unrelated or slightly related across.
    for i in 1..nodes {
        let w = if function_of[i] == function_of[i - 1] {
            rng.random_range(0.6..1.0)
        } else if rng.random_bool(0.5) {
            0.0
        } else {
            rng.random_range(0.05..0.25)
        };
        add(i - 1, i, w);
    }
    // Screens of one function seen at different times: 2 to 4 links each.
    for node in 0..nodes {
        let same = &members[function_of[node]];
        if same.len() < 2 {
            continue;
        }
        for _ in 0..rng.random_range(2..=4) {
            let other = same[rng.random_range(0..same.len())];
            add(node, other, rng.random_range(0.4..1.0));
        }
    }
    // Links between functions that share words ("edit expense", "delete expense"): one
    // per node on average, weaker than links within a function.
    for _ in 0..nodes {
        let (a, b) = (rng.random_range(0..nodes), rng.random_range(0..nodes));
        if function_of[a] != function_of[b] {
            add(a, b, rng.random_range(0.05..0.5));
        }
    }
    edges.into_iter().map(|((a, b), w)| (a, b, w)).collect()
}

pub fn run(rest: &[String]) -> Result<()> {
    if let Some(done) = crate::in_release("louvain-bench", rest) {
        return done;
    }
    let o = parse(rest)?;
    crate::pip_install("louvain-bench", "networkx", "networkx")?;
    std::fs::create_dir_all(&o.out).with_context(|| o.out.display().to_string())?;

    let edges = history_graph(o.nodes, o.seed);
    let mut tsv = format!("# nodes {}\n", o.nodes);
    for &(a, b, w) in &edges {
        let _ = writeln!(tsv, "{a}\t{b}\t{w}");
    }
    let graph_path = o.out.join("graph.tsv");
    std::fs::write(&graph_path, tsv).with_context(|| graph_path.display().to_string())?;
    let mut graph = WeightedGraph::new(o.nodes);
    for &(a, b, w) in &edges {
        graph.add_edge(a, b, w);
    }

    // Ours: run i uses seed S + i, like the networkx script; each run's time is the mean
    // over enough calls to last 100 ms, for a stable clock.
    let mut ours_ms = Vec::new();
    let mut ours = Vec::new();
    for run in 0..o.runs {
        let config = LouvainConfig {
            seed: o.seed + run as u64,
            ..LouvainConfig::default()
        };
        let start = Instant::now();
        let mut calls = 0u32;
        let mut partition = louvain(&graph, &config);
        while calls < 3 || start.elapsed().as_millis() < 100 {
            partition = louvain(std::hint::black_box(&graph), &config);
            calls += 1;
        }
        ours_ms.push(start.elapsed().as_secs_f64() * 1e3 / f64::from(calls));
        ours.push(partition);
    }
    let ours_path = o.out.join("ours.txt");
    let labels: Vec<String> = ours[0].community.iter().map(usize::to_string).collect();
    std::fs::write(&ours_path, labels.join("\n"))
        .with_context(|| ours_path.display().to_string())?;
    let our_qs: Vec<f64> = ours
        .iter()
        .map(|p| modularity(&graph, &p.community, 1.0))
        .collect();

    let script = crate::root().join("xtask/scripts/louvain_networkx.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&graph_path)
        .args(["--seed", &o.seed.to_string()])
        .args(["--runs", &o.runs.to_string()])
        .arg("--partition")
        .arg(&ours_path)
        .output()
        .with_context(|| format!("running python3 {}", script.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed:\n{}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let nx: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("louvain_networkx.py output")?;
    let numbers = |key: &str| -> Vec<f64> {
        nx[key]
            .as_array()
            .map(|v| v.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default()
    };
    let (nx_ms, nx_qs, nx_counts) = (
        numbers("runs_ms"),
        numbers("modularity"),
        numbers("communities"),
    );
    let Some(nx_q_ours) = nx["modularity_of_given"].as_f64() else {
        bail!("louvain_networkx.py printed no modularity for our partition: {nx}");
    };
    if nx_ms.len() != o.runs || nx_qs.len() != o.runs {
        bail!("louvain_networkx.py printed an incomplete answer: {nx}");
    }
    if nx["edges"].as_u64() != Some(edges.len() as u64) {
        bail!(
            "networkx read {} edges from {}, we wrote {}",
            nx["edges"],
            graph_path.display(),
            edges.len()
        );
    }
    // Our modularity function must agree with networkx's on the same partition.
    if (nx_q_ours - our_qs[0]).abs() > 1e-9 {
        bail!(
            "networkx gives our partition Q = {nx_q_ours}, we compute {}",
            our_qs[0]
        );
    }

    let (nx_median, ours_median) = (crate::median(&nx_ms), crate::median(&ours_ms));
    let ratio = nx_median / ours_median;
    let (nx_q, our_q) = (crate::median(&nx_qs), crate::median(&our_qs));
    let gap = (our_q - nx_q).abs();
    let our_counts: Vec<f64> = ours.iter().map(|p| p.count() as f64).collect();
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    let mut report = String::new();
    let _ = writeln!(
        report,
        "# Louvain: gui-llm against networkx {}\n\n\
         Command: `cargo xtask louvain-bench --nodes {} --seed {} --runs {}`.\n\n\
         Graph: a seeded testing history (`{}`) with {} functions planted as communities. \
         Both sides run {} times, run i with seed {} + i (each in its own random generator, \
         so the partitions differ); times and Q are medians over the runs, graph loading \
         excluded on both sides.\n\n\
         - ours: {} ms; Q {}\n\
         - networkx: {} ms; Q {}\n\
         - networkx.community.modularity of our first partition: {nx_q_ours:.6} (ours: {:.6})\n",
        nx["networkx"].as_str().unwrap_or("?"),
        o.nodes,
        o.seed,
        o.runs,
        graph_path.display(),
        function_count(o.nodes),
        o.runs,
        o.seed,
        list(&ours_ms, 2),
        list(&our_qs, 4),
        list(&nx_ms, 1),
        list(&nx_qs, 4),
        our_qs[0],
    );
    let _ = writeln!(
        report,
        "| nodes | edges | networkx ms | ours ms | speed-up | networkx Q | our Q | abs dQ | communities (nx / ours) | abs dQ <= {MAX_MODULARITY_GAP} | speed-up >= {MIN_SPEEDUP}x |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n\
         | {} | {} | {nx_median:.1} | {ours_median:.2} | {ratio:.0}x | {nx_q:.4} | {our_q:.4} | {gap:.4} | {} / {} | {} | {} |",
        o.nodes,
        edges.len(),
        crate::median(&nx_counts),
        crate::median(&our_counts),
        verdict(gap <= MAX_MODULARITY_GAP),
        verdict(ratio >= MIN_SPEEDUP),
    );
    let path = o.out.join("report.md");
    std::fs::write(&path, &report).with_context(|| path.display().to_string())?;
    println!("{report}");
    eprintln!("louvain-bench: wrote {}", path.display());
    Ok(())
}

/// `values` with `decimals` decimals, comma-separated.
fn list(values: &[f64], decimals: usize) -> String {
    let parts: Vec<String> = values.iter().map(|v| format!("{v:.decimals$}")).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_graph_is_seeded_and_about_five_edges_per_node() {
        let a = history_graph(2000, 1);
        assert_eq!(a, history_graph(2000, 1));
        assert_ne!(a, history_graph(2000, 2));
        assert!((8_000..12_000).contains(&a.len()), "{} edges", a.len());
        assert!(a.iter().all(|&(x, y, w)| x < y && y < 2000 && w >= 0.0));
    }
}
