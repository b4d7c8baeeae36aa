//! `cargo xtask suite`: strategies side by side over the corpus (`xtask/corpus.toml`),
//! several seeds each, in real Chromium; the numbers defaults are decided on (split
//! `tune`) and reported on (split `test`).
//!
//! ```text
//! cargo xtask suite [--strategies monkey,widget-random,pirltest-paper,pirltest]
//!                   [--steps 200] [--seeds 1,2] [--apps a,b | --split tune|test]
//!                   [--jobs 2] [--throttle POLICY] [--out DIR] [--results DIR]
//!                   [--rebuild yes] [--run no] [--keep-runs no]
//! ```
//!
//! Strategies:
//! - `monkey`: random events on random pixels (the `monkey` binary);
//! - `widget-random`: a uniform choice among the widgets and actions PIRLTest considers
//!   (`pirltest --preset random`);
//! - `pirltest-paper`: the paper's agent exactly (`pirltest --preset paper`);
//! - `pirltest`: the default preset;
//! - `pirltest:SPEC` and `pirltest-paper:SPEC`: that preset with `--plugins SPEC`, where
//!   SPEC separates plug-ins by `:` (`pirltest:-frontier:-effect-prior` switches two
//!   off), for ablations;
//! - `NAME#LABEL`: strategy NAME run again under its own tag (`pirltest#again`), to measure
//!   the same configuration a second time beside others under the same load;
//! - `greybox` (the grey-box paper's configuration D: event-dependency-guided pairs),
//!   `greybox-blackbox` (its black-box baseline B: every pair of events) and `monkeypp`
//!   (model-driven depth-first search): tools that rip or survey the app before they act,
//!   so they get a wall-clock budget instead of a step count, `--minutes` (default 2, about
//!   what a 200-step run of the others takes here), and run once per app (they draw no
//!   random numbers; the first seed names the run).
//!
//! The out folder (default `target/suite/<split or all>`) holds `runs/<app>/<strategy>-
//! seed<S>-<steps>` (each a usual run folder), `bin/` (the binaries every run of the suite
//! uses, built and copied on the first start, so that a suite resumed after the code
//! changed still compares like with like; `--rebuild yes` replaces them), `suite.json`
//! and `suite.md` (rewritten as each run lands) and `failures.txt`. What each finished run
//! measured goes to `results/<app>/<strategy>-seed<S>-<steps>.json` (`--results DIR`
//! puts them elsewhere): a few hundred bytes per run, so the results of a long suite can
//! be committed and a suite resumed on another machine without its run folders. A run
//! with a result (or a run folder with `summary.json`) is never run again, so a killed
//! suite continues where it stopped; a run that was cut short starts over. `report DIR`
//! renders the suite as one page; `--run no` only rewrites `suite.md` and `suite.json` from
//! the results on record (to summarise another list of strategies, say). `--keep-runs no`
//! removes each run folder once its result is saved: a run's screenshots take about
//! 100 MB, so a few hundred runs fill a disk, while the tables need only the results.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use gui_report::{RunFolder, RunResult, Suite, SuiteRun, SuiteSettings};

use crate::corpus::{self, App, Split};

const USAGE: &str = "usage: cargo xtask suite [--strategies a,b] [--steps N] [--seeds 1,2] \
                     [--apps a,b | --split tune|test] [--jobs N] [--throttle POLICY] \
                     [--minutes M] [--out DIR] [--results DIR] [--rebuild yes] \
                     [--run no] [--keep-runs no]";

/// The strategies a suite runs by default: the two baselines, the paper's agent and the
/// default one.
pub const DEFAULT_STRATEGIES: [&str; 4] = ["monkey", "widget-random", "pirltest-paper", "pirltest"];

#[derive(Debug, Clone, PartialEq)]
struct Options {
    strategies: Vec<String>,
    steps: u64,
    seeds: Vec<u64>,
    apps: Option<Vec<String>>,
    split: Option<Split>,
    jobs: usize,
    throttle: Option<String>,
    out: Option<PathBuf>,
    results: Option<PathBuf>,
    rebuild: bool,
    /// `--run no`: summarise the results on record, run nothing.
    run: bool,
    /// Wall-clock budget of each run of a time-bounded strategy.
    minutes: f64,
    /// `--keep-runs no`: remove each run folder once its result is saved.
    keep_runs: bool,
}

fn list(v: &str) -> Vec<String> {
    v.split(',')
        .map(|x| x.trim().to_owned())
        .filter(|x| !x.is_empty())
        .collect()
}

fn yes_no(flag: &str, value: &str) -> Result<bool> {
    match value {
        "yes" | "true" => Ok(true),
        "no" | "false" => Ok(false),
        _ => bail!("{flag} takes yes or no, not `{value}`"),
    }
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        strategies: DEFAULT_STRATEGIES.map(str::to_owned).to_vec(),
        steps: 200,
        seeds: vec![1, 2],
        apps: None,
        split: None,
        jobs: 2,
        throttle: None,
        out: None,
        results: None,
        rebuild: false,
        run: true,
        minutes: 2.0,
        keep_runs: true,
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        match flag {
            "--strategies" => o.strategies = list(value),
            "--steps" => {
                o.steps = value
                    .parse()
                    .with_context(|| format!("--steps `{value}` is not a number"))?
            }
            "--seeds" => {
                o.seeds = list(value)
                    .iter()
                    .map(|s| {
                        s.parse()
                            .with_context(|| format!("--seeds: `{s}` is not a number"))
                    })
                    .collect::<Result<_>>()?
            }
            "--apps" => o.apps = Some(list(value)),
            "--split" => {
                o.split = Some(
                    value
                        .parse()
                        .map_err(|e| anyhow::anyhow!("--split `{value}`: {e}"))?,
                )
            }
            "--jobs" => {
                o.jobs = value
                    .parse()
                    .with_context(|| format!("--jobs `{value}` is not a number"))?
            }
            "--throttle" => o.throttle = Some(value.trim().to_owned()),
            "--out" => o.out = Some(PathBuf::from(value)),
            "--results" => o.results = Some(PathBuf::from(value)),
            "--minutes" => {
                o.minutes = value
                    .parse()
                    .ok()
                    .filter(|m: &f64| m.is_finite() && *m > 0.0)
                    .with_context(|| format!("--minutes `{value}` is not a positive number"))?
            }
            "--rebuild" => o.rebuild = yes_no("--rebuild", value)?,
            "--run" => o.run = yes_no("--run", value)?,
            "--keep-runs" => o.keep_runs = yes_no("--keep-runs", value)?,
            other => bail!("unknown option {other}\n{USAGE}"),
        }
    }
    if o.steps == 0 || o.seeds.is_empty() || o.strategies.is_empty() || o.jobs == 0 {
        bail!("--steps and --jobs must be above 0, --seeds and --strategies need a value");
    }
    if let Some(t) = &o.throttle {
        t.parse::<gui_explore::ThrottleSpec>()
            .map_err(|e| anyhow::anyhow!("--throttle `{t}`: {e}"))?;
    }
    for s in &o.strategies {
        command_of(s)?;
    }
    Ok(o)
}

/// How long a run of a strategy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// `--steps N --seed S`, once per seed.
    Steps,
    /// `--minutes M`, once per app.
    Minutes,
}

/// The binaries a suite may run.
const BINARIES: [&str; 4] = ["pirltest", "monkey", "greybox", "monkeypp"];

/// The binary and the arguments that run strategy `name`, and how its runs are bounded.
fn command_of(name: &str) -> Result<(&'static str, Vec<String>, Bound)> {
    let name = match name.split_once('#') {
        Some((_, "")) => bail!("strategy `{name}`: no label after `#`"),
        Some((strategy, _)) => strategy,
        None => name,
    };
    let (base, plugins) = match name.split_once(':') {
        Some((base, spec)) => (base, Some(spec.replace(':', ","))),
        None => (name, None),
    };
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let (bin, mut args, bound): (&str, Vec<String>, Bound) = match base {
        "monkey" => ("monkey", Vec::new(), Bound::Steps),
        "widget-random" => ("pirltest", words(&["--preset", "random"]), Bound::Steps),
        "pirltest-paper" => ("pirltest", words(&["--preset", "paper"]), Bound::Steps),
        "pirltest" => ("pirltest", words(&["--preset", "default"]), Bound::Steps),
        "greybox" => (
            "greybox",
            words(&["--mode", "greybox", "--len", "2", "--top", "inf"]),
            Bound::Minutes,
        ),
        "greybox-blackbox" => (
            "greybox",
            words(&["--mode", "blackbox", "--len", "2"]),
            Bound::Minutes,
        ),
        "monkeypp" => ("monkeypp", Vec::new(), Bound::Minutes),
        _ => bail!(
            "unknown strategy `{name}`: monkey, widget-random, pirltest-paper, pirltest, \
             greybox, greybox-blackbox, monkeypp, or pirltest:SPEC / pirltest-paper:SPEC with \
             plug-ins separated by `:`"
        ),
    };
    if let Some(spec) = plugins {
        if bin != "pirltest" || base == "widget-random" {
            bail!("strategy `{name}`: only pirltest and pirltest-paper take plug-ins");
        }
        if spec.is_empty() {
            bail!("strategy `{name}`: no plug-ins after `:`");
        }
        args.extend(["--plugins".into(), spec]);
    }
    if bin == "pirltest" {
        args.extend(["--progress".into(), "0".into()]);
    }
    Ok((bin, args, bound))
}

/// A strategy's name as a folder name.
fn tag(strategy: &str) -> String {
    strategy
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            '+' => 'p',
            _ => '~',
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Job {
    app: App,
    strategy: String,
    seed: u64,
    /// The run folder.
    dir: PathBuf,
    /// What the run measured, once it has finished.
    result: PathBuf,
}

impl Job {
    /// The run's result: its file, else measured from a finished run folder (and saved).
    fn result(&self) -> Result<Option<RunResult>> {
        if self.result.is_file() {
            let text = std::fs::read_to_string(&self.result)
                .with_context(|| format!("reading {}", self.result.display()))?;
            let r = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a run result", self.result.display()))?;
            return Ok(Some(r));
        }
        if !self.dir.join("summary.json").is_file() {
            return Ok(None);
        }
        let r = RunResult::of(&RunFolder::load(&self.dir)?);
        if let Some(parent) = self.result.parent() {
            std::fs::create_dir_all(parent)?;
        }
        gui_explore::write_atomic(&self.result, &serde_json::to_vec(&r)?)?;
        Ok(Some(r))
    }
}

/// What a worker says when a run ends.
struct Done {
    job: Job,
    took: Duration,
    outcome: Result<()>,
}

pub fn run(rest: &[String]) -> Result<()> {
    if let Some(outcome) = crate::in_release("suite", rest) {
        return outcome;
    }
    let o = parse(rest)?;
    let all = corpus::load()?;
    let apps = corpus::select(&all, o.apps.as_deref(), o.split)?;
    if apps.is_empty() {
        bail!("no app selected");
    }
    let out = o.out.clone().unwrap_or_else(|| {
        crate::root()
            .join("target/suite")
            .join(match (&o.apps, o.split) {
                (Some(_), _) => "apps".to_owned(),
                (None, Some(s)) => s.to_string(),
                (None, None) => "all".to_owned(),
            })
    });
    std::fs::create_dir_all(out.join("runs"))
        .with_context(|| format!("creating {}", out.display()))?;
    let results = o.results.clone().unwrap_or_else(|| out.join("results"));
    let mut jobs = VecDeque::new();
    for app in &apps {
        for strategy in &o.strategies {
            let (_, _, bound) = command_of(strategy)?;
            for &seed in &o.seeds {
                if bound == Bound::Minutes && seed != o.seeds[0] {
                    continue;
                }
                let name = match bound {
                    Bound::Steps => format!("{}-seed{seed}-{}", tag(strategy), o.steps),
                    Bound::Minutes => format!("{}-{}min", tag(strategy), o.minutes),
                };
                jobs.push_back(Job {
                    app: app.clone(),
                    strategy: strategy.clone(),
                    seed,
                    dir: out.join("runs").join(&app.name).join(&name),
                    result: results.join(&app.name).join(format!("{name}.json")),
                });
            }
        }
    }
    let all_jobs: Vec<Job> = jobs.iter().cloned().collect();
    let settings = SuiteSettings {
        strategies: o.strategies.clone(),
        seeds: o.seeds.clone(),
        steps: o.steps,
        throttle: o.throttle.clone().unwrap_or_else(|| "200".to_owned()),
        jobs: o.jobs,
        minutes: o
            .strategies
            .iter()
            .any(|s| matches!(command_of(s), Ok((_, _, Bound::Minutes))))
            .then_some(o.minutes),
    };
    let mut left = VecDeque::new();
    for j in jobs {
        if j.result()?.is_none() {
            left.push_back(j);
        }
    }
    let jobs = left;
    let todo = jobs.len();
    eprintln!(
        "suite: {} apps × {} strategies × {} seeds = {} runs, {} done before, {todo} to run, \
         {} at a time; folder {}",
        apps.len(),
        o.strategies.len(),
        o.seeds.len(),
        all_jobs.len(),
        all_jobs.len() - todo,
        o.jobs,
        out.display()
    );
    write_summary(&out, &settings, &all_jobs)?;
    if !o.run {
        eprintln!("suite: --run no: summarised the results on record");
        return Ok(());
    }
    crate::setup()?;
    let bin = binaries(&out, o.rebuild)?;
    let queue = Arc::new(Mutex::new(jobs));
    let (tx, rx) = mpsc::channel::<Done>();
    let mut workers = Vec::new();
    for _ in 0..o.jobs.min(todo.max(1)) {
        let queue = Arc::clone(&queue);
        let tx = tx.clone();
        let bin = bin.clone();
        let steps = o.steps;
        let minutes = o.minutes;
        let throttle = o.throttle.clone();
        workers.push(std::thread::spawn(move || {
            loop {
                let Some(job) = queue.lock().expect("queue").pop_front() else {
                    break;
                };
                eprintln!(
                    "suite: start {} {} seed {}",
                    job.app.name, job.strategy, job.seed
                );
                let started = Instant::now();
                let outcome = run_one(&bin, &job, steps, minutes, throttle.as_deref());
                if tx
                    .send(Done {
                        job,
                        took: started.elapsed(),
                        outcome,
                    })
                    .is_err()
                {
                    break;
                }
            }
        }));
    }
    drop(tx);
    let started = Instant::now();
    let (mut finished, mut failed) = (0usize, 0usize);
    let mut spent = Duration::ZERO;
    for done in rx {
        finished += 1;
        spent += done.took;
        let left = todo - finished;
        // Runs at a time share the wall clock: remaining runs × mean run time ÷ jobs.
        let eta = spent.as_secs_f64() / finished as f64 * left as f64 / o.jobs as f64;
        let what = match &done.outcome {
            Ok(()) => "done".to_owned(),
            Err(e) => {
                failed += 1;
                let line = format!(
                    "{} {} seed {}: {e:#}\n",
                    done.job.app.name, done.job.strategy, done.job.seed
                );
                append(&out.join("failures.txt"), &line)?;
                format!("FAILED ({e:#})")
            }
        };
        eprintln!(
            "suite: [{finished}/{todo}] {} {} seed {} {what} in {:.0} s · elapsed {:.0} min · \
             ETA {:.0} min",
            done.job.app.name,
            done.job.strategy,
            done.job.seed,
            done.took.as_secs_f64(),
            started.elapsed().as_secs_f64() / 60.0,
            eta / 60.0
        );
        write_summary(&out, &settings, &all_jobs)?;
        if !o.keep_runs && done.job.result.is_file() {
            drop_run_folder(&done.job.dir)?;
        }
    }
    for w in workers {
        let _ = w.join();
    }
    let suite = write_summary(&out, &settings, &all_jobs)?;
    println!("{}", suite.markdown());
    println!(
        "written: {} and {}; `cargo run --release --bin report -- {}` renders the page",
        out.join("suite.md").display(),
        out.join("suite.json").display(),
        out.display()
    );
    if failed > 0 {
        bail!(
            "{failed} run(s) failed (listed in {}); run the suite again to retry them",
            out.join("failures.txt").display()
        );
    }
    Ok(())
}

/// Removes a finished run's folder (`--keep-runs no`): its result is saved, and the
/// screenshots of a few hundred runs would fill the disk.
fn drop_run_folder(dir: &Path) -> Result<()> {
    std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))
}

/// Builds the release binaries the suite needs and copies them into `out/bin` the first
/// time (or with `rebuild`); returns that folder.
fn binaries(out: &Path, rebuild: bool) -> Result<PathBuf> {
    let bin = out.join("bin");
    let missing: Vec<&str> = BINARIES
        .into_iter()
        .filter(|n| rebuild || !bin.join(n).is_file())
        .collect();
    if missing.is_empty() {
        eprintln!(
            "suite: using the binaries in {} (built when this suite began; --rebuild yes \
             replaces them)",
            bin.display()
        );
        return Ok(bin);
    }
    // Only what is missing: the runs already made keep being compared with runs of the
    // same binaries.
    let release = crate::build_release(&missing)?;
    std::fs::create_dir_all(&bin)?;
    for n in &missing {
        let from = release.join(n);
        let to = bin.join(n);
        // Copy under another name first, so a killed copy never leaves half a binary.
        let part = bin.join(format!("{n}.part"));
        std::fs::copy(&from, &part)
            .with_context(|| format!("copying {} to {}", from.display(), part.display()))?;
        std::fs::rename(&part, &to)?;
    }
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(crate::root())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    append(
        &bin.join("built-from.txt"),
        &format!(
            "{}: commit {head} (with the working tree's changes at the time)\n",
            missing.join(", ")
        ),
    )?;
    Ok(bin)
}

/// Runs one strategy on one app into `job.dir`, its output in `job.dir` + `.log`.
fn run_one(bin: &Path, job: &Job, steps: u64, minutes: f64, throttle: Option<&str>) -> Result<()> {
    let _ = std::fs::remove_dir_all(&job.dir);
    if let Some(parent) = job.dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let server = corpus::serve(&job.app)?;
    let (name, args, bound) = command_of(&job.strategy)?;
    let log_path = job.dir.with_extension("log");
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let mut cmd = Command::new(bin.join(name));
    cmd.args(["--url", &server.url()]);
    match bound {
        Bound::Steps => cmd
            .args(["--steps", &steps.to_string()])
            .args(["--seed", &job.seed.to_string()]),
        Bound::Minutes => cmd.args(["--minutes", &minutes.to_string()]),
    };
    cmd.arg("--out")
        .arg(&job.dir)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    if let (Some(t), Bound::Steps) = (throttle, bound) {
        cmd.args(["--throttle", t]);
    }
    if job.app.settle_ms.is_some() {
        cmd.args(["--settle", &format!("{}", job.app.settle().as_secs_f64())]);
    }
    let status = cmd
        .status()
        .with_context(|| format!("starting {}", bin.join(name).display()))?;
    drop(server);
    if !job.dir.join("summary.json").is_file() {
        bail!(
            "{name} exited with {status} without finishing the run; see {}",
            log_path.display()
        );
    }
    Ok(())
}

/// Reads every finished run, writes `suite.json` and `suite.md` (atomically) and returns
/// the summary.
fn write_summary(out: &Path, settings: &SuiteSettings, jobs: &[Job]) -> Result<Suite> {
    let mut runs = Vec::new();
    let mut missing = 0;
    for j in jobs {
        let Some(result) = j.result()? else {
            missing += 1;
            continue;
        };
        runs.push(SuiteRun {
            app: j.app.name.clone(),
            split: j.app.split.to_string(),
            kind: j.app.kind.clone(),
            strategy: j.strategy.clone(),
            seed: j.seed,
            result,
        });
    }
    let suite = Suite::summarise(settings.clone(), &runs, missing);
    gui_explore::write_atomic(&out.join("suite.json"), &serde_json::to_vec_pretty(&suite)?)?;
    gui_explore::write_atomic(&out.join("suite.md"), suite.markdown().as_bytes())?;
    Ok(suite)
}

fn append(path: &Path, line: &str) -> Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.write_all(line.as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args as args;

    #[test]
    fn defaults_are_the_four_strategies_at_200_steps_two_seeds_two_jobs() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.strategies, DEFAULT_STRATEGIES.map(str::to_owned).to_vec());
        assert_eq!(
            (o.steps, o.seeds.as_slice(), o.jobs),
            (200, &[1u64, 2][..], 2)
        );
        assert_eq!((o.apps, o.split, o.throttle), (None, None, None));
        assert_eq!((o.out, o.results, o.rebuild), (None, None, false));
        assert!(o.run && o.keep_runs);
        let o = parse(&args(&["--keep-runs", "no"])).unwrap();
        assert!(!o.keep_runs);
        assert!(parse(&args(&["--keep-runs", "maybe"])).is_err());
    }

    #[test]
    fn strategies_map_to_binaries_and_presets() {
        assert_eq!(command_of("monkey").unwrap().0, "monkey");
        let (bin, a, bound) = command_of("greybox").unwrap();
        assert_eq!((bin, bound), ("greybox", Bound::Minutes));
        assert!(a.windows(2).any(|w| w == ["--mode", "greybox"]), "{a:?}");
        let (_, a, _) = command_of("greybox-blackbox").unwrap();
        assert!(a.windows(2).any(|w| w == ["--mode", "blackbox"]), "{a:?}");
        assert_eq!(command_of("monkeypp").unwrap().2, Bound::Minutes);
        let (bin, a, bound) = command_of("widget-random").unwrap();
        assert_eq!(bound, Bound::Steps);
        assert_eq!(bin, "pirltest");
        assert!(a.windows(2).any(|w| w == ["--preset", "random"]), "{a:?}");
        let (_, a, _) = command_of("pirltest-paper").unwrap();
        assert!(a.windows(2).any(|w| w == ["--preset", "paper"]), "{a:?}");
        let (_, a, _) = command_of("pirltest:-frontier:-effect-prior").unwrap();
        assert!(a.windows(2).any(|w| w == ["--preset", "default"]), "{a:?}");
        assert!(
            a.windows(2)
                .any(|w| w == ["--plugins", "-frontier,-effect-prior"]),
            "{a:?}"
        );
        assert_eq!(
            command_of("pirltest:-frontier#again").unwrap().1,
            command_of("pirltest:-frontier").unwrap().1
        );
        assert_eq!(tag("pirltest#again"), "pirltest~again");
        assert!(command_of("pirltest#").is_err());
    }

    #[test]
    fn bad_options_are_refused_by_name() {
        let e = parse(&args(&["--strategies", "monkey,chimp"])).unwrap_err();
        assert!(e.to_string().contains("chimp"), "{e}");
        let e = command_of("monkey:-frontier").unwrap_err();
        assert!(e.to_string().contains("plug-ins"), "{e}");
        let e = parse(&args(&["--split", "train"])).unwrap_err();
        assert!(e.to_string().contains("train"), "{e}");
        let e = parse(&args(&["--throttle", "sometimes"])).unwrap_err();
        assert!(e.to_string().contains("sometimes"), "{e}");
        let e = parse(&args(&["--minutes", "-2"])).unwrap_err();
        assert!(e.to_string().contains("--minutes"), "{e}");
        let e = parse(&args(&["--run", "later"])).unwrap_err();
        assert!(e.to_string().contains("--run"), "{e}");
        assert!(!parse(&args(&["--run", "no"])).unwrap().run);
        let e = parse(&args(&["--jobs", "0"])).unwrap_err();
        assert!(e.to_string().contains("--jobs"), "{e}");
        let e = parse(&args(&["--pace", "1"])).unwrap_err();
        assert!(e.to_string().contains("--pace"), "{e}");
    }

    #[test]
    fn a_saved_result_counts_as_done_and_a_bad_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let app = corpus::load().unwrap().remove(0);
        let job = Job {
            app,
            strategy: "monkey".into(),
            seed: 1,
            dir: dir.path().join("run"),
            result: dir.path().join("results/a/monkey-seed1-200.json"),
        };
        assert!(job.result().unwrap().is_none(), "no run folder, no result");
        let saved = RunResult {
            steps: 200,
            function_gain: 12.0,
            byte_gain: 345.0,
            functions: 99.0,
            signals: 1.0,
            hangs: 0.0,
            crashes: 0.0,
            steps_per_minute: 150.0,
            agent_share: 0.05,
            curve: vec![(1, 0.0), (200, 12.0)],
        };
        std::fs::create_dir_all(job.result.parent().unwrap()).unwrap();
        std::fs::write(&job.result, serde_json::to_vec(&saved).unwrap()).unwrap();
        assert_eq!(job.result().unwrap(), Some(saved));
        std::fs::write(&job.result, "{").unwrap();
        let e = format!("{:#}", job.result().unwrap_err());
        assert!(e.contains("monkey-seed1-200.json"), "{e}");
    }

    #[test]
    fn strategy_tags_are_folder_names() {
        assert_eq!(
            tag("pirltest:-frontier:+modal"),
            "pirltest~-frontier~pmodal"
        );
        assert_eq!(tag("widget-random"), "widget-random");
    }
}
