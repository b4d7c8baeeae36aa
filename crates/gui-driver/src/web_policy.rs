//! What the two web devices do when a page does what a person's browser would handle:
//! native dialogs, new tabs, file choosers and leaving the app's origins.

use std::path::{Path, PathBuf};

use gui_core::{DeviceEvent, DeviceEventKind};

use crate::{Error, JsCoverage, Result};

/// How native dialogs (`alert`, `confirm`, `prompt`, `beforeunload`) are answered. Every
/// dialog is answered the moment it opens, whatever call the device is waiting on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DialogPolicy {
    /// OK: `confirm` returns true, `prompt` returns [`PROMPT_TEXT`], `beforeunload` leaves.
    #[default]
    Accept,
    /// Cancel: `confirm` returns false, `prompt` returns null, `beforeunload` stays.
    Dismiss,
}

impl DialogPolicy {
    pub fn accepts(self) -> bool {
        self == DialogPolicy::Accept
    }

    /// `accept` or `dismiss`, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DialogPolicy::Accept => "accept",
            DialogPolicy::Dismiss => "dismiss",
        }
    }
}

impl std::str::FromStr for DialogPolicy {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "accept" => Ok(DialogPolicy::Accept),
            "dismiss" => Ok(DialogPolicy::Dismiss),
            other => Err(format!(
                "unknown dialog policy `{other}` (expected accept or dismiss)"
            )),
        }
    }
}

/// The word a `prompt()` gets when dialogs are accepted: the same word an `input` action
/// types by default.
pub const PROMPT_TEXT: &str = crate::DEFAULT_TEXT;

/// The origins that count as the app: the start URL's, plus any the user allows
/// (`--allow-origin`). A page of another origin is left for the app again; a new tab of
/// one of these origins may be followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppOrigins {
    origins: Vec<String>,
}

impl AppOrigins {
    /// The origin of `start_url` and the `extra` ones (given as origins or as URLs).
    pub fn new(start_url: &str, extra: &[String]) -> Self {
        let mut origins = vec![JsCoverage::origin_of(start_url)];
        for e in extra {
            let o = JsCoverage::origin_of(e.trim_end_matches('/'));
            if !origins.contains(&o) {
                origins.push(o);
            }
        }
        Self { origins }
    }

    /// The start URL's origin.
    pub fn primary(&self) -> &str {
        &self.origins[0]
    }

    pub fn all(&self) -> &[String] {
        &self.origins
    }

    /// Whether `url` belongs to the app. `about:blank` and other URLs without an
    /// authority belong to no origin and are not the app.
    pub fn contains(&self, url: &str) -> bool {
        url.contains("://") && self.origins.contains(&JsCoverage::origin_of(url))
    }
}

/// The event of a native dialog the device answered: `confirm "Delete?" accepted`. Both
/// web devices write dialogs this way.
pub(crate) fn dialog_event(kind: &str, message: &str, accepted: bool) -> DeviceEvent {
    let answer = if accepted { "accepted" } else { "dismissed" };
    DeviceEvent::new(
        DeviceEventKind::Dialog,
        format!("{kind} {message:?} {answer}"),
    )
}

/// The name of the file a file chooser is given.
pub(crate) const UPLOAD_NAME: &str = "gui-testing-upload.txt";

/// The small file a file chooser is given: written once per device into `dir`, so an
/// upload form sees a real, readable text file.
pub(crate) fn upload_file(dir: &Path) -> Result<PathBuf> {
    let path = dir.join(UPLOAD_NAME);
    std::fs::write(
        &path,
        b"A file chosen by gui-testing for an upload field.\n",
    )
    .map_err(|e| Error::io(format!("write {}", path.display()), e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_origins_count_as_the_app() {
        let o = AppOrigins::new(
            "http://127.0.0.1:8080/index.html",
            &[
                "https://cdn.example.com/".into(),
                "http://127.0.0.1:8080".into(),
            ],
        );
        assert_eq!(o.all().len(), 2);
        assert!(o.contains("http://127.0.0.1:8080/a/b?c"));
        assert!(o.contains("https://cdn.example.com/x.js"));
        assert!(!o.contains("http://127.0.0.1:9090/"));
        assert!(!o.contains("about:blank"));
        assert!(!o.contains("chrome-error://chromewebdata/"));
    }

    #[test]
    fn policies_parse_by_name() {
        assert_eq!("accept".parse(), Ok(DialogPolicy::Accept));
        assert_eq!("dismiss".parse(), Ok(DialogPolicy::Dismiss));
        assert!("maybe".parse::<DialogPolicy>().is_err());
        assert_eq!(DialogPolicy::default().name(), "accept");
    }
}
