//! Java Swing apps for the grey-box tools, seen through their pixels.
//!
//! GUITAR's ripper enumerates a Swing GUI by reflection (Section 4.1). Here the app is a
//! black box on screen and a grey box on disk: the widgets and their labels come from a
//! screenshot (PP-OCR text lines, Canny widget boxes), the event handlers from the class
//! files (the ClassDB of Section 4.3). A widget on screen becomes an event when its label
//! names a listener registration in the bytecode (`new JButton("e1")` followed by
//! `addActionListener`), so the handlers behind each event are known without looking
//! inside the running JVM.
//!
//! Approximations, each chosen because pixels carry no more:
//! - Only the top-most mapped window is live. A new window (a modal dialog, a second
//!   frame) takes the focus, and without a window manager the newest window is on top;
//!   widgets of windows below it count as unavailable, which is right for modal dialogs
//!   and a simplification for modeless ones.
//! - Only labelled widgets are events: a text field or an icon button has no string
//!   constant to tie it to a listener. Labelled widgets with no listener fire no handler
//!   and are left out.
//! - Every event is a click.
//! - Two listeners with the same label are told apart by the window title when it names
//!   the owning class; otherwise the event gets both handlers (its reads and writes
//!   over-approximate, which can only add EDG edges).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gui_core::{Rect, Screenshot, Size};
use gui_driver::{DesktopConfig, DesktopDevice, DesktopWindow, Device, XvfbConfig};
use gui_explore::FrameMatch;
use gui_vision::{
    BoxOrigin, ExtractConfig, TextDetector, TextDetectorConfig, TextRecognizer,
    TextRecognizerConfig, extract_widgets,
};

use crate::java::{ClassDb, ClassError, JavaListener, MethodRef};
use crate::{Efg, Error, Event, EventKind, GreyboxApp, HandlerRef, LiveEvent, ReadWrite, Result};

/// How long to wait for a Swing GUI to finish drawing.
#[derive(Debug, Clone, PartialEq)]
pub struct SettleConfig {
    /// Time between two looks at the screen.
    pub poll: Duration,
    /// The screen and the window list must stay unchanged this long. Swing handles a
    /// click on its event thread and repaints later, so one unchanged pair of frames
    /// taken right after the click may both show the old screen.
    pub quiet: Duration,
    /// The app counts as idle when it used at most this much processor time during the
    /// quiet period: a click that opens a dialog keeps the event thread busy building it
    /// before anything changes on screen.
    pub idle_cpu: Duration,
    /// Give up waiting after this long (an animation, a blinking caret) and go on.
    pub cap: Duration,
}

impl Default for SettleConfig {
    fn default() -> Self {
        Self {
            poll: Duration::from_millis(40),
            quiet: Duration::from_millis(200),
            idle_cpu: Duration::from_millis(20),
            cap: Duration::from_millis(1500),
        }
    }
}

/// How to start and look at a Swing app.
#[derive(Debug, Clone)]
pub struct SwingConfig {
    /// Size of the app's Xvfb screen.
    pub screen: Size,
    /// The `java` launcher; `None` looks in `$JAVA_HOME/bin`, then on `PATH`.
    pub java: Option<PathBuf>,
    /// JVM options before the main class.
    pub jvm_args: Vec<String>,
    /// How long the app may take to show its first window.
    pub launch_timeout: Duration,
    pub settle: SettleConfig,
    /// Widget boxes around the labels.
    pub extract: ExtractConfig,
    pub detector: TextDetectorConfig,
    pub recognizer: TextRecognizerConfig,
}

impl Default for SwingConfig {
    fn default() -> Self {
        Self {
            screen: Size::new(1024, 768),
            java: None,
            // A test case restarts the JVM, so start-up time is most of the replay time:
            // the C1 compiler alone and the serial collector start fastest. Metal is
            // pinned so the look does not depend on the desktop settings of the host.
            jvm_args: vec![
                "-XX:TieredStopAtLevel=1".into(),
                "-XX:+UseSerialGC".into(),
                "-Dswing.defaultlaf=javax.swing.plaf.metal.MetalLookAndFeel".into(),
            ],
            launch_timeout: Duration::from_secs(20),
            settle: SettleConfig::default(),
            extract: ExtractConfig::web(),
            detector: TextDetectorConfig::default(),
            recognizer: TextRecognizerConfig::default(),
        }
    }
}

/// A widget read off the screen.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenWidget {
    /// The widget's box on the screen: the smallest edge box around the label that holds
    /// no other label, else the label's own box.
    pub rect: Rect,
    /// The label's text line as the detector found it.
    pub text_rect: Rect,
    /// What OCR read.
    pub text: String,
    /// The listener label it was matched to, if any.
    pub label: Option<String>,
}

/// The listeners that share one label.
#[derive(Debug, Clone)]
struct LabelGroup {
    label: String,
    /// The label normalised for comparison ([`normalise`]).
    key: String,
    /// `key` with OCR look-alikes folded together ([`fold`]).
    folded: String,
    listeners: Vec<JavaListener>,
}

/// A Swing app under Xvfb with its ClassDB: the [`GreyboxApp`] for Java desktop apps.
#[derive(Debug)]
pub struct SwingApp {
    device: DesktopDevice,
    db: ClassDb,
    class_errors: Vec<ClassError>,
    labels: Vec<LabelGroup>,
    detector: TextDetector,
    recognizer: TextRecognizer,
    config: SwingConfig,
}

impl SwingApp {
    /// Loads the class files under `classpath` into a ClassDB and starts
    /// `java -cp <classpath> <main_class>` on its own Xvfb of the given size.
    ///
    /// Class files that cannot be analysed do not stop the launch; they are kept in
    /// [`SwingApp::class_errors`].
    ///
    /// # Errors
    /// When `java`, Xvfb or the OCR models are missing (each error says what to install),
    /// or the app shows no window.
    pub fn launch(classpath: &[PathBuf], main_class: &str, screen: Size) -> Result<Self> {
        Self::launch_with(
            classpath,
            main_class,
            SwingConfig {
                screen,
                ..SwingConfig::default()
            },
        )
    }

    /// [`SwingApp::launch`] with every setting.
    pub fn launch_with(
        classpath: &[PathBuf],
        main_class: &str,
        config: SwingConfig,
    ) -> Result<Self> {
        // The models first: they fail fastest and say what to install.
        let detector = TextDetector::new(config.detector.clone())
            .map_err(|e| vision_error(&config.detector.model, e))?;
        let recognizer = TextRecognizer::new(config.recognizer.clone())
            .map_err(|e| vision_error(&config.recognizer.model, e))?;
        let java = match &config.java {
            Some(java) => java.clone(),
            None => find_java()?,
        };
        let (db, class_errors) = ClassDb::load(classpath);
        if !class_errors.is_empty() {
            tracing::warn!(
                "{} class files could not be analysed; their handlers have no reads or writes",
                class_errors.len()
            );
        }
        let labels = label_groups(db.listeners());
        let joined = std::env::join_paths(classpath).map_err(|e| Error::Io {
            path: classpath.first().cloned().unwrap_or_default(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        })?;
        let mut command: Vec<String> = vec![java.display().to_string()];
        command.extend(config.jvm_args.iter().cloned());
        command.push("-cp".into());
        command.push(os_to_string(joined));
        command.push(main_class.into());
        let mut desktop = DesktopConfig::new(command);
        desktop.xvfb = XvfbConfig {
            size: config.screen,
            display: None,
        };
        desktop.launch_timeout = config.launch_timeout;
        let device = DesktopDevice::launch(desktop)?;
        let mut app = SwingApp {
            device,
            db,
            class_errors,
            labels,
            detector,
            recognizer,
            config,
        };
        app.settle()?;
        Ok(app)
    }

    /// The device, with the desktop-only calls (window list, stderr).
    pub fn desktop(&mut self) -> &mut DesktopDevice {
        &mut self.device
    }

    pub fn class_db(&self) -> &ClassDb {
        &self.db
    }

    /// Class files that could not be analysed.
    pub fn class_errors(&self) -> &[ClassError] {
        &self.class_errors
    }

    /// The labelled listener registrations found in the bytecode (the others cannot be
    /// tied to anything on screen).
    pub fn listeners(&self) -> impl Iterator<Item = &JavaListener> + '_ {
        self.labels.iter().flat_map(|g| g.listeners.iter())
    }

    /// What the handlers of `event` read and write, calls followed (the input of
    /// Algorithm 1); handlers that are not Java methods add nothing.
    pub fn read_write(&self, event: &Event) -> ReadWrite {
        let mut rw = ReadWrite::default();
        for handler in &event.handlers {
            if let HandlerRef::Java {
                class,
                name,
                descriptor,
            } = handler
            {
                rw.merge(&self.db.read_write(&MethodRef {
                    class: class.clone(),
                    name: name.clone(),
                    descriptor: descriptor.clone(),
                }));
            }
        }
        rw
    }

    /// [`SwingApp::read_write`] of every event of `efg`, in index order: what
    /// [`Edg::build`](crate::Edg::build) takes.
    pub fn read_writes(&self, efg: &Efg) -> Vec<ReadWrite> {
        efg.events.iter().map(|e| self.read_write(e)).collect()
    }

    /// The labelled widgets of the top-most window now, in reading order, matched or not.
    /// Empty when the app has exited or shows no window.
    pub fn widgets(&mut self) -> Result<Vec<SeenWidget>> {
        Ok(self.look()?.map(|(_, w)| w).unwrap_or_default())
    }

    /// The top-most window and its widgets, or `None` when there is nothing to see.
    fn look(&mut self) -> Result<Option<(DesktopWindow, Vec<SeenWidget>)>> {
        let shot = match self.device.screenshot() {
            Ok(shot) => shot,
            // An app that exited offers no events; the next reset starts it again.
            Err(e) if e.is_device_lost() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let windows = self.device.windows()?;
        let Some(top) = gui_driver::main_window(&windows) else {
            return Ok(None);
        };
        let widgets = self.read_widgets(&shot, top.rect)?;
        Ok(Some((top, widgets)))
    }

    /// Text lines inside `area`, read by OCR, each in its widget box, in reading order.
    fn read_widgets(&self, shot: &Screenshot, area: Rect) -> Result<Vec<SeenWidget>> {
        let pixels = shot.pixels();
        let inside = |r: &Rect| area.contains(r.center());
        let text_rects: Vec<Rect> = self
            .detector
            .detect(pixels)
            .map_err(|e| vision_error(&self.config.detector.model, e))?
            .into_iter()
            .map(|region| region.rect)
            .filter(inside)
            .collect();
        if text_rects.is_empty() {
            return Ok(Vec::new());
        }
        let texts = self
            .recognizer
            .recognise(pixels, &text_rects)
            .map_err(|e| vision_error(&self.config.recognizer.model, e))?;
        let boxes: Vec<Rect> = extract_widgets(pixels, &self.config.extract)
            .map_err(|e| vision_error(Path::new("screenshot"), e))?
            .into_iter()
            .filter(|b| b.origin == BoxOrigin::Edges)
            .map(|b| b.rect)
            .filter(inside)
            .collect();
        let mut widgets: Vec<SeenWidget> = text_rects
            .iter()
            .zip(texts)
            .filter(|(_, text)| !text.trim().is_empty())
            .map(|(&text_rect, text)| SeenWidget {
                rect: widget_box(text_rect, &text_rects, &boxes),
                text_rect,
                label: match_label(&self.labels, &text).map(|g| g.label.clone()),
                text,
            })
            .collect();
        reading_order(&mut widgets);
        Ok(widgets)
    }

    /// The events of the widgets offered in `window`, in reading order.
    fn events(&self, window: &DesktopWindow, widgets: &[SeenWidget]) -> Vec<LiveEvent> {
        let mut out: Vec<LiveEvent> = Vec::new();
        for widget in widgets {
            let Some(group) = widget
                .label
                .as_ref()
                .and_then(|l| self.labels.iter().find(|g| g.label == *l))
            else {
                continue;
            };
            let listeners = listeners_for(group, &window.title);
            let window_name = if window.title.trim().is_empty() {
                listeners[0].owner.clone()
            } else {
                window.title.clone()
            };
            let mut handlers: Vec<HandlerRef> = Vec::new();
            for l in &listeners {
                let h = HandlerRef::Java {
                    class: l.handler.class.clone(),
                    name: l.handler.name.clone(),
                    descriptor: l.handler.descriptor.clone(),
                };
                if !handlers.contains(&h) {
                    handlers.push(h);
                }
            }
            // Two widgets with one label in one window: the later ones are numbered.
            let base = format!("{window_name}/{}", group.label);
            let mut id = base.clone();
            let mut n = 1;
            while out.iter().any(|l| l.event.id == id) {
                n += 1;
                id = format!("{base}#{n}");
            }
            out.push(LiveEvent {
                event: Event {
                    id,
                    label: group.label.clone(),
                    window: window_name,
                    kind: EventKind::Click,
                    handlers,
                },
                at: widget.rect.center(),
            });
        }
        out
    }

    /// The screen and the window list, or `None` once the app has exited.
    fn snapshot(&mut self) -> Result<Option<(Screenshot, Vec<DesktopWindow>)>> {
        let shot = match self.device.screenshot() {
            Ok(shot) => shot,
            Err(e) if e.is_device_lost() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        Ok(Some((shot, self.device.windows()?)))
    }

    /// Processor time the app's process has used so far (Linux `/proc`), if known.
    fn cpu_time(&self) -> Option<Duration> {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.device.app_pid()?)).ok()?;
        // Counted after the parenthesised command name, which may hold spaces: utime and
        // stime are fields 14 and 15 of proc(5), in clock ticks (USER_HZ, 100 a second
        // on x86-64 and arm64 Linux).
        let rest = &stat[stat.rfind(')')? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 =
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some(Duration::from_millis(ticks * 10))
    }
}

impl GreyboxApp for SwingApp {
    fn device(&mut self) -> &mut dyn Device {
        &mut self.device
    }

    fn available(&mut self) -> Result<Vec<LiveEvent>> {
        Ok(match self.look()? {
            Some((window, widgets)) => self.events(&window, &widgets),
            None => Vec::new(),
        })
    }

    /// Waits until neither the screen nor the window list has changed for
    /// [`SettleConfig::quiet`] while the app used at most [`SettleConfig::idle_cpu`] of
    /// processor time, at most [`SettleConfig::cap`]. An app that exited is settled.
    fn settle(&mut self) -> Result<()> {
        let config = self.config.settle.clone();
        let matching = FrameMatch::default();
        let start = Instant::now();
        let Some(mut last) = self.snapshot()? else {
            return Ok(());
        };
        let mut quiet_since = (Instant::now(), self.cpu_time());
        loop {
            std::thread::sleep(config.poll);
            let Some(now) = self.snapshot()? else {
                return Ok(());
            };
            let same = now.1 == last.1 && matching.matches(&now.0, &last.0);
            if !same {
                last = now;
                quiet_since = (Instant::now(), self.cpu_time());
            } else if quiet_since.0.elapsed() >= config.quiet {
                let cpu = self.cpu_time();
                let busy = match (quiet_since.1, cpu) {
                    (Some(before), Some(after)) => after.saturating_sub(before) > config.idle_cpu,
                    _ => false,
                };
                if !busy {
                    return Ok(());
                }
                quiet_since = (Instant::now(), cpu);
            }
            if start.elapsed() >= config.cap {
                tracing::debug!("the screen did not settle within {:?}", config.cap);
                return Ok(());
            }
        }
    }
}

/// The smallest edge box around `text` that holds no other text line and is not much
/// taller than the text (a panel around a single button is not the button); `text`
/// itself when there is none.
fn widget_box(text: Rect, all_text: &[Rect], boxes: &[Rect]) -> Rect {
    let covers = |b: &Rect, t: &Rect| {
        b.intersection(t)
            .is_some_and(|i| i.area() * 10 >= t.area() * 8)
    };
    boxes
        .iter()
        .filter(|b| covers(b, &text) && b.area() > text.area())
        .filter(|b| b.height <= text.height * 4)
        .filter(|b| {
            !all_text
                .iter()
                .any(|t| *t != text && b.contains(t.center()))
        })
        .min_by_key(|b| b.area())
        .copied()
        .unwrap_or(text)
}

/// Sorts into rows (a widget joins the row of the first one when its centre lies within
/// that one's height), rows top to bottom, each left to right.
fn reading_order(widgets: &mut Vec<SeenWidget>) {
    widgets.sort_by_key(|w| (w.rect.y, w.rect.x));
    let mut rows: Vec<Vec<SeenWidget>> = Vec::new();
    for w in widgets.drain(..) {
        let cy = w.rect.center().y;
        match rows.last_mut() {
            Some(row) if cy >= row[0].rect.y && cy < row[0].rect.bottom() => row.push(w),
            _ => rows.push(vec![w]),
        }
    }
    for mut row in rows {
        row.sort_by_key(|w| (w.rect.x, w.rect.y));
        widgets.extend(row);
    }
}

/// Listeners grouped by label, in the order the ClassDB lists them. Unlabelled ones are
/// dropped: nothing on screen can be tied to them.
fn label_groups(listeners: Vec<JavaListener>) -> Vec<LabelGroup> {
    let mut groups: Vec<LabelGroup> = Vec::new();
    for l in listeners {
        let Some(label) = l.label.clone() else {
            continue;
        };
        let key = normalise(&label);
        if key.is_empty() {
            continue;
        }
        match groups.iter_mut().find(|g| g.key == key) {
            Some(g) => g.listeners.push(l),
            None => groups.push(LabelGroup {
                folded: fold(&key),
                key,
                label,
                listeners: vec![l],
            }),
        }
    }
    groups
}

/// The listener label an OCR reading stands for: the same text after normalising case
/// and spaces; else the same after folding look-alike characters (`l`/`1`, `O`/`0`);
/// else the only label at most one edit away. Ambiguous readings match nothing.
fn match_label<'g>(labels: &'g [LabelGroup], text: &str) -> Option<&'g LabelGroup> {
    let key = normalise(text);
    if key.is_empty() {
        return None;
    }
    if let Some(g) = labels.iter().find(|g| g.key == key) {
        return Some(g);
    }
    let folded = fold(&key);
    let unique = |hits: Vec<&'g LabelGroup>| (hits.len() == 1).then(|| hits[0]);
    let same: Vec<&LabelGroup> = labels.iter().filter(|g| g.folded == folded).collect();
    if !same.is_empty() {
        return unique(same);
    }
    // One edit on a one-character label is any other character: too loose.
    let near: Vec<&LabelGroup> = labels
        .iter()
        .filter(|g| g.folded.chars().count() >= 2 && edit_distance(&g.folded, &folded) <= 1)
        .collect();
    unique(near)
}

/// The listeners of `group` that belong to the window titled `title`: those whose owner
/// class is named like the window when there are any, else all.
fn listeners_for(group: &LabelGroup, title: &str) -> Vec<JavaListener> {
    let title = normalise(title);
    let simple = |class: &str| {
        let after_dot = class.rsplit('.').next().unwrap_or(class);
        normalise(after_dot.rsplit('$').next().unwrap_or(after_dot))
    };
    let named: Vec<JavaListener> = group
        .listeners
        .iter()
        .filter(|l| !title.is_empty() && simple(&l.owner) == title)
        .cloned()
        .collect();
    if named.is_empty() {
        group.listeners.clone()
    } else {
        named
    }
}

/// Lower case, spaces trimmed and runs of white space made one space.
fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Folds the characters PP-OCR confuses on screen fonts into one representative each:
/// `l`, `i`, `|`, `!` into `1`, and `o` into `0`.
fn fold(key: &str) -> String {
    key.chars()
        .map(|c| match c {
            'l' | 'i' | '|' | '!' => '1',
            'o' => '0',
            c => c,
        })
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The `java` launcher: `$JAVA_HOME/bin/java`, else the first on `PATH`.
fn find_java() -> Result<PathBuf> {
    let home = std::env::var_os("JAVA_HOME").map(|h| PathBuf::from(h).join("bin"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    home.into_iter()
        .chain(std::env::split_paths(&path))
        .map(|dir| dir.join("java"))
        .find(|java| java.is_file())
        .ok_or_else(|| Error::Io {
            path: PathBuf::from("java"),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no `java` in $JAVA_HOME/bin or on PATH; install a Java runtime with AWT \
                 (apt-get install default-jdk)",
            ),
        })
}

fn os_to_string(s: OsString) -> String {
    s.to_string_lossy().into_owned()
}

/// The crate's error for a failure of the vision pipeline. The grey-box `Error` has no
/// vision variant (the desktop side is optional), so the failure is reported against the
/// file it concerns: the model, which is also what to install when it is missing.
fn vision_error(path: &Path, e: gui_vision::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(owner: &str, label: &str, handler: &str) -> JavaListener {
        JavaListener {
            owner: owner.into(),
            component: "javax.swing.JButton".into(),
            label: Some(label.into()),
            register: "addActionListener".into(),
            handler: MethodRef {
                class: owner.into(),
                name: handler.into(),
                descriptor: "(Ljava/awt/event/ActionEvent;)V".into(),
            },
        }
    }

    fn groups(labels: &[&str]) -> Vec<LabelGroup> {
        label_groups(
            labels
                .iter()
                .map(|l| listener("Main", l, &format!("on_{l}")))
                .collect(),
        )
    }

    fn matched(labels: &[LabelGroup], text: &str) -> Option<String> {
        match_label(labels, text).map(|g| g.label.clone())
    }

    #[test]
    fn ocr_readings_match_labels_up_to_one_confusion() {
        let labels = groups(&["e1", "e2", "e3", "e4", "Save As", "OK"]);
        assert_eq!(matched(&labels, "e1").as_deref(), Some("e1"));
        assert_eq!(matched(&labels, " E1 ").as_deref(), Some("e1"));
        // 'l' for '1' is one edit from e2, e3 and e4 too; folding settles it.
        assert_eq!(matched(&labels, "el").as_deref(), Some("e1"));
        assert_eq!(matched(&labels, "save  as").as_deref(), Some("Save As"));
        assert_eq!(matched(&labels, "Save Aa").as_deref(), Some("Save As"));
        assert_eq!(matched(&labels, "0K").as_deref(), Some("OK"));
        // "e" is one edit from every eN: ambiguous, so nothing.
        assert_eq!(matched(&labels, "e"), None);
        assert_eq!(matched(&labels, "Cancel"), None);
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("e1", "e"), 1);
        assert_eq!(edit_distance("e", "e1"), 1);
        assert_eq!(edit_distance("ab", "ba"), 2);
    }

    #[test]
    fn the_window_title_picks_among_listeners_with_one_label() {
        let labels = label_groups(vec![
            listener("app.Editor", "OK", "a"),
            listener("app.Prefs$Dialog", "OK", "b"),
        ]);
        assert_eq!(labels.len(), 1);
        let names = |title: &str| -> Vec<String> {
            listeners_for(&labels[0], title)
                .into_iter()
                .map(|l| l.handler.name)
                .collect()
        };
        assert_eq!(names("Dialog"), ["b"]);
        assert_eq!(names("editor"), ["a"]);
        assert_eq!(names("Untitled"), ["a", "b"]);
    }

    #[test]
    fn widgets_sort_in_rows_then_columns() {
        let w = |x: i32, y: i32| SeenWidget {
            rect: Rect::new(x, y, 100, 50),
            text_rect: Rect::new(x + 30, y + 10, 40, 30),
            text: String::new(),
            label: None,
        };
        // The middle button sits two pixels higher, as anti-aliased boxes sometimes do.
        let mut widgets = vec![w(260, 20), w(140, 18), w(20, 20), w(20, 100)];
        reading_order(&mut widgets);
        let xs: Vec<(i32, i32)> = widgets.iter().map(|w| (w.rect.x, w.rect.y)).collect();
        assert_eq!(xs, [(20, 20), (140, 18), (260, 20), (20, 100)]);
    }

    #[test]
    fn a_label_takes_the_smallest_box_that_holds_only_it() {
        let text = Rect::new(50, 30, 40, 30);
        let other = Rect::new(170, 30, 40, 30);
        let button = Rect::new(20, 20, 100, 50);
        let panel = Rect::new(0, 0, 400, 200);
        let row = Rect::new(10, 10, 300, 70);
        assert_eq!(
            widget_box(text, &[text, other], &[panel, row, button]),
            button
        );
        assert_eq!(widget_box(text, &[text, other], &[panel, row]), text);
    }
}
