//! `cargo xtask adat-data`: frames of GUI transitions labelled "full" or "partial", the
//! training data of the AdaT rendering-state classifier, collected automatically from
//! transition screencasts (AdaT Section III-A).
//!
//! For each app (the bundled demo, subjects of `xtask/subjects.toml` and the nine themes
//! of the widget gallery, `gallery-<theme>`, see `vision_data`) a seeded walk clicks
//! visible interactive elements (buttons, links, tabs, checkboxes, ...), types a word and
//! Enter into text fields, and now and then goes back in history. In a gallery app it also
//! loads another of the theme's seeded pages or scrolls, now and then: the gallery is one
//! static page per seed, and these give it page loads and the widgets below the fold.
//! Around each click the DevTools screencast records the screen: Chromium sends a frame whenever the compositor draws one (up to 60 a second, none while
//! nothing changes), at most `--width`x`--height`. A transition ends once no frame has
//! arrived for [`QUIET`] or after [`MAX_CAPTURE`].
//!
//! Labelling (documented choice): frames are compared with gui-explore's [`FrameMatch`]
//! (a pixel differs by more than 8 in a channel; more than 64 such pixels is a change,
//! so a blinking caret is not one). The transition has *settled* at the first frame of
//! its final screen, provided that screen then stays unchanged for at least [`QUIET`]
//! (400 ms: longer than a 60 Hz animation step or a caret blink gap, shorter than the
//! demo's slowest load step of 240 ms plus margin). That frame is `full`; the distinct
//! frames before it are `partial`. Transitions that never settle within [`MAX_CAPTURE`]
//! are dropped (an endless animation is neither), and so are frames still showing the
//! screen as it was before the click (a settled old screen is not a partial one), and
//! frames that differ from the settled screen in less than [`MIN_PARTIAL_CHANGE`] of their
//! pixels (a focus ring or hover tint that lands a frame before the rest). To keep a
//! spinner from flooding the set, at most one partial frame per [`MIN_GAP_MS`] is kept.
//! Each line also records `change`, the share of pixels that differ from the settled
//! screen, so a score can be read per size of change (`adat evaluate --min-change`).
//!
//! Output: `<out>/<app>/frame-NNNNN.png` (the screencast's own PNG bytes) and
//! `<out>/labels.jsonl`, one `{"file", "app", "label", "transition", "t_ms", "change"}` per frame,
//! with `file` relative to `<out>` and `t_ms` the time since the click. A run replaces
//! the data set an earlier run left in `<out>`; with `--append` it adds apps the set does
//! not have yet. Each app's walk is seeded by the run's seed and the app's name, so an app
//! gets the same walk whether it is recorded alone, with others or appended, as long as
//! its pages render the same (the walk reads which elements are visible).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use gui_core::{Action, ActionKind, ActionParam, Point, Screenshot, Size, SwipeDirection};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, ScreencastFrame, StaticServer};
use gui_explore::FrameMatch;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

const USAGE: &str = "usage: cargo xtask adat-data [--out DIR] [--seed N] [--transitions N] \
     [--apps demo,jquery-ui,...] [--width PX --height PX] [--append]";

/// Subjects that have something to click and render it in this Chromium (others can be
/// asked for with `--apps`). The gallery's themes follow them ([`default_apps`]).
const DEFAULT_APPS: &[&str] = &[
    "demo",
    "jquery-ui",
    "todomvc-vanillajs",
    "jsoneditor",
    "todomvc-react",
    "todomvc-vue",
    "todomvc-backbone",
    "todomvc-angularjs",
    "ace",
];

/// The apps recorded without `--apps`: [`DEFAULT_APPS`], then `gallery-<theme>` for each
/// theme of the widget gallery.
fn default_apps() -> Vec<String> {
    DEFAULT_APPS
        .iter()
        .map(|s| (*s).to_owned())
        .chain(
            crate::vision_data::GALLERY_THEMES
                .iter()
                .map(|t| format!("gallery-{t}")),
        )
        .collect()
}

/// No frame for this long: the screen is quiet and the transition is over.
const QUIET: Duration = Duration::from_millis(400);
/// Longest recording of one transition.
const MAX_CAPTURE: Duration = Duration::from_millis(3000);
/// Partial frames closer together than this are thinned out.
const MIN_GAP_MS: u32 = 50;
/// A partial frame that differs from the settled screen in less than this share of its
/// pixels is left out: a person would call it finished (a focus ring, a hover tint, the
/// last step of a fade), and no single screenshot can tell it from the final one. At
/// 640x400 it is 640 pixels, a 2-px progress bar a quarter of the way across.
const MIN_PARTIAL_CHANGE: f64 = 0.0025;
/// Chance that a step is a history back instead of a click.
const BACK_CHANCE: f64 = 0.1;
/// In a `gallery-<theme>` app, the chance that a step loads another seeded page of the
/// theme (a real page load: stylesheets, icon font and the gallery's own drawing) ...
const GALLERY_LOAD_CHANCE: f64 = 0.15;
/// ... and the chance that it scrolls by a wheel turn, so later clicks reach the widgets
/// further down.
const GALLERY_SCROLL_CHANCE: f64 = 0.15;
/// Gallery pages a walk chooses from (`index.html?theme=T&seed=1..=N`).
const GALLERY_PAGES: u32 = 40;

/// Visible, enabled interactive elements inside the viewport: their centres in CSS px and
/// whether they take text. Links to other origins or new windows are left out, so the
/// walk stays in the app.
const CLICKABLES: &str = r#"(() => {
  const sel = 'a[href], button, input, select, textarea, summary, label, [role=button], ' +
    '[role=tab], [role=menuitem], [role=link], [role=checkbox], [onclick], [tabindex]';
  const out = [];
  for (const e of document.querySelectorAll(sel)) {
    if (e.disabled) continue;
    if (e.tagName === 'A') {
      if (e.target === '_blank') continue;
      try { if (new URL(e.href, location.href).origin !== location.origin) continue; } catch (_) { continue; }
    }
    const r = e.getBoundingClientRect();
    if (r.width < 4 || r.height < 4) continue;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
    const top = document.elementFromPoint(x, y);
    if (!top || !(top === e || e.contains(top) || top.contains(e))) continue;
    const text = e.tagName === 'TEXTAREA' || e.isContentEditable || (e.tagName === 'INPUT' &&
      ['text', 'search', 'email', 'password', 'url', 'tel', 'number', ''].includes(e.type));
    out.push([Math.round(x), Math.round(y), text]);
  }
  return out;
})()"#;

#[derive(Debug)]
struct Options {
    out: PathBuf,
    seed: u64,
    transitions: u32,
    apps: Vec<String>,
    max: Size,
    /// Add the apps to the data set in `out` instead of replacing it.
    append: bool,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        out: crate::root().join("target").join("adat-data"),
        seed: 1,
        transitions: 40,
        apps: default_apps(),
        max: Size::new(640, 400),
        append: false,
    };
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .with_context(|| format!("{arg} needs a value\n{USAGE}"))
        };
        let number = |v: &String| {
            v.parse::<u64>()
                .with_context(|| format!("{arg} takes a whole number, not `{v}`\n{USAGE}"))
        };
        match arg.as_str() {
            "--out" => o.out = PathBuf::from(value()?),
            "--seed" => o.seed = number(value()?)?,
            "--transitions" => o.transitions = number(value()?)? as u32,
            "--width" => o.max.width = number(value()?)? as u32,
            "--height" => o.max.height = number(value()?)? as u32,
            "--append" => o.append = true,
            "--apps" => {
                o.apps = value()?
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    if o.apps.is_empty() || o.transitions == 0 || o.max.width < 32 || o.max.height < 32 {
        bail!(
            "nothing to do: give at least one app, one transition and a size of 32 px or more\n{USAGE}"
        );
    }
    Ok(o)
}

/// One line of `labels.jsonl` (the format the classifier's loader reads).
#[derive(Debug, Serialize)]
struct Label {
    file: String,
    app: String,
    label: &'static str,
    transition: u32,
    t_ms: u32,
    /// Share of the frame's pixels that differ from the settled screen (0 for it).
    change: f64,
}

/// Counts of one app.
#[derive(Debug, Default)]
struct Counts {
    transitions: u32,
    unchanged: u32,
    unsettled: u32,
    full: u32,
    partial: u32,
    frames_seen: u64,
    settle_ms: Vec<f64>,
    /// Frames per second of the screencast in transitions that moved for a while.
    fps: Vec<f64>,
}

pub fn run(rest: &[String]) -> Result<()> {
    let opts = parse(rest)?;
    crate::chromium()?;
    let started = Instant::now();
    let labels_path = opts.out.join("labels.jsonl");
    if opts.append {
        // Appending never mixes two walks of one app: its frames would share names.
        let old = std::fs::read_to_string(&labels_path).unwrap_or_default();
        for app in &opts.apps {
            let tag = format!("\"app\":{}", serde_json::to_string(app)?);
            if old.contains(&tag) || opts.out.join(app).exists() {
                bail!(
                    "{}: the data set has {app} already; --append adds new apps only",
                    opts.out.display()
                );
            }
        }
    } else if labels_path.is_file() {
        // A run replaces the data set an earlier run left in the same folder.
        std::fs::remove_dir_all(&opts.out)
            .with_context(|| format!("removing the old data set {}", opts.out.display()))?;
    }
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating {}", opts.out.display()))?;
    let mut labels = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&labels_path)
        .with_context(|| format!("opening {}", labels_path.display()))?;
    let mut all: BTreeMap<String, Counts> = BTreeMap::new();
    let mut errors = Vec::new();
    for app in &opts.apps {
        let t = Instant::now();
        let mut counts = Counts::default();
        let seed = app_seed(opts.seed, app);
        if let Err(e) = collect_app(app, seed, &opts, &mut labels, &mut counts) {
            errors.push(format!("{app}: {e:#}"));
        }
        eprintln!(
            "adat-data: {app}: {} transitions in {:.1} s",
            counts.transitions,
            t.elapsed().as_secs_f64()
        );
        all.insert(app.clone(), counts);
    }
    labels.sync_all()?;
    print_counts(&all, started.elapsed());
    println!("wrote {}", labels_path.display());
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("error: {e}");
        }
        bail!("adat-data: {} app(s) failed (see above)", errors.len());
    }
    Ok(())
}

/// The seed of one app's walk: the run's seed mixed with the app's name (FNV-1a), so it
/// does not depend on which other apps the run records.
fn app_seed(seed: u64, app: &str) -> u64 {
    app.bytes().fold(0xcbf2_9ce4_8422_2325 ^ seed, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The theme of a `gallery-<theme>` app name, checked against the gallery's themes.
fn gallery_theme(app: &str) -> Result<Option<&str>> {
    let Some(theme) = app.strip_prefix("gallery-") else {
        return Ok(None);
    };
    if !crate::vision_data::GALLERY_THEMES.contains(&theme) {
        bail!(
            "no gallery theme `{theme}` (`{app}`); the themes are {}",
            crate::vision_data::GALLERY_THEMES.join(", ")
        );
    }
    Ok(Some(theme))
}

fn serve(app: &str) -> Result<StaticServer> {
    if app == "demo" {
        return StaticServer::demo().context("serving the demo app");
    }
    if let Some(theme) = gallery_theme(app)? {
        let dir = crate::vision_data::stage_gallery()?;
        return StaticServer::folder(&dir, &crate::vision_data::gallery_page(theme, 1))
            .with_context(|| format!("serving the widget gallery from {}", dir.display()));
    }
    let (dir, entry) = crate::fetch_subject(app)
        .with_context(|| format!("app `{app}`: use demo, gallery-<theme> or a subject"))?;
    Ok(StaticServer::folder(&dir, &entry)?)
}

fn collect_app(
    app: &str,
    seed: u64,
    opts: &Options,
    labels: &mut std::fs::File,
    counts: &mut Counts,
) -> Result<()> {
    let server = serve(app)?;
    let config = ChromiumConfig {
        coverage: false,
        ..ChromiumConfig::default()
    };
    let mut device = ChromiumDevice::launch(&server.url(), config)
        .with_context(|| format!("starting Chromium on {}", server.url()))?;
    let dir = opts.out.join(app);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut next_file = 1u32;
    let gallery = gallery_theme(app)?;
    // Let the start page finish loading before the first transition.
    record(&mut device, opts.max, None)?;
    for transition in 1..=opts.transitions {
        let step = choose(&mut device, &mut rng, gallery)?;
        let frames = record(&mut device, opts.max, Some(&step))?;
        counts.transitions += 1;
        counts.frames_seen += frames.frames.len() as u64;
        let moving: Vec<f64> = frames
            .frames
            .iter()
            .map(|f| f.0)
            .filter(|t| *t >= 0.0)
            .collect();
        if let [first, .., last] = moving[..]
            && moving.len() >= 6
            && last > first
        {
            counts
                .fps
                .push((moving.len() - 1) as f64 * 1e3 / (last - first));
        }
        let Some(labelled) = label(&frames)? else {
            counts.unsettled += 1;
            continue;
        };
        if labelled.is_empty() {
            counts.unchanged += 1;
            continue;
        }
        for (frame, t_ms, full, change) in labelled {
            let file = format!("{app}/frame-{next_file:05}.png");
            next_file += 1;
            let path = opts.out.join(&file);
            std::fs::write(&path, &frame.png)
                .with_context(|| format!("writing {}", path.display()))?;
            let label = if full { "full" } else { "partial" };
            if full {
                counts.full += 1;
                counts.settle_ms.push(f64::from(t_ms));
            } else {
                counts.partial += 1;
            }
            let line = serde_json::to_string(&Label {
                file,
                app: app.to_owned(),
                label,
                transition,
                t_ms,
                change: (change * 1e4).round() / 1e4,
            })?;
            writeln!(labels, "{line}")?;
        }
    }
    Ok(())
}

/// Words typed into text fields (then Enter), so forms and todo lists change.
const WORDS: &[&str] = &[
    "milk",
    "report",
    "Alice",
    "42",
    "ann@example.com",
    "tickets",
];

/// One step of the walk.
enum Step {
    Act(Action),
    /// Load this URL, relative to the current page (gallery apps only).
    Load(String),
}

/// The next step of the seeded walk: a click on a visible interactive element (or on a
/// random point when there is none), a word and Enter into a text field, now and then a
/// history back. In a gallery app (`gallery` is its theme) some steps load another page
/// of the theme or scroll instead; other apps' walks draw nothing for that, so they stay
/// what they were before gallery apps existed.
fn choose(
    device: &mut ChromiumDevice,
    rng: &mut ChaCha8Rng,
    gallery: Option<&str>,
) -> Result<Step> {
    if let Some(theme) = gallery {
        let r: f64 = rng.random();
        if r < GALLERY_LOAD_CHANCE {
            let seed = rng.random_range(1..=GALLERY_PAGES);
            return Ok(Step::Load(crate::vision_data::gallery_page(theme, seed)));
        }
        if r < GALLERY_LOAD_CHANCE + GALLERY_SCROLL_CHANCE {
            let mut action = Action::new(ActionKind::Swipe);
            let direction = if rng.random_bool(0.7) {
                SwipeDirection::Up
            } else {
                SwipeDirection::Down
            };
            action.param = Some(ActionParam::Direction(direction));
            return Ok(Step::Act(action));
        }
    }
    choose_action(device, rng).map(Step::Act)
}

/// A click, a typed word or a history back (see [`choose`]).
fn choose_action(device: &mut ChromiumDevice, rng: &mut ChaCha8Rng) -> Result<Action> {
    if rng.random_bool(BACK_CHANCE) {
        return Ok(Action::new(ActionKind::Return));
    }
    let found = device.evaluate(CLICKABLES)?;
    let targets: Vec<(Point, bool)> = found
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| {
                    let at = Point::new(p[0].as_i64()? as i32, p[1].as_i64()? as i32);
                    Some((at, p[2].as_bool().unwrap_or(false)))
                })
                .collect()
        })
        .unwrap_or_default();
    let vp = device.viewport();
    if targets.is_empty() {
        let at = Point::new(
            rng.random_range(0..vp.width) as i32,
            rng.random_range(0..vp.height) as i32,
        );
        return Ok(Action::at(ActionKind::Click, at));
    }
    let (at, text) = targets[rng.random_range(0..targets.len())];
    if text {
        let mut action = Action::at(ActionKind::Input, at);
        let word = WORDS[rng.random_range(0..WORDS.len())];
        action.param = Some(ActionParam::Text(format!("{word}\n")));
        return Ok(action);
    }
    Ok(Action::at(ActionKind::Click, at))
}

/// The frames of one transition, times in ms since the action (the frames before it
/// have negative times).
struct Recording {
    frames: Vec<(f64, ScreencastFrame)>,
    /// The capture ended at MAX_CAPTURE, not because the screen went quiet.
    capped: bool,
    /// Milliseconds from the action to the end of the capture.
    end_ms: f64,
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// Starts the screencast, takes the frames of the current screen, takes `step` (if any)
/// and records until the screen is quiet.
fn record(device: &mut ChromiumDevice, max: Size, step: Option<&Step>) -> Result<Recording> {
    device.start_screencast(max)?;
    let mut frames = Vec::new();
    // Chromium sends the current screen at once; what is still moving keeps coming.
    let before_start = Instant::now();
    while before_start.elapsed() < Duration::from_millis(60) {
        match device.next_screencast_frame(Duration::from_millis(60))? {
            Some(f) => frames.push(f),
            None => break,
        }
    }
    let t0 = now_ms();
    match step {
        // An impossible action (a history back with no history) is a transition without
        // change; the device reports it, the walk goes on.
        Some(Step::Act(action)) => {
            let _ = device.perform(action);
        }
        // The script returns before the new page starts loading; the screencast records
        // the load. A page that cannot load is a transition without change, as above.
        Some(Step::Load(url)) => {
            let _ = device.evaluate(&format!(
                "location.href = {}; true",
                serde_json::to_string(url)?
            ));
        }
        None => {}
    }
    let deadline = Instant::now() + MAX_CAPTURE;
    let mut capped = true;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match device.next_screencast_frame(left.min(QUIET))? {
            Some(f) => frames.push(f),
            None if left > QUIET => {
                capped = false;
                break;
            }
            None => {}
        }
    }
    let end_ms = now_ms() - t0;
    device.stop_screencast()?;
    // Dialogs are accepted and errors drained, so they do not pile up.
    device.drain_signals()?;
    let mut frames: Vec<(f64, ScreencastFrame)> = frames
        .into_iter()
        .map(|f| (f.timestamp_ms - t0, f))
        .collect();
    frames.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(Recording {
        frames,
        capped,
        end_ms,
    })
}

/// A frame with its label: (frame, ms since the action, full, share of its pixels that
/// differ from the settled screen).
type Labelled<'a> = (&'a ScreencastFrame, u32, bool, f64);

/// The labelled frames of a transition. `None` when the screen never settled; empty when
/// nothing changed.
fn label(rec: &Recording) -> Result<Option<Vec<Labelled<'_>>>> {
    let matching = FrameMatch::default();
    let decoded: Vec<(f64, &ScreencastFrame, Screenshot)> = rec
        .frames
        .iter()
        .map(|(t, f)| Ok((*t, f, f.decode()?)))
        .collect::<Result<_>>()?;
    // The screen before the action: the last frame sent before it.
    let before = decoded.iter().rev().find(|(t, ..)| *t < 0.0).map(|d| &d.2);
    let after: Vec<&(f64, &ScreencastFrame, Screenshot)> =
        decoded.iter().filter(|(t, ..)| *t >= 0.0).collect();
    // Distinct screens in order: a frame that matches the one before it adds nothing.
    let mut distinct: Vec<&(f64, &ScreencastFrame, Screenshot)> = Vec::new();
    for d in after {
        let same = match distinct.last() {
            Some(last) => matching.matches(&last.2, &d.2),
            None => before.is_some_and(|b| matching.matches(b, &d.2)),
        };
        if !same {
            distinct.push(d);
        }
    }
    let Some(last) = distinct.last() else {
        return Ok(Some(Vec::new()));
    };
    if rec.capped && rec.end_ms - last.0 < QUIET.as_secs_f64() * 1e3 {
        return Ok(None);
    }
    // The transition ended where it began (a hover that came and went, say): its final
    // screen is the old one, so there is no full frame to learn from.
    if before.is_some_and(|b| matching.matches(b, &last.2)) {
        return Ok(Some(Vec::new()));
    }
    let mut out = Vec::new();
    let mut last_kept: Option<f64> = None;
    for d in &distinct[..distinct.len() - 1] {
        if before.is_some_and(|b| matching.matches(b, &d.2)) {
            continue;
        }
        let change = d.2.diff_fraction(&last.2, 8);
        if change < MIN_PARTIAL_CHANGE {
            continue;
        }
        if last_kept.is_some_and(|k| d.0 - k < f64::from(MIN_GAP_MS)) {
            continue;
        }
        last_kept = Some(d.0);
        out.push((d.1, d.0.round() as u32, false, change));
    }
    out.push((last.1, last.0.round() as u32, true, 0.0));
    Ok(Some(out))
}

fn print_counts(all: &BTreeMap<String, Counts>, took: Duration) {
    println!(
        "\napp                 transitions  unchanged  unsettled  frames seen   full  partial  \
         median settle (ms)  median fps moving"
    );
    let (mut full, mut partial) = (0, 0);
    for (app, c) in all {
        full += c.full;
        partial += c.partial;
        println!(
            "{app:<20}{:>11}  {:>9}  {:>9}  {:>11}  {:>5}  {:>7}  {:>18.0}  {:>17.0}",
            c.transitions,
            c.unchanged,
            c.unsettled,
            c.frames_seen,
            c.full,
            c.partial,
            crate::median(&c.settle_ms),
            crate::median(&c.fps)
        );
    }
    println!(
        "total: {full} full, {partial} partial, in {:.1} s",
        took.as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gallery_theme_is_a_default_app_and_an_unknown_theme_is_refused_by_name() {
        let apps = default_apps();
        assert!(apps.iter().any(|a| a == "demo"));
        for theme in crate::vision_data::GALLERY_THEMES {
            let app = format!("gallery-{theme}");
            assert!(apps.contains(&app), "{app} missing from {apps:?}");
            assert_eq!(gallery_theme(&app).unwrap(), Some(*theme));
        }
        assert_eq!(gallery_theme("jquery-ui").unwrap(), None);
        let e = gallery_theme("gallery-tailwind").unwrap_err().to_string();
        assert!(e.contains("tailwind") && e.contains("bootstrap"), "{e}");
        assert_eq!(
            crate::vision_data::gallery_page("pico", 7),
            "index.html?theme=pico&seed=7"
        );
    }
}
