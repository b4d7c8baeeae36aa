//! The lines of `events.jsonl` sorted for a report: what the device handled for the app
//! (`gui_core::DeviceEventKind`: a native dialog answered, a tab closed, the app brought
//! back after it left, ...), none of them a bug, and the exploration loop's own events (a
//! device lost and restarted, a run resumed). Other lines, such as the `test_case` lines
//! of a grey-box replay, have sections of their own or none.

use std::collections::BTreeMap;

use gui_core::DeviceEventKind;
use gui_explore::EventRecord;

use crate::RunFolder;

/// The events `gui_explore::explore` writes about the run itself rather than the app.
pub(crate) const LOOP_EVENTS: [&str; 5] = [
    "device_lost",
    "device_restarted",
    "restart_failed",
    "resumed",
    "replay_diverged",
];

impl RunFolder {
    /// What the device handled for the app, in the order it was recorded.
    pub fn device_events(&self) -> impl Iterator<Item = (DeviceEventKind, &EventRecord)> {
        self.events
            .iter()
            .filter_map(|e| Some((DeviceEventKind::from_name(&e.event)?, e)))
    }

    /// How often the device handled each kind of event, every kind listed (0 when never).
    /// A line whose repeats within one step were folded into it (its detail ends in
    /// `(×N)`) counts N times.
    pub fn device_event_counts(&self) -> BTreeMap<DeviceEventKind, u64> {
        let mut counts: BTreeMap<DeviceEventKind, u64> =
            DeviceEventKind::ALL.into_iter().map(|k| (k, 0)).collect();
        for (kind, e) in self.device_events() {
            *counts.entry(kind).or_default() += repeats(&e.detail);
        }
        counts
    }

    /// The loop's own events (`device_lost`, `device_restarted`, `restart_failed`,
    /// `resumed`, `replay_diverged`), in the order recorded.
    pub fn loop_events(&self) -> impl Iterator<Item = &EventRecord> {
        self.events
            .iter()
            .filter(|e| LOOP_EVENTS.contains(&e.event.as_str()))
    }
}

/// How many events one line stands for: N for a detail that `explore`'s `fold_repeats`
/// ended in ` (×N)`, else 1.
pub(crate) fn repeats(detail: &str) -> u64 {
    detail
        .strip_suffix(')')
        .and_then(|d| d.rsplit_once(" (×"))
        .and_then(|(_, n)| n.parse::<u64>().ok())
        .filter(|&n| n > 1)
        .unwrap_or(1)
}

/// What the report calls a count of each kind, by [`DeviceEventKind::name`]. Keyed by
/// name rather than matched on the enum so that gui-core can add a kind without breaking
/// this crate; a test checks every kind has a label here.
const COUNT_LABELS: [(&str, &str); 7] = [
    ("dialog", "dialogs answered"),
    ("tab_closed", "tabs closed"),
    ("window_reopened", "windows reopened"),
    ("file_chooser", "file choosers answered"),
    ("download", "downloads"),
    ("left_app", "returns to the app"),
    ("load_incomplete", "loads not finished"),
];

/// What the report calls a count of `kind`: "dialogs answered", "tabs closed", ... (the
/// kind's name for one not listed yet).
pub(crate) fn count_label(kind: DeviceEventKind) -> &'static str {
    COUNT_LABELS
        .iter()
        .find(|(name, _)| *name == kind.name())
        .map_or(kind.name(), |(_, label)| label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_repeats_count_as_many_as_they_stand_for() {
        assert_eq!(repeats(r#"alert "hi" accepted (×12)"#), 12);
        assert_eq!(repeats(r#"alert "hi" accepted"#), 1);
        assert_eq!(repeats(r#"alert "(×3" accepted"#), 1);
        assert_eq!(repeats("http://x/(×3)"), 1, "no space before the count");
        assert_eq!(repeats("a (×x)"), 1);
    }

    #[test]
    fn every_device_event_kind_has_a_label() {
        for kind in DeviceEventKind::ALL {
            assert_ne!(
                count_label(kind),
                kind.name(),
                "add {} to COUNT_LABELS",
                kind.name()
            );
        }
    }
}
