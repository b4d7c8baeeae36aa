//! Android Monkey's run mapped onto the app model, to measure the interface coverage
//! Monkey reached (Section IV of the Monkey++ paper).
//!
//! Monkey's log holds only coordinates, and which control sits at a coordinate depends on
//! the screen the app is on at that moment. So the mapping walks the model forward with
//! the runtime model ([`ModelRun`]) while reading the gestures: the top screen names the
//! UI Automator dump to look the tap up in ([`DumpSet`]), the control found names a UI
//! vertex of that screen, and touching that vertex moves the screen stack the way the app
//! would. The paper re-ran the events on a device to take a dump at each step; with one
//! dump per screen taken beforehand the same lookup needs no device.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::monkey_log::{Gesture, KEYCODE_BACK, KEYCODE_HOME, MonkeyLog};
use crate::uiautomator::{UiDump, UiNode};
use crate::{AppModel, Error, ModelRun, Result, Reuse, VertexKind};

/// One UI Automator dump per screen of the model, by screen name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DumpSet {
    dumps: BTreeMap<String, UiDump>,
}

impl DumpSet {
    pub fn new() -> DumpSet {
        DumpSet::default()
    }

    /// Reads every `<Screen>.xml` in `dir`; the file stem is the screen name (the
    /// activity's simple name, say `MainActivity.xml`). Other files are skipped.
    pub fn load_dir(dir: &Path) -> Result<DumpSet> {
        let io = |source| Error::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut set = DumpSet::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("xml") || !path.is_file() {
                continue;
            }
            let Some(screen) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let dump = UiDump::load(&path)?;
            set.insert(screen, dump);
        }
        Ok(set)
    }

    pub fn insert(&mut self, screen: &str, dump: UiDump) {
        self.dumps.insert(screen.to_string(), dump);
    }

    pub fn remove(&mut self, screen: &str) -> Option<UiDump> {
        self.dumps.remove(screen)
    }

    pub fn get(&self, screen: &str) -> Option<&UiDump> {
        self.dumps.get(screen)
    }

    /// Screen names, sorted.
    pub fn screens(&self) -> impl Iterator<Item = &str> {
        self.dumps.keys().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.dumps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dumps.is_empty()
    }
}

/// Settings of the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MapConfig {
    /// A touch that moves less than this (pixels) is a tap; see
    /// [`MonkeyLog::gestures_with_slop`].
    pub tap_slop_px: f64,
}

impl Default for MapConfig {
    fn default() -> MapConfig {
        MapConfig {
            tap_slop_px: crate::monkey_log::DEFAULT_TAP_SLOP_PX,
        }
    }
}

/// Where Monkey's run went in the model, and the coverage it reached.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MappedRun {
    /// Gestures read from the log.
    pub events: usize,
    /// Gestures that touched a UI vertex of the model.
    pub hits: usize,
    /// UI vertex ids touched, in the order first touched.
    pub covered: Vec<String>,
    /// Interface coverage at the end (Definition 3).
    pub interface_coverage: f64,
    /// (gestures so far, interface coverage), one point per gesture.
    pub curve: Vec<(usize, f64)>,
    /// Screens a tap landed on that have no dump, in the order met.
    pub screens_without_dump: Vec<String>,
    /// How often the app was left (its last screen finished, or HOME pressed).
    pub left_app: usize,
}

impl MappedRun {
    /// Hits over gestures: how much of Monkey's effort touched the app's controls.
    pub fn hit_rate(&self) -> f64 {
        if self.events == 0 {
            0.0
        } else {
            self.hits as f64 / self.events as f64
        }
    }
}

/// The UI vertex among `candidates` that a dumped control is: same resource id if the
/// vertex has one, else a label or locator text equal to the control's text or content
/// description. Resource ids are tried over all candidates first, as they are exact; a
/// vertex whose resource id differs from the control's is never matched by text, since
/// two controls may well share a caption ("OK").
fn vertex_for<'m>(model: &'m AppModel, candidates: &[&'m str], node: &UiNode) -> Option<&'m str> {
    let ui = |id: &str| {
        model.vertices.iter().find_map(|v| match &v.kind {
            VertexKind::Ui { label, locator, .. } if v.id == id => Some((label, locator)),
            _ => None,
        })
    };
    if !node.resource_id.is_empty()
        && let Some(&id) = candidates.iter().find(|&&id| {
            ui(id).is_some_and(|(_, l)| l.resource_id.as_deref() == Some(&node.resource_id))
        })
    {
        return Some(id);
    }
    let names: Vec<&str> = [node.text.as_str(), node.content_desc.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    candidates.iter().copied().find(|&id| {
        ui(id).is_some_and(|(label, l)| {
            let other_id = !node.resource_id.is_empty()
                && l.resource_id
                    .as_ref()
                    .is_some_and(|r| *r != node.resource_id);
            !other_id
                && names
                    .iter()
                    .any(|n| *n == label.as_str() || l.text.as_deref() == Some(*n))
        })
    })
}

/// Follows Monkey's gestures through the model and reports the coverage reached.
///
/// The app starts on its launch screen (activities are brought to front when launched
/// again, as on Android). A switch to a component relaunches the app from its launch
/// activity; a tap is looked up in the top screen's dump and, when it reaches a control
/// that is a UI vertex of that screen, touches it; BACK finishes the top screen; HOME
/// leaves the app. Once the app is left (also when BACK or a control finishes its last
/// screen) gestures land outside it and are misses until the next switch. Everything
/// else (drags, other keys, trackball, rotation) is a miss.
pub fn map_monkey_log(
    model: &AppModel,
    log: &MonkeyLog,
    dumps: &DumpSet,
    config: &MapConfig,
) -> Result<MappedRun> {
    let mut run = ModelRun::new(model, Reuse::BringToFront)?;
    let mut out = MappedRun::default();
    let mut on_screen = true;
    for gesture in log.gestures_with_slop(config.tap_slop_px) {
        out.events += 1;
        match gesture {
            Gesture::Switch { component: Some(_) } => {
                run.relaunch();
                on_screen = run.top().is_some();
            }
            Gesture::Tap { x, y } if on_screen => {
                if let Some(screen) = run.top() {
                    match dumps.get(screen) {
                        None => {
                            if !out.screens_without_dump.iter().any(|s| s == screen) {
                                out.screens_without_dump.push(screen.to_string());
                            }
                        }
                        Some(dump) => {
                            let target = dump
                                .control_at(x, y)
                                .and_then(|node| vertex_for(model, &run.ui_on_top(), node));
                            if let Some(id) = target {
                                run.touch(id)?;
                                out.hits += 1;
                                if !out.covered.iter().any(|c| c == id) {
                                    out.covered.push(id.to_string());
                                }
                                if run.top().is_none() {
                                    out.left_app += 1;
                                    on_screen = false;
                                }
                            }
                        }
                    }
                }
            }
            Gesture::Key { code, .. } if on_screen && code == KEYCODE_BACK => {
                run.back();
                if run.top().is_none() {
                    out.left_app += 1;
                    on_screen = false;
                }
            }
            Gesture::Key { code, .. } if on_screen && code == KEYCODE_HOME => {
                out.left_app += 1;
                on_screen = false;
            }
            _ => {}
        }
        out.curve.push((out.events, run.interface_coverage()));
    }
    out.interface_coverage = run.interface_coverage();
    Ok(out)
}
