//! The function-based testing history (Section III-B1): every performed step with its
//! screen, the acted widget, the function the model says it tests and that function's
//! step id (the IMAGE view), and the tested functions with their visit counts (the TEXT
//! view).

use std::collections::BTreeMap;

use gui_core::Rect;
use serde::{Deserialize, Serialize};

/// One performed step: the screen it was taken on and what was done there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// The exploration step (1 for the first action).
    pub step: u64,
    /// The screen's name (web: path and fragment; Android: activity).
    pub screen: String,
    /// What was done, in words: `click [3] "Cart"`.
    pub action: String,
    /// Bounds of the acted widget in screenshot pixels, when the action had one.
    pub widget: Option<Rect>,
    /// The function the model said the step tests.
    pub function: String,
    /// Position of this step within its function, from 1 ("Check budget-2").
    pub function_step: u32,
    /// Text shown on the screen (element id and text), for the detector's legend.
    pub texts: Vec<String>,
    /// The IMAGE view picture: the screen with the acted widget marked, as PNG, scaled
    /// down for prompts. Not serialised: the run folder keeps the full screenshots.
    #[serde(skip)]
    pub image_png: Vec<u8>,
}

impl HistoryEntry {
    /// A step on `screen` that did `action`, with no widget, text or picture yet; the
    /// function is filled in by [`TestingHistory::record`].
    pub fn new(step: u64, screen: impl Into<String>, action: impl Into<String>) -> Self {
        Self {
            step,
            screen: screen.into(),
            action: action.into(),
            widget: None,
            function: String::new(),
            function_step: 0,
            texts: Vec::new(),
            image_png: Vec::new(),
        }
    }

    /// The caption under the IMAGE view picture: `Check budget-2`.
    pub fn caption(&self) -> String {
        format!("{}-{}", self.function, self.function_step)
    }
}

/// The testing history of one run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TestingHistory {
    entries: Vec<HistoryEntry>,
    /// Visits per function: how many steps were spent in it.
    visits: BTreeMap<String, u32>,
    /// Functions in the order they were first tested.
    order: Vec<String>,
    /// Steps in the function currently under test (reset when it changes or finishes).
    #[serde(skip)]
    current: Option<(String, u32)>,
}

impl TestingHistory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a step. `function` is the model's name for what it tests ("" when it gave
    /// none: the step then joins the function before it). `done` closes the function, so
    /// its next visit counts again and restarts the step ids.
    pub fn record(&mut self, mut entry: HistoryEntry, function: &str, done: bool) {
        let name = normalise_function(function)
            .or_else(|| self.current.as_ref().map(|(f, _)| f.clone()))
            .unwrap_or_else(|| format!("explore {}", entry.screen));
        let n = match &mut self.current {
            Some((f, n)) if *f == name => {
                *n += 1;
                *n
            }
            _ => {
                *self.visits.entry(name.clone()).or_insert(0) += 1;
                if !self.order.contains(&name) {
                    self.order.push(name.clone());
                }
                self.current = Some((name.clone(), 1));
                1
            }
        };
        entry.function = name;
        entry.function_step = n;
        if done {
            self.current = None;
        }
        self.entries.push(entry);
    }

    /// Forgets the function under test (the app was restarted).
    pub fn interrupt(&mut self) {
        self.current = None;
    }

    pub fn entries(&self) -> &[HistoryEntry] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The last `n` entries (the "recently tested screenshots").
    pub fn recent(&self, n: usize) -> &[HistoryEntry] {
        &self.entries[self.entries.len().saturating_sub(n)..]
    }

    /// Tested functions with their visit counts, in the order first tested.
    pub fn functions(&self) -> Vec<(&str, u32)> {
        self.order
            .iter()
            .map(|f| (f.as_str(), self.visits[f]))
            .collect()
    }

    /// The TEXT view as prompt lines.
    pub fn text_view(&self) -> String {
        if self.order.is_empty() {
            return "(nothing tested yet)".into();
        }
        self.functions()
            .iter()
            .map(|(f, n)| {
                let times = if *n == 1 { "time" } else { "times" };
                format!("- {f}: visited {n} {times}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every distinct screen name in the order first seen.
    pub fn screens(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for e in &self.entries {
            if !out.contains(&e.screen.as_str()) {
                out.push(&e.screen);
            }
        }
        out
    }
}

/// Lower case, single spaces, no trailing punctuation or step id; `None` when empty.
fn normalise_function(f: &str) -> Option<String> {
    let f = f.trim().trim_end_matches(['.', '!']).trim();
    // A model that copies the caption format ("Add item-2") means the function itself.
    let f = match f.rsplit_once('-') {
        Some((head, tail)) if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit()) => {
            head.trim()
        }
        _ => f,
    };
    let f = f.split_whitespace().collect::<Vec<_>>().join(" ");
    (!f.is_empty()).then(|| {
        let mut c = f.chars();
        let first = c.next().map(|c| c.to_uppercase().collect::<String>());
        first.unwrap_or_default() + c.as_str()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(step: u64) -> HistoryEntry {
        HistoryEntry::new(step, "#/cart", "click")
    }

    #[test]
    fn functions_count_visits_and_number_their_steps() {
        let mut h = TestingHistory::new();
        h.record(entry(1), "change quantity", false);
        h.record(entry(2), "Change quantity", false);
        h.record(entry(3), "", true);
        h.record(entry(4), "apply coupon", false);
        h.record(entry(5), "change quantity-1", false);
        let caps: Vec<String> = h.entries().iter().map(HistoryEntry::caption).collect();
        assert_eq!(
            caps,
            [
                "Change quantity-1",
                "Change quantity-2",
                "Change quantity-3",
                "Apply coupon-1",
                "Change quantity-1"
            ]
        );
        assert_eq!(
            h.functions(),
            vec![("Change quantity", 2), ("Apply coupon", 1)]
        );
        assert!(h.text_view().contains("- Change quantity: visited 2 times"));
        assert_eq!(h.recent(2).len(), 2);
        assert_eq!(h.recent(2)[0].step, 4);
    }
}
