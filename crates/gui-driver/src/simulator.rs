//! An in-process app model drawn to pixels: a [`Device`] for unit tests of strategies.
//!
//! A [`SimApp`] is a list of [`SimPage`]s, each a background colour and a list of
//! [`SimWidget`]s (a box, a [`WidgetKind`], a colour and what a click does), plus seeded
//! [`SimFault`]s: sequences of widget activations that make the app report a [`Signal`].
//! A [`Simulator`] runs one app: it keeps the current page, a history for `return`, the state
//! of every widget (checked, typed text, slider level), the viewport, and cumulative
//! coverage. Everything is deterministic: the same actions give the same pixels, the same
//! signals and the same coverage, and screenshot timestamps count steps instead of reading
//! the clock. [`Simulator`] lists the rules of the model.

use gui_core::{
    Action, ActionKind, ActionParam, CoverageSnapshot, Platform, Point, Rect, Screenshot, Signal,
    SignalKind, Size, StackFrame, Widget, WidgetKind,
};
use image::{Rgb, RgbImage};
use imageproc::drawing::{draw_filled_rect_mut, draw_hollow_rect_mut};
use serde::{Deserialize, Serialize};

use crate::{Device, Error, Result};

/// Height of the page-identifying band at the top of every page, in layout pixels.
pub const HEADER_HEIGHT: u32 = 32;

/// Size every simulated function counts for in [`CoverageSnapshot`] bytes.
pub const FUNCTION_BYTES: u64 = 200;

/// Width one typed character adds to the text bar of an `EditText`, in layout pixels.
const CHAR_WIDTH: u32 = 6;

/// Fake source lines per function, for stable stack frame positions.
const LINES_PER_FUNCTION: u32 = 8;

/// One widget of a simulated page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimWidget {
    /// Bounds in layout pixels (for a viewport of [`SimApp::size`]).
    pub rect: Rect,
    pub kind: WidgetKind,
    pub color: [u8; 3],
    /// The page a click opens, pushing the current page on the history.
    pub on_click: Option<usize>,
    /// A click flips a visible on/off state (checkbox, switch, radio button).
    pub toggles: bool,
}

impl SimWidget {
    /// An inert widget (it navigates nowhere and does not toggle) in a colour of its kind.
    pub fn new(rect: Rect, kind: WidgetKind) -> Self {
        let color = match kind {
            WidgetKind::Button | WidgetKind::ImageButton => [66, 133, 244],
            WidgetKind::EditText => [250, 250, 250],
            WidgetKind::CheckBox | WidgetKind::RadioButton | WidgetKind::Switch => [220, 220, 228],
            WidgetKind::SeekBar | WidgetKind::ProgressBar => [200, 222, 200],
            WidgetKind::ListItem => [236, 239, 241],
            WidgetKind::Tab => [255, 193, 7],
            WidgetKind::Icon => [96, 125, 139],
            WidgetKind::Spinner => [206, 147, 216],
            WidgetKind::TextView | WidgetKind::ImageView => [210, 210, 210],
        };
        Self {
            rect,
            kind,
            color,
            on_click: None,
            toggles: false,
        }
    }

    pub fn with_color(mut self, color: [u8; 3]) -> Self {
        self.color = color;
        self
    }

    /// A click on it opens `page`.
    pub fn navigates_to(mut self, page: usize) -> Self {
        self.on_click = Some(page);
        self
    }

    /// A click on it flips its on/off state.
    pub fn toggling(mut self) -> Self {
        self.toggles = true;
        self
    }

    /// Whether it has a handler: it navigates, toggles, takes text or is a slider. Only such
    /// widgets activate, count as coverage functions and may appear in fault sequences.
    pub fn has_behaviour(&self) -> bool {
        self.on_click.is_some()
            || self.toggles
            || self.kind.accepts_text()
            || self.kind == WidgetKind::SeekBar
    }
}

/// One screen of a simulated app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimPage {
    pub name: String,
    pub background: [u8; 3],
    /// Drawn in order; where widgets overlap, the later one is on top and takes the click.
    pub widgets: Vec<SimWidget>,
}

impl SimPage {
    /// An empty page on a light grey background.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            background: [245, 245, 245],
            widgets: Vec::new(),
        }
    }

    pub fn with_background(mut self, background: [u8; 3]) -> Self {
        self.background = background;
        self
    }

    pub fn with(mut self, widget: SimWidget) -> Self {
        self.widgets.push(widget);
        self
    }
}

/// A seeded bug: activating `sequence` (widget indices of `page`) consecutively makes the
/// app report a signal of `kind` with `message`, every time the sequence is completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimFault {
    pub page: usize,
    pub sequence: Vec<usize>,
    pub kind: SignalKind,
    pub message: String,
}

impl SimFault {
    /// An uncaught exception.
    pub fn exception(page: usize, sequence: Vec<usize>, message: impl Into<String>) -> Self {
        Self {
            page,
            sequence,
            kind: SignalKind::UncaughtException,
            message: message.into(),
        }
    }
}

/// A simulated application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimApp {
    pub name: String,
    /// The start viewport; widget boxes are given for it.
    pub size: Size,
    pub platform: Platform,
    /// Index of the page shown at start and after a restart.
    pub start: usize,
    pub pages: Vec<SimPage>,
    pub faults: Vec<SimFault>,
}

impl SimApp {
    /// A fixed six-page web app: a home page linking to a form (text fields, checkbox,
    /// switch, slider), a list, a dialog and a dead end; a result page behind the form.
    ///
    /// Faults: on the form, typing a name, ticking the checkbox and submitting throws an
    /// uncaught exception (three activations); on the dialog, choosing the first and then
    /// the second radio button logs a console error.
    pub fn demo() -> Self {
        use WidgetKind::*;
        let w = SimWidget::new;
        let home = SimPage::new("home")
            .with(w(Rect::new(110, 44, 100, 60), ImageView).with_color([120, 160, 200]))
            .with(w(Rect::new(20, 120, 280, 44), Button).navigates_to(1))
            .with(
                w(Rect::new(20, 176, 280, 44), Button)
                    .with_color([52, 168, 83])
                    .navigates_to(2),
            )
            .with(
                w(Rect::new(20, 232, 280, 44), Button)
                    .with_color([251, 188, 5])
                    .navigates_to(3),
            )
            .with(
                w(Rect::new(20, 288, 280, 44), Button)
                    .with_color([234, 67, 53])
                    .navigates_to(5),
            )
            .with(w(Rect::new(20, 360, 280, 24), TextView));
        let form = SimPage::new("form")
            .with_background([250, 250, 240])
            .with(w(Rect::new(20, 48, 280, 36), EditText))
            .with(w(Rect::new(20, 96, 280, 36), EditText))
            .with(w(Rect::new(20, 148, 32, 32), CheckBox).toggling())
            .with(
                w(Rect::new(80, 148, 64, 32), Switch)
                    .with_color([180, 180, 220])
                    .toggling(),
            )
            .with(w(Rect::new(20, 200, 280, 24), SeekBar))
            .with(w(Rect::new(20, 248, 130, 44), Button).navigates_to(4))
            .with(
                w(Rect::new(170, 248, 130, 44), Button)
                    .with_color([158, 158, 158])
                    .navigates_to(0),
            );
        let mut list = SimPage::new("list").with_background([255, 255, 255]);
        for i in 0..5 {
            let shade = if i % 2 == 0 {
                [236, 239, 241]
            } else {
                [214, 222, 226]
            };
            let item = w(Rect::new(0, 40 + 56 * i, 320, 52), ListItem).with_color(shade);
            // The last row is disabled.
            list = list.with(if i < 4 { item.navigates_to(3) } else { item });
        }
        list = list.with(w(Rect::new(272, 420, 36, 36), Icon).navigates_to(0));
        let dialog = SimPage::new("dialog")
            .with_background([90, 90, 90])
            .with(w(Rect::new(40, 120, 240, 80), TextView).with_color([255, 255, 255]))
            .with(w(Rect::new(60, 216, 28, 28), RadioButton).toggling())
            .with(w(Rect::new(60, 256, 28, 28), RadioButton).toggling())
            .with(w(Rect::new(160, 300, 100, 40), Button).navigates_to(2))
            .with(
                w(Rect::new(50, 300, 100, 40), Button)
                    .with_color([158, 158, 158])
                    .navigates_to(0),
            );
        let result = SimPage::new("result")
            .with_background([240, 250, 240])
            .with(w(Rect::new(20, 60, 280, 40), TextView).with_color([200, 230, 200]))
            .with(w(Rect::new(20, 120, 280, 12), ProgressBar).with_color([76, 175, 80]))
            .with(w(Rect::new(20, 160, 280, 44), Button).navigates_to(0));
        let about = SimPage::new("about")
            .with_background([250, 245, 255])
            .with(w(Rect::new(60, 60, 200, 120), ImageView).with_color([180, 160, 220]))
            .with(w(Rect::new(20, 200, 280, 60), TextView).with_color([230, 230, 230]));
        Self {
            name: "demo".into(),
            size: Size::new(320, 480),
            platform: Platform::Web,
            start: 0,
            pages: vec![home, form, list, dialog, result, about],
            faults: vec![
                SimFault::exception(
                    1,
                    vec![0, 2, 5],
                    "TypeError: Cannot read properties of undefined (reading 'email')",
                ),
                SimFault {
                    page: 3,
                    sequence: vec![1, 2],
                    kind: SignalKind::ConsoleError,
                    message: "radio group lost its selection".into(),
                },
            ],
        }
    }

    /// A random app, the same for the same arguments: `pages` pages (at least one) of
    /// `widgets_per_page` widgets each, laid out on a grid below the header so that no two
    /// overlap and all stay on screen, every page reachable from page 0, and a few faults
    /// of two or three activations.
    ///
    /// # Panics
    /// When more than one page is asked for with no widgets to link them, or when the
    /// widgets do not fit on the 320x480 screen (about 900 per page).
    pub fn generate(seed: u64, pages: usize, widgets_per_page: usize) -> Self {
        use WidgetKind::*;
        assert!(pages >= 1, "a generated app needs at least one page");
        assert!(
            pages == 1 || widgets_per_page >= 1,
            "{pages} pages cannot be linked with no widgets"
        );
        let size = Size::new(320, 480);
        let mut rng = SplitMix64::new(seed);
        let boxes_of = |rng: &mut SplitMix64| grid_layout(rng, size, widgets_per_page);

        let mut page_list: Vec<SimPage> = (0..pages)
            .map(|i| {
                let background = [
                    rng.range(200, 255) as u8,
                    rng.range(200, 255) as u8,
                    rng.range(200, 255) as u8,
                ];
                let widgets = boxes_of(&mut rng)
                    .into_iter()
                    .map(|rect| SimWidget::new(rect, TextView))
                    .collect();
                SimPage {
                    name: format!("page{i}"),
                    background,
                    widgets,
                }
            })
            .collect();

        // A random spanning tree from page 0: every later page gets a link from an earlier
        // page that still has a widget without a link.
        let mut linked = vec![vec![false; widgets_per_page]; pages];
        for child in 1..pages {
            let parents: Vec<usize> = (0..child)
                .filter(|&p| linked[p].iter().any(|l| !l))
                .collect();
            let parent = parents[rng.below(parents.len())];
            let free: Vec<usize> = (0..widgets_per_page)
                .filter(|&i| !linked[parent][i])
                .collect();
            let slot = free[rng.below(free.len())];
            linked[parent][slot] = true;
            page_list[parent].widgets[slot].on_click = Some(child);
        }

        const NAV: [WidgetKind; 5] = [Button, ImageButton, ListItem, Tab, Icon];
        const TOGGLE: [WidgetKind; 3] = [CheckBox, Switch, RadioButton];
        const INERT: [WidgetKind; 4] = [TextView, ImageView, ProgressBar, Icon];
        for (p, page) in page_list.iter_mut().enumerate() {
            for (i, widget) in page.widgets.iter_mut().enumerate() {
                if !linked[p][i] && pages > 1 && rng.below(10) < 3 {
                    // Any other page, back links included.
                    let to = (p + 1 + rng.below(pages - 1)) % pages;
                    widget.on_click = Some(to);
                }
                let roll = rng.below(10);
                if widget.on_click.is_some() {
                    widget.kind = NAV[rng.below(NAV.len())];
                } else if roll < 3 {
                    widget.kind = TOGGLE[rng.below(TOGGLE.len())];
                    widget.toggles = true;
                } else if roll < 5 {
                    widget.kind = EditText;
                } else if roll < 6 {
                    widget.kind = SeekBar;
                } else {
                    widget.kind = INERT[rng.below(INERT.len())];
                }
                widget.color = if widget.kind == EditText {
                    [250, 250, 250]
                } else {
                    [
                        rng.range(60, 220) as u8,
                        rng.range(60, 220) as u8,
                        rng.range(60, 220) as u8,
                    ]
                };
            }
        }

        // Faults over the handlers that keep the page open, so each can be completed.
        let mut faults = Vec::new();
        for (p, page) in page_list.iter().enumerate() {
            let mut stay: Vec<usize> = (0..page.widgets.len())
                .filter(|&i| page.widgets[i].has_behaviour() && page.widgets[i].on_click.is_none())
                .collect();
            if stay.len() < 2 || rng.below(2) == 0 {
                continue;
            }
            let len = 2 + rng.below(stay.len().min(3) - 1);
            let mut sequence = Vec::with_capacity(len);
            for _ in 0..len {
                sequence.push(stay.swap_remove(rng.below(stay.len())));
            }
            let kind = if rng.below(4) == 0 {
                SignalKind::ConsoleError
            } else {
                SignalKind::UncaughtException
            };
            let n = faults.len();
            faults.push(SimFault {
                page: p,
                sequence,
                kind,
                message: format!("Error: seeded fault {n} on page{p}"),
            });
        }

        Self {
            name: format!("generated-{seed}"),
            size,
            platform: Platform::Web,
            start: 0,
            pages: page_list,
            faults,
        }
    }

    pub fn with_platform(mut self, platform: Platform) -> Self {
        self.platform = platform;
        self
    }

    /// Checks that the app can run: a start page that exists, widgets inside the screen
    /// with links to existing pages, faults on existing widgets with handlers where only
    /// the last activation may leave the page (otherwise the fault could never fire).
    pub fn validate(&self) -> Result<(), String> {
        if self.size.width == 0 || self.size.height == 0 {
            return Err(format!("app `{}` has an empty screen", self.name));
        }
        if self.start >= self.pages.len() {
            return Err(format!(
                "start page {} of {} pages",
                self.start,
                self.pages.len()
            ));
        }
        let screen = Rect::new(0, 0, self.size.width, self.size.height);
        for (p, page) in self.pages.iter().enumerate() {
            for (i, w) in page.widgets.iter().enumerate() {
                if w.rect.area() == 0 || w.rect.intersection(&screen) != Some(w.rect) {
                    return Err(format!(
                        "widget {i} of page {p} at {:?} is empty or off screen",
                        w.rect
                    ));
                }
                if let Some(to) = w.on_click.filter(|&to| to >= self.pages.len()) {
                    return Err(format!("widget {i} of page {p} links to missing page {to}"));
                }
            }
        }
        for (f, fault) in self.faults.iter().enumerate() {
            let Some(page) = self.pages.get(fault.page) else {
                return Err(format!("fault {f} is on missing page {}", fault.page));
            };
            if fault.sequence.is_empty() {
                return Err(format!("fault {f} has an empty sequence"));
            }
            for (k, &i) in fault.sequence.iter().enumerate() {
                let Some(w) = page.widgets.get(i) else {
                    return Err(format!(
                        "fault {f} names missing widget {i} of page {}",
                        fault.page
                    ));
                };
                if !w.has_behaviour() {
                    return Err(format!("fault {f} names widget {i}, which has no handler"));
                }
                if w.on_click.is_some() && k + 1 < fault.sequence.len() {
                    return Err(format!(
                        "fault {f}: widget {i} leaves the page before the sequence ends"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Boxes for `n` widgets: one per cell of a grid below the header, a random size and place
/// inside its cell, so they never overlap.
fn grid_layout(rng: &mut SplitMix64, size: Size, n: usize) -> Vec<Rect> {
    if n == 0 {
        return Vec::new();
    }
    const MARGIN: u32 = 2;
    const MIN_CELL: u32 = 12;
    let (aw, ah) = (size.width, size.height - HEADER_HEIGHT);
    let cols = ((n as f64 * aw as f64 / ah as f64).sqrt().ceil() as u32).clamp(1, n as u32);
    let rows = (n as u32).div_ceil(cols);
    let (cw, ch) = (aw / cols, ah / rows);
    assert!(
        cw >= MIN_CELL && ch >= MIN_CELL,
        "{n} widgets do not fit on a {}x{} screen",
        size.width,
        size.height
    );
    (0..n as u32)
        .map(|k| {
            let (col, row) = (k % cols, k / cols);
            let (iw, ih) = (cw - 2 * MARGIN, ch - 2 * MARGIN);
            let w = rng.range((iw / 2).max(8), iw);
            let h = rng.range((ih / 3).max(8).min(ih.min(64)), ih.min(64));
            let x = col * cw + MARGIN + rng.range(0, iw - w);
            let y = HEADER_HEIGHT + row * ch + MARGIN + rng.range(0, ih - h);
            Rect::new(x as i32, y as i32, w, h)
        })
        .collect()
}

/// SplitMix64: a tiny, well-mixed deterministic generator.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`); the modulo bias is irrelevant at these sizes.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % (u64::from(hi - lo) + 1)) as u32
    }
}

/// What one widget shows now.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WidgetState {
    on: bool,
    text: String,
    /// Slider position, 0..=100.
    level: u8,
}

impl Default for WidgetState {
    fn default() -> Self {
        Self {
            on: false,
            text: String::new(),
            level: 50,
        }
    }
}

/// Runs a [`SimApp`] as a [`Device`].
///
/// Rules of the model:
/// - A widget *activates* when its handler runs: a click (double or long click alike) on a
///   widget that navigates, toggles or is a `SeekBar`; `input` into an `EditText`; a `drag`
///   on a `SeekBar`. Clicking an `EditText` only focuses it; widgets without behaviour never
///   activate. `input` aimed at a widget that takes no text acts as a click on it (the
///   browser clicks before typing).
/// - Activations are logged per visit of a page; entering a page (navigation, `return`,
///   restart) clears the log. A fault fires every time the log ends with its sequence, so
///   inert clicks in between do not break a sequence but any other activation does.
/// - A [`SignalKind::Crash`] fault kills the app: until [`Device::restart`], `perform` and
///   `screenshot` fail with [`Error::DeviceLost`].
/// - The layout is given for [`SimApp::size`]; other viewports (`window_size`,
///   `split_screen`, `orientation_switch`) stretch it to fit, so every widget stays reachable.
/// - Coverage counts one function per page (its render, run when the page is shown) and
///   one per widget with behaviour (run when it activates), each [`FUNCTION_BYTES`] long.
/// - `return` goes back through the pages opened by clicks and does nothing at the first;
///   `network_switch` toggles an offline strip at the bottom of the screen; the other page
///   and system actions are accepted and counted but change nothing.
/// - [`Device::restart`] resets page, history, widget states, viewport and network, and
///   keeps coverage, the step count and signals not yet drained.
#[derive(Debug, Clone)]
pub struct Simulator {
    app: SimApp,
    page: usize,
    history: Vec<usize>,
    states: Vec<Vec<WidgetState>>,
    /// Widgets activated on the current page since it was entered, newest last, at most
    /// as many as the longest fault sequence.
    activations: Vec<usize>,
    longest_fault: usize,
    viewport: Size,
    split: bool,
    offline: bool,
    permitted: Option<bool>,
    crashed: bool,
    steps: u64,
    signals: Vec<Signal>,
    /// Coverage function of each page's render, and of each widget with a handler.
    render_fn: Vec<usize>,
    widget_fn: Vec<Vec<Option<usize>>>,
    covered: Vec<bool>,
    covered_count: u64,
}

impl Simulator {
    /// Starts `app` on its start page.
    ///
    /// # Panics
    /// When [`SimApp::validate`] rejects the app.
    pub fn new(app: SimApp) -> Self {
        if let Err(e) = app.validate() {
            panic!("invalid simulated app `{}`: {e}", app.name);
        }
        let mut render_fn = Vec::with_capacity(app.pages.len());
        let mut widget_fn = Vec::with_capacity(app.pages.len());
        let mut functions = 0;
        for page in &app.pages {
            render_fn.push(functions);
            functions += 1;
            widget_fn.push(
                page.widgets
                    .iter()
                    .map(|w| {
                        w.has_behaviour().then(|| {
                            functions += 1;
                            functions - 1
                        })
                    })
                    .collect(),
            );
        }
        let longest_fault = app
            .faults
            .iter()
            .map(|f| f.sequence.len())
            .max()
            .unwrap_or(0);
        let mut sim = Self {
            page: app.start,
            history: Vec::new(),
            states: Vec::new(),
            activations: Vec::new(),
            longest_fault,
            viewport: app.size,
            split: false,
            offline: false,
            permitted: None,
            crashed: false,
            steps: 0,
            signals: Vec::new(),
            render_fn,
            widget_fn,
            covered: vec![false; functions],
            covered_count: 0,
            app,
        };
        sim.reset();
        sim
    }

    pub fn app(&self) -> &SimApp {
        &self.app
    }

    /// Index of the page on screen.
    pub fn page(&self) -> usize {
        self.page
    }

    pub fn page_name(&self) -> &str {
        &self.app.pages[self.page].name
    }

    /// Actions performed so far (restarts do not reset it).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Whether a crash fault killed the app (until the next restart).
    pub fn crashed(&self) -> bool {
        self.crashed
    }

    /// The widgets on screen in viewport pixels, as a perfect detector would report them.
    pub fn widgets(&self) -> Vec<Widget> {
        self.app.pages[self.page]
            .widgets
            .iter()
            .map(|w| Widget::new(self.to_view(w.rect), w.kind, 1.0))
            .filter(|w| w.rect.area() > 0)
            .collect()
    }

    /// Back to the start state, keeping coverage, step count and undrained signals.
    fn reset(&mut self) {
        self.states = self
            .app
            .pages
            .iter()
            .map(|p| vec![WidgetState::default(); p.widgets.len()])
            .collect();
        self.history.clear();
        self.viewport = self.app.size;
        self.split = false;
        self.offline = false;
        self.permitted = None;
        self.crashed = false;
        self.enter(self.app.start);
    }

    fn cover(&mut self, function: usize) {
        if !self.covered[function] {
            self.covered[function] = true;
            self.covered_count += 1;
        }
    }

    fn enter(&mut self, page: usize) {
        self.page = page;
        self.activations.clear();
        self.cover(self.render_fn[page]);
    }

    /// A layout box mapped to the viewport (the layout stretches to fit).
    fn to_view(&self, r: Rect) -> Rect {
        let (base, vp) = (self.app.size, self.viewport);
        let sx =
            |v: i32| (i64::from(v) * i64::from(vp.width)).div_euclid(i64::from(base.width)) as i32;
        let sy = |v: i32| {
            (i64::from(v) * i64::from(vp.height)).div_euclid(i64::from(base.height)) as i32
        };
        let (x0, y0, x1, y1) = (sx(r.x), sy(r.y), sx(r.right()), sy(r.bottom()));
        Rect::new(x0, y0, (x1 - x0) as u32, (y1 - y0) as u32)
    }

    /// The topmost widget of the current page under a viewport point.
    fn hit(&self, p: Point) -> Option<usize> {
        if !self.viewport.contains(p) {
            return None;
        }
        let widgets = &self.app.pages[self.page].widgets;
        (0..widgets.len())
            .rev()
            .find(|&i| self.to_view(widgets[i].rect).contains(p))
    }

    /// A click on widget `i` at viewport point `p`: its handler runs, then any navigation.
    fn click(&mut self, i: usize, p: Point) {
        let page = self.page;
        let widget = &self.app.pages[page].widgets[i];
        let (toggles, on_click, kind) = (widget.toggles, widget.on_click, widget.kind);
        if !widget.has_behaviour() || (kind.accepts_text() && !toggles && on_click.is_none()) {
            return;
        }
        if kind == WidgetKind::SeekBar {
            let r = self.to_view(widget.rect);
            let level = (i64::from(p.x - r.x) * 100 / i64::from(r.width.max(1))).clamp(0, 100);
            self.states[page][i].level = level as u8;
        }
        if toggles {
            let st = &mut self.states[page][i];
            st.on = !st.on;
        }
        self.activate(i);
        if let Some(to) = on_click.filter(|_| !self.crashed) {
            self.history.push(page);
            self.enter(to);
        }
    }

    /// Widget `i` of the current page ran its handler: cover it, log it, fire faults.
    fn activate(&mut self, i: usize) {
        let page = self.page;
        if let Some(f) = self.widget_fn[page][i] {
            self.cover(f);
        }
        self.activations.push(i);
        if self.activations.len() > self.longest_fault {
            let extra = self.activations.len() - self.longest_fault;
            self.activations.drain(..extra);
        }
        for f in 0..self.app.faults.len() {
            let fault = &self.app.faults[f];
            if fault.page == page && self.activations.ends_with(&fault.sequence) {
                let signal = self.fault_signal(f);
                self.crashed |= signal.kind == SignalKind::Crash;
                self.signals.push(signal);
            }
        }
    }

    /// The signal of fault `f`: its message and a stable stack naming the handlers of its
    /// sequence, the throwing one on top.
    fn fault_signal(&self, f: usize) -> Signal {
        let fault = &self.app.faults[f];
        let url = format!("sim://{}", self.app.name);
        let mut stack: Vec<StackFrame> = fault
            .sequence
            .iter()
            .rev()
            .enumerate()
            .map(|(depth, &i)| StackFrame {
                function: format!("page{}_widget{i}", fault.page),
                url: url.clone(),
                line: 1 + self.widget_fn[fault.page][i].unwrap_or(0) as u32 * LINES_PER_FUNCTION,
                // The top frame's column tells apart faults thrown by the same handler.
                column: if depth == 0 { f as u32 + 1 } else { 1 },
            })
            .collect();
        stack.push(StackFrame {
            function: "dispatch_event".into(),
            url,
            line: 1,
            column: 1,
        });
        Signal::new(fault.kind, fault.message.clone(), stack)
    }

    fn render(&self) -> RgbImage {
        let vp = self.viewport;
        let base = self.app.size;
        let page = &self.app.pages[self.page];
        let mut img = RgbImage::from_pixel(vp.width, vp.height, Rgb(page.background));

        // Header band in the page's colour, with its index in binary as eight squares.
        let header = header_color(self.page);
        fill(
            &mut img,
            self.to_view(Rect::new(0, 0, base.width, HEADER_HEIGHT)),
            header,
        );
        for bit in 0..8 {
            let on = (self.page >> bit) & 1 == 1;
            let square = Rect::new(8 + 14 * bit, 10, 10, 10);
            fill(
                &mut img,
                self.to_view(square),
                if on { [255, 255, 255] } else { darker(header) },
            );
        }

        for (i, w) in page.widgets.iter().enumerate() {
            let st = &self.states[self.page][i];
            let r = self.to_view(w.rect);
            fill(&mut img, r, w.color);
            border(&mut img, r, darker(w.color));
            let mark = contrast(w.color);
            // Inner marks are laid out in layout pixels, inside the 2px border and a gap.
            let inner = Rect::new(
                w.rect.x + 4,
                w.rect.y + 4,
                w.rect.width.saturating_sub(8),
                w.rect.height.saturating_sub(8),
            );
            if w.toggles && st.on {
                let side = inner.width.min(inner.height);
                let sq = Rect::new(
                    inner.x + (inner.width - side) as i32 / 2,
                    inner.y + (inner.height - side) as i32 / 2,
                    side,
                    side,
                );
                fill(&mut img, self.to_view(sq), mark);
            }
            if w.kind.accepts_text() && !st.text.is_empty() {
                let chars = st.text.chars().count().min(u32::MAX as usize) as u32;
                let len = chars.saturating_mul(CHAR_WIDTH).min(inner.width);
                let h = inner.height.min(8);
                let bar = Rect::new(inner.x, inner.y + (inner.height - h) as i32 / 2, len, h);
                fill(&mut img, self.to_view(bar), mark);
            }
            if w.kind == WidgetKind::SeekBar {
                let len = inner.width * u32::from(st.level) / 100;
                let h = inner.height.min(6);
                let bar = Rect::new(inner.x, inner.y + (inner.height - h) as i32 / 2, len, h);
                fill(&mut img, self.to_view(bar), mark);
            }
        }

        if self.offline {
            let strip = Rect::new(
                0,
                base.height.saturating_sub(16) as i32,
                base.width,
                16.min(base.height),
            );
            fill(&mut img, self.to_view(strip), [50, 50, 50]);
        }
        img
    }

    fn check_alive(&self) -> Result<()> {
        if self.crashed {
            return Err(Error::DeviceLost {
                what: format!("simulated app `{}` crashed", self.app.name),
            });
        }
        Ok(())
    }
}

fn header_color(page: usize) -> [u8; 3] {
    // Golden-ratio hue steps keep neighbouring pages far apart on the colour wheel.
    let hue = (page as f64 * 0.618_033_988_749_895).fract() * 6.0;
    let (s, v) = (0.65, 0.8);
    let c = v * s;
    let x = c * (1.0 - (hue % 2.0 - 1.0).abs());
    let (r, g, b) = match hue as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let to = |f: f64| ((f + m) * 255.0).round() as u8;
    [to(r), to(g), to(b)]
}

fn darker(c: [u8; 3]) -> [u8; 3] {
    c.map(|v| v / 2)
}

/// Dark on light colours, light on dark ones.
fn contrast(c: [u8; 3]) -> [u8; 3] {
    let luma = 299 * u32::from(c[0]) + 587 * u32::from(c[1]) + 114 * u32::from(c[2]);
    if luma > 128_000 {
        [30, 30, 30]
    } else {
        [240, 240, 240]
    }
}

fn fill(img: &mut RgbImage, r: Rect, color: [u8; 3]) {
    if r.width > 0 && r.height > 0 {
        draw_filled_rect_mut(
            img,
            imageproc::rect::Rect::at(r.x, r.y).of_size(r.width, r.height),
            Rgb(color),
        );
    }
}

/// A 2px frame just inside `r`.
fn border(img: &mut RgbImage, r: Rect, color: [u8; 3]) {
    for k in 0..2u32 {
        if r.width > 2 * k && r.height > 2 * k {
            let at = imageproc::rect::Rect::at(r.x + k as i32, r.y + k as i32);
            draw_hollow_rect_mut(
                img,
                at.of_size(r.width - 2 * k, r.height - 2 * k),
                Rgb(color),
            );
        }
    }
}

impl Device for Simulator {
    fn platform(&self) -> Platform {
        self.app.platform
    }

    fn viewport(&self) -> Size {
        self.viewport
    }

    fn screenshot(&mut self) -> Result<Screenshot> {
        self.check_alive()?;
        Ok(Screenshot::new(self.render(), 1.0, self.steps * 100)?)
    }

    fn perform(&mut self, action: &Action) -> Result<()> {
        use ActionKind::*;
        let platform = self.app.platform;
        if !action.kind.supported_on(platform) {
            return Err(Error::Unsupported {
                action: action.kind,
                platform,
            });
        }
        self.check_alive()?;
        let target = if action.kind.needs_target() {
            Some(action.point().ok_or(Error::BadAction {
                action: action.kind,
                what: "a target",
            })?)
        } else {
            None
        };
        let ratio = match (action.kind, &action.param) {
            (WindowSize, Some(ActionParam::Ratio(r))) if r.is_finite() => r.clamp(0.25, 2.0),
            (WindowSize, _) => {
                return Err(Error::BadAction {
                    action: WindowSize,
                    what: "a finite ratio parameter",
                });
            }
            _ => 1.0,
        };
        self.steps += 1;
        let hit = target.and_then(|p| self.hit(p).map(|i| (i, p)));
        let base = self.app.size;
        match action.kind {
            Click | DoubleClick | LongClick => {
                if let Some((i, p)) = hit {
                    self.click(i, p);
                }
            }
            Input => {
                if let Some((i, p)) = hit {
                    if self.app.pages[self.page].widgets[i].kind.accepts_text() {
                        let text = crate::typed_text(action).trim_end_matches('\n').to_owned();
                        self.states[self.page][i].text = text;
                        self.activate(i);
                    } else {
                        self.click(i, p);
                    }
                }
            }
            Drag => {
                if let Some((i, _)) = hit {
                    let w = &self.app.pages[self.page].widgets[i];
                    if w.kind == WidgetKind::SeekBar {
                        let dx = match action.param {
                            Some(ActionParam::Offset { dx, .. }) => dx,
                            _ => self.viewport.width as i32 / 8,
                        };
                        let width = i64::from(self.to_view(w.rect).width.max(1));
                        let st = &mut self.states[self.page][i];
                        st.level =
                            (i64::from(st.level) + i64::from(dx) * 100 / width).clamp(0, 100) as u8;
                        self.activate(i);
                    }
                }
            }
            // Context menus, scrolling, focus changes and calls leave the model as it is.
            MidClick | RightClick | Swipe | BackSwitch | PhoneInterrupt => {}
            SplitScreen => {
                self.split = !self.split;
                self.viewport = if self.split {
                    Size::new((base.width / 2).max(1), base.height)
                } else {
                    base
                };
            }
            WindowSize => {
                let scaled = |v: u32| ((v as f32 * ratio).round() as u32).max(1);
                self.viewport = Size::new(scaled(base.width), scaled(base.height));
                self.split = false;
            }
            OrientationSwitch => {
                self.viewport = Size::new(self.viewport.height, self.viewport.width);
            }
            Return => {
                if let Some(prev) = self.history.pop() {
                    self.enter(prev);
                }
            }
            AccessGrant => self.permitted = Some(true),
            AccessDeny => self.permitted = Some(false),
            NetworkSwitch => self.offline = !self.offline,
        }
        Ok(())
    }

    fn restart(&mut self) -> Result<()> {
        self.reset();
        Ok(())
    }

    fn drain_signals(&mut self) -> Result<Vec<Signal>> {
        Ok(std::mem::take(&mut self.signals))
    }

    fn coverage(&mut self) -> Result<Option<CoverageSnapshot>> {
        let total = self.covered.len() as u64;
        Ok(Some(CoverageSnapshot {
            functions_covered: self.covered_count,
            functions_total: total,
            bytes_covered: self.covered_count * FUNCTION_BYTES,
            bytes_total: total * FUNCTION_BYTES,
            scripts: 1,
        }))
    }

    fn covered_functions(&mut self) -> Result<Option<Vec<String>>> {
        let names = self.covered.iter().enumerate().filter(|(_, c)| **c);
        Ok(Some(names.map(|(i, _)| format!("f{i}")).collect()))
    }

    fn describe(&self) -> String {
        format!(
            "simulator `{}` {} pages",
            self.app.name,
            self.app.pages.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    fn center(sim: &Simulator, page: usize, widget: usize) -> Point {
        assert_eq!(sim.page(), page, "expected to be on page {page}");
        sim.to_view(sim.app().pages[page].widgets[widget].rect)
            .center()
    }

    fn click(sim: &mut Simulator, page: usize, widget: usize) {
        let p = center(sim, page, widget);
        sim.perform(&Action::at(ActionKind::Click, p)).unwrap();
    }

    fn type_into(sim: &mut Simulator, page: usize, widget: usize, text: &str) {
        let p = center(sim, page, widget);
        let a = Action::at(ActionKind::Input, p).with_param(ActionParam::Text(text.into()));
        sim.perform(&a).unwrap();
    }

    fn back(sim: &mut Simulator) {
        sim.perform(&Action::new(ActionKind::Return)).unwrap();
    }

    fn covered(sim: &mut Simulator) -> CoverageSnapshot {
        sim.coverage().unwrap().unwrap()
    }

    fn script() -> Vec<Action> {
        let demo = SimApp::demo();
        let c = |p: usize, w: usize| demo.pages[p].widgets[w].rect.center();
        vec![
            Action::at(ActionKind::Click, c(0, 1)),
            Action::at(ActionKind::Input, c(1, 0)).with_param(ActionParam::Text("Ada".into())),
            Action::at(ActionKind::Click, c(1, 3)),
            Action::at(ActionKind::Drag, c(1, 4)).with_param(ActionParam::Offset { dx: 40, dy: 0 }),
            Action::new(ActionKind::NetworkSwitch),
            Action::at(ActionKind::Click, c(1, 5)),
            Action::new(ActionKind::Return),
            Action::new(ActionKind::WindowSize).with_param(ActionParam::Ratio(0.5)),
            Action::at(ActionKind::Click, Point::new(80, 100)),
            Action::new(ActionKind::Return),
        ]
    }

    #[test]
    fn the_same_actions_give_the_same_screens() {
        let (mut a, mut b) = (
            Simulator::new(SimApp::demo()),
            Simulator::new(SimApp::demo()),
        );
        for action in script() {
            a.perform(&action).unwrap();
            b.perform(&action).unwrap();
            let (sa, sb) = (a.screenshot().unwrap(), b.screenshot().unwrap());
            assert_eq!(sa.pixels(), sb.pixels(), "after {action}");
            assert_eq!(sa.timestamp_ms, sb.timestamp_ms);
            assert_eq!(a.viewport(), sa.size());
        }
        assert_eq!(a.steps(), 10);
        assert_eq!(a.screenshot().unwrap().timestamp_ms, 1000);
        assert_eq!(covered(&mut a), covered(&mut b));
        assert_eq!(a.drain_signals().unwrap(), b.drain_signals().unwrap());
    }

    #[test]
    fn navigation_changes_page_and_pixels_and_return_goes_back() {
        let mut sim = Simulator::new(SimApp::demo());
        let home = sim.screenshot().unwrap();
        assert_eq!((sim.page(), sim.page_name()), (0, "home"));
        click(&mut sim, 0, 2);
        assert_eq!(sim.page_name(), "list");
        let list = sim.screenshot().unwrap();
        assert!(list.diff_fraction(&home, 0) > 0.2);
        click(&mut sim, 2, 0);
        assert_eq!(sim.page_name(), "dialog");
        back(&mut sim);
        back(&mut sim);
        assert_eq!(sim.page(), 0);
        assert_eq!(sim.screenshot().unwrap().pixels(), home.pixels());
        // Nothing left to go back to.
        back(&mut sim);
        assert_eq!(sim.page(), 0);
        // An inert widget and empty space do nothing.
        click(&mut sim, 0, 0);
        sim.perform(&Action::at(ActionKind::Click, Point::new(2, 470)))
            .unwrap();
        sim.perform(&Action::at(ActionKind::Click, Point::new(-5, 9999)))
            .unwrap();
        assert_eq!(sim.screenshot().unwrap().pixels(), home.pixels());
    }

    #[test]
    fn widget_state_is_visible() {
        let mut sim = Simulator::new(SimApp::demo());
        click(&mut sim, 0, 1);
        let mut last = sim.screenshot().unwrap();
        let mut changed = |sim: &mut Simulator, what: &str| {
            let now = sim.screenshot().unwrap();
            assert!(
                now.diff_fraction(&last, 0) > 0.0,
                "{what} left the screen unchanged"
            );
            last = now;
        };
        type_into(&mut sim, 1, 0, "abc");
        changed(&mut sim, "typing");
        type_into(&mut sim, 1, 0, "abcdef");
        changed(&mut sim, "typing longer text");
        click(&mut sim, 1, 2);
        changed(&mut sim, "ticking the checkbox");
        click(&mut sim, 1, 2);
        changed(&mut sim, "unticking the checkbox");
        let seek = sim.app().pages[1].widgets[4].rect;
        sim.perform(&Action::at(
            ActionKind::Click,
            Point::new(seek.x + 10, seek.center().y),
        ))
        .unwrap();
        changed(&mut sim, "moving the slider");
        sim.perform(&Action::new(ActionKind::NetworkSwitch))
            .unwrap();
        changed(&mut sim, "going offline");
        // Clicking a text field only focuses it.
        click(&mut sim, 1, 1);
        assert_eq!(sim.screenshot().unwrap().pixels(), last.pixels());
    }

    #[test]
    fn a_fault_fires_for_its_exact_sequence_only() {
        let mut sim = Simulator::new(SimApp::demo());
        let to_form = |sim: &mut Simulator| {
            sim.restart().unwrap();
            click(sim, 0, 1);
        };
        // Subsets and other orders.
        to_form(&mut sim);
        click(&mut sim, 1, 2);
        click(&mut sim, 1, 5);
        to_form(&mut sim);
        type_into(&mut sim, 1, 0, "x");
        click(&mut sim, 1, 5);
        to_form(&mut sim);
        click(&mut sim, 1, 2);
        type_into(&mut sim, 1, 0, "x");
        click(&mut sim, 1, 5);
        // Another activation in between breaks the sequence.
        to_form(&mut sim);
        type_into(&mut sim, 1, 0, "x");
        click(&mut sim, 1, 3);
        click(&mut sim, 1, 2);
        click(&mut sim, 1, 5);
        // Leaving the page in between breaks it too.
        to_form(&mut sim);
        type_into(&mut sim, 1, 0, "x");
        click(&mut sim, 1, 2);
        click(&mut sim, 1, 6);
        click(&mut sim, 0, 1);
        click(&mut sim, 1, 5);
        assert!(sim.drain_signals().unwrap().is_empty());

        // The exact sequence, with an inert click in between, fires each time.
        let mut fired = Vec::new();
        for _ in 0..2 {
            to_form(&mut sim);
            type_into(&mut sim, 1, 0, "x");
            sim.perform(&Action::at(ActionKind::Click, Point::new(300, 470)))
                .unwrap();
            click(&mut sim, 1, 2);
            click(&mut sim, 1, 5);
            assert_eq!(sim.page_name(), "result");
            fired.extend(sim.drain_signals().unwrap());
        }
        assert_eq!(fired.len(), 2);
        assert_eq!(fired[0], fired[1]);
        let s = &fired[0];
        assert_eq!(s.kind, SignalKind::UncaughtException);
        assert!(s.message.contains("reading 'email'"));
        let names: Vec<_> = s.stack.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(
            names,
            [
                "page1_widget5",
                "page1_widget2",
                "page1_widget0",
                "dispatch_event"
            ]
        );
        assert!(s.stack.iter().all(|f| f.url == "sim://demo"));
        assert!(sim.drain_signals().unwrap().is_empty());

        // The two-step fault of the dialog fires on the overlapping tail of longer runs.
        sim.restart().unwrap();
        click(&mut sim, 0, 3);
        click(&mut sim, 3, 1);
        click(&mut sim, 3, 2);
        click(&mut sim, 3, 1);
        click(&mut sim, 3, 2);
        let s = sim.drain_signals().unwrap();
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|s| s.kind == SignalKind::ConsoleError));
        assert_ne!(s[0].key, fired[0].key);
    }

    #[test]
    fn coverage_grows_without_double_counting_and_survives_restarts() {
        let mut sim = Simulator::new(SimApp::demo());
        let start = covered(&mut sim);
        // Six renders and 21 handlers.
        assert_eq!(start.functions_total, 27);
        assert_eq!(start.functions_covered, 1);
        assert_eq!(start.bytes_total, 27 * FUNCTION_BYTES);
        click(&mut sim, 0, 1);
        let after_nav = covered(&mut sim);
        assert_eq!(after_nav.functions_covered, 3);
        for _ in 0..5 {
            click(&mut sim, 1, 3);
        }
        click(&mut sim, 1, 1);
        assert_eq!(covered(&mut sim).functions_covered, 4);
        sim.restart().unwrap();
        click(&mut sim, 0, 1);
        assert_eq!(covered(&mut sim).functions_covered, 4);

        // Activating everything everywhere covers everything, exactly once.
        let app = SimApp::demo();
        for (p, page) in app.pages.iter().enumerate() {
            for (i, w) in page.widgets.iter().enumerate() {
                sim.restart().unwrap();
                sim.app.start = p;
                sim.restart().unwrap();
                let point = center(&sim, p, i);
                let kind = if w.kind.accepts_text() {
                    ActionKind::Input
                } else {
                    ActionKind::Click
                };
                sim.perform(&Action::at(kind, point)).unwrap();
            }
        }
        let end = covered(&mut sim);
        assert_eq!(end.functions_covered, end.functions_total);
        assert_eq!(end.bytes_covered, end.bytes_total);
        assert_eq!(end.scripts, 1);
    }

    #[test]
    fn generated_apps_are_reproducible_valid_and_connected() {
        assert_eq!(SimApp::generate(7, 12, 6), SimApp::generate(7, 12, 6));
        assert_ne!(SimApp::generate(7, 12, 6), SimApp::generate(8, 12, 6));
        let mut with_faults = 0;
        for seed in 0..40 {
            let (pages, per_page) = (1 + seed as usize % 15, 1 + seed as usize % 9 * 3);
            let app = SimApp::generate(seed, pages, per_page);
            app.validate().unwrap();
            assert_eq!(app.pages.len(), pages);
            with_faults += usize::from(!app.faults.is_empty());
            let mut seen = vec![false; pages];
            let mut queue = VecDeque::from([app.start]);
            seen[app.start] = true;
            while let Some(p) = queue.pop_front() {
                for to in app.pages[p].widgets.iter().filter_map(|w| w.on_click) {
                    if !std::mem::replace(&mut seen[to], true) {
                        queue.push_back(to);
                    }
                }
            }
            assert!(seen.iter().all(|s| *s), "seed {seed}: unreachable pages");
            for page in &app.pages {
                assert_eq!(page.widgets.len(), per_page);
                for (i, a) in page.widgets.iter().enumerate() {
                    assert!(a.rect.y >= HEADER_HEIGHT as i32);
                    for b in &page.widgets[i + 1..] {
                        assert!(
                            a.rect.intersection(&b.rect).is_none(),
                            "seed {seed}: overlap"
                        );
                    }
                }
            }
            // Faults of generated apps can be triggered.
            let mut sim = Simulator::new(app.clone());
            if let Some(f) = app.faults.first() {
                sim.app.start = f.page;
                sim.restart().unwrap();
                for &w in &f.sequence {
                    if app.pages[f.page].widgets[w].kind.accepts_text() {
                        type_into(&mut sim, f.page, w, "typed");
                    } else {
                        click(&mut sim, f.page, w);
                    }
                }
                assert_eq!(sim.drain_signals().unwrap().len(), 1, "seed {seed}");
            }
        }
        assert!(with_faults > 10);
        SimApp::generate(1, 1, 0).validate().unwrap();
    }

    #[test]
    fn unsupported_and_malformed_actions_fail() {
        let mut sim = Simulator::new(SimApp::demo());
        let p = Point::new(10, 10);
        assert!(matches!(
            sim.perform(&Action::at(ActionKind::LongClick, p)),
            Err(Error::Unsupported {
                action: ActionKind::LongClick,
                platform: Platform::Web
            })
        ));
        assert!(matches!(
            sim.perform(&Action::new(ActionKind::Click)),
            Err(Error::BadAction { .. })
        ));
        assert!(matches!(
            sim.perform(&Action::new(ActionKind::WindowSize)),
            Err(Error::BadAction { .. })
        ));
        assert_eq!(sim.steps(), 0);
        assert_eq!(sim.supported_actions().len(), 14);

        let mut android = Simulator::new(SimApp::demo().with_platform(Platform::Android));
        assert!(matches!(
            android.perform(&Action::at(ActionKind::MidClick, p)),
            Err(Error::Unsupported {
                platform: Platform::Android,
                ..
            })
        ));
        android
            .perform(&Action::at(ActionKind::LongClick, center(&android, 0, 1)))
            .unwrap();
        assert_eq!(android.page_name(), "form");
        android
            .perform(&Action::new(ActionKind::OrientationSwitch))
            .unwrap();
        assert_eq!(android.viewport(), Size::new(480, 320));
        assert_eq!(android.screenshot().unwrap().size(), Size::new(480, 320));
        assert_eq!(android.describe(), "simulator `demo` 6 pages");
    }

    #[test]
    fn viewport_changes_stretch_the_layout_and_restart_undoes_everything() {
        let mut sim = Simulator::new(SimApp::demo());
        let first = sim.screenshot().unwrap();
        sim.perform(&Action::new(ActionKind::SplitScreen)).unwrap();
        assert_eq!(sim.viewport(), Size::new(160, 480));
        sim.perform(&Action::new(ActionKind::SplitScreen)).unwrap();
        assert_eq!(sim.viewport(), Size::new(320, 480));
        sim.perform(&Action::new(ActionKind::WindowSize).with_param(ActionParam::Ratio(1.5)))
            .unwrap();
        assert_eq!(sim.viewport(), Size::new(480, 720));
        assert_eq!(sim.screenshot().unwrap().size(), Size::new(480, 720));
        // Widgets move with the layout and still take clicks where they are drawn.
        let w = sim.widgets();
        assert_eq!(w.len(), 6);
        assert_eq!(w[1].rect, Rect::new(30, 180, 420, 66));
        sim.perform(&Action::on(ActionKind::Click, w[1].clone()))
            .unwrap();
        assert_eq!(sim.page_name(), "form");
        click(&mut sim, 1, 2);
        sim.perform(&Action::new(ActionKind::NetworkSwitch))
            .unwrap();

        sim.restart().unwrap();
        assert_eq!(sim.page(), 0);
        assert_eq!(sim.viewport(), Size::new(320, 480));
        assert_eq!(sim.screenshot().unwrap().pixels(), first.pixels());
        click(&mut sim, 0, 1);
        assert!(!sim.states[1][2].on, "widget state survived a restart");
    }

    #[test]
    fn a_crash_fault_loses_the_device_until_restart() {
        let mut app = SimApp::demo();
        app.faults.push(SimFault {
            page: 3,
            sequence: vec![2, 2, 2],
            kind: SignalKind::Crash,
            message: "renderer gone".into(),
        });
        let mut sim = Simulator::new(app);
        click(&mut sim, 0, 3);
        for _ in 0..3 {
            click(&mut sim, 3, 2);
        }
        assert!(sim.crashed());
        let err = sim.screenshot().unwrap_err();
        assert!(err.is_device_lost(), "{err}");
        assert!(
            sim.perform(&Action::new(ActionKind::Return))
                .unwrap_err()
                .is_device_lost()
        );
        assert_eq!(
            sim.drain_signals().unwrap().last().unwrap().kind,
            SignalKind::Crash
        );
        sim.restart().unwrap();
        assert!(!sim.crashed());
        sim.screenshot().unwrap();
    }

    #[test]
    fn invalid_apps_are_rejected() {
        let mut app = SimApp::demo();
        app.faults.push(SimFault::exception(0, vec![1, 2], "never"));
        assert!(app.validate().unwrap_err().contains("leaves the page"));
        let mut app = SimApp::demo();
        app.pages[0].widgets[0].rect.x = 300;
        assert!(app.validate().unwrap_err().contains("off screen"));
        let mut app = SimApp::demo();
        app.pages[2].widgets[0].on_click = Some(6);
        assert!(app.validate().unwrap_err().contains("missing page 6"));
        let mut app = SimApp::demo();
        app.faults.push(SimFault::exception(0, vec![0], "inert"));
        assert!(app.validate().unwrap_err().contains("no handler"));
    }
}
