//! The rendering-state data set: a folder of PNG frames and one `labels.jsonl`.
//!
//! ```text
//! <root>/labels.jsonl        one JSON object per line, one line per frame
//! <root>/<any/path>.png      the frames, named by the `file` field
//! ```
//!
//! A line of `labels.jsonl` is a [`FrameRecord`]:
//!
//! ```json
//! {"file": "demo/t0007/f003.png", "app": "demo", "label": "partial", "transition": "t0007", "time_ms": 96}
//! ```
//!
//! - `file`: the PNG, relative to the folder that holds `labels.jsonl`.
//! - `app`: the application the frame shows; splits are made by app, never by frame.
//! - `label`: `"full"` (fully rendered) or `"partial"` (transiting or loading).
//! - `transition` (optional, string or integer): the action whose screencast the frame
//!   comes from; the frames of one transition are one sequence for the consecutive-frame
//!   heuristic.
//! - `time_ms` or `t_ms` (optional): when the frame was taken, counted from the action;
//!   orders the frames of a transition.
//!
//! Other fields are ignored, so a collector may add its own. Blank lines are skipped.
//! `cargo xtask adat-data` writes this format to `target/adat-data/`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use image::RgbImage;
use serde::{Deserialize, Deserializer, Serialize};

use gui_core::Screenshot;

use super::{RenderLabel, RenderMetrics};
use crate::{Error, Result};

/// The index file of a data set folder.
pub const LABELS_FILE: &str = "labels.jsonl";

/// One line of `labels.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameRecord {
    /// The PNG, relative to the data set folder.
    pub file: String,
    /// The application shown.
    pub app: String,
    pub label: RenderLabel,
    /// The transition (action) the frame belongs to; a string or an integer on disk.
    #[serde(
        default,
        deserialize_with = "string_or_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub transition: Option<String>,
    /// Milliseconds since the transition's action (`t_ms` on disk is read too, the name
    /// `cargo xtask adat-data` writes).
    #[serde(default, alias = "t_ms", skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<f64>,
    /// Optional: the share of the frame's pixels that differ from the transition's settled
    /// screen (0 for that screen itself), as `cargo xtask adat-data` records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
}

fn string_or_integer<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(i64),
    }
    Ok(Option::<Id>::deserialize(d)?.map(|id| match id {
        Id::Text(s) => s,
        Id::Number(n) => n.to_string(),
    }))
}

/// A frame of a loaded data set: its record, where its PNG is, and the line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderFrame {
    pub record: FrameRecord,
    /// The PNG's path (the data set folder joined with `record.file`).
    pub path: PathBuf,
    /// The 1-based line of `labels.jsonl`.
    pub line: usize,
}

/// A data set folder's index, in file order. PNGs are decoded on demand
/// ([`RenderDataset::image`]), so loading a large set is cheap.
#[derive(Debug, Clone)]
pub struct RenderDataset {
    pub root: PathBuf,
    pub frames: Vec<RenderFrame>,
}

impl RenderDataset {
    /// Reads `<root>/labels.jsonl`. Errors name the file and the line: bad JSON, an
    /// unknown label, an empty app or file name, a PNG that does not exist.
    pub fn load(root: &Path) -> Result<Self> {
        let index = root.join(LABELS_FILE);
        let text = std::fs::read_to_string(&index).map_err(|e| Error::Dataset {
            path: index.clone(),
            message: format!("{e} (a data set folder holds {LABELS_FILE} and the PNG frames)"),
        })?;
        let frames = Self::parse(root, &index, &text)?;
        Ok(Self {
            root: root.to_path_buf(),
            frames,
        })
    }

    fn parse(root: &Path, index: &Path, text: &str) -> Result<Vec<RenderFrame>> {
        let at = |line: usize, message: String| Error::Dataset {
            path: index.to_path_buf(),
            message: format!("line {line}: {message}"),
        };
        let mut frames = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let record: FrameRecord = serde_json::from_str(raw)
                .map_err(|e| at(line, format!("bad frame record: {e}")))?;
            if record.file.trim().is_empty() {
                return Err(at(line, "empty `file`".into()));
            }
            if record.app.trim().is_empty() {
                return Err(at(line, format!("empty `app` for {}", record.file)));
            }
            let path = root.join(&record.file);
            if !path.is_file() {
                return Err(at(line, format!("frame {} does not exist", path.display())));
            }
            frames.push(RenderFrame { record, path, line });
        }
        if frames.is_empty() {
            return Err(Error::Dataset {
                path: index.to_path_buf(),
                message: "no frames".into(),
            });
        }
        Ok(frames)
    }

    /// Decodes a frame's PNG; the error names the PNG and its line in `labels.jsonl`.
    pub fn image(&self, frame: &RenderFrame) -> Result<RgbImage> {
        load_png(&frame.path, frame.line)
    }

    /// The apps of the set, sorted.
    pub fn apps(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self.frames.iter().map(|f| f.record.app.as_str()).collect();
        set.into_iter().map(str::to_owned).collect()
    }

    /// Frames per label: `[partial, full]`.
    pub fn label_counts(&self) -> [usize; 2] {
        let mut counts = [0; 2];
        for f in &self.frames {
            counts[f.record.label.index()] += 1;
        }
        counts
    }

    /// Leaves out the partial frames whose recorded `change` is below `min`: screens that
    /// differ from their settled screen so little that a person would call them finished.
    /// Frames without a recorded change are kept. Returns how many were left out.
    pub fn drop_small_changes(&mut self, min: f64) -> usize {
        let before = self.frames.len();
        self.frames.retain(|f| {
            f.record.label == RenderLabel::Full || f.record.change.is_none_or(|c| c >= min)
        });
        before - self.frames.len()
    }

    /// The best scores a judge of single screenshots can expect on the frames of `apps`
    /// when it cannot tell a partial frame that differs from its settled screen in less
    /// than `within` of its pixels from a finished screen: it is right on every other
    /// frame and calls those full. The rest of the gap to 1 is out of reach of any
    /// network that sees one frame. Partial frames without a recorded change count as
    /// told apart.
    pub fn small_change_ceiling(&self, apps: &[String], within: f64) -> RenderMetrics {
        let mut m = RenderMetrics::default();
        for f in self.frames_of(apps) {
            let truth = f.record.label;
            let looks_finished =
                truth == RenderLabel::Partial && f.record.change.is_some_and(|c| c < within);
            let predicted = if looks_finished {
                RenderLabel::Full
            } else {
                truth
            };
            m.add(truth, predicted);
        }
        m
    }

    /// The best scores any judge of single screenshots can reach on the frames of
    /// `apps`, where frames of one app that differ in at most `within` of their pixels
    /// (a pixel differs when a channel moves by more than 8, the collector's rule) count
    /// as one screen and so get one answer. Frames are grouped in file order, each with
    /// the first group whose first frame is that close. A group holding both labels
    /// costs either its full frames or its partial frames; the groups called full are
    /// those with the most full frames per partial one, as many as raise F1. `within`
    /// 0 groups only frames that look exactly alike.
    pub fn twin_ceiling(&self, apps: &[String], within: f64) -> Result<RenderMetrics> {
        let mut all = self.twin_ceilings(apps, &[within])?;
        Ok(all.remove(0))
    }

    /// [`twin_ceiling`](Self::twin_ceiling) at each of `withins`, decoding each frame once.
    pub fn twin_ceilings(&self, apps: &[String], withins: &[f64]) -> Result<Vec<RenderMetrics>> {
        // Per `within`: (app, first frame, full frames, partial frames) per group.
        type Group<'a> = (&'a str, Arc<Screenshot>, usize, usize);
        let mut groups: Vec<Vec<Group<'_>>> = vec![Vec::new(); withins.len()];
        for f in self.frames_of(apps) {
            let shot = Screenshot::new(self.image(f)?, 1.0, 0)
                .map_err(|e| Error::image(f.path.display().to_string(), e.to_string()))?;
            let shot = Arc::new(shot);
            let (full, partial) = match f.record.label {
                RenderLabel::Full => (1, 0),
                RenderLabel::Partial => (0, 1),
            };
            for (within, groups) in withins.iter().zip(&mut groups) {
                let same = groups.iter_mut().find(|(app, first, ..)| {
                    *app == f.record.app && first.diff_fraction(&shot, 8) <= *within
                });
                match same {
                    Some(g) => {
                        g.2 += full;
                        g.3 += partial;
                    }
                    None => groups.push((&f.record.app, Arc::clone(&shot), full, partial)),
                }
            }
        }
        Ok(groups
            .into_iter()
            .map(|g| best_answers(g.into_iter().map(|(.., full, partial)| (full, partial))))
            .collect())
    }

    /// The frames of `apps`, in file order.
    pub fn frames_of<'a>(&'a self, apps: &'a [String]) -> impl Iterator<Item = &'a RenderFrame> {
        self.frames
            .iter()
            .filter(move |f| apps.contains(&f.record.app))
    }

    /// The frame sequences of the set: frames grouped by app and transition, each
    /// sequence ordered by `time_ms` (then by line). Frames without a transition are in no
    /// sequence.
    pub fn transitions(&self) -> Vec<Vec<&RenderFrame>> {
        let mut groups: BTreeMap<(&str, &str), Vec<&RenderFrame>> = BTreeMap::new();
        for f in &self.frames {
            if let Some(t) = &f.record.transition {
                groups.entry((&f.record.app, t)).or_default().push(f);
            }
        }
        groups
            .into_values()
            .map(|mut seq| {
                seq.sort_by(|a, b| {
                    let ta = a.record.time_ms.unwrap_or(f64::NAN);
                    let tb = b.record.time_ms.unwrap_or(f64::NAN);
                    ta.total_cmp(&tb).then(a.line.cmp(&b.line))
                });
                seq
            })
            .collect()
    }
}

fn load_png(path: &Path, line: usize) -> Result<RgbImage> {
    let bad = |message: String| Error::Dataset {
        path: path.to_path_buf(),
        message: format!("({LABELS_FILE} line {line}): {message}"),
    };
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .map_err(|e| bad(format!("not a readable PNG: {e}")))?
        .into_rgb8();
    if img.width() == 0 || img.height() == 0 {
        return Err(bad("empty image".into()));
    }
    Ok(img)
}

/// Which apps train, which pick the kept epoch, which are held out.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AppSplit {
    pub train: Vec<String>,
    pub validation: Vec<String>,
    pub test: Vec<String>,
}

/// Splits `apps` by app, never by frame: screens of one app look alike, so a frame-level
/// split would score the model on apps it has seen (the paper's data-leakage argument).
/// The paper splits 8:1:1; here `test_fraction` and `validation_fraction` of the apps
/// (rounded, at least one test app and one training app) are drawn by a hash keyed on
/// `seed`, so the split is the same for the same apps and seed. `test_apps`, when given,
/// are the held-out apps instead.
pub fn split_apps(
    apps: &[String],
    test_fraction: f64,
    validation_fraction: f64,
    seed: u64,
    test_apps: &[String],
) -> Result<AppSplit> {
    let mut apps: Vec<String> = apps.to_vec();
    apps.sort();
    apps.dedup();
    if apps.len() < 2 {
        return Err(Error::Config {
            field: "apps",
            message: format!(
                "{} app(s) in the data set; splitting by app needs at least two",
                apps.len()
            ),
        });
    }
    let (mut test, rest): (Vec<String>, Vec<String>) = if test_apps.is_empty() {
        // Order by a seeded hash, then cut.
        let mut keyed: Vec<(u64, String)> = apps
            .into_iter()
            .map(|a| (keyed_hash(seed, &a), a))
            .collect();
        keyed.sort();
        let n = keyed.len();
        let n_test = ((n as f64 * test_fraction).round() as usize).clamp(1, n - 1);
        let mut ordered: Vec<String> = keyed.into_iter().map(|(_, a)| a).collect();
        let rest = ordered.split_off(n_test);
        (ordered, rest)
    } else {
        for t in test_apps {
            if !apps.contains(t) {
                return Err(Error::Config {
                    field: "test_apps",
                    message: format!(
                        "app `{t}` is not in the data set (apps: {})",
                        apps.join(", ")
                    ),
                });
            }
        }
        let rest: Vec<String> = apps
            .iter()
            .filter(|a| !test_apps.contains(a))
            .cloned()
            .collect();
        if rest.is_empty() {
            return Err(Error::Config {
                field: "test_apps",
                message: "every app is held out; none is left to train on".into(),
            });
        }
        (test_apps.to_vec(), rest)
    };
    let n_val = ((rest.len() as f64 * validation_fraction).round() as usize).min(rest.len() - 1);
    let mut rest = rest;
    let mut validation = rest.split_off(rest.len() - n_val);
    let mut train = rest;
    train.sort();
    validation.sort();
    test.sort();
    Ok(AppSplit {
        train,
        validation,
        test,
    })
}

/// FNV-1a over the name, finished with SplitMix64 mixing of the seed.
fn keyed_hash(seed: u64, s: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The scores of the best answer per group of look-alike frames, each group given as
/// (full frames, partial frames) ([`RenderDataset::twin_ceiling`]). A group with one label
/// is answered right; a group holding both costs either side. F1 is a ratio of sums, so
/// the best choice calls full a leading run of the mixed groups, most full frames per
/// partial one first.
fn best_answers(groups: impl Iterator<Item = (usize, usize)>) -> RenderMetrics {
    let (full, partial) = (RenderLabel::Full.index(), RenderLabel::Partial.index());
    let mut m = RenderMetrics::default();
    let mut mixed: Vec<(usize, usize)> = Vec::new();
    for (f, p) in groups {
        if f == 0 || p == 0 {
            m.confusion[full][full] += f;
            m.confusion[partial][partial] += p;
        } else {
            mixed.push((f, p));
        }
    }
    mixed.sort_by(|a, b| (b.0 * a.1).cmp(&(a.0 * b.1)));
    let with = |k: usize| {
        let mut c = m;
        for (i, (f, p)) in mixed.iter().enumerate() {
            let said = if i < k { full } else { partial };
            c.confusion[full][said] += f;
            c.confusion[partial][said] += p;
        }
        c
    };
    (0..=mixed.len())
        .map(with)
        .max_by(|a, b| a.f1().total_cmp(&b.f1()))
        .unwrap_or(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_png(path: &Path) {
        RgbImage::from_pixel(8, 6, image::Rgb([200, 10, 10]))
            .save(path)
            .unwrap();
    }

    fn folder(lines: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("f")).unwrap();
        write_png(&dir.path().join("f/a.png"));
        write_png(&dir.path().join("f/b.png"));
        std::fs::write(dir.path().join("f/bad.png"), b"not a png").unwrap();
        std::fs::write(dir.path().join(LABELS_FILE), lines).unwrap();
        dir
    }

    #[test]
    fn loads_records_with_optional_fields() {
        let dir = folder(concat!(
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"full\",\"transition\":7,\"time_ms\":40,\"extra\":1}\n",
            "\n",
            "{\"file\":\"f/b.png\",\"app\":\"shop\",\"label\":\"partial\"}\n",
            "{\"file\":\"f/b.png\",\"app\":\"shop\",\"label\":\"full\",\"transition\":1,\"t_ms\":12}\n",
        ));
        let set = RenderDataset::load(dir.path()).unwrap();
        assert_eq!(set.frames.len(), 3);
        assert_eq!(set.frames[2].record.time_ms, Some(12.0));
        assert_eq!(set.frames[0].record.transition.as_deref(), Some("7"));
        assert_eq!(set.frames[0].record.time_ms, Some(40.0));
        assert_eq!(set.frames[1].line, 3);
        assert_eq!(set.frames[1].record.label, RenderLabel::Partial);
        assert_eq!(set.apps(), ["demo", "shop"]);
        assert_eq!(set.label_counts(), [1, 2]);
        assert_eq!(set.transitions().len(), 2, "by app and transition");
        assert_eq!(set.image(&set.frames[0]).unwrap().dimensions(), (8, 6));
    }

    #[test]
    fn small_changes_are_left_out_only_from_partial_frames() {
        let dir = folder(concat!(
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"partial\",\"change\":0.004}\n",
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"partial\",\"change\":0.2}\n",
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"partial\"}\n",
            "{\"file\":\"f/b.png\",\"app\":\"demo\",\"label\":\"full\",\"change\":0}\n",
        ));
        let mut set = RenderDataset::load(dir.path()).unwrap();
        assert_eq!(set.frames[0].record.change, Some(0.004));
        assert_eq!(set.drop_small_changes(0.01), 1);
        let lines: Vec<usize> = set.frames.iter().map(|f| f.line).collect();
        assert_eq!(lines, [2, 3, 4], "unrecorded changes and full frames stay");
        assert_eq!(set.drop_small_changes(0.5), 1);
        assert_eq!(set.label_counts(), [1, 1]);
    }

    #[test]
    fn twins_with_both_labels_cost_the_cheaper_side() {
        let dir = folder(concat!(
            // a.png: two full frames and one partial frame alike; b.png: one partial.
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"full\"}\n",
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"partial\"}\n",
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"full\"}\n",
            "{\"file\":\"f/b.png\",\"app\":\"demo\",\"label\":\"partial\"}\n",
            // The same picture in another app is another screen.
            "{\"file\":\"f/a.png\",\"app\":\"shop\",\"label\":\"partial\"}\n",
        ));
        let other = image::RgbImage::from_pixel(8, 6, image::Rgb([200, 10, 40]));
        other.save(dir.path().join("f/b.png")).unwrap();
        let set = RenderDataset::load(dir.path()).unwrap();
        let demo = ["demo".to_owned()];
        // Calling the a.png group full costs its partial frame; partial, its two full ones.
        let m = set.twin_ceiling(&demo, 0.0).unwrap();
        assert_eq!(m.confusion, [[1, 1], [0, 2]]);
        // Close enough, b.png (one channel off by 30) joins them: still full is best.
        let m = set.twin_ceiling(&demo, 1.0).unwrap();
        assert_eq!(m.confusion, [[0, 2], [0, 2]]);
        let both = ["demo".to_owned(), "shop".to_owned()];
        assert_eq!(
            set.twin_ceiling(&both, 0.0).unwrap().confusion,
            [[2, 1], [0, 2]]
        );
    }

    #[test]
    fn the_ceiling_calls_small_changes_full_and_all_else_right() {
        let dir = folder(concat!(
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"partial\",\"change\":0.004}\n",
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"partial\",\"change\":0.2}\n",
            "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"partial\"}\n",
            "{\"file\":\"f/b.png\",\"app\":\"demo\",\"label\":\"full\",\"change\":0}\n",
            "{\"file\":\"f/b.png\",\"app\":\"demo\",\"label\":\"full\",\"change\":0}\n",
            "{\"file\":\"f/a.png\",\"app\":\"shop\",\"label\":\"partial\",\"change\":0.001}\n",
        ));
        let set = RenderDataset::load(dir.path()).unwrap();
        let demo = ["demo".to_owned()];
        let m = set.small_change_ceiling(&demo, 0.01);
        // Two full frames right, one partial frame called full, two told apart.
        assert_eq!(m.confusion, [[2, 1], [0, 2]]);
        assert!((m.precision() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(m.recall(), 1.0);
        assert_eq!(
            set.small_change_ceiling(&demo, 0.3).confusion,
            [[1, 2], [0, 2]]
        );
        assert_eq!(
            set.small_change_ceiling(&demo, 0.0).confusion,
            [[3, 0], [0, 2]]
        );
    }

    #[test]
    fn loader_errors_name_the_file_and_line() {
        let good = "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"full\"}\n";
        let cases = [
            (
                "{\"file\":\"f/a.png\",\"app\":\"demo\",\"label\":\"loading\"}\n",
                "line 2",
                "loading",
            ),
            (
                "{\"file\":\"f/a.png\",\"app\":\"demo\",",
                "line 2",
                "bad frame record",
            ),
            (
                "{\"file\":\"f/nope.png\",\"app\":\"demo\",\"label\":\"full\"}\n",
                "line 2",
                "nope.png",
            ),
            (
                "{\"file\":\"f/a.png\",\"app\":\"\",\"label\":\"full\"}\n",
                "line 2",
                "empty `app`",
            ),
        ];
        for (bad, line, what) in cases {
            let dir = folder(&format!("{good}{bad}"));
            let err = RenderDataset::load(dir.path()).unwrap_err().to_string();
            assert!(err.contains(LABELS_FILE), "{err}");
            assert!(err.contains(line), "{err}");
            assert!(err.contains(what), "{err}");
        }
        // A corrupt PNG is found when decoded; the error names the PNG and its line.
        let dir = folder(&format!(
            "{good}{{\"file\":\"f/bad.png\",\"app\":\"demo\",\"label\":\"full\"}}\n"
        ));
        let set = RenderDataset::load(dir.path()).unwrap();
        let err = set.image(&set.frames[1]).unwrap_err().to_string();
        assert!(err.contains("bad.png") && err.contains("line 2"), "{err}");
        // No index at all.
        let empty = tempfile::tempdir().unwrap();
        let err = RenderDataset::load(empty.path()).unwrap_err().to_string();
        assert!(err.contains(LABELS_FILE), "{err}");
    }

    #[test]
    fn split_is_by_app_and_seeded() {
        let apps: Vec<String> = (0..10).map(|i| format!("app{i}")).collect();
        let a = split_apps(&apps, 0.1, 0.1, 3, &[]).unwrap();
        assert_eq!((a.train.len(), a.validation.len(), a.test.len()), (8, 1, 1));
        let all: BTreeSet<&String> = a.train.iter().chain(&a.validation).chain(&a.test).collect();
        assert_eq!(all.len(), 10, "no app in two parts");
        assert_eq!(a, split_apps(&apps, 0.1, 0.1, 3, &[]).unwrap());
        let two = split_apps(&apps[..2], 0.1, 0.1, 3, &[]).unwrap();
        assert_eq!(
            (two.train.len(), two.validation.len(), two.test.len()),
            (1, 0, 1)
        );
        let fixed = split_apps(&apps, 0.1, 0.0, 3, &["app4".to_string()]).unwrap();
        assert_eq!(fixed.test, ["app4"]);
        assert!(split_apps(&apps[..1], 0.1, 0.1, 3, &[]).is_err());
        assert!(split_apps(&apps, 0.1, 0.1, 3, &["zzz".to_string()]).is_err());
    }
}
