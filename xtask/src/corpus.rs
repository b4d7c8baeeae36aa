//! The corpus: real web apps from npm packages, served offline from 127.0.0.1
//! (`xtask/corpus.toml`, issue 49).
//!
//! Every strategy is measured on the same apps, split once and by app into `tune` (where
//! defaults are decided) and `test` (where results are reported); the file's header says
//! how the split was drawn. This module reads and checks the file ([`load`]), picks apps
//! ([`select`]) and serves one ([`serve`]); the suite and comparison tasks build on those.
//!
//! `cargo xtask corpus [list]` prints the apps. `cargo xtask corpus fetch [--apps a,b]
//! [--split tune|test]` fetches each selected package and checks that the app really runs
//! offline: served on 127.0.0.1, opened in real Chromium with every other host
//! unresolvable, given its `settle_ms`, it must
//! - log no console error and throw no uncaught exception from its own origin (errors
//!   from other hosts, which cannot load here, are notes),
//! - run some of its own JS functions (V8 coverage of the app's origin),
//! - stay on its origin and draw something (a screenshot that is not one flat colour).
//!
//! What the app tried to reach on other hosts (web fonts, ads, badges, media) cannot
//! load here; those hosts, errors thrown by their code, dialogs answered and slow loads
//! are listed as notes, not failures.
//!
//! One line per app, a summary, and the table in `target/corpus/check.md` with each
//! app's screenshot in `target/corpus/shots/`; the task fails if any app fails.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gui_core::{DeviceEventKind, Signal, SignalKind};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use serde::Deserialize;

/// The corpus file, from the workspace root.
const CORPUS_FILE: &str = "xtask/corpus.toml";

/// Fewer apps than this is not a corpus worth reporting on (issue 49 asks for 30+).
pub const MIN_APPS: usize = 30;

/// How long an app is given to render after the load event when its entry names no
/// `settle_ms`.
pub const DEFAULT_SETTLE_MS: u64 = 1500;

/// The kinds of app the corpus spans. A fixed list, so a typo in the file is an error and
/// not a kind of its own with one app in it.
pub const KINDS: &[&str] = &[
    "chart",
    "component-showcase",
    "drawing",
    "editor",
    "form",
    "framework-example",
    "game",
    "grid",
    "mobile-ui",
    "slides",
    "viewer",
];

/// Local steps an app may need before it is served, by name.
pub const SETUPS: &[&str] = &[LOCAL_PDF];

/// Prints a PDF into the package folder and puts its path where the entry says
/// [`PDF_PLACEHOLDER`]: the PDF viewer opens files of its own origin only.
const LOCAL_PDF: &str = "local-pdf";

/// The place in an entry where `local-pdf` puts the PDF's path.
const PDF_PLACEHOLDER: &str = "<a local PDF>";

/// The hosts Chromium may resolve during the check: 127.0.0.1 only, so an app that works
/// here works on a machine without a network.
const OFFLINE_RULES: &str = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1";

/// Which half of the corpus an app belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// Defaults and presets are decided on these apps.
    Tune,
    /// Results are reported on these apps; nothing is tuned on them.
    Test,
}

impl Split {
    /// The name the corpus file and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tune => "tune",
            Self::Test => "test",
        }
    }
}

impl std::fmt::Display for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Split {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "tune" => Ok(Self::Tune),
            "test" => Ok(Self::Test),
            other => bail!("unknown split `{other}` (tune or test)"),
        }
    }
}

/// One app of the corpus, as `xtask/corpus.toml` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct App {
    /// Unique; what `--apps` and reports call the app.
    pub name: String,
    /// The npm package, `name@version`.
    pub package: String,
    /// The page that opens the app, a path inside the unpacked package (with a query if
    /// the app takes one).
    pub entry: String,
    pub split: Split,
    /// One of [`KINDS`].
    pub kind: String,
    /// One of [`SETUPS`], run before the package folder is served.
    #[serde(default)]
    pub setup: Option<String>,
    /// How long the app takes to render after the load event; [`DEFAULT_SETTLE_MS`] when
    /// `None`.
    #[serde(default)]
    pub settle_ms: Option<u64>,
    #[serde(default)]
    pub note: Option<String>,
}

impl App {
    /// How long to wait after the load event before the app counts as shown.
    pub fn settle(&self) -> Duration {
        Duration::from_millis(self.settle_ms.unwrap_or(DEFAULT_SETTLE_MS))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    app: Vec<App>,
}

/// The apps of `xtask/corpus.toml`, in file order, checked: unique names, known splits,
/// kinds and setups, `name@version` packages, and at least [`MIN_APPS`] of them.
pub fn load() -> Result<Vec<App>> {
    let path = crate::root().join(CORPUS_FILE);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    parse(&text, &path)
}

/// [`load`] on the text of the file at `path` (named in errors).
fn parse(text: &str, path: &Path) -> Result<Vec<App>> {
    let file: CorpusFile =
        toml::from_str(text).with_context(|| format!("parsing {}", path.display()))?;
    let mut names = BTreeSet::new();
    for app in &file.app {
        check_app(app).with_context(|| format!("{}: app `{}`", path.display(), app.name))?;
        if !names.insert(app.name.as_str()) {
            bail!("{}: two apps are named `{}`", path.display(), app.name);
        }
    }
    if file.app.len() < MIN_APPS {
        bail!(
            "{}: {} apps; a corpus needs at least {MIN_APPS}",
            path.display(),
            file.app.len()
        );
    }
    Ok(file.app)
}

/// What one entry must satisfy on its own.
fn check_app(app: &App) -> Result<()> {
    if app.name.is_empty() || app.name.contains([',', ' ', '/']) {
        bail!("the name must be non-empty, without commas, spaces or slashes");
    }
    match app.package.rsplit_once('@') {
        Some((name, version)) if !name.is_empty() && !version.is_empty() => {}
        _ => bail!("package `{}` is not `name@version`", app.package),
    }
    if !KINDS.contains(&app.kind.as_str()) {
        bail!("unknown kind `{}` (one of {})", app.kind, KINDS.join(", "));
    }
    if let Some(setup) = &app.setup
        && !SETUPS.contains(&setup.as_str())
    {
        bail!("unknown setup `{setup}` (one of {})", SETUPS.join(", "));
    }
    let wants_pdf = app.entry.contains(PDF_PLACEHOLDER);
    if wants_pdf != (app.setup.as_deref() == Some(LOCAL_PDF)) {
        bail!("an entry with `{PDF_PLACEHOLDER}` goes with setup `{LOCAL_PDF}`, and only it");
    }
    if app.entry.is_empty() || app.entry.starts_with('/') || app.entry.contains("..") {
        bail!(
            "entry `{}` must be a path inside the package folder",
            app.entry
        );
    }
    Ok(())
}

/// The apps named in `names` (in that order; all of `apps` when `None`) that are in
/// `split` (either when `None`). An unknown name is an error listing the known ones, and
/// so is a choice that leaves no app.
pub fn select(apps: &[App], names: Option<&[String]>, split: Option<Split>) -> Result<Vec<App>> {
    let chosen: Vec<&App> = match names {
        None => apps.iter().collect(),
        Some(names) => {
            let unknown: Vec<&str> = names
                .iter()
                .map(String::as_str)
                .filter(|n| !apps.iter().any(|a| a.name == *n))
                .collect();
            if !unknown.is_empty() {
                let known: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
                bail!(
                    "no app named `{}` in the corpus; known apps: {}",
                    unknown.join("`, `"),
                    known.join(", ")
                );
            }
            let mut seen = BTreeSet::new();
            names
                .iter()
                .filter(|n| seen.insert(n.as_str()))
                .filter_map(|n| apps.iter().find(|a| a.name == *n))
                .collect()
        }
    };
    let chosen: Vec<App> = chosen
        .into_iter()
        .filter(|a| split.is_none_or(|s| a.split == s))
        .cloned()
        .collect();
    if chosen.is_empty() {
        bail!(
            "no app selected (apps {}, split {})",
            names.map_or("all".to_owned(), |n| n.join(",")),
            split.map_or("any", Split::name)
        );
    }
    Ok(chosen)
}

/// Serves `app` on 127.0.0.1: fetches its package (once, into `target/subjects`), runs
/// its setup, and returns the server, whose `url()` opens the entry. The app stays served
/// while the server lives.
pub fn serve(app: &App) -> Result<StaticServer> {
    let dir = crate::fetch(&app.package)
        .with_context(|| format!("app `{}`: fetching {}", app.name, app.package))?;
    let page = app.entry.split(['?', '#']).next().unwrap_or_default();
    if !dir.join(page).is_file() {
        bail!(
            "app `{}`: entry page {page} is not in {} (package {})",
            app.name,
            dir.display(),
            app.package
        );
    }
    let entry = match app.setup.as_deref() {
        Some(LOCAL_PDF) => app.entry.replace(PDF_PLACEHOLDER, &local_pdf(&dir)?),
        Some(other) => bail!("app `{}`: unknown setup `{other}`", app.name),
        None => app.entry.clone(),
    };
    StaticServer::folder(&dir, &entry).with_context(|| format!("serving app `{}`", app.name))
}

/// A PDF for the PDF viewer to open, made once inside its package folder (the viewer
/// opens files of its own origin only): the demo app's README printed by headless
/// Chromium. Returns its path from the viewer page (`pdfjs/web/viewer.html`).
pub(crate) fn local_pdf(dir: &Path) -> Result<String> {
    const NAME: &str = "subject.pdf";
    let pdf = dir.join(NAME);
    if !pdf.is_file() {
        let readme = crate::root().join("examples/apps/demo/README.md");
        let chromium = gui_driver::find_chromium()?;
        let mut cmd = std::process::Command::new(chromium);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
        ])
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(format!("file://{}", readme.display()));
        crate::run(&mut cmd)?;
        if !pdf.is_file() {
            bail!("Chromium printed no PDF to {}", pdf.display());
        }
    }
    Ok(format!("../../{NAME}"))
}

const USAGE: &str =
    "usage: cargo xtask corpus [list] | corpus fetch [--apps a,b] [--split tune|test]";

/// `cargo xtask corpus ...`.
pub fn run(rest: &[String]) -> Result<()> {
    let apps = load()?;
    match rest.split_first() {
        None => list(&apps),
        Some((cmd, [])) if cmd == "list" => list(&apps),
        Some((cmd, flags)) if cmd == "fetch" => {
            let (mut names, mut split) = (None, None);
            for (flag, value) in crate::flag_values(flags, USAGE)? {
                match flag {
                    "--apps" => {
                        names = Some(
                            value
                                .split(',')
                                .map(|n| n.trim().to_owned())
                                .filter(|n| !n.is_empty())
                                .collect::<Vec<_>>(),
                        );
                    }
                    "--split" => split = Some(value.parse().context("--split")?),
                    other => bail!("unknown option {other}\n{USAGE}"),
                }
            }
            let chosen = select(&apps, names.as_deref(), split)?;
            fetch_and_check(&chosen)
        }
        Some(_) => bail!("{USAGE}"),
    }
}

fn list(apps: &[App]) -> Result<()> {
    println!(
        "{:<20} {:<5} {:<19} {:<28} entry",
        "name", "split", "kind", "package"
    );
    for a in apps {
        println!(
            "{:<20} {:<5} {:<19} {:<28} {}",
            a.name, a.split, a.kind, a.package, a.entry
        );
    }
    let tune = apps.iter().filter(|a| a.split == Split::Tune).count();
    println!(
        "{} apps: {tune} tune, {} test",
        apps.len(),
        apps.len() - tune
    );
    Ok(())
}

/// What the check found on one app.
#[derive(Debug, Default)]
struct Check {
    /// Why the app fails; empty when it passes.
    failures: Vec<String>,
    /// What went wrong without failing it: remote hosts that could not be reached,
    /// dialogs answered, a slow load.
    notes: Vec<String>,
    functions_covered: u64,
    functions_total: u64,
}

fn fetch_and_check(apps: &[App]) -> Result<()> {
    let out = crate::root().join("target/corpus");
    let shots = out.join("shots");
    std::fs::create_dir_all(&shots).with_context(|| format!("creating {}", shots.display()))?;
    let mut rows = Vec::new();
    let mut browser = String::new();
    for app in apps {
        let check = check_app_runs(app, &shots, &mut browser).unwrap_or_else(|e| Check {
            failures: vec![format!("{e:#}")],
            ..Check::default()
        });
        let status = if check.failures.is_empty() {
            "ok  "
        } else {
            "FAIL"
        };
        let mut line = format!(
            "{status} {:<20} {:<5} {:<19} {:>5}/{:<5} functions",
            app.name, app.split, app.kind, check.functions_covered, check.functions_total
        );
        if !check.failures.is_empty() {
            write!(line, "  {}", one_line(&check.failures.join("; ")))?;
        }
        if !check.notes.is_empty() {
            write!(line, "  notes: {}", check.notes.len())?;
        }
        println!("{line}");
        rows.push((app, check));
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|(_, c)| !c.failures.is_empty())
        .map(|(a, _)| a.name.as_str())
        .collect();
    let passed = rows.len() - failed.len();
    let summary = if failed.is_empty() {
        format!("corpus: {passed} of {} apps pass", rows.len())
    } else {
        format!(
            "corpus: {passed} of {} apps pass; failed: {}",
            rows.len(),
            failed.join(", ")
        )
    };
    let path = out.join("check.md");
    std::fs::write(&path, report(&rows, &summary, &browser))
        .with_context(|| format!("writing {}", path.display()))?;
    println!("{summary}\nwritten: {}", path.display());
    if !failed.is_empty() {
        bail!(
            "{} of {} corpus apps failed the check",
            failed.len(),
            rows.len()
        );
    }
    Ok(())
}

/// Serves `app`, opens it in Chromium offline, lets it settle and judges what it showed.
/// `browser` gets the device's description (for the report). An error is a failure that
/// stopped the check early (no package, no page, no browser).
fn check_app_runs(app: &App, shots: &Path, browser: &mut String) -> Result<Check> {
    let server = serve(app)?;
    let origin = server.origin();
    let config = ChromiumConfig {
        extra_args: vec![OFFLINE_RULES.to_owned()],
        ..ChromiumConfig::default()
    };
    let mut device = ChromiumDevice::launch(&server.url(), config)
        .with_context(|| format!("starting Chromium on {}", server.url()))?;
    if browser.is_empty() {
        // The version and binary; the rest names this app's URL.
        let described = device.describe();
        *browser = described
            .split(" at ")
            .next()
            .unwrap_or(&described)
            .to_owned();
    }
    std::thread::sleep(app.settle());
    let mut check = Check::default();
    let shot = device.screenshot().context("taking a screenshot")?;
    let png = shots.join(format!("{}.png", app.name));
    std::fs::write(&png, shot.to_png()?).with_context(|| format!("writing {}", png.display()))?;
    if is_flat(shot.pixels()) {
        check
            .failures
            .push("the screen is one flat colour: nothing was drawn".to_owned());
    }
    match device.coverage()? {
        Some(c) if c.functions_covered > 0 => {
            check.functions_covered = c.functions_covered;
            check.functions_total = c.functions_total;
        }
        Some(c) => {
            check.functions_total = c.functions_total;
            check.failures.push(format!(
                "no function of {origin} ran ({} known)",
                c.functions_total
            ));
        }
        None => check
            .failures
            .push("Chromium measured no coverage".to_owned()),
    }
    for signal in device.drain_signals()? {
        let what = format!("{:?}: {}", signal.kind, signal_line(&signal));
        if from_app(&signal, &origin) {
            check.failures.push(what);
        } else {
            check.notes.push(format!("other host: {what}"));
        }
    }
    match device.evaluate(OTHER_HOSTS_JS) {
        Ok(serde_json::Value::Array(hosts)) if !hosts.is_empty() => {
            let hosts: Vec<&str> = hosts.iter().filter_map(|h| h.as_str()).collect();
            check.notes.push(format!(
                "refers to other hosts, unreachable here: {}",
                hosts.join(", ")
            ));
        }
        Ok(_) => {}
        Err(e) => check
            .notes
            .push(format!("could not list the hosts the page refers to: {e}")),
    }
    for event in device.drain_events()? {
        let what = format!("{}: {}", event.kind.name(), event.detail);
        match event.kind {
            DeviceEventKind::LeftApp => check.failures.push(what),
            _ => check.notes.push(what),
        }
    }
    Ok(check)
}

/// The hosts other than the page's own that its scripts, styles, frames and media point
/// at, or that it fetched from (Resource Timing), sorted: what the app tried to reach
/// and could not, offline.
const OTHER_HOSTS_JS: &str = r#"(() => {
  const hosts = new Set();
  const add = (u) => {
    try {
      const url = new URL(u, location.href);
      if (/^https?:$/.test(url.protocol) && url.origin !== location.origin) hosts.add(url.host);
    } catch (e) {}
  };
  for (const el of document.querySelectorAll('script[src], img[src], iframe[src], video[src], audio[src], source[src], embed[src]'))
    add(el.getAttribute('src'));
  for (const el of document.querySelectorAll('link[href]'))
    if (/stylesheet|icon|preload|import/.test(el.rel)) add(el.getAttribute('href'));
  for (const e of performance.getEntriesByType('resource')) add(e.name);
  return [...hosts].sort();
})()"#;

/// A signal's message's first line and where it came from.
fn signal_line(signal: &Signal) -> String {
    let first = signal.message.lines().next().unwrap_or_default();
    match signal.stack.iter().find(|f| !f.url.is_empty()) {
        Some(frame) => format!("{first} {frame}"),
        None => first.to_owned(),
    }
}

/// Whether a signal is the app's own: its innermost frame with a URL is on `origin` (or
/// on no host at all: inline, eval'd or blob code of the page). One that has no frame
/// with a URL counts as the app's too: there is nothing to blame on another host. Only
/// crashes are the app's whatever their stack.
fn from_app(signal: &Signal, origin: &str) -> bool {
    if signal.kind == SignalKind::Crash {
        return true;
    }
    let Some(url) = signal
        .stack
        .iter()
        .map(|f| f.url.as_str())
        .find(|u| !u.is_empty())
    else {
        return true;
    };
    let url = url.strip_prefix("blob:").unwrap_or(url);
    let remote = (url.starts_with("http://") || url.starts_with("https://"))
        && !(url == origin || url.starts_with(&format!("{origin}/")));
    !remote
}

/// True when every pixel has the colour of the first: a page that drew nothing.
fn is_flat(pixels: &image::RgbImage) -> bool {
    let mut it = pixels.pixels();
    let Some(first) = it.next() else {
        return true;
    };
    it.all(|p| p == first)
}

/// `text` on one line, cut to a readable length for the console.
fn one_line(text: &str) -> String {
    const MAX: usize = 240;
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match flat.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// The Markdown table of `target/corpus/check.md`.
fn report(rows: &[(&App, Check)], summary: &str, browser: &str) -> String {
    let mut md = String::new();
    let cell = |s: &str| one_line(s).replace('|', "\\|");
    let _ = writeln!(
        md,
        "# Corpus check\n\n`cargo xtask corpus fetch`: each app served from its npm package on \
         127.0.0.1 and opened in Chromium with every other host unresolvable, given its \
         settle time, then judged: no console error or uncaught exception from its own \
         origin, some of its functions run, still on its origin, something drawn. \
         Screenshots in `shots/`.\n\nBrowser: {browser}\n\n{summary}\n"
    );
    let _ = writeln!(
        md,
        "| app | split | kind | package | entry | settle ms | result | functions run | notes |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for (app, c) in rows {
        let result = if c.failures.is_empty() {
            "ok".to_owned()
        } else {
            format!("FAIL: {}", cell(&c.failures.join("; ")))
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | `{}` | {} | {result} | {} of {} | {} |",
            app.name,
            app.split,
            app.kind,
            app.package,
            app.entry,
            app.settle().as_millis(),
            c.functions_covered,
            c.functions_total,
            cell(&c.notes.join("; "))
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use gui_core::StackFrame;

    use super::*;

    fn corpus() -> Vec<App> {
        load().expect("xtask/corpus.toml loads")
    }

    fn app(name: &str, split: &str, kind: &str) -> String {
        format!(
            "[[app]]\nname = \"{name}\"\npackage = \"p@1.0.0\"\nentry = \"index.html\"\n\
             split = \"{split}\"\nkind = \"{kind}\"\n\n"
        )
    }

    fn many(n: usize) -> String {
        (0..n)
            .map(|i| app(&format!("app{i}"), "test", "game"))
            .collect()
    }

    fn parse_text(text: &str) -> Result<Vec<App>> {
        parse(text, Path::new("corpus.toml"))
    }

    #[test]
    fn the_checked_in_corpus_loads_with_both_splits_and_unique_names() {
        let apps = corpus();
        assert!(apps.len() >= MIN_APPS, "{} apps", apps.len());
        let tune = apps.iter().filter(|a| a.split == Split::Tune).count();
        assert!((10..=14).contains(&tune), "{tune} tune apps");
        assert!(apps.len() > tune, "no test app");
        let names: BTreeSet<&str> = apps.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names.len(), apps.len());
    }

    #[test]
    fn every_kind_with_two_apps_is_in_both_splits() {
        let mut by_kind: BTreeMap<&str, BTreeSet<Split>> = BTreeMap::new();
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        let apps = corpus();
        for a in &apps {
            by_kind.entry(&a.kind).or_default().insert(a.split);
            *count.entry(&a.kind).or_default() += 1;
        }
        for (kind, splits) in &by_kind {
            if splits.contains(&Split::Tune) {
                assert!(splits.contains(&Split::Test), "kind {kind} is only in tune");
            }
            if count[kind] >= 2 {
                assert_eq!(splits.len(), 2, "kind {kind} is in one split only");
            }
        }
        // At most two TodoMVC variants are tuned on: the framework examples are one app.
        let tuned_todos = apps
            .iter()
            .filter(|a| a.split == Split::Tune && a.package.starts_with("todomvc@"))
            .count();
        assert!(tuned_todos <= 2, "{tuned_todos} TodoMVC variants in tune");
    }

    /// The rule the file's header states: per kind, sorted by name, numbers 1, 5, 9, ...
    /// are `tune`.
    #[test]
    fn the_split_follows_the_stated_rule() {
        let apps = corpus();
        let mut by_kind: BTreeMap<&str, Vec<&App>> = BTreeMap::new();
        for a in &apps {
            by_kind.entry(&a.kind).or_default().push(a);
        }
        for group in by_kind.values_mut() {
            group.sort_by(|a, b| a.name.cmp(&b.name));
            for (i, a) in group.iter().enumerate() {
                let want = if i % 4 == 1 { Split::Tune } else { Split::Test };
                assert_eq!(
                    a.split, want,
                    "app {} (number {i} of kind {})",
                    a.name, a.kind
                );
            }
        }
    }

    #[test]
    fn the_subjects_are_in_the_corpus_with_their_entries() {
        let apps = corpus();
        for s in crate::subject_list().unwrap().subject {
            let a = apps
                .iter()
                .find(|a| a.name == s.name)
                .unwrap_or_else(|| panic!("subject {} is not in the corpus", s.name));
            assert_eq!((&a.package, &a.entry), (&s.package, &s.entry), "{}", s.name);
        }
    }

    #[test]
    fn select_refuses_unknown_names_naming_them_and_the_known_ones() {
        let apps = corpus();
        let names = vec!["luckysheet".to_owned(), "no-such-app".to_owned()];
        let e = select(&apps, Some(&names), None).unwrap_err().to_string();
        assert!(e.contains("no-such-app"), "{e}");
        assert!(e.contains("todomvc-react"), "known apps are listed: {e}");
        assert!(
            !e.contains("`luckysheet`"),
            "a known name is not blamed: {e}"
        );
    }

    #[test]
    fn select_keeps_the_order_asked_and_filters_by_split() {
        let apps = corpus();
        let names = vec!["reveal".to_owned(), "2048".to_owned(), "reveal".to_owned()];
        let got = select(&apps, Some(&names), None).unwrap();
        let got: Vec<&str> = got.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(got, ["reveal", "2048"]);
        let tune = select(&apps, None, Some(Split::Tune)).unwrap();
        assert!(tune.iter().all(|a| a.split == Split::Tune));
        assert_eq!(
            tune.len(),
            apps.iter().filter(|a| a.split == Split::Tune).count()
        );
        // `2048` is a test app: asking for it among the tune apps leaves nothing.
        let e = select(&apps, Some(&names[1..2]), Some(Split::Tune)).unwrap_err();
        assert!(e.to_string().contains("no app selected"), "{e}");
    }

    #[test]
    fn split_parses_its_two_names_only() {
        assert_eq!("tune".parse::<Split>().unwrap(), Split::Tune);
        assert_eq!("test".parse::<Split>().unwrap(), Split::Test);
        let e = "train".parse::<Split>().unwrap_err().to_string();
        assert!(e.contains("train"), "{e}");
    }

    #[test]
    fn a_bad_file_is_refused_naming_the_file_and_the_app() {
        let dup = app("a", "test", "game") + &app("a", "tune", "game") + &many(MIN_APPS);
        let e = format!("{:#}", parse_text(&dup).unwrap_err());
        assert!(e.contains("corpus.toml") && e.contains("`a`"), "{e}");

        let split = app("a", "train", "game") + &many(MIN_APPS);
        let e = format!("{:#}", parse_text(&split).unwrap_err());
        assert!(e.contains("corpus.toml") && e.contains("train"), "{e}");

        let kind = app("a", "test", "toy") + &many(MIN_APPS);
        let e = format!("{:#}", parse_text(&kind).unwrap_err());
        assert!(e.contains("`a`") && e.contains("toy"), "{e}");

        let setup = app("a", "test", "game") + "setup = \"warm-up\"\n" + &many(MIN_APPS);
        let e = format!("{:#}", parse_text(&setup).unwrap_err());
        assert!(e.contains("`a`") && e.contains("warm-up"), "{e}");

        let few = many(MIN_APPS - 1);
        let e = format!("{:#}", parse_text(&few).unwrap_err());
        assert!(
            e.contains("corpus.toml") && e.contains(&MIN_APPS.to_string()),
            "{e}"
        );

        assert_eq!(parse_text(&many(MIN_APPS)).unwrap().len(), MIN_APPS);
    }

    #[test]
    fn a_pdf_placeholder_needs_the_local_pdf_setup() {
        let bare = app("pdf", "test", "viewer").replace("index.html", "v.html?file=<a local PDF>");
        assert!(parse_text(&(bare.clone() + &many(MIN_APPS))).is_err());
        let with = bare.replace(
            "kind = \"viewer\"\n",
            "kind = \"viewer\"\nsetup = \"local-pdf\"\n",
        );
        assert!(parse_text(&(with + &many(MIN_APPS))).is_ok());
    }

    #[test]
    fn signals_from_other_hosts_are_notes_and_the_rest_the_apps() {
        let origin = "http://127.0.0.1:4000";
        let at = |url: &str| {
            Signal::new(
                SignalKind::UncaughtException,
                "boom",
                vec![StackFrame {
                    function: "f".into(),
                    url: url.into(),
                    line: 1,
                    column: 1,
                }],
            )
        };
        assert!(from_app(&at("http://127.0.0.1:4000/app.js"), origin));
        assert!(from_app(&at("blob:http://127.0.0.1:4000/1234"), origin));
        assert!(
            from_app(&at(""), origin),
            "no URL: nothing to blame elsewhere"
        );
        assert!(!from_app(&at("https://fonts.example.com/x.js"), origin));
        // Another port on the same host is another origin.
        assert!(!from_app(&at("http://127.0.0.1:40001/app.js"), origin));
        let crash = Signal::new(SignalKind::Crash, "gone", Vec::new());
        assert!(from_app(&crash, origin));
    }
}
