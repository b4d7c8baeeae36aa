//! Plug-in `code-novelty`: on a device that measures the app's code coverage (the web),
//! a step showed something new when it ran code the run had not run, whatever the
//! screen did.
//!
//! The agent's own judge is pixels: a screen, or a part of one, not seen before. A
//! tester wants new behaviour of the app, and the two part ways: a tooltip, a hover
//! menu or a scrolled list shows new pixels and runs nothing new, while a button whose
//! handler validates a field and shows nothing runs new code. Coverage after every step
//! ([`gui_core::Transition::coverage`]) tells behaviour apart directly, so where it is
//! measured it replaces the screen as the judge of novelty.
//!
//! The kind-level generalisation this invites (after ten right clicks on static text
//! that ran no code, stop right-clicking text) needs no plug-in of its own: the effect
//! prior already keeps a record per (action kind, target widget kind)
//! ([`EffectPrior`](crate::EffectPrior)), and with this plug-in on, that record counts
//! steps that covered new code.

use gui_core::CoverageSnapshot;

use super::{FinishedStep, Plugin};
use crate::{AgentConfig, Result};

/// What a step that ran code not run before is paid: the most Eq. 1 pays, that of a
/// first arrival on a page with nothing executed, `(1 − 0/m) / √1`.
pub(crate) const NEW_CODE_REWARD: f64 = 1.0;

/// The most code the run had covered, over every coverage snapshot the agent was given
/// (functions, bytes).
///
/// Snapshots are cumulative over the run (and, with several workers, merged over them),
/// so the most seen so far is the previous step's snapshot; a high-water mark also stays
/// right when a device's restart or another worker's order of commits hands in a smaller
/// one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CoverageMark {
    most: Option<(u64, u64)>,
}

impl CoverageMark {
    /// Whether `coverage` covers more functions or more bytes than any snapshot before,
    /// and raises the mark to it; `None` for the first snapshot, which has nothing to be
    /// compared with.
    ///
    /// Bytes count as well as functions. They are V8's block coverage, so they rise on a
    /// new branch of a function that ran before (a submit handler's path for valid input,
    /// another case of a reducer): new behaviour, and often the step that opens the way
    /// to new functions, which the suite counts. A new function adds its bytes too, so
    /// functions matter on their own only where bytes cannot be merged: with several
    /// workers, bytes are the best single device's, functions the union. Coverage is a
    /// union over the run, so code that runs again and again (timers, animations, hover
    /// handlers) counts once.
    pub fn raise(&mut self, coverage: &CoverageSnapshot) -> Option<bool> {
        let now = (coverage.functions_covered, coverage.bytes_covered);
        let before = self.most.replace(match self.most {
            Some((f, b)) => (f.max(now.0), b.max(now.1)),
            None => now,
        })?;
        Some(now.0 > before.0 || now.1 > before.1)
    }
}

/// Plug-in `code-novelty`. When a step's coverage was measured and a snapshot before it
/// exists, it is novel if and only if it covered new code ([`CoverageMark::raise`]):
///
/// - novelty replaces the screen's judgement (it is not combined with it): everything
///   that learns from novelty after this plug-in (the effect prior's records, its kind
///   level included, `state-refresh`, `stall-reset`, `command-states`) and the counters
///   `novel_steps` and `idle_steps` follow code, so a step that ran nothing new is idle
///   even when the screen changed. Or-ing the two would keep every pixel-only novelty
///   the plug-in is there to discount; and-ing them would lose handlers that change
///   nothing on the screen.
/// - a step that covered new code is paid [`NEW_CODE_REWARD`], what Eq. 1 pays the first
///   arrival on a fresh page, also when its screen did not change (over `idle-reward`'s
///   0). The others keep their pay: Eq. 1, or `idle-reward`'s when the screen did not
///   change, so the network still learns the paper's drive toward unexplored pages
///   between the rarer steps that run new code.
///
/// Steps without coverage (desktop, Android, the first step of a run) keep the screen's
/// judgement and pay. The plug-in must come after `local-novelty` and `idle-reward`,
/// whose judgement it overrides, and before the plug-ins that learn from novelty.
#[derive(Debug)]
pub(crate) struct CodeNovelty;

impl CodeNovelty {
    pub fn new(_: &AgentConfig) -> Self {
        Self
    }
}

impl Plugin for CodeNovelty {
    fn name(&self) -> &'static str {
        "code-novelty"
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if let Some(new) = step.prev.new_code {
            step.novel = new;
            step.idle = !new;
            if new {
                step.reward = Some(NEW_CODE_REWARD);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(functions: u64, bytes: u64) -> CoverageSnapshot {
        CoverageSnapshot {
            functions_covered: functions,
            bytes_covered: bytes,
            ..CoverageSnapshot::default()
        }
    }

    #[test]
    fn new_code_is_more_functions_or_more_bytes_than_ever_before() {
        let mut mark = CoverageMark::default();
        assert_eq!(mark.raise(&snapshot(10, 1000)), None);
        assert_eq!(mark.raise(&snapshot(10, 1000)), Some(false));
        assert_eq!(mark.raise(&snapshot(10, 1200)), Some(true));
        assert_eq!(mark.raise(&snapshot(11, 1200)), Some(true));
        // A restarted device that counts from less again is not new until it passes
        // the most seen.
        assert_eq!(mark.raise(&snapshot(3, 300)), Some(false));
        assert_eq!(mark.raise(&snapshot(11, 1200)), Some(false));
        assert_eq!(mark.raise(&snapshot(12, 1100)), Some(true));
    }
}
