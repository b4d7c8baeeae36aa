//! `cargo xtask compare`: PIRLTest against Monkey on the bundled demo app and the subject
//! apps, several seeds, in real Chromium. Each run is the strategy's own binary
//! (`pirltest`, `monkey`) writing its usual run folder; this task only reads them.
//!
//! Options:
//! - `--apps a,b` (default `demo` and every subject in `xtask/subjects.toml`);
//! - `--seeds 1,2,3` (default);
//! - `--steps 100,250,500` (default; each run goes to the largest, the others are read
//!   off its per-step coverage);
//! - `--strategies pirltest,monkey` (default);
//! - `--throttle POLICY` (default `adat`): the wait after each event, the same for every
//!   strategy, as the binaries' `--throttle` takes it (`adat`, `consecutive`, `fixed:200`);
//! - `--out DIR` (default `target/compare`): run folders, `report.md` and one
//!   `coverage-<app>.svg` per app.
//!
//! Measures, per app, strategy and checkpoint: JS functions covered (of the app's origin),
//! the gain beyond what loading the start page covers (measured once per app), the same
//! for block coverage (bytes of script in blocks that ran, V8's detailed coverage: the
//! nearest to the line coverage the PIRLTest paper reports), unique
//! uncaught exceptions, the seeded demo bugs found (A, B, D and E of
//! `examples/apps/demo/README.md`; C1 and C2 are wrong output without any signal and need an
//! oracle) and steps per minute. Medians over seeds.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use gui_core::SignalKind;
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_report::RunFolder;

use crate::median;

/// Seeded demo bugs that leave a signal: (name, signal kind, a piece of its key).
const DEMO_BUGS: [(&str, SignalKind, &str); 5] = [
    (
        "A undo after archive-all",
        SignalKind::UncaughtException,
        "undoArchive",
    ),
    (
        "B checkout with coupon",
        SignalKind::UncaughtException,
        "checkout",
    ),
    ("D invalid email", SignalKind::ConsoleError, "invalid email"),
    (
        "E claim offer after loading",
        SignalKind::UncaughtException,
        "claimOffer",
    ),
    (
        "F home counter after notifications off",
        SignalKind::UncaughtException,
        "incrementHomeCounter",
    ),
];

#[derive(Debug)]
struct Options {
    apps: Vec<String>,
    seeds: Vec<u64>,
    steps: Vec<u64>,
    strategies: Vec<String>,
    throttle: String,
    out: PathBuf,
}

fn list<T: std::str::FromStr>(flag: &str, v: &str) -> Result<Vec<T>> {
    v.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("{flag}: `{x}` is not valid"))
        })
        .collect()
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        apps: Vec::new(),
        seeds: vec![1, 2, 3],
        steps: vec![100, 250, 500],
        strategies: vec!["pirltest".into(), "monkey".into()],
        throttle: "adat".into(),
        out: crate::root().join("target/compare"),
    };
    const USAGE: &str = "options: --apps --seeds --steps --strategies --throttle --out";
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        match flag {
            "--apps" => o.apps = list(flag, value)?,
            "--seeds" => o.seeds = list(flag, value)?,
            "--steps" => o.steps = list(flag, value)?,
            "--strategies" => o.strategies = list(flag, value)?,
            "--throttle" => o.throttle = value.trim().to_owned(),
            "--out" => o.out = PathBuf::from(value),
            other => bail!("unknown option {other}; {USAGE}"),
        }
    }
    o.steps.sort_unstable();
    o.steps.dedup();
    // The binaries' own parser, so a bad policy fails before any run starts.
    o.throttle
        .parse::<gui_explore::ThrottleSpec>()
        .map_err(|e| anyhow::anyhow!("--throttle `{}`: {e}", o.throttle))?;
    if o.steps.is_empty() || o.steps[0] == 0 || o.seeds.is_empty() || o.strategies.is_empty() {
        bail!("--steps, --seeds and --strategies need at least one value (steps > 0)");
    }
    for s in &o.strategies {
        if !["pirltest", "monkey"].contains(&s.as_str()) {
            bail!("--strategies: unknown strategy `{s}` (pirltest, monkey)");
        }
    }
    Ok(o)
}

/// What one run folder says.
struct RunResult {
    /// Functions covered after each step (index 0 = step 1).
    functions: Vec<u64>,
    functions_total: u64,
    /// Bytes of script in blocks that ran, after each step.
    bytes: Vec<u64>,
    folder: RunFolder,
    steps_per_minute: f64,
}

impl RunResult {
    fn read(dir: &Path) -> Result<Self> {
        let folder = RunFolder::load(dir)?;
        let mut functions = Vec::with_capacity(folder.steps.len());
        let mut bytes = Vec::with_capacity(folder.steps.len());
        let (mut last, mut last_bytes, mut total) = (0, 0, 0);
        for s in &folder.steps {
            if let Some(c) = s.coverage {
                last = c.functions_covered;
                last_bytes = c.bytes_covered;
                total = c.functions_total;
            }
            functions.push(last);
            bytes.push(last_bytes);
        }
        let minutes = folder.duration_ms() as f64 / 60_000.0;
        Ok(Self {
            functions,
            functions_total: total,
            bytes,
            steps_per_minute: if minutes > 0.0 {
                folder.steps.len() as f64 / minutes
            } else {
                0.0
            },
            folder,
        })
    }

    fn functions_at(&self, step: u64) -> u64 {
        at(&self.functions, step)
    }

    fn bytes_at(&self, step: u64) -> u64 {
        at(&self.bytes, step)
    }

    fn exceptions_by(&self, step: u64) -> usize {
        self.folder
            .signals
            .iter()
            .filter(|s| s.kind == SignalKind::UncaughtException && s.first_step <= step)
            .count()
    }

    fn bug_step(&self, kind: SignalKind, needle: &str) -> Option<u64> {
        self.folder
            .signals
            .iter()
            .filter(|s| s.kind == kind && s.key.contains(needle))
            .map(|s| s.first_step)
            .min()
    }
}

/// The value after `step` steps of a per-step series (the last one for a shorter run).
fn at(series: &[u64], step: u64) -> u64 {
    let i = (step as usize).min(series.len());
    if i == 0 { 0 } else { series[i - 1] }
}

/// The app's URL, kept served while the value lives: the demo app, or an app of the
/// corpus (`xtask/corpus.toml`, which holds every subject under the same name).
pub(crate) fn serve(app: &str) -> Result<StaticServer> {
    if app == "demo" {
        return StaticServer::demo().context("serving the demo app");
    }
    let names = [app.to_owned()];
    let corpus = crate::corpus::load()?;
    let chosen = crate::corpus::select(&corpus, Some(&names), None)
        .with_context(|| format!("app `{app}`: use demo or an app of the corpus"))?;
    crate::corpus::serve(&chosen[0])
}

/// Functions and block bytes covered once the start page has loaded, before any action.
fn start_coverage(url: &str) -> Result<(u64, u64)> {
    let mut device = ChromiumDevice::launch(url, ChromiumConfig::default())
        .with_context(|| format!("starting Chromium on {url}"))?;
    std::thread::sleep(std::time::Duration::from_millis(300));
    let c = device
        .coverage()?
        .context("Chromium reported no coverage")?;
    Ok((c.functions_covered, c.bytes_covered))
}

pub fn run(rest: &[String]) -> Result<()> {
    let mut o = parse(rest)?;
    if o.apps.is_empty() {
        o.apps = std::iter::once("demo".to_owned())
            .chain(crate::subject_list()?.subject.into_iter().map(|s| s.name))
            .collect();
    }
    crate::setup()?;
    let release = crate::build_release(&["pirltest", "monkey"])?;
    std::fs::create_dir_all(&o.out)?;
    let max = *o.steps.last().expect("checked");
    let mut report = String::new();
    writeln!(
        report,
        "# PIRLTest vs Monkey\n\nSeeds {:?}, steps {:?}, Chromium 1280x800, throttle `{}` for \
         every strategy. Medians over seeds. `gain` = functions covered beyond the start \
         page; `block gain` = the same in bytes of script in blocks that ran.\n",
        o.seeds, o.steps, o.throttle
    )?;
    // Run folders name the throttle, so runs under another one are never reused.
    let tag: String = o
        .throttle
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let mut ratios: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    let mut block_ratios: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for app in &o.apps {
        let server = serve(app)?;
        let url = server.url();
        let (start, start_bytes) = start_coverage(&url)?;
        eprintln!(
            "compare: {app}: the start page covers {start} functions, {start_bytes} block bytes"
        );
        let mut results: BTreeMap<String, Vec<(u64, RunResult)>> = BTreeMap::new();
        for strategy in &o.strategies {
            for &seed in &o.seeds {
                let dir = o
                    .out
                    .join(format!("{app}-{strategy}-{tag}-seed{seed}-{max}"));
                if !dir.join("summary.json").is_file() {
                    let _ = std::fs::remove_dir_all(&dir);
                    eprintln!("compare: {app} {strategy} seed {seed}, {max} steps");
                    let bin = release.join(strategy);
                    let mut cmd = std::process::Command::new(&bin);
                    cmd.args(["--url", &url, "--steps", &max.to_string()])
                        .args(["--seed", &seed.to_string()])
                        .args(["--throttle", &o.throttle])
                        .arg("--out")
                        .arg(&dir);
                    if strategy == "pirltest" {
                        cmd.args(["--progress", "0"]);
                    }
                    crate::run(&mut cmd)?;
                }
                results
                    .entry(strategy.clone())
                    .or_default()
                    .push((seed, RunResult::read(&dir)?));
            }
        }
        let total = results
            .values()
            .flatten()
            .map(|(_, r)| r.functions_total)
            .max()
            .unwrap_or(0);
        writeln!(
            report,
            "## {app}\n\nStart page: {start} of {total} functions, {start_bytes} block bytes.\n"
        )?;
        writeln!(
            report,
            "| strategy | steps | functions | gain | block bytes | block gain | unique exceptions \
             | steps/min |"
        )?;
        writeln!(report, "|---|---|---|---|---|---|---|---|")?;
        let mut gains: BTreeMap<(String, u64), (f64, f64)> = BTreeMap::new();
        for (strategy, runs) in &results {
            for &step in &o.steps {
                let over_seeds = |f: &dyn Fn(&RunResult) -> f64| {
                    median(&runs.iter().map(|(_, r)| f(r)).collect::<Vec<_>>())
                };
                let f = over_seeds(&|r| r.functions_at(step) as f64);
                let b = over_seeds(&|r| r.bytes_at(step) as f64);
                let ex = over_seeds(&|r| r.exceptions_by(step) as f64);
                let spm = over_seeds(&|r| r.steps_per_minute);
                let gain = f - start as f64;
                let block_gain = b - start_bytes as f64;
                gains.insert((strategy.clone(), step), (gain, block_gain));
                writeln!(
                    report,
                    "| {strategy} | {step} | {f:.0} | {gain:.0} | {b:.0} | {block_gain:.0} | \
                     {ex:.0} | {spm:.0} |"
                )?;
            }
        }
        writeln!(report)?;
        for &step in &o.steps {
            if let (Some(p), Some(m)) = (
                gains.get(&("pirltest".to_owned(), step)),
                gains.get(&("monkey".to_owned(), step)),
            ) {
                let ratio = |p: f64, m: f64| if m > 0.0 { p / m } else { f64::INFINITY };
                let r = ratio(p.0, m.0);
                let rb = ratio(p.1, m.1);
                ratios.entry(step).or_default().push(r);
                block_ratios.entry(step).or_default().push(rb);
                writeln!(
                    report,
                    "Gain ratio PIRLTest / Monkey at {step} steps: functions {r:.2}, blocks {rb:.2}  "
                )?;
            }
        }
        if app == "demo" {
            writeln!(
                report,
                "\n| strategy | seed | {} |",
                DEMO_BUGS.map(|b| b.0).join(" | ")
            )?;
            writeln!(report, "|---|---|{}", "---|".repeat(DEMO_BUGS.len()))?;
            for (strategy, runs) in &results {
                for (seed, r) in runs {
                    let cells: Vec<String> = DEMO_BUGS
                        .iter()
                        .map(|(_, kind, needle)| {
                            r.bug_step(*kind, needle)
                                .map_or("–".to_owned(), |s| format!("step {s}"))
                        })
                        .collect();
                    writeln!(report, "| {strategy} | {seed} | {} |", cells.join(" | "))?;
                }
            }
        }
        writeln!(report, "\n![coverage](coverage-{app}.svg)\n")?;
        let folders: Vec<RunFolder> = results
            .values()
            .flatten()
            .map(|(_, r)| r.folder.clone())
            .collect();
        let svg = gui_report::coverage_svg(&folders);
        std::fs::write(o.out.join(format!("coverage-{app}.svg")), svg)?;
        drop(server);
    }
    writeln!(report, "## Across apps\n")?;
    for (step, r) in &ratios {
        writeln!(
            report,
            "Median gain ratio PIRLTest / Monkey at {step} steps over {} apps: functions {:.2}, \
             blocks {:.2}  ",
            r.len(),
            median(r),
            median(&block_ratios[step])
        )?;
    }
    let path = o.out.join("report.md");
    std::fs::write(&path, &report)?;
    println!("{report}");
    println!("written: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args as args;

    #[test]
    fn the_throttle_defaults_to_adat_and_a_bad_one_is_refused_by_name() {
        assert_eq!(parse(&[]).unwrap().throttle, "adat");
        let o = parse(&args(&["--throttle", "fixed:200"])).unwrap();
        assert_eq!(o.throttle, "fixed:200");
        let e = parse(&args(&["--throttle", "sometimes"])).unwrap_err();
        assert!(e.to_string().contains("sometimes"), "{e}");
        let e = parse(&args(&["--pace", "1"])).unwrap_err();
        assert!(e.to_string().contains("--throttle"), "{e}");
    }
}
