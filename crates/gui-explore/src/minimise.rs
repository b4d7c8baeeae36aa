//! Minimised reproductions: delta debugging of the steps that led to a bug.
//!
//! [`ddmin`] is Zeller and Hildebrandt's algorithm over step indices, with two additions
//! that matter when every test replays a browser session: results are cached per subset,
//! and a test reports how many of its steps had run when the bug showed, so everything
//! after that point is dropped at once. [`reproduces`] is the test on a real device: it
//! restarts the app, plays the steps and watches for the bug's signal.

use std::collections::HashMap;
use std::time::Duration;

use gui_core::Action;
use gui_device::Device;
use serde::{Deserialize, Serialize};

use crate::{Throttle, portable_key, shell_quote};

/// What [`ddmin`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduction {
    /// Indices (into the original sequence, ascending) of the steps that are kept.
    pub kept: Vec<usize>,
    /// Tests run, cache hits not counted.
    pub tests: u32,
}

/// Why a sequence could not be minimised.
#[derive(Debug)]
pub enum DdminError<E> {
    /// The full sequence did not show the bug, so there is nothing to minimise.
    NotReproduced,
    /// A test failed (the device broke).
    Test(E),
}

impl<E: std::fmt::Display> std::fmt::Display for DdminError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotReproduced => f.write_str("the full sequence does not show the bug"),
            Self::Test(e) => write!(f, "{e}"),
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for DdminError<E> {}

/// Shrinks `0..n` to a 1-minimal subsequence for which `test` still shows the bug:
/// removing any one kept step makes it go away.
///
/// `test` receives ascending indices and returns `Ok(Some(k))` when the bug showed once
/// the first `k` of them had run (`k` ≤ the slice's length), `Ok(None)` when it did not.
pub fn ddmin<E>(
    n: usize,
    mut test: impl FnMut(&[usize]) -> Result<Option<usize>, E>,
) -> Result<Reduction, DdminError<E>> {
    let mut cache: HashMap<Vec<usize>, Option<usize>> = HashMap::new();
    let mut tests = 0u32;
    let mut run = |subset: &[usize]| -> Result<Option<Vec<usize>>, E> {
        let shown = match cache.get(subset) {
            Some(r) => *r,
            None => {
                tests += 1;
                let r = test(subset)?.map(|k| k.clamp(1, subset.len().max(1)));
                cache.insert(subset.to_vec(), r);
                r
            }
        };
        Ok(shown.map(|k| subset[..k.min(subset.len())].to_vec()))
    };

    let all: Vec<usize> = (0..n).collect();
    let mut current = match run(&all).map_err(DdminError::Test)? {
        Some(prefix) => prefix,
        None => return Err(DdminError::NotReproduced),
    };
    let mut granularity = 2usize;
    while current.len() >= 2 {
        let chunks = split(&current, granularity);
        let mut reduced = None;
        for chunk in &chunks {
            if let Some(prefix) = run(chunk).map_err(DdminError::Test)? {
                reduced = Some((prefix, 2));
                break;
            }
        }
        // With two chunks each complement is the other chunk, already tried.
        if reduced.is_none() && chunks.len() > 2 {
            for skip in 0..chunks.len() {
                let complement: Vec<usize> = chunks
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != skip)
                    .flat_map(|(_, c)| c.iter().copied())
                    .collect();
                if let Some(prefix) = run(&complement).map_err(DdminError::Test)? {
                    reduced = Some((prefix, (granularity - 1).max(2)));
                    break;
                }
            }
        }
        match reduced {
            Some((prefix, g)) => {
                current = prefix;
                granularity = g.min(current.len().max(2));
            }
            None if granularity >= current.len() => break,
            None => granularity = (granularity * 2).min(current.len()),
        }
    }
    Ok(Reduction {
        kept: current,
        tests,
    })
}

/// `items` in `parts` contiguous chunks whose sizes differ by at most one.
fn split(items: &[usize], parts: usize) -> Vec<Vec<usize>> {
    let parts = parts.clamp(1, items.len().max(1));
    let (base, extra) = (items.len() / parts, items.len() % parts);
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for p in 0..parts {
        let len = base + usize::from(p < extra);
        out.push(items[start..start + len].to_vec());
        start += len;
    }
    out
}

/// Plays `actions` on `device` from its start state and returns how many had run when a
/// signal with `key`'s portable form (see [`portable_key`]) first showed; `None` if it
/// did not.
///
/// Each action is followed by the throttle's wait; after the last one the device gets
/// `settle` more for signals still on their way. An action the device cannot perform is
/// skipped, as the exploration loop does. A lost device (a crash) is restarted and its
/// signals read, so a crash can be the bug being minimised.
pub fn reproduces(
    device: &mut dyn Device,
    throttle: &mut dyn Throttle,
    actions: &[Action],
    key: &str,
    settle: Duration,
) -> gui_device::Result<Option<usize>> {
    let wanted = portable_key(key);
    let matches = |device: &mut dyn Device| -> gui_device::Result<bool> {
        Ok(device
            .drain_signals()?
            .iter()
            .any(|s| portable_key(&s.key) == wanted))
    };
    device.restart()?;
    // Whatever the start page logged belongs to no step.
    device.drain_signals()?;
    for (i, action) in actions.iter().enumerate() {
        match device.perform(action) {
            Ok(()) => {}
            Err(e) if e.is_device_lost() => {
                device.restart()?;
                return Ok(matches(device)?.then_some(i + 1));
            }
            Err(_) => {}
        }
        match throttle.wait(device) {
            Ok(_) => {}
            Err(crate::Error::Device(e)) => return Err(e),
            Err(e) => {
                return Err(gui_device::Error::DeviceLost {
                    what: format!("throttle failed: {e}"),
                });
            }
        }
        if matches(device)? {
            return Ok(Some(i + 1));
        }
    }
    std::thread::sleep(settle);
    Ok(matches(device)?.then_some(actions.len()))
}

/// A minimised reproduction, as `replay --minimise` writes it into `minimised.json` (a
/// JSON array of these) and the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Minimised {
    /// The bug's signal key, origins removed ([`portable_key`]).
    pub key: String,
    /// The run folder whose steps were minimised.
    pub run: String,
    /// Steps of that run that were candidates (up to the bug's first step).
    pub original_steps: u64,
    /// The kept steps, by their step numbers in that run.
    pub steps: Vec<u64>,
    /// The kept actions, in order.
    pub actions: Vec<Action>,
    /// Replays it took.
    pub tests: u32,
    /// Whether a final replay of only the kept steps showed the bug again.
    pub confirmed: bool,
}

impl Minimised {
    /// The command that replays just the kept steps.
    pub fn replay_command(&self) -> String {
        let steps: Vec<String> = self.steps.iter().map(u64::to_string).collect();
        format!(
            "replay {} --only-steps {}",
            shell_quote(&self.run),
            steps.join(",")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bug that shows once all of `needed` have run, in order, in the subset.
    fn needs(needed: &[usize]) -> impl FnMut(&[usize]) -> Result<Option<usize>, ()> + '_ {
        move |subset: &[usize]| {
            let mut next = 0;
            for (i, s) in subset.iter().enumerate() {
                if next < needed.len() && *s == needed[next] {
                    next += 1;
                    if next == needed.len() {
                        return Ok(Some(i + 1));
                    }
                }
            }
            Ok(None)
        }
    }

    #[test]
    fn a_padded_sequence_shrinks_to_the_steps_the_bug_needs() {
        for needed in [vec![39], vec![0, 39], vec![7, 21, 30], vec![12, 13, 14, 15]] {
            let r = ddmin(40, needs(&needed)).unwrap();
            assert_eq!(r.kept, needed);
            assert!(r.tests < 80, "{needed:?}: {} tests", r.tests);
        }
    }

    #[test]
    fn the_prefix_cut_drops_everything_after_the_bug_at_once() {
        let mut calls = Vec::new();
        let r = ddmin(40, |s: &[usize]| {
            calls.push(s.len());
            // Step 3 alone is the bug.
            Ok::<_, ()>(s.iter().position(|&i| i == 3).map(|p| p + 1))
        })
        .unwrap();
        assert_eq!(r.kept, vec![3]);
        assert_eq!(calls[0], 40);
        // The first test already cut the sequence to 0..=3.
        assert!(calls[1..].iter().all(|&n| n <= 4), "{calls:?}");
    }

    #[test]
    fn a_sequence_without_the_bug_and_a_failing_test_are_errors() {
        assert!(matches!(
            ddmin(5, |_: &[usize]| Ok::<_, ()>(None)),
            Err(DdminError::NotReproduced)
        ));
        let mut n = 0;
        let r = ddmin(5, |_: &[usize]| {
            n += 1;
            if n == 2 {
                Err("device gone")
            } else {
                Ok(Some(5))
            }
        });
        assert!(matches!(r, Err(DdminError::Test("device gone"))));
    }

    #[test]
    fn chunks_cover_the_items_in_order() {
        let items: Vec<usize> = (0..7).collect();
        let parts = split(&items, 3);
        assert_eq!(parts, vec![vec![0, 1, 2], vec![3, 4], vec![5, 6]]);
        assert_eq!(split(&items, 10).len(), 7);
    }
}
