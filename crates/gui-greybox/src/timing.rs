//! Where the time of a walk over a live app goes: the ripper's [`RipTiming`] and
//! Monkey++'s survey both split their time into named parts that do not overlap.
//!
//! The app's settle waits happen inside nearly every part (after a launch, an event, a
//! way back), and they dominate on a slow page; counting them in the part that caused
//! them would hide how much of a rip is spent waiting. So a part is measured with a
//! [`SettleClock`], which takes the waits the app reports ([`GreyboxApp::time_waited`])
//! out of the part and puts them in a waiting part of their own.
//!
//! [`RipTiming`]: crate::RipTiming

use std::time::{Duration, Instant};

use crate::GreyboxApp;

/// A breakdown of time into named parts, one of which takes every settle wait.
pub trait TimeBreakdown {
    /// The part the app's settle waits are added to, in milliseconds.
    fn waits(&mut self) -> &mut u64;
}

/// Measures one piece of work on the app: its time, less the app's settle waits within
/// it.
#[derive(Debug, Clone, Copy)]
pub struct SettleClock {
    at: Instant,
    waited: Duration,
}

impl SettleClock {
    pub fn start(app: &dyn GreyboxApp) -> SettleClock {
        SettleClock {
            at: Instant::now(),
            waited: app.time_waited(),
        }
    }

    /// Adds the time since [`start`](Self::start), less the settle waits within it, to
    /// `part` of `timing`, and those waits to its [`TimeBreakdown::waits`].
    pub fn stop<T: TimeBreakdown>(
        self,
        app: &dyn GreyboxApp,
        timing: &mut T,
        part: fn(&mut T) -> &mut u64,
    ) {
        let waited = app.time_waited().saturating_sub(self.waited);
        let spent = self.at.elapsed().saturating_sub(waited);
        *part(timing) += spent.as_millis() as u64;
        *timing.waits() += waited.as_millis() as u64;
    }
}

/// `parts` (name, milliseconds), largest first; equal parts keep their order.
pub fn largest_first(mut parts: Vec<(&'static str, u64)>) -> Vec<(&'static str, u64)> {
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    parts
}

/// One line giving each of `parts` as a share of `total_ms`, in the order given, then the
/// share no part accounts for as `other`: `firing 40%, waiting 35%, other 25%`.
pub fn share_line(parts: &[(&'static str, u64)], total_ms: u64) -> String {
    let total = total_ms.max(1) as f64;
    let counted: u64 = parts.iter().map(|p| p.1).sum();
    let mut line: Vec<String> = parts
        .iter()
        .map(|(name, ms)| format!("{name} {:.0}%", *ms as f64 * 100.0 / total))
        .collect();
    line.push(format!(
        "other {:.0}%",
        total_ms.saturating_sub(counted) as f64 * 100.0 / total
    ));
    line.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_parts_keep_their_order_and_the_rest_is_other() {
        let parts = largest_first(vec![("a", 10), ("b", 30), ("c", 10)]);
        assert_eq!(parts, [("b", 30), ("a", 10), ("c", 10)]);
        assert_eq!(share_line(&parts, 100), "b 30%, a 10%, c 10%, other 50%");
    }

    #[test]
    fn a_zero_total_gives_no_division_by_zero() {
        assert_eq!(share_line(&[("a", 0)], 0), "a 0%, other 0%");
    }
}
