use serde::{Deserialize, Serialize};

/// What a device did for the app between two screenshots, as a person's browser or
/// window manager would: answer a native dialog, close a tab the app opened, pick a file,
/// take a download, bring the app back after it left. None of these is a bug; they are
/// recorded (`events.jsonl`, the report) and shown to strategies
/// ([`Transition::device_events`](crate::Transition::device_events)).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeviceEvent {
    pub kind: DeviceEventKind,
    /// What it was about: a dialog's type and message and the answer given, a tab's URL,
    /// a file's name. One line, at most [`DeviceEvent::MAX_DETAIL`] bytes.
    pub detail: String,
}

impl DeviceEvent {
    /// Longest detail kept; a page can put megabytes into an `alert`.
    pub const MAX_DETAIL: usize = 512;

    /// An event whose detail is cut to one line of at most [`Self::MAX_DETAIL`] bytes
    /// (on a character boundary, with `…` where text was cut).
    pub fn new(kind: DeviceEventKind, detail: impl AsRef<str>) -> Self {
        let detail = detail.as_ref();
        let one_line: String = detail
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let mut cut = one_line.len().min(Self::MAX_DETAIL);
        while !one_line.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut detail = one_line[..cut].to_owned();
        if cut < one_line.len() {
            detail.push('…');
        }
        Self { kind, detail }
    }
}

impl std::fmt::Display for DeviceEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.detail)
    }
}

/// The kinds of [`DeviceEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceEventKind {
    /// A native dialog (`alert`, `confirm`, `prompt`, `beforeunload`) was answered.
    Dialog,
    /// A new tab or popup window was closed, and the app's own page kept.
    TabClosed,
    /// The app closed its own window (`window.close()`); it was opened again.
    WindowReopened,
    /// A file chooser was answered with a file, or cancelled.
    FileChooser,
    /// A download started (into a temporary folder).
    Download,
    /// The page left the app's origins (a link out, an unreachable host) and was brought
    /// back.
    LeftApp,
    /// A page did not finish loading in time; the device went on with what was shown.
    LoadIncomplete,
}

impl DeviceEventKind {
    pub const ALL: [DeviceEventKind; 7] = [
        Self::Dialog,
        Self::TabClosed,
        Self::WindowReopened,
        Self::FileChooser,
        Self::Download,
        Self::LeftApp,
        Self::LoadIncomplete,
    ];

    /// The snake_case name used in `events.jsonl` and reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dialog => "dialog",
            Self::TabClosed => "tab_closed",
            Self::WindowReopened => "window_reopened",
            Self::FileChooser => "file_chooser",
            Self::Download => "download",
            Self::LeftApp => "left_app",
            Self::LoadIncomplete => "load_incomplete",
        }
    }

    /// The kind named `name` ([`name`](Self::name)).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_are_one_bounded_line_cut_on_a_char_boundary() {
        let long = "é".repeat(DeviceEvent::MAX_DETAIL);
        let e = DeviceEvent::new(DeviceEventKind::Dialog, format!("alert\n{long}"));
        assert!(!e.detail.contains('\n'));
        assert!(e.detail.len() <= DeviceEvent::MAX_DETAIL + '…'.len_utf8());
        assert!(e.detail.ends_with('…'));
        assert!(e.detail.starts_with("alert é"));
    }

    #[test]
    fn names_round_trip() {
        for k in DeviceEventKind::ALL {
            assert_eq!(DeviceEventKind::from_name(k.name()), Some(k));
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::String(k.name().into())
            );
        }
    }
}
