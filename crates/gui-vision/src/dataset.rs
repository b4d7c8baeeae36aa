//! Labelled screens: a screenshot and the boxes and kinds a person would call widgets.
//!
//! On disk a data set is a folder tree `<root>/<app>/<viewport>/<page>.png` with a
//! `<page>.json` beside each PNG holding a [`LabelledScreen`]. `cargo xtask vision-data`
//! writes it from real pages in Chromium (the DOM gives boxes and kinds); a small subset is
//! committed under `crates/gui-vision/tests/data/screens` as golden fixtures.

use std::path::{Path, PathBuf};

use gui_core::{Rect, WidgetKind};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Format tag written into every label file.
pub const LABEL_FORMAT: &str = "gui-vision-labels";
/// Version of the label format; bumped on incompatible changes.
pub const LABEL_VERSION: u32 = 1;

/// One labelled screenshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelledScreen {
    pub format: String,
    pub version: u32,
    /// The application (a subject name from `subjects.toml`, or `demo`). Train/test
    /// splits are made by app, never by screen.
    pub app: String,
    /// `desktop` or `mobile`.
    pub viewport: String,
    /// A name for the page or state, unique within app and viewport.
    pub page: String,
    /// The URL the screen was captured from.
    pub url: String,
    /// Screenshot size in pixels.
    pub width: u32,
    pub height: u32,
    /// Device pixels per CSS pixel of the screenshot (boxes are in screenshot pixels).
    pub scale: f32,
    /// The PNG's file name, relative to the label file.
    pub screenshot: String,
    pub widgets: Vec<LabelledWidget>,
}

/// One labelled widget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelledWidget {
    /// The box in screenshot pixels, clipped to the screen.
    pub rect: Rect,
    pub kind: WidgetKind,
    /// Where the label came from: `dom` or `hand`.
    pub source: String,
    /// The element it came from (`button#save`, `input[type=checkbox]`, ...), for reading
    /// the data and for saying where DOM boxes are not what a person would call a widget.
    #[serde(default)]
    pub element: String,
    /// Visible text, if any (trimmed, at most 80 characters).
    #[serde(default)]
    pub text: String,
}

impl LabelledScreen {
    /// Reads a label file.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::Dataset {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let screen: Self = serde_json::from_slice(&bytes).map_err(|e| Error::Dataset {
            path: path.to_path_buf(),
            message: format!("not a label file: {e}"),
        })?;
        if screen.format != LABEL_FORMAT || screen.version != LABEL_VERSION {
            return Err(Error::Dataset {
                path: path.to_path_buf(),
                message: format!(
                    "format {} v{}, expected {LABEL_FORMAT} v{LABEL_VERSION}",
                    screen.format, screen.version
                ),
            });
        }
        Ok(screen)
    }

    /// Writes the label file (pretty JSON).
    pub fn save(&self, path: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(self).expect("labels serialise");
        std::fs::write(path, json).map_err(|e| Error::Dataset {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }
}

/// Which side of the train/test split an app's screens belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    Train,
    Test,
}

/// The split of an app: held-out test apps are the TodoMVC family and jQuery UI, every
/// other app (the demo, jsoneditor, ace, 2048, ...) is for training.
///
/// Splitting by app, never by screen, keeps a detector or classifier from being scored on
/// pictures of an app it has already seen. All `todomvc-*` variants go together because
/// they share one stylesheet (todomvc-common `base.css`): the same widgets drawn the same
/// way, whatever framework builds them, so one in train and another in test would leak.
pub fn split_of(app: &str) -> Split {
    if app.starts_with("todomvc") || app == "jquery-ui" {
        Split::Test
    } else {
        Split::Train
    }
}

impl LabelledScreen {
    /// The labelled widgets as a person sees them on `screenshot`, the evaluation protocol
    /// of `cargo xtask vision eval`: each box is tightened to its visible pixels
    /// ([`tighten_to_ink`](crate::tighten_to_ink)), and a box showing nothing is dropped.
    pub fn visible_widgets(&self, screenshot: &image::RgbImage) -> Vec<(Rect, WidgetKind)> {
        self.widgets
            .iter()
            .filter_map(|w| crate::tighten_to_ink(screenshot, w.rect).map(|r| (r, w.kind)))
            .collect()
    }
}

/// A label file found in a data set folder, with the path of its screenshot.
#[derive(Debug, Clone)]
pub struct DatasetEntry {
    pub labels: LabelledScreen,
    pub label_path: PathBuf,
    pub screenshot_path: PathBuf,
}

/// Every label file under `root`, sorted by path (so iteration order is stable); a
/// `summary.json` is not a label file and is passed over.
pub fn load_dataset(root: &Path) -> Result<Vec<DatasetEntry>> {
    let mut files = Vec::new();
    collect_json(root, &mut files)?;
    files.sort();
    let mut out = Vec::with_capacity(files.len());
    for label_path in files {
        let labels = LabelledScreen::load(&label_path)?;
        let screenshot_path = label_path
            .parent()
            .unwrap_or(Path::new("."))
            .join(&labels.screenshot);
        out.push(DatasetEntry {
            labels,
            label_path,
            screenshot_path,
        });
    }
    Ok(out)
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Dataset {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    for entry in entries {
        let path = entry
            .map_err(|e| Error::Dataset {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })?
            .path();
        if path.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json")
            // Counts written by `cargo xtask vision-data` beside the screens, not labels.
            && path.file_name().is_some_and(|n| n != "summary.json")
        {
            out.push(path);
        }
    }
    Ok(())
}
