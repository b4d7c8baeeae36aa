//! `cargo xtask vision-data`: ground truth for widget detection and classification
//! (PIRLTest Section 3.1.1), captured from real pages in Chromium.
//!
//! For every app (the bundled demo and the subjects of `xtask/subjects.toml`), at a
//! 1280x800 desktop and a 412x915 phone viewport, each page or state is opened, left to
//! settle, photographed, and labelled by `scripts/dom_widgets.js`, which walks the DOM and
//! returns the visual extent and kind of every widget a person would see (the rules are in
//! that file and in `crates/gui-vision/tests/data/screens/README.md`). The painted buttons
//! of the demo's canvas screen have no DOM and are labelled by hand from the drawing code.
//!
//! Output: `<out>/<app>/<viewport>/<page>.png` + `.json` (a `LabelledScreen`), and
//! `<out>/summary.json` with counts per app and per kind. `--annotate` also writes
//! `<out>/annotated/<app>/<viewport>/<page>.png` with the boxes drawn, coloured by kind.
//! `--fixtures` writes the small committed set under `crates/gui-vision/tests/data/screens`.
//!
//! Beside the apps, the widget gallery (`xtask/gallery/`) adds training apps
//! `gallery-<theme>`: pages of widgets of all 14 kinds in the markup and stylesheets of
//! eight CSS frameworks from npm and one seeded plain style, `--gallery-seeds N` pages
//! each (default 4, 0 for none), photographed at three scroll positions. They are training
//! apps only ([`split_of`]); the held-out apps are never drawn by them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use gui_core::{Rect, Screenshot, Size, WidgetKind};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_vision::dataset::{
    LABEL_FORMAT, LABEL_VERSION, LabelledScreen, LabelledWidget, Split, split_of,
};
use image::{Rgb, RgbImage};
use serde::Deserialize;
use serde_json::{Value, json};

/// The page-side walker; see the labelling rules at its top.
const WALKER: &str = include_str!("../scripts/dom_widgets.js");

const USAGE: &str = "usage: cargo xtask vision-data [--out DIR] [--fixtures] [--annotate] \
     [--app NAME]... [--viewport desktop|mobile] [--subjects FILE] [--gallery-seeds N]";

/// The gallery's themes (`xtask/gallery/gallery.js`), each a training app of its own.
pub(crate) const GALLERY_THEMES: &[&str] = &[
    "plain",
    "bootstrap",
    "bulma",
    "pure",
    "spectre",
    "pico",
    "materialize",
    "semantic",
    "uikit",
];

/// The npm packages the gallery serves under `fw/<folder>/`: (folder, package).
const GALLERY_PACKAGES: &[(&str, &str)] = &[
    ("bootstrap-icons", "bootstrap-icons@1.11.3"),
    ("bootstrap", "bootstrap@5.3.3"),
    ("bulma", "bulma@1.0.2"),
    ("purecss", "purecss@3.0.0"),
    ("spectre.css", "spectre.css@0.5.9"),
    ("pico", "@picocss/pico@2.0.6"),
    ("materialize-css", "materialize-css@1.0.0"),
    ("semantic-ui-css", "semantic-ui-css@2.5.0"),
    ("uikit", "uikit@3.21.13"),
];

/// Scroll positions photographed per gallery page, the top included.
const GALLERY_SCROLLS: u32 = 3;

/// The committed fixture set: (app, page), each at both viewports.
const FIXTURES: &[(&str, &str)] = &[
    ("demo", "form"),
    ("demo", "canvas"),
    ("jquery-ui", "entry"),
    ("jsoneditor", "01_basic_usage_set"),
];

/// How long a page may take to stop changing before it is photographed as it is.
const SETTLE_MAX: Duration = Duration::from_secs(3);
const SETTLE_POLL: Duration = Duration::from_millis(150);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Viewport {
    Desktop,
    Mobile,
}

impl Viewport {
    const ALL: [Viewport; 2] = [Viewport::Desktop, Viewport::Mobile];

    fn name(self) -> &'static str {
        match self {
            Viewport::Desktop => "desktop",
            Viewport::Mobile => "mobile",
        }
    }

    fn config(self) -> ChromiumConfig {
        let base = match self {
            Viewport::Desktop => ChromiumConfig::default(),
            Viewport::Mobile => ChromiumConfig::mobile(),
        };
        ChromiumConfig {
            coverage: false,
            ..base
        }
    }
}

#[derive(Debug)]
struct Options {
    out: PathBuf,
    fixtures: bool,
    annotate: bool,
    apps: Vec<String>,
    viewports: Vec<Viewport>,
    subjects: PathBuf,
    gallery_seeds: u32,
}

fn parse_options(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        out: crate::root().join("target").join("vision-data"),
        fixtures: false,
        annotate: false,
        apps: Vec::new(),
        viewports: Viewport::ALL.to_vec(),
        subjects: crate::root().join("xtask/subjects.toml"),
        gallery_seeds: 4,
    };
    let mut out_given = false;
    let mut it = rest.iter();
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .with_context(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--out" => {
                o.out = PathBuf::from(value()?);
                out_given = true;
            }
            "--fixtures" => o.fixtures = true,
            "--annotate" => o.annotate = true,
            "--app" => o.apps.push(value()?.clone()),
            "--subjects" => o.subjects = PathBuf::from(value()?),
            "--gallery-seeds" => {
                let v = value()?;
                o.gallery_seeds = v.parse().with_context(|| {
                    format!("--gallery-seeds takes a count of pages, not `{v}`\n{USAGE}")
                })?;
            }
            "--viewport" => {
                o.viewports = match value()?.as_str() {
                    "desktop" => vec![Viewport::Desktop],
                    "mobile" => vec![Viewport::Mobile],
                    other => bail!("unknown viewport `{other}`\n{USAGE}"),
                }
            }
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    if o.fixtures && !out_given {
        o.out = fixture_root();
    }
    Ok(o)
}

fn fixture_root() -> PathBuf {
    crate::root().join("crates/gui-vision/tests/data/screens")
}

/// One thing to do on a page before it is photographed.
#[derive(Debug, Clone)]
enum Step {
    /// Evaluate JS; a result of `false` means "this state does not exist here" (the page
    /// is skipped, for example a scroll position past the end of the page).
    Js(String),
    Wait(Duration),
}

/// A page or state of an app. Pages of one app are visited in order: a page with the same
/// path as the one before continues from its state, one that differs only after `#` is a
/// hash change, anything else is a fresh browser.
#[derive(Debug, Clone)]
struct Page {
    name: String,
    path: String,
    steps: Vec<Step>,
}

impl Page {
    fn new(name: &str, path: &str) -> Self {
        Self {
            name: name.to_owned(),
            path: path.to_owned(),
            steps: Vec::new(),
        }
    }

    fn js(mut self, js: &str) -> Self {
        self.steps.push(Step::Js(js.to_owned()));
        self
    }

    fn wait_ms(mut self, ms: u64) -> Self {
        self.steps.push(Step::Wait(Duration::from_millis(ms)));
        self
    }
}

enum Site {
    Demo,
    Folder(PathBuf),
}

struct App {
    name: String,
    site: Site,
    pages: Vec<Page>,
}

/// `run()` reads this many keys only; a missing subject is reported, not fatal.
#[derive(Debug, Deserialize)]
struct SubjectFile {
    subject: Vec<SubjectEntry>,
}

#[derive(Debug, Deserialize)]
struct SubjectEntry {
    name: String,
    package: String,
    entry: String,
}

pub fn run(rest: &[String]) -> Result<()> {
    let opts = parse_options(rest)?;
    let started = Instant::now();
    crate::chromium()?;
    let mut errors: Vec<String> = Vec::new();
    let apps = plan_apps(&opts, &mut errors)?;
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("creating {}", opts.out.display()))?;

    let mut screens: Vec<LabelledScreen> = Vec::new();
    for app in &apps {
        for &viewport in &opts.viewports {
            let t = Instant::now();
            let before = screens.len();
            capture_app(app, viewport, &opts, &mut screens, &mut errors);
            eprintln!(
                "vision-data: {} {}: {} screens in {:.1} s",
                app.name,
                viewport.name(),
                screens.len() - before,
                t.elapsed().as_secs_f64()
            );
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let summary = summarise(&screens, seconds, &errors);
    print_summary(&summary);
    if !opts.fixtures {
        let path = opts.out.join("summary.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&summary)?)
            .with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("error: {e}");
        }
        bail!(
            "vision-data: {} page(s) or app(s) failed (see above); {} screens were captured",
            errors.len(),
            screens.len()
        );
    }
    Ok(())
}

/// The apps and pages to capture: the demo, then every subject that can be fetched.
fn plan_apps(opts: &Options, errors: &mut Vec<String>) -> Result<Vec<App>> {
    let wanted = |name: &str| {
        let by_flag = opts.apps.is_empty() || opts.apps.iter().any(|a| a == name);
        let by_fixture = !opts.fixtures || FIXTURES.iter().any(|(a, _)| *a == name);
        by_flag && by_fixture
    };
    let mut apps = Vec::new();
    if wanted("demo") {
        apps.push(App {
            name: "demo".into(),
            site: Site::Demo,
            pages: demo_pages(),
        });
    }
    let text = std::fs::read_to_string(&opts.subjects)
        .with_context(|| format!("reading {}", opts.subjects.display()))?;
    let list: SubjectFile =
        toml::from_str(&text).with_context(|| format!("parsing {}", opts.subjects.display()))?;
    for s in list.subject.iter().filter(|s| wanted(&s.name)) {
        // The PDF viewer needs a locally made PDF and a query string; not worth it here.
        if s.name == "pdfjs-viewer" {
            continue;
        }
        let dir = match crate::fetch(&s.package) {
            Ok(dir) => dir,
            Err(e) => {
                errors.push(format!(
                    "subject `{}` ({}): cannot fetch it: {e:#}",
                    s.name, s.package
                ));
                continue;
            }
        };
        let entry = s.entry.split(['?', '#']).next().unwrap_or("");
        if !dir.join(entry).is_file() {
            errors.push(format!(
                "subject `{}` ({}): entry page {} is missing",
                s.name,
                s.package,
                dir.join(entry).display()
            ));
            continue;
        }
        let pages = subject_pages(&s.name, &dir, &s.entry);
        apps.push(App {
            name: s.name.clone(),
            site: Site::Folder(dir),
            pages,
        });
    }
    if !opts.fixtures && opts.gallery_seeds > 0 {
        let themes: Vec<&str> = GALLERY_THEMES
            .iter()
            .copied()
            .filter(|t| wanted(&format!("gallery-{t}")))
            .collect();
        if !themes.is_empty() {
            match stage_gallery() {
                Ok(dir) => {
                    for theme in themes {
                        apps.push(App {
                            name: format!("gallery-{theme}"),
                            site: Site::Folder(dir.clone()),
                            pages: gallery_pages(theme, opts.gallery_seeds),
                        });
                    }
                }
                Err(e) => errors.push(format!("the widget gallery: {e:#}")),
            }
        }
    }
    if opts.fixtures {
        for app in &mut apps {
            app.pages
                .retain(|p| FIXTURES.contains(&(app.name.as_str(), p.name.as_str())));
        }
    }
    for name in &opts.apps {
        if !apps.iter().any(|a| &a.name == name) && !errors.iter().any(|e| e.contains(name)) {
            errors.push(format!(
                "app `{name}` is neither `demo`, a `gallery-<theme>` ({}) nor a subject in {}",
                GALLERY_THEMES.join(", "),
                opts.subjects.display()
            ));
        }
    }
    Ok(apps)
}

/// The folder the gallery is served from, `target/gallery`: its two files and a link per
/// framework package (fetched from npm into the subjects cache once).
pub(crate) fn stage_gallery() -> Result<PathBuf> {
    let dir = crate::root().join("target").join("gallery");
    let fw = dir.join("fw");
    std::fs::create_dir_all(&fw).with_context(|| format!("creating {}", fw.display()))?;
    for file in ["index.html", "gallery.js"] {
        let from = crate::root().join("xtask/gallery").join(file);
        std::fs::copy(&from, dir.join(file))
            .with_context(|| format!("copying {} into {}", from.display(), dir.display()))?;
    }
    for (folder, package) in GALLERY_PACKAGES {
        let unpacked = crate::fetch(package).with_context(|| format!("fetching {package}"))?;
        let link = fw.join(folder);
        if std::fs::read_link(&link).is_ok_and(|to| to == unpacked) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&unpacked, &link)
            .with_context(|| format!("linking {} to {}", link.display(), unpacked.display()))?;
    }
    Ok(dir)
}

/// The path of one seeded page of a gallery theme, relative to the gallery folder.
pub(crate) fn gallery_page(theme: &str, seed: u32) -> String {
    format!("index.html?theme={theme}&seed={seed}")
}

/// `seeds` pages of one gallery theme, each at [`GALLERY_SCROLLS`] scroll positions.
fn gallery_pages(theme: &str, seeds: u32) -> Vec<Page> {
    let mut pages = Vec::new();
    for seed in 1..=seeds {
        let path = gallery_page(theme, seed);
        pages
            .push(Page::new(&format!("s{seed}"), &path).js("window.galleryReady.then(() => true)"));
        for k in 1..GALLERY_SCROLLS {
            pages.push(Page::new(&format!("s{seed}-scroll{k}"), &path).js(&scroll_to(k)));
        }
    }
    pages
}

/// The demo's screens (examples/apps/demo/README.md), plus its two dialogs.
fn demo_pages() -> Vec<Page> {
    let hash = |name: &str, route: &str| Page::new(name, &format!("index.html#/{route}"));
    let click = |id: &str| format!("document.getElementById('{id}').click(), true");
    vec![
        hash("home", "home"),
        hash("help", "home").js(&click("help-open")),
        hash("login", "login"),
        // Sign in (any user, password `demo`), which lands on #/account.
        hash("account", "login").js(
            "(() => { document.getElementById('login-user').value = 'ann'; \
             document.getElementById('login-pass').value = 'demo'; \
             document.getElementById('login-submit').click(); \
             return location.hash === '#/account'; })()",
        ),
        hash("form", "form"),
        hash("list", "list"),
        hash("list-confirm", "list").js(&click("list-remove-2")),
        hash("cart", "cart"),
        hash("canvas", "canvas"),
        // Content after 1.2 s, the last picture at 1.5 s.
        hash("slow", "slow").wait_ms(1800),
        hash("settings", "settings"),
        hash("about", "about"),
    ]
}

/// Types each text into the todo field and presses Enter, whatever framework listens
/// (keydown, keypress, keyup, or a form's submit).
const TODOMVC_ADD: &str = r#"(async () => {
  const input = document.querySelector('#new-todo, .new-todo');
  if (!input) return false;
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  for (const text of ['Buy milk', 'Write the report', 'Call Alice']) {
    input.focus();
    setValue.call(input, text);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
    for (const type of ['keydown', 'keypress', 'keyup']) {
      const ev = new KeyboardEvent(type, { key: 'Enter', code: 'Enter', bubbles: true, cancelable: true });
      for (const k of ['keyCode', 'which', 'charCode']) {
        Object.defineProperty(ev, k, { get: () => (k === 'charCode' && type !== 'keypress' ? 0 : 13) });
      }
      input.dispatchEvent(ev);
      if (!input.value) break;
    }
    if (input.value && input.form) input.form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    await new Promise((r) => setTimeout(r, 150));
  }
  input.blur();
  return document.querySelectorAll('#todo-list li, .todo-list li').length >= 3;
})()"#;

/// Presses arrow keys on the document (2048 reads `event.which`).
const ARROWS_2048: &str = r#"(async () => {
  for (const which of [37, 38, 39, 40, 37, 38, 39, 40, 38, 37]) {
    const ev = new KeyboardEvent('keydown', { bubbles: true, cancelable: true });
    Object.defineProperty(ev, 'which', { get: () => which });
    Object.defineProperty(ev, 'keyCode', { get: () => which });
    document.dispatchEvent(ev);
    await new Promise((r) => setTimeout(r, 200));
  }
  return true;
})()"#;

/// Seeds `Math.random` and starts a new game, so the tiles are the same every run.
const SEED_2048: &str = r#"(() => {
  let s = 12345;
  Math.random = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  const b = document.querySelector('.restart-button');
  if (b) b.click();
  return true;
})()"#;

/// Scrolls to the `k`th screenful; `false` once the page has no more.
fn scroll_to(k: u32) -> String {
    format!(
        "(() => {{ const y = Math.round({k} * 0.9 * innerHeight); \
         if (y > document.documentElement.scrollHeight - innerHeight + 0.45 * innerHeight) \
         return false; window.scrollTo(0, y); return true; }})()"
    )
}

fn subject_pages(name: &str, dir: &Path, entry: &str) -> Vec<Page> {
    let mut pages = vec![Page::new("entry", entry)];
    if name.starts_with("todomvc") {
        // Visited in order from the same URL, so each state builds on the one before.
        pages.push(Page::new("items", entry).js(TODOMVC_ADD).wait_ms(300));
        pages.push(
            Page::new("done", entry)
                .js("(() => { const t = document.querySelector('#todo-list li .toggle, .todo-list li .toggle'); \
                     if (!t) return false; t.click(); return true; })()")
                .wait_ms(300),
        );
    }
    match name {
        "jsoneditor" => {
            // Every example page (the entry is the first of them).
            let mut examples: Vec<String> = std::fs::read_dir(dir.join("examples"))
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.ends_with(".html"))
                        .collect()
                })
                .unwrap_or_default();
            examples.sort();
            pages = examples
                .iter()
                .map(|f| Page::new(f.trim_end_matches(".html"), &format!("examples/{f}")))
                .collect();
            // The basic example starts empty; its "Set JSON" button fills the tree.
            if let Some(i) = pages.iter().position(|p| p.name == "01_basic_usage") {
                let filled = Page::new("01_basic_usage_set", &pages[i].path.clone())
                    .js("(() => { const b = document.getElementById('setJSON'); \
                     if (!b) return false; b.click(); return true; })()");
                pages.insert(i + 1, filled);
            }
        }
        "jquery-ui" => {
            for k in 1..=6 {
                pages.push(Page::new(&format!("scroll{k}"), entry).js(&scroll_to(k)));
            }
            pages.push(Page::new("tabs", entry).js(
                "(() => { const t = document.querySelectorAll('#tabs [role=tab] a'); \
                         if (t.length < 2) return false; t[1].click(); \
                         document.getElementById('tabs').scrollIntoView(); return true; })()",
            ));
            pages.push(
                Page::new("dialog", entry)
                    .js(
                        "(() => { const l = document.getElementById('dialog-link'); \
                         if (!l) return false; l.scrollIntoView(); l.click(); return true; })()",
                    )
                    .wait_ms(500),
            );
        }
        "ace" => {
            pages.push(
                Page::new("search", entry)
                    .js("(() => { if (!window.editor) return false; \
                         editor.execCommand('replace'); return true; })()")
                    .wait_ms(800),
            );
        }
        "2048" => {
            pages[0] = Page::new("entry", entry).js(SEED_2048).wait_ms(300);
            pages.push(Page::new("moves", entry).js(ARROWS_2048).wait_ms(400));
        }
        _ => {}
    }
    pages
}

/// The device for one app at one viewport, reused while pages share a document.
struct Session {
    device: ChromiumDevice,
    path: String,
}

fn capture_app(
    app: &App,
    viewport: Viewport,
    opts: &Options,
    screens: &mut Vec<LabelledScreen>,
    errors: &mut Vec<String>,
) {
    let server = match &app.site {
        Site::Demo => StaticServer::demo(),
        Site::Folder(dir) => StaticServer::folder(dir, ""),
    };
    let server = match server {
        Ok(s) => s,
        Err(e) => {
            errors.push(format!("{}: cannot serve it: {e}", app.name));
            return;
        }
    };
    let mut session: Option<Session> = None;
    for page in &app.pages {
        let what = format!("{}/{}/{}", app.name, viewport.name(), page.name);
        match capture_page(app, page, viewport, &server, &mut session, opts) {
            Ok(Some(screen)) => screens.push(screen),
            Ok(None) => eprintln!("vision-data: {what}: no such state here, skipped"),
            Err(e) => {
                errors.push(format!("{what}: {e:#}"));
                // A broken browser or page must not spoil the next page.
                session = None;
            }
        }
    }
}

fn capture_page(
    app: &App,
    page: &Page,
    viewport: Viewport,
    server: &StaticServer,
    session: &mut Option<Session>,
    opts: &Options,
) -> Result<Option<LabelledScreen>> {
    let url = format!("{}/{}", server.origin(), page.path);
    let (doc, hash) = match page.path.split_once('#') {
        Some((d, h)) => (d, Some(h)),
        None => (page.path.as_str(), None),
    };
    match session {
        Some(s) if s.path == page.path => {}
        Some(s) if hash.is_some() && s.path.split('#').next() == Some(doc) => {
            let h = serde_json::to_string(&format!("#{}", hash.unwrap_or("")))?;
            s.device.evaluate(&format!("location.hash = {h}"))?;
            s.path = page.path.clone();
            std::thread::sleep(Duration::from_millis(200));
        }
        _ => {
            *session = None;
            let device = ChromiumDevice::launch(&url, viewport.config())
                .with_context(|| format!("opening {url}"))?;
            *session = Some(Session {
                device,
                path: page.path.clone(),
            });
        }
    }
    let device = &mut session.as_mut().expect("session just set").device;
    wait_ready(device)?;
    for step in &page.steps {
        match step {
            Step::Js(js) => {
                let v = device
                    .evaluate(js)
                    .with_context(|| format!("setting up the page with {js}"))?;
                if v == Value::Bool(false) {
                    return Ok(None);
                }
            }
            Step::Wait(d) => std::thread::sleep(*d),
        }
    }
    // A blinking caret would keep the page from ever settling.
    device.evaluate(
        "(() => { const s = document.createElement('style'); \
         s.textContent = '*, *::before, *::after { caret-color: transparent !important; }'; \
         (document.head || document.documentElement).appendChild(s); return true; })()",
    )?;
    let shot = settle(device)?;
    let current_url = device
        .evaluate("location.href")?
        .as_str()
        .unwrap_or(&url)
        .to_owned();
    let walked = device.evaluate(WALKER).context("running the DOM walker")?;
    let mut widgets = dom_widgets(&walked, &shot)?;
    if app.name == "demo" && page.name == "canvas" {
        widgets.extend(demo_canvas_widgets(device, &shot)?);
    }
    let screen = LabelledScreen {
        format: LABEL_FORMAT.into(),
        version: LABEL_VERSION,
        app: app.name.clone(),
        viewport: viewport.name().into(),
        page: page.name.clone(),
        url: current_url,
        width: shot.width(),
        height: shot.height(),
        scale: shot.scale,
        screenshot: format!("{}.png", page.name),
        widgets,
    };
    save(&screen, &shot, opts)?;
    Ok(Some(screen))
}

/// Waits for the load to finish and the web fonts to be ready.
fn wait_ready(device: &mut ChromiumDevice) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = device.evaluate(
            "document.fonts.ready.then(() => document.readyState).catch(() => document.readyState)",
        );
        match state {
            Ok(Value::String(s)) if s == "complete" => return Ok(()),
            _ if Instant::now() > deadline => bail!("the page did not finish loading in 10 s"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// Photographs the page once two consecutive screenshots are identical (or after
/// [`SETTLE_MAX`], taking the last).
fn settle(device: &mut ChromiumDevice) -> Result<Screenshot> {
    let deadline = Instant::now() + SETTLE_MAX;
    let mut last = device.screenshot()?;
    loop {
        std::thread::sleep(SETTLE_POLL);
        let next = device.screenshot()?;
        if next.pixels().as_raw() == last.pixels().as_raw() || Instant::now() > deadline {
            return Ok(next);
        }
        last = next;
    }
}

#[derive(Debug, Deserialize)]
struct Walked {
    viewport: WalkedViewport,
    widgets: Vec<WalkedWidget>,
}

#[derive(Debug, Deserialize)]
struct WalkedViewport {
    width: f64,
    height: f64,
}

#[derive(Debug, Deserialize)]
struct WalkedWidget {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    kind: String,
    element: String,
    text: String,
}

/// Screenshot pixels per CSS pixel of the visual viewport (device scale times page zoom).
fn css_to_shot(viewport: &WalkedViewport, shot: &Screenshot) -> (f64, f64) {
    (
        f64::from(shot.width()) / viewport.width.max(1.0),
        f64::from(shot.height()) / viewport.height.max(1.0),
    )
}

/// A CSS box in screenshot pixels, clipped to the screen; `None` below 4x4.
fn to_shot_rect(x: f64, y: f64, w: f64, h: f64, k: (f64, f64), size: Size) -> Option<Rect> {
    let x0 = (x * k.0).round();
    let y0 = (y * k.1).round();
    let x1 = ((x + w) * k.0).round();
    let y1 = ((y + h) * k.1).round();
    let r = Rect::new(
        x0 as i32,
        y0 as i32,
        (x1 - x0).max(0.0) as u32,
        (y1 - y0).max(0.0) as u32,
    )
    .clip_to(size)?;
    (r.width >= 4 && r.height >= 4).then_some(r)
}

fn dom_widgets(walked: &Value, shot: &Screenshot) -> Result<Vec<LabelledWidget>> {
    let walked: Walked = serde_json::from_value(walked.clone())
        .context("the DOM walker returned something unexpected")?;
    let k = css_to_shot(&walked.viewport, shot);
    let mut out = Vec::new();
    for w in walked.widgets {
        let kind: WidgetKind = serde_json::from_value(Value::String(w.kind.clone()))
            .with_context(|| format!("the DOM walker returned unknown kind `{}`", w.kind))?;
        if let Some(rect) = to_shot_rect(w.x, w.y, w.w, w.h, k, shot.size()) {
            out.push(LabelledWidget {
                rect,
                kind,
                source: "dom".into(),
                element: w.element,
                text: w.text,
            });
        }
    }
    Ok(out)
}

/// The demo's `canvasButtonRect(i)` in examples/apps/demo/app.js: x = 12 + 147 i, y = 44,
/// 135x64 canvas pixels, stroked with a 3 px line centred on the edge (so 1.5 px more on
/// every side), labelled Home, Help, Colour, Count +1.
const CANVAS_BUTTONS: [&str; 4] = ["Home", "Help", "Colour", "Count +1"];

/// Hand labels for the demo canvas screen: the four painted buttons and the painted
/// counter line, mapped from canvas pixels through the canvas's content box.
fn demo_canvas_widgets(
    device: &mut ChromiumDevice,
    shot: &Screenshot,
) -> Result<Vec<LabelledWidget>> {
    let g = device.evaluate(
        "(() => { const c = document.getElementById('canvas-toolbar'); if (!c) return null; \
         const r = c.getBoundingClientRect(); const vv = window.visualViewport; \
         const ctx = c.getContext('2d'); ctx.font = 'bold 18px sans-serif'; \
         ctx.textAlign = 'left'; ctx.textBaseline = 'middle'; \
         const text = 'Canvas counter: ' + (window.state ? state.canvas.counter : 0); \
         const m = ctx.measureText(text); \
         return { left: r.left + c.clientLeft - vv.offsetLeft, top: r.top + c.clientTop - vv.offsetTop, \
           cw: c.clientWidth, ch: c.clientHeight, w: c.width, h: c.height, \
           vw: vv.width, vh: vv.height, text, \
           tl: m.actualBoundingBoxLeft, tr: m.actualBoundingBoxRight, \
           ta: m.actualBoundingBoxAscent, td: m.actualBoundingBoxDescent }; })()",
    )?;
    let n = |key: &str| {
        g[key]
            .as_f64()
            .with_context(|| format!("demo canvas geometry lacks `{key}`: {g}"))
    };
    let (left, top) = (n("left")?, n("top")?);
    let (sx, sy) = (n("cw")? / n("w")?, n("ch")? / n("h")?);
    let k = css_to_shot(
        &WalkedViewport {
            width: n("vw")?,
            height: n("vh")?,
        },
        shot,
    );
    let canvas_box = |x: f64, y: f64, w: f64, h: f64| {
        to_shot_rect(left + x * sx, top + y * sy, w * sx, h * sy, k, shot.size())
    };
    let mut out = Vec::new();
    for (i, label) in CANVAS_BUTTONS.iter().enumerate() {
        let x = 12.0 + 147.0 * i as f64;
        if let Some(rect) = canvas_box(x - 1.5, 44.0 - 1.5, 135.0 + 3.0, 64.0 + 3.0) {
            out.push(LabelledWidget {
                rect,
                kind: WidgetKind::Button,
                source: "hand".into(),
                element: format!("canvas#canvas-toolbar painted button {i}"),
                text: (*label).into(),
            });
        }
    }
    // drawCanvas: fillText(text, 12, 22) with textBaseline middle.
    let (tl, tr, ta, td) = (n("tl")?, n("tr")?, n("ta")?, n("td")?);
    if let Some(rect) = canvas_box(12.0 - tl, 22.0 - ta, tl + tr, ta + td) {
        out.push(LabelledWidget {
            rect,
            kind: WidgetKind::TextView,
            source: "hand".into(),
            element: "canvas#canvas-toolbar painted text".into(),
            text: g["text"].as_str().unwrap_or("").into(),
        });
    }
    Ok(out)
}

fn save(screen: &LabelledScreen, shot: &Screenshot, opts: &Options) -> Result<()> {
    let dir = opts.out.join(&screen.app).join(&screen.viewport);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let png = dir.join(&screen.screenshot);
    std::fs::write(&png, compact_png(shot.pixels())?)
        .with_context(|| format!("writing {}", png.display()))?;
    screen.save(&dir.join(format!("{}.json", screen.page)))?;
    if opts.annotate {
        let dir = opts
            .out
            .join("annotated")
            .join(&screen.app)
            .join(&screen.viewport);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(&screen.screenshot);
        annotate(shot.pixels(), &screen.widgets)
            .save(&path)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// PNG with the strongest compression: the fixture set is committed, so bytes count more
/// than the encoding time.
fn compact_png(pixels: &RgbImage) -> Result<Vec<u8>> {
    use image::ImageEncoder;
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    let mut out = Vec::new();
    PngEncoder::new_with_quality(&mut out, CompressionType::Best, FilterType::Adaptive)
        .write_image(
            pixels.as_raw(),
            pixels.width(),
            pixels.height(),
            image::ExtendedColorType::Rgb8,
        )
        .context("encoding the screenshot as PNG")?;
    Ok(out)
}

/// One colour per kind, for the annotated pictures.
fn kind_colour(kind: WidgetKind) -> Rgb<u8> {
    const COLOURS: [[u8; 3]; 14] = [
        [230, 25, 75],   // button
        [60, 180, 75],   // text_view
        [0, 130, 200],   // edit_text
        [245, 130, 48],  // check_box
        [145, 30, 180],  // image_button
        [70, 240, 240],  // image_view
        [240, 50, 230],  // radio_button
        [210, 245, 60],  // switch
        [250, 190, 212], // seek_bar
        [0, 128, 128],   // progress_bar
        [220, 190, 255], // spinner
        [170, 110, 40],  // list_item
        [128, 0, 0],     // tab
        [255, 225, 25],  // icon
    ];
    Rgb(COLOURS[kind.index() % COLOURS.len()])
}

/// The screenshot with a 2 px outline around every labelled box.
fn annotate(pixels: &RgbImage, widgets: &[LabelledWidget]) -> RgbImage {
    let mut img = pixels.clone();
    let (w, h) = img.dimensions();
    for widget in widgets {
        let colour = kind_colour(widget.kind);
        let r = widget.rect;
        let (x0, y0) = (r.x.max(0) as u32, r.y.max(0) as u32);
        let x1 = (r.x.max(0) as u32 + r.width).min(w) - 1;
        let y1 = (r.y.max(0) as u32 + r.height).min(h) - 1;
        for t in 0..2 {
            for x in x0..=x1 {
                for y in [y0 + t, y1.saturating_sub(t)] {
                    img.put_pixel(x, y.min(h - 1), colour);
                }
            }
            for y in y0..=y1 {
                for x in [x0 + t, x1.saturating_sub(t)] {
                    img.put_pixel(x.min(w - 1), y, colour);
                }
            }
        }
    }
    img
}

fn kind_name(kind: WidgetKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{kind:?}"))
}

/// Counts per app and per kind, with the split of each app and the run time.
fn summarise(screens: &[LabelledScreen], seconds: f64, errors: &[String]) -> Value {
    let mut apps: BTreeMap<&str, (usize, usize, BTreeMap<String, usize>)> = BTreeMap::new();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let mut hand = 0;
    for s in screens {
        let e = apps.entry(&s.app).or_default();
        e.0 += 1;
        e.1 += s.widgets.len();
        for w in &s.widgets {
            *e.2.entry(kind_name(w.kind)).or_default() += 1;
            *kinds.entry(kind_name(w.kind)).or_default() += 1;
            hand += usize::from(w.source == "hand");
        }
    }
    let per_app: BTreeMap<&str, Value> = apps
        .iter()
        .map(|(app, (n, w, k))| {
            let split = match split_of(app) {
                Split::Train => "train",
                Split::Test => "test",
            };
            (
                *app,
                json!({ "split": split, "screens": n, "widgets": w, "kinds": k }),
            )
        })
        .collect();
    json!({
        "screens": screens.len(),
        "widgets": screens.iter().map(|s| s.widgets.len()).sum::<usize>(),
        "hand_labelled": hand,
        "seconds": (seconds * 10.0).round() / 10.0,
        "apps": per_app,
        "kinds": kinds,
        "errors": errors,
    })
}

fn print_summary(summary: &Value) {
    println!(
        "{} screens, {} widgets ({} by hand) in {} s",
        summary["screens"], summary["widgets"], summary["hand_labelled"], summary["seconds"]
    );
    println!(
        "{:<20} {:>5} {:>7} {:>8}",
        "app", "split", "screens", "widgets"
    );
    if let Some(apps) = summary["apps"].as_object() {
        for (app, v) in apps {
            println!(
                "{app:<20} {:>5} {:>7} {:>8}",
                v["split"].as_str().unwrap_or(""),
                v["screens"],
                v["widgets"]
            );
        }
    }
    if let Some(kinds) = summary["kinds"].as_object() {
        for (kind, n) in kinds {
            println!("  {kind:<14} {n:>6}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn css_boxes_scale_round_and_clip_to_the_screen() {
        let size = Size::new(100, 50);
        let r = to_shot_rect(10.4, 5.6, 20.2, 10.0, (2.0, 2.0), size).expect("inside");
        assert_eq!(r, Rect::new(21, 11, 40, 20));
        // Half off the right edge: clipped to the screen.
        let r = to_shot_rect(90.0, 0.0, 30.0, 10.0, (1.0, 1.0), size).expect("partly in");
        assert_eq!(r, Rect::new(90, 0, 10, 10));
        // Below 4x4 after scaling, or off screen: no box.
        assert_eq!(to_shot_rect(0.0, 0.0, 3.0, 30.0, (1.0, 1.0), size), None);
        assert_eq!(to_shot_rect(200.0, 0.0, 30.0, 30.0, (1.0, 1.0), size), None);
    }

    #[test]
    fn options_parse_and_reject_unknown_flags() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let o = parse_options(&args(&[
            "--app",
            "demo",
            "--viewport",
            "mobile",
            "--annotate",
        ]))
        .expect("valid");
        assert_eq!(o.apps, ["demo"]);
        assert_eq!(o.viewports, [Viewport::Mobile]);
        assert!(o.annotate && !o.fixtures);
        let o = parse_options(&args(&["--fixtures"])).expect("valid");
        assert_eq!(o.out, fixture_root());
        assert!(parse_options(&args(&["--viewport", "tv"])).is_err());
        assert!(parse_options(&args(&["--out"])).is_err());
        assert!(parse_options(&args(&["--bogus"])).is_err());
        assert_eq!(parse_options(&[]).expect("valid").gallery_seeds, 4);
        let o = parse_options(&args(&["--gallery-seeds", "0"])).expect("valid");
        assert_eq!(o.gallery_seeds, 0);
        let err = parse_options(&args(&["--gallery-seeds", "many"])).unwrap_err();
        assert!(format!("{err:#}").contains("`many`"), "{err:#}");
    }

    #[test]
    fn gallery_pages_are_seeds_times_scroll_positions() {
        let pages = gallery_pages("bulma", 2);
        let names: Vec<&str> = pages.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "s1",
                "s1-scroll1",
                "s1-scroll2",
                "s2",
                "s2-scroll1",
                "s2-scroll2"
            ]
        );
        // The scroll states continue from their seed's page: the same path.
        assert!(
            pages[..3]
                .iter()
                .all(|p| p.path == "index.html?theme=bulma&seed=1")
        );
        assert_eq!(pages[3].path, "index.html?theme=bulma&seed=2");
        // Every theme the page generator knows is listed, and no other.
        let js = std::fs::read_to_string(crate::root().join("xtask/gallery/gallery.js"))
            .expect("gallery.js");
        let line = js
            .lines()
            .find(|l| l.contains("const THEMES = {"))
            .expect("the theme table");
        for theme in GALLERY_THEMES {
            assert!(
                line.contains(&format!(" {theme},")) || line.contains(&format!(" {theme} }}")),
                "{theme} not in {line}"
            );
        }
        assert_eq!(
            line.matches(',').count() + 1,
            GALLERY_THEMES.len(),
            "{line}"
        );
    }

    #[test]
    fn annotation_outlines_boxes_in_their_kind_colour() {
        let img = RgbImage::from_pixel(20, 20, Rgb([255, 255, 255]));
        let w = LabelledWidget {
            rect: Rect::new(5, 5, 10, 10),
            kind: WidgetKind::Switch,
            source: "dom".into(),
            element: String::new(),
            text: String::new(),
        };
        let out = annotate(&img, std::slice::from_ref(&w));
        let c = kind_colour(WidgetKind::Switch);
        assert_eq!(*out.get_pixel(5, 10), c);
        assert_eq!(*out.get_pixel(14, 10), c);
        assert_eq!(*out.get_pixel(10, 10), Rgb([255, 255, 255]));
        assert_eq!(*out.get_pixel(4, 4), Rgb([255, 255, 255]));
        // Every kind has its own colour.
        let colours: std::collections::BTreeSet<_> =
            WidgetKind::ALL.iter().map(|k| kind_colour(*k).0).collect();
        assert_eq!(colours.len(), WidgetKind::ALL.len());
    }
}
