//! The function-based testing history (Section III-B1): every performed step with its
//! screen, the acted widget, the function the model says it tests and that function's
//! step id (the IMAGE view), and the tested functions with their visit counts (the TEXT
//! view).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// down for prompts. In memory while the step is recent, then on disk (see
    /// [`TestingHistory::with_pictures`]). Not serialised: the run folder keeps the full
    /// screenshots.
    #[serde(skip)]
    pub image: StepImage,
}

/// Where a step's picture is: in memory, in a file, or nowhere.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum StepImage {
    #[default]
    None,
    Png(Vec<u8>),
    /// A PNG file, written when the step stopped being recent.
    File(PathBuf),
}

impl StepImage {
    /// The PNG bytes, read back from the file when the picture is on disk. `None` when
    /// there is no picture or its file cannot be read (logged: a prompt then goes without
    /// it).
    pub fn png(&self) -> Option<Cow<'_, [u8]>> {
        match self {
            StepImage::None => None,
            StepImage::Png(png) => Some(Cow::Borrowed(png)),
            StepImage::File(path) => match std::fs::read(path) {
                Ok(png) => Some(Cow::Owned(png)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), "step picture unreadable: {e}");
                    None
                }
            },
        }
    }

    /// Bytes of picture held in memory.
    pub fn bytes_in_memory(&self) -> usize {
        match self {
            StepImage::Png(png) => png.len(),
            StepImage::None | StepImage::File(_) => 0,
        }
    }
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
            image: StepImage::None,
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
    #[serde(skip)]
    pictures: PictureStore,
}

/// Keeps the pictures of the last `in_memory` steps in memory and writes older ones to
/// files: the explorer's prompt shows only the few most recent pictures, and a run of
/// thousands of steps would otherwise hold every one (hundreds of kilobytes each). The
/// detector, which may show any step, reads the older ones back.
#[derive(Debug, Clone)]
struct PictureStore {
    in_memory: usize,
    /// Where older pictures go; `None` for a temporary folder.
    dir: Option<PathBuf>,
    /// The temporary folder, made at the first write and removed when the last clone of
    /// the history is dropped (clones share the files written before they were made).
    temporary: Option<Arc<tempfile::TempDir>>,
    /// Entries before this index hold no picture in memory.
    retired: usize,
}

impl Default for PictureStore {
    fn default() -> Self {
        Self {
            in_memory: TestingHistory::PICTURES_IN_MEMORY,
            dir: None,
            temporary: None,
            retired: 0,
        }
    }
}

impl PictureStore {
    fn folder(&mut self) -> std::io::Result<PathBuf> {
        if let Some(dir) = &self.dir {
            std::fs::create_dir_all(dir)?;
            return Ok(dir.clone());
        }
        if let Some(temporary) = &self.temporary {
            return Ok(temporary.path().to_path_buf());
        }
        let temporary = tempfile::Builder::new()
            .prefix("visiondroid-pictures-")
            .tempdir()?;
        let path = temporary.path().to_path_buf();
        self.temporary = Some(Arc::new(temporary));
        Ok(path)
    }

    /// Moves `entry`'s picture from memory to a file of its own (a fresh name, so runs
    /// sharing a folder do not overwrite each other). Without a file, the picture is
    /// dropped: memory stays bounded either way.
    fn retire(&mut self, entry: &mut HistoryEntry) {
        let StepImage::Png(png) = std::mem::take(&mut entry.image) else {
            return;
        };
        match self
            .folder()
            .and_then(|dir| write_picture(&dir, entry.step, &png))
        {
            Ok(path) => entry.image = StepImage::File(path),
            Err(e) => tracing::warn!(step = entry.step, "step picture dropped: {e}"),
        }
    }
}

fn write_picture(dir: &Path, step: u64, png: &[u8]) -> std::io::Result<PathBuf> {
    let mut file = tempfile::Builder::new()
        .prefix(&format!("step-{step}-"))
        .suffix(".png")
        .tempfile_in(dir)?;
    file.write_all(png)?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(path)
}

impl TestingHistory {
    /// Pictures kept in memory by default: twice the four recent screenshots the
    /// explorer's prompt shows.
    pub const PICTURES_IN_MEMORY: usize = 8;

    pub fn new() -> Self {
        Self::default()
    }

    /// A history that keeps the pictures of the last `in_memory` steps in memory and
    /// writes older ones into `dir` (kept after the run), or with `None` into a temporary
    /// folder removed with the history.
    pub fn with_pictures(in_memory: usize, dir: Option<PathBuf>) -> Self {
        Self {
            pictures: PictureStore {
                in_memory,
                dir,
                ..PictureStore::default()
            },
            ..Self::default()
        }
    }

    /// Bytes of step pictures held in memory.
    pub fn picture_bytes_in_memory(&self) -> usize {
        self.entries.iter().map(|e| e.image.bytes_in_memory()).sum()
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
        let recent_from = self.entries.len().saturating_sub(self.pictures.in_memory);
        while self.pictures.retired < recent_from {
            let entry = &mut self.entries[self.pictures.retired];
            self.pictures.retire(entry);
            self.pictures.retired += 1;
        }
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

    fn pictured(step: u64) -> HistoryEntry {
        HistoryEntry {
            image: StepImage::Png(vec![step as u8; 10_000]),
            ..entry(step)
        }
    }

    #[test]
    fn over_many_steps_only_the_recent_pictures_stay_in_memory() {
        let mut h = TestingHistory::with_pictures(4, None);
        for step in 1..=300 {
            h.record(pictured(step), "browse", false);
            assert!(h.picture_bytes_in_memory() <= 4 * 10_000, "step {step}");
        }
        assert_eq!(h.picture_bytes_in_memory(), 4 * 10_000);
        for e in h.recent(4) {
            assert!(matches!(e.image, StepImage::Png(_)), "{}", e.step);
        }
        // The older ones are on disk and read back whole.
        let first = &h.entries()[0];
        assert!(
            matches!(first.image, StepImage::File(_)),
            "{:?}",
            first.image
        );
        assert_eq!(first.image.png().unwrap().as_ref(), &[1u8; 10_000][..]);
        assert_eq!(
            h.entries()[295].image.png().unwrap().as_ref(),
            &[(296 % 256) as u8; 10_000][..]
        );
    }

    #[test]
    fn temporary_pictures_last_as_long_as_a_clone_of_the_history() {
        let mut h = TestingHistory::with_pictures(1, None);
        h.record(pictured(1), "browse", false);
        h.record(pictured(2), "browse", false);
        let StepImage::File(path) = h.entries()[0].image.clone() else {
            panic!(
                "step 1's picture is not on disk: {:?}",
                h.entries()[0].image
            );
        };
        let copy = h.clone();
        drop(h);
        assert!(path.is_file(), "removed while a clone still points at it");
        assert_eq!(copy.entries()[0].image.png().unwrap().len(), 10_000);
        drop(copy);
        assert!(!path.exists(), "{} outlived the history", path.display());
    }

    #[test]
    fn pictures_written_to_a_given_folder_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("pictures");
        let mut h = TestingHistory::with_pictures(0, Some(folder.clone()));
        h.record(pictured(7), "browse", false);
        let StepImage::File(path) = h.entries()[0].image.clone() else {
            panic!("not on disk: {:?}", h.entries()[0].image);
        };
        assert!(path.starts_with(&folder), "{}", path.display());
        drop(h);
        assert_eq!(std::fs::read(&path).unwrap(), vec![7u8; 10_000]);
    }
}
