//! The logic-aware bug detector (Section III-C): the testing history as a graph of
//! screens joined by their transitions, weighted by how alike the functions of the two
//! screens are; Louvain cuts it into logically cohesive sub-sequences; each sub-sequence
//! goes to the model with the examples most like its screens (Section III-D).

use serde::{Deserialize, Serialize};

use crate::answer::parse_detect_answer;
use crate::client::{ChatRequest, LlmClient};
use crate::explorer::SuspectedBug;
use crate::history::{HistoryEntry, TestingHistory};
use crate::louvain::{LouvainConfig, WeightedGraph, louvain};
use crate::prompt::{DetectorView, detector_prompt};
use crate::retrieve::{BugScope, ExampleSet, tokens};

/// Settings of the detector.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DetectorConfig {
    /// Seeds Louvain's node order.
    pub seed: u64,
    /// Louvain's resolution (1 is plain modularity).
    pub resolution: f64,
    /// Examples retrieved per sub-sequence (the paper: K = 5).
    pub top_k: usize,
    /// Pictures per detection prompt: the last ones of a long sub-sequence.
    pub max_images: usize,
    /// Sub-sequences shorter than this are not sent (one screen is the explorer's
    /// intra-page check).
    pub min_steps: usize,
    pub max_tokens: u32,
    pub temperature: f32,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            resolution: 1.0,
            top_k: 5,
            max_images: 8,
            min_steps: 2,
            max_tokens: 500,
            temperature: 0.0,
        }
    }
}

/// One logically cohesive part of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub index: usize,
    /// History steps in order.
    pub steps: Vec<u64>,
    /// Distinct functions of those steps, in order.
    pub functions: Vec<String>,
    /// Whether it was sent to the model.
    pub checked: bool,
    /// Ids of the examples retrieved for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Why the model's answer for it could not be used, if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What the detector found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Detection {
    pub segments: Vec<Segment>,
    /// Modularity Q of the segmentation.
    pub modularity: f64,
    pub bugs: Vec<SuspectedBug>,
}

/// The history graph: node `i` is entry `i`; consecutive entries are joined with the
/// cosine similarity of their function names' tokens (zero-weight edges are left out,
/// so unrelated neighbours are not joined at all).
pub fn history_graph(entries: &[HistoryEntry]) -> WeightedGraph {
    let mut g = WeightedGraph::new(entries.len());
    for (i, pair) in entries.windows(2).enumerate() {
        let w = function_similarity(&pair[0].function, &pair[1].function);
        if w > 0.0 {
            g.add_edge(i, i + 1, w);
        }
    }
    g
}

/// Cuts the history into sub-sequences (Section III-C1). Returns the segments (steps in
/// order, segments ordered by their first step) and the modularity.
pub fn segment_history(history: &TestingHistory, config: &DetectorConfig) -> (Vec<Segment>, f64) {
    let entries = history.entries();
    if entries.is_empty() {
        return (Vec::new(), 0.0);
    }
    let graph = history_graph(entries);
    let partition = louvain(
        &graph,
        &LouvainConfig {
            seed: config.seed,
            resolution: config.resolution,
            ..LouvainConfig::default()
        },
    );
    let count = partition.community.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
    for (node, &c) in partition.community.iter().enumerate() {
        members[c].push(node);
    }
    members.retain(|m| !m.is_empty());
    members.sort_by_key(|m| m[0]);
    let segments = members
        .iter()
        .enumerate()
        .map(|(index, m)| {
            let mut functions: Vec<String> = Vec::new();
            for &i in m {
                if !functions.contains(&entries[i].function) {
                    functions.push(entries[i].function.clone());
                }
            }
            Segment {
                index,
                steps: m.iter().map(|&i| entries[i].step).collect(),
                functions,
                checked: false,
                examples: Vec::new(),
                error: None,
            }
        })
        .collect();
    (segments, partition.modularity)
}

/// Runs the detector over a finished history: segments it, and asks the model about
/// every segment of at least `min_steps` steps. An answer that cannot be read, or an
/// endpoint failure, is kept on the segment and the next segment is tried.
pub fn detect_bugs(
    client: &mut dyn LlmClient,
    app: &str,
    history: &TestingHistory,
    examples: &ExampleSet,
    config: &DetectorConfig,
) -> Detection {
    let (mut segments, modularity) = segment_history(history, config);
    let screens: Vec<String> = history.screens().iter().map(|s| s.to_string()).collect();
    let by_step = |s: u64| history.entries().iter().find(|e| e.step == s);
    let mut bugs = Vec::new();
    for seg in &mut segments {
        if seg.steps.len() < config.min_steps {
            continue;
        }
        let steps: Vec<&HistoryEntry> = seg.steps.iter().filter_map(|&s| by_step(s)).collect();
        let mut seg_screens: Vec<&str> = Vec::new();
        for e in &steps {
            if !seg_screens.contains(&e.screen.as_str()) {
                seg_screens.push(&e.screen);
            }
        }
        // The paper embeds the activity name; a segment may span several screens.
        let query = format!("{} {}", seg_screens.join(" "), seg.functions.join(" "));
        let picked: Vec<_> = examples.top_k(&query, config.top_k);
        seg.examples = picked.iter().map(|(e, _)| e.id.clone()).collect();
        let chosen: Vec<_> = picked.iter().map(|(e, _)| *e).collect();
        let messages = detector_prompt(&DetectorView {
            app,
            screens: &screens,
            steps: &steps,
            max_images: config.max_images,
            examples: &chosen,
        });
        seg.checked = true;
        let request = ChatRequest {
            messages,
            max_tokens: config.max_tokens,
            temperature: config.temperature,
            purpose: "detect".into(),
            stop: Vec::new(),
        };
        let answer = client
            .chat(&request)
            .map_err(|e| e.to_string())
            .and_then(|a| parse_detect_answer(&a.text).map_err(|e| e.to_string()));
        match answer {
            Err(e) => {
                tracing::warn!(segment = seg.index, "bug detection failed: {e}");
                seg.error = Some(e);
            }
            Ok(a) if a.bug => {
                // Steps the model names must be steps of this segment.
                let mut at: Vec<u64> = a
                    .steps
                    .iter()
                    .copied()
                    .filter(|s| seg.steps.contains(s))
                    .collect();
                if at.is_empty() {
                    at = seg.steps.clone();
                }
                let mut bug_screens = Vec::new();
                for s in &at {
                    if let Some(e) = by_step(*s)
                        && !bug_screens.contains(&e.screen)
                    {
                        bug_screens.push(e.screen.clone());
                    }
                }
                bugs.push(SuspectedBug {
                    scope: BugScope::InterPage,
                    steps: at,
                    screens: bug_screens,
                    functions: seg.functions.clone(),
                    category: a.category,
                    description: a.description,
                    reasoning: a.reasoning,
                    segment: Some(seg.index),
                });
            }
            Ok(_) => {}
        }
    }
    Detection {
        segments,
        modularity,
        bugs,
    }
}

/// Cosine similarity of two names as bags of tokens (Section III-C1: "segment the
/// textual function name into tokens, and calculate the cosine similarity").
pub fn function_similarity(a: &str, b: &str) -> f64 {
    let count = |s: &str| {
        let mut m: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
        for t in tokens(s) {
            *m.entry(t).or_insert(0.0) += 1.0;
        }
        m
    };
    let (x, y) = (count(a), count(b));
    let dot: f64 = x.iter().filter_map(|(t, n)| y.get(t).map(|m| n * m)).sum();
    let norm =
        |m: &std::collections::BTreeMap<String, f64>| m.values().map(|v| v * v).sum::<f64>().sqrt();
    let d = norm(&x) * norm(&y);
    if d == 0.0 { 0.0 } else { dot / d }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(step: u64, function: &str) -> HistoryEntry {
        HistoryEntry {
            function: function.into(),
            ..HistoryEntry::new(step, "#/x", "click")
        }
    }

    #[test]
    fn function_names_compare_by_tokens() {
        assert!((function_similarity("Edit expense", "edit expense") - 1.0).abs() < 1e-9);
        assert_eq!(function_similarity("Check budget", "Settings"), 0.0);
        let s = function_similarity("Delete a budget", "Check budget");
        assert!(s > 0.0 && s < 1.0, "{s}");
    }

    #[test]
    fn unrelated_neighbours_are_not_joined() {
        let entries = vec![
            entry(1, "Add expense"),
            entry(2, "Add expense"),
            entry(3, "Settings"),
            entry(4, "Change theme settings"),
        ];
        let g = history_graph(&entries);
        // 1-2 (weight 1) and 3-4 (weight 1/sqrt(3)); nothing between 2 and 3.
        assert!((g.total_weight() - (1.0 + 1.0 / 3f64.sqrt())).abs() < 1e-9);
    }
}
