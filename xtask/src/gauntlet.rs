//! `cargo xtask gauntlet`: the strategy binaries over every page of the gauntlet
//! (`gui_testing::gauntlet`) and over the subject apps, one Markdown table each.
//!
//! The gauntlet pages do what real apps do and the demo app never does (native dialogs,
//! new tabs, file pickers, downloads, leaving the app, loads that never end) plus two real
//! failures (a handler that never returns, a renderer out of memory). The question is
//! whether a device takes them in its stride: a page with nothing wrong must cost about
//! what the plain page costs, leave no crash signal and lose no device, and each failing
//! page must give exactly one crash signal. So each row shows, per page and strategy,
//! the median and 95th-percentile step round trip (and the median's ratio to the plain
//! page's, same strategy), device restarts, the distinct crash signals (hangs are crash
//! signals too) and the device events by kind, and a verdict:
//! - a `Fine` page is OK with no crash signal, no restart, a median within 1.5x of the
//!   plain page's and a p95 under a second;
//! - a `Hang` or `Crash` page is OK with exactly one crash signal.
//!
//! The binaries keep their default `--hang-after` (10 s), so the hang page's steps show
//! what a hang really costs a run. The subject apps get the same columns without the ratio
//! or a pass/fail: a real app may genuinely crash, so their verdict only points at rows
//! to look at.
//!
//! Options: `--steps N` (30) per page, `--subject-steps N` (100), `--strategies
//! monkey,pirltest`, `--pages a,b` (the plain page, the yardstick, always runs first),
//! `--no-subjects`, `--seed S` (1), `--throttle MS` (200). Run folders, one log per run
//! and `table.md` go to `target/gauntlet/<unix time>/`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use gui_core::SignalKind;
use gui_explore::EventRecord;
use gui_report::RunFolder;
use gui_testing::gauntlet::{self, Expect, GauntletServer, PAGES, Page};

const USAGE: &str = "usage: cargo xtask gauntlet [--steps N] [--subject-steps N] \
     [--strategies monkey,pirltest] [--pages a,b] [--no-subjects] [--seed S] [--throttle MS]";

/// A `Fine` page's median step may take this many times the plain page's.
const SLOWDOWN_LIMIT: f64 = 1.5;
/// A `Fine` page's 95th-percentile step must take less than this.
const P95_LIMIT_MS: f64 = 1000.0;

#[derive(Debug)]
struct Options {
    steps: u64,
    subject_steps: u64,
    strategies: Vec<String>,
    pages: Vec<&'static Page>,
    subjects: bool,
    seed: u64,
    throttle_ms: u64,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        steps: 30,
        subject_steps: 100,
        strategies: vec!["monkey".into(), "pirltest".into()],
        pages: PAGES.iter().collect(),
        subjects: true,
        seed: 1,
        throttle_ms: 200,
    };
    let number = |flag: &str, v: &str| -> Result<u64> {
        v.parse()
            .with_context(|| format!("{flag} takes a number, not `{v}`\n{USAGE}"))
    };
    let flags: Vec<String> = rest
        .iter()
        .filter(|a| *a != "--no-subjects")
        .cloned()
        .collect();
    o.subjects = flags.len() == rest.len();
    for (flag, value) in crate::flag_values(&flags, USAGE)? {
        match flag {
            "--steps" => o.steps = number(flag, value)?,
            "--subject-steps" => o.subject_steps = number(flag, value)?,
            "--seed" => o.seed = number(flag, value)?,
            "--throttle" => o.throttle_ms = number(flag, value)?,
            "--strategies" => o.strategies = value.split(',').map(str::to_owned).collect(),
            "--pages" => {
                o.pages = value
                    .split(',')
                    .map(|name| {
                        gauntlet::page_named(name)
                            .with_context(|| format!("--pages: no gauntlet page `{name}`"))
                    })
                    .collect::<Result<_>>()?;
            }
            other => bail!("unknown option {other}\n{USAGE}"),
        }
    }
    if o.steps == 0 || o.subject_steps == 0 {
        bail!("--steps and --subject-steps must be at least 1");
    }
    for s in &o.strategies {
        if !["monkey", "pirltest"].contains(&s.as_str()) {
            bail!("--strategies: unknown strategy `{s}` (monkey, pirltest)");
        }
    }
    // The plain page is every other page's yardstick.
    o.pages.retain(|p| p.name != PAGES[0].name);
    o.pages.insert(0, &PAGES[0]);
    Ok(o)
}

/// What one run folder says.
#[derive(Debug)]
struct Measured {
    steps: usize,
    median_ms: f64,
    p95_ms: f64,
    restarts: u32,
    /// Keys of the distinct crash signals (hangs included), without the kind.
    crashes: Vec<String>,
    /// Device events by kind.
    events: BTreeMap<String, usize>,
}

impl Measured {
    fn read(dir: &Path) -> Result<Self> {
        let folder = RunFolder::load(dir)?;
        let times: Vec<f64> = folder
            .steps
            .iter()
            .map(|s| s.timings.round_trip_ms)
            .collect();
        let mut events = BTreeMap::new();
        for e in read_events(dir)? {
            *events.entry(e.event).or_default() += 1;
        }
        Ok(Self {
            steps: folder.steps.len(),
            median_ms: crate::median(&times),
            p95_ms: percentile(&times, 0.95),
            restarts: folder.summary.as_ref().map_or(0, |s| s.device_restarts),
            crashes: folder
                .signals
                .iter()
                .filter(|s| s.kind == SignalKind::Crash)
                .map(|s| s.key.split_once('|').map_or(&*s.key, |(_, k)| k).to_owned())
                .collect(),
            events,
        })
    }

    /// The Markdown cells from steps to device events, `ratio` (a cell) after the timings.
    fn cells(&self, ratio: Option<&str>) -> String {
        let crashes = match self.crashes.as_slice() {
            [] => "0".to_owned(),
            keys => {
                let words: Vec<String> = keys
                    .iter()
                    .map(|k| k.split_whitespace().take(5).collect::<Vec<_>>().join(" "))
                    .collect();
                format!("{}: {}", keys.len(), words.join("; "))
            }
        };
        let events: Vec<String> = self
            .events
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let events = if events.is_empty() {
            "–".to_owned()
        } else {
            events.join(", ")
        };
        let ratio = ratio.map_or(String::new(), |r| format!(" {r} |"));
        format!(
            "{} | {:.0} | {:.0} |{ratio} {} | {} | {} |",
            self.steps,
            self.median_ms,
            self.p95_ms,
            self.restarts,
            cell(&crashes),
            cell(&events),
        )
    }
}

/// `events.jsonl` of a run folder (missing: none), up to a torn last line.
fn read_events(dir: &Path) -> Result<Vec<EventRecord>> {
    let path = dir.join("events.jsonl");
    let text = match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        other => other.with_context(|| path.display().to_string())?,
    };
    let whole = text.rfind('\n').map_or("", |i| &text[..i]);
    whole
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| format!("{} line {}", path.display(), i + 1))
        })
        .collect()
}

/// The nearest-rank percentile `q` of `v`; NaN when empty.
fn percentile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = (q * v.len() as f64).ceil() as usize;
    v.get(rank.saturating_sub(1)).copied().unwrap_or(f64::NAN)
}

/// Text safe inside a Markdown table cell, on one line.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The binary flags a page's extra Chromium flags stand for.
fn page_flags(page: &Page) -> Result<Vec<String>> {
    page.chromium_args
        .iter()
        .map(
            |arg| match arg.strip_prefix("--js-flags=--max-old-space-size=") {
                Some(mib) => Ok(vec!["--js-heap-mb".to_owned(), mib.to_owned()]),
                None => bail!("page {}: no binary flag gives Chromium `{arg}`", page.name),
            },
        )
        .collect::<Result<Vec<_>>>()
        .map(|v| v.concat())
}

/// Runs `bin` on `url` into `dir` (output into `dir`.log) and reads the folder. A binary
/// still running after `limit` is killed: the row says so and the gauntlet goes on.
fn run_one(
    bin: &Path,
    url: &str,
    steps: u64,
    o: &Options,
    extra: &[String],
    dir: &Path,
) -> Result<Measured> {
    let log = dir.with_extension("log");
    let mut cmd = Command::new(bin);
    cmd.args(["--url", url, "--steps", &steps.to_string()])
        .args(["--seed", &o.seed.to_string()])
        .args(["--throttle", &o.throttle_ms.to_string()])
        .args(extra)
        .arg("--out")
        .arg(dir)
        .stdin(Stdio::null());
    let file = std::fs::File::create(&log).with_context(|| log.display().to_string())?;
    cmd.stdout(file.try_clone()?).stderr(file);
    let mut child = cmd.spawn().with_context(|| format!("cannot run {cmd:?}"))?;
    // Every step could wait out a hang (10 s) and a restart; beyond that the binary is stuck.
    let limit = Duration::from_secs(120 + steps * (20 + o.throttle_ms / 1000));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > limit {
            child.kill()?;
            child.wait()?;
            bail!(
                "still running after {} s; killed (see {})",
                limit.as_secs(),
                log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if !status.success() {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        bail!("{status}: {last}");
    }
    Measured::read(dir)
}

/// A table row: the measured cells and a verdict, or the error in the verdict's place.
/// `ratio` is the cell of the ratio column, for tables that have one.
fn row(
    name: &str,
    strategy: &str,
    measured: &Result<Measured>,
    ratio: Option<&str>,
    verdict: impl Fn(&Measured) -> String,
) -> String {
    match measured {
        Ok(m) => format!(
            "| {name} | {strategy} | {} {} |",
            m.cells(ratio),
            verdict(m)
        ),
        Err(e) => {
            let blanks = if ratio.is_some() { 7 } else { 6 };
            format!(
                "| {name} | {strategy} |{} error: {} |",
                " – |".repeat(blanks),
                cell(&format!("{e:#}"))
            )
        }
    }
}

/// A gauntlet page's verdict; `plain_ms` is the plain page's median, same strategy.
fn page_verdict(page: &Page, m: &Measured, plain_ms: Option<f64>) -> String {
    let mut wrong = Vec::new();
    match page.expect {
        Expect::Fine => {
            if !m.crashes.is_empty() {
                wrong.push(format!("{} crash signals", m.crashes.len()));
            }
            if m.restarts > 0 {
                wrong.push(format!("{} restarts", m.restarts));
            }
            match plain_ms.map(|p| m.median_ms / p) {
                Some(r) if r <= SLOWDOWN_LIMIT => {}
                Some(r) => wrong.push(format!("median {r:.2}x plain")),
                None => wrong.push("no plain median to compare".into()),
            }
            if m.p95_ms.is_nan() || m.p95_ms >= P95_LIMIT_MS {
                wrong.push(format!("p95 {:.0} ms", m.p95_ms));
            }
        }
        Expect::Hang | Expect::Crash if m.crashes.len() != 1 => {
            wrong.push(format!("{} crash signals, expected 1", m.crashes.len()));
        }
        Expect::Hang | Expect::Crash => {}
    }
    if wrong.is_empty() {
        "OK".into()
    } else {
        format!("FAIL: {}", wrong.join(", "))
    }
}

pub fn run(rest: &[String]) -> Result<()> {
    let o = parse(rest)?;
    crate::setup()?;
    let release = crate::build_release(&["monkey", "pirltest"])?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let out = crate::root().join(format!("target/gauntlet/{stamp}"));
    std::fs::create_dir_all(&out)?;

    let mut table = String::new();
    writeln!(
        table,
        "### Gauntlet pages\n\n{} steps per run, seed {}, throttle {} ms, `--hang-after` 10 s \
         (the hang page's steps include that wait). Step times are round trips in ms; \
         `x plain` is the median over the plain page's, same strategy.\n",
        o.steps, o.seed, o.throttle_ms
    )?;
    writeln!(
        table,
        "| page | strategy | steps | median | p95 | x plain | restarts | crash signals \
         | device events | verdict |\n|---|---|---|---|---|---|---|---|---|---|"
    )?;
    let server = GauntletServer::start(&gauntlet::pages_dir())?;
    let mut plain_ms: BTreeMap<&str, f64> = BTreeMap::new();
    for page in &o.pages {
        for strategy in &o.strategies {
            let dir = out.join(format!("{}-{strategy}", page.name));
            eprintln!("gauntlet: {} with {strategy}, {} steps", page.name, o.steps);
            let measured = page_flags(page).and_then(|extra| {
                run_one(
                    &release.join(strategy),
                    &server.url(page.name),
                    o.steps,
                    &o,
                    &extra,
                    &dir,
                )
            });
            if let (Ok(m), true) = (&measured, page.name == PAGES[0].name) {
                plain_ms.insert(strategy, m.median_ms);
            }
            let plain = plain_ms.get(strategy.as_str()).copied();
            let ratio = match (plain, &measured) {
                (Some(p), Ok(m)) => format!("{:.2}x", m.median_ms / p),
                _ => "–".to_owned(),
            };
            let line = row(page.name, strategy, &measured, Some(&ratio), |m| {
                page_verdict(page, m, plain)
            });
            eprintln!("{line}");
            writeln!(table, "{line}")?;
        }
    }
    drop(server);

    if o.subjects {
        writeln!(
            table,
            "\n### Subject apps\n\n{} steps per run, same settings. A real app may crash for \
             real: `look` marks rows with a crash signal or a restart.\n",
            o.subject_steps
        )?;
        writeln!(
            table,
            "| app | strategy | steps | median | p95 | restarts | crash signals \
             | device events | verdict |\n|---|---|---|---|---|---|---|---|---|"
        )?;
        for subject in crate::subject_list()?.subject {
            let name = subject.name;
            // Served once per app; a subject that cannot be fetched fails its rows only.
            let server = crate::compare::serve(&name);
            for strategy in &o.strategies {
                eprintln!(
                    "gauntlet: {name} with {strategy}, {} steps",
                    o.subject_steps
                );
                let measured = match &server {
                    Ok(s) => run_one(
                        &release.join(strategy),
                        &s.url(),
                        o.subject_steps,
                        &o,
                        &[],
                        &out.join(format!("{name}-{strategy}")),
                    ),
                    Err(e) => Err(anyhow::anyhow!("{e:#}")),
                };
                let line = row(&name, strategy, &measured, None, |m| {
                    if m.crashes.is_empty() && m.restarts == 0 {
                        "OK".into()
                    } else {
                        "look".into()
                    }
                });
                eprintln!("{line}");
                writeln!(table, "{line}")?;
            }
        }
    }

    let path = out.join("table.md");
    std::fs::write(&path, &table)?;
    println!("{table}");
    println!("written: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args as args;

    #[test]
    fn the_plain_page_always_runs_first() {
        let o = parse(&args(&["--pages", "hang,alert,plain", "--no-subjects"])).unwrap();
        let names: Vec<_> = o.pages.iter().map(|p| p.name).collect();
        assert_eq!(names, ["plain", "hang", "alert"]);
        assert!(!o.subjects);
        assert!(parse(&args(&["--pages", "nowhere"])).is_err());
    }

    #[test]
    fn the_heap_cap_becomes_the_binary_flag() {
        let crash = gauntlet::page_named("crash").unwrap();
        assert_eq!(page_flags(crash).unwrap(), ["--js-heap-mb", "64"]);
        assert!(page_flags(&PAGES[0]).unwrap().is_empty());
    }

    #[test]
    fn a_failed_run_keeps_the_columns_and_says_why() {
        let failed = Err(anyhow::anyhow!("exit status: 1: no | chromium"));
        let with_ratio = row("alert", "monkey", &failed, Some("–"), |_| unreachable!());
        assert_eq!(with_ratio.matches(" |").count(), 10, "{with_ratio}");
        assert!(with_ratio.ends_with("error: exit status: 1: no \\| chromium |"));
        let without = row("ace", "monkey", &failed, None, |_| unreachable!());
        assert_eq!(without.matches(" |").count(), 9, "{without}");
    }

    #[test]
    fn p95_is_the_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.95), 19.0);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
        assert!(percentile(&[], 0.95).is_nan());
    }
}
