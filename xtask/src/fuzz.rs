//! `cargo xtask fuzz`: every cargo-fuzz target of `fuzz/` for a number of executions,
//! with a table of what ran.
//!
//! Options: `--runs N` (1000000 executions per target), `--targets a,b` (all the `[[bin]]`s
//! of `fuzz/Cargo.toml`), `--jobs J` (targets fuzzed at once, 1), `--max-time SECS` (a
//! time cap per target; none by default), `--sanitizer none|address` (none).
//!
//! What it needs it installs: the nightly toolchain (`rustup toolchain install nightly
//! --profile minimal`) and cargo-fuzz (`cargo install cargo-fuzz --locked`). Each target
//! starts from a fresh copy of its committed seeds, `fuzz/corpus/<target>` plus the
//! workspace test fixtures listed in `FIXTURE_SEEDS`, in
//! `target/fuzz-corpus/<target>`, so what libFuzzer adds never lands in the repository.
//! Crashes go to `fuzz/artifacts/<target>/` (ignored by git), libFuzzer's output to
//! `target/fuzz/logs/<target>.log`, the table to `target/fuzz/report.md`.
//!
//! The sanitizer is off by default: the workspace denies `unsafe` code (its one allowed
//! block, in gui-driver, asks for a death signal on child processes and is no parser's
//! business), so what the targets look for are panics (index out of range, overflow, `unwrap` on bad input), which
//! libFuzzer catches without AddressSanitizer, at about twice the speed on this machine.
//! `--sanitizer address` adds memory checking of the dependencies' unsafe code.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result, bail};

const USAGE: &str = "usage: cargo xtask fuzz [--runs N] [--targets a,b] [--jobs J] \
     [--max-time SECS] [--sanitizer none|address]";

/// Seconds one input may take before libFuzzer reports it as a hang.
const INPUT_TIMEOUT_S: u32 = 20;

#[derive(Debug)]
struct Options {
    runs: u64,
    targets: Option<Vec<String>>,
    jobs: usize,
    max_time: Option<u64>,
    sanitizer: String,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        runs: 1_000_000,
        targets: None,
        jobs: 1,
        max_time: None,
        sanitizer: "none".into(),
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        match flag {
            "--runs" => o.runs = value.parse().context("--runs takes a number")?,
            "--targets" => {
                o.targets = Some(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_owned)
                        .collect(),
                )
            }
            "--jobs" => o.jobs = value.parse().context("--jobs takes a number")?,
            "--max-time" => o.max_time = Some(value.parse().context("--max-time takes seconds")?),
            "--sanitizer" => o.sanitizer = value.to_owned(),
            other => bail!("unknown option `{other}`\n{USAGE}"),
        }
    }
    if o.runs == 0 || o.jobs == 0 {
        bail!("--runs and --jobs must be at least 1\n{USAGE}");
    }
    if !["none", "address"].contains(&o.sanitizer.as_str()) {
        bail!("--sanitizer is `none` or `address`\n{USAGE}");
    }
    Ok(o)
}

/// What one target did.
#[derive(Debug)]
struct Outcome {
    target: String,
    executions: u64,
    seconds: f64,
    /// New files in the target's artifact folder: crashes, hangs, out-of-memory inputs.
    artifacts: Vec<PathBuf>,
    /// Set when libFuzzer failed without leaving an artifact (it could not start).
    failure: Option<String>,
}

impl Outcome {
    fn result(&self) -> String {
        if !self.artifacts.is_empty() {
            let names: Vec<String> = self
                .artifacts
                .iter()
                .map(|a| a.display().to_string())
                .collect();
            format!("CRASH: {}", names.join(", "))
        } else if let Some(f) = &self.failure {
            format!("FAILED: {f}")
        } else {
            "no crash".into()
        }
    }

    fn ok(&self) -> bool {
        self.artifacts.is_empty() && self.failure.is_none()
    }
}

pub fn run(rest: &[String]) -> Result<()> {
    let o = parse(rest)?;
    let root = crate::root();
    let fuzz_dir = root.join("fuzz");
    let all = fuzz_targets(&fuzz_dir)?;
    let targets = match &o.targets {
        None => all,
        Some(asked) => {
            let known: BTreeSet<&String> = all.iter().collect();
            if let Some(bad) = asked.iter().find(|t| !known.contains(t)) {
                bail!("no fuzz target `{bad}`; the targets are {}", all.join(", "));
            }
            asked.clone()
        }
    };
    ensure_nightly()?;
    ensure_cargo_fuzz()?;

    let mut build = Command::new("cargo");
    build
        .current_dir(&root)
        .args(["+nightly", "fuzz", "build", "--sanitizer", &o.sanitizer]);
    crate::run(&mut build)?;

    let out = root.join("target/fuzz");
    std::fs::create_dir_all(out.join("logs"))
        .with_context(|| format!("cannot create {}", out.display()))?;
    eprintln!(
        "fuzz: {} target(s), {} executions each, {} at a time",
        targets.len(),
        o.runs,
        o.jobs
    );
    let queue = Mutex::new(targets.iter());
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..o.jobs.min(targets.len()) {
            scope.spawn(|| {
                loop {
                    let Some(target) = queue.lock().expect("queue").next() else {
                        break;
                    };
                    let outcome = fuzz_one(&root, target, &o).unwrap_or_else(|e| Outcome {
                        target: target.clone(),
                        executions: 0,
                        seconds: 0.0,
                        artifacts: vec![],
                        failure: Some(format!("{e:#}")),
                    });
                    eprintln!(
                        "fuzz: {:<18} {:>10} executions in {:>7.1} s ({:>8.0} exec/s): {}",
                        outcome.target,
                        outcome.executions,
                        outcome.seconds,
                        rate(&outcome),
                        outcome.result()
                    );
                    outcomes.lock().expect("outcomes").push(outcome);
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().expect("outcomes");
    outcomes.sort_by_key(|x| targets.iter().position(|t| *t == x.target));

    let report = report(&outcomes, &o);
    let report_path = out.join("report.md");
    std::fs::write(&report_path, &report)
        .with_context(|| format!("cannot write {}", report_path.display()))?;
    println!("{report}");
    eprintln!("fuzz: wrote {}", report_path.display());
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|x| !x.ok())
        .map(|x| format!("{}: {}", x.target, x.result()))
        .collect();
    if !failed.is_empty() {
        bail!("fuzzing found problems:\n{}", failed.join("\n"));
    }
    Ok(())
}

/// The binaries of `fuzz/Cargo.toml`, in file order.
fn fuzz_targets(fuzz_dir: &Path) -> Result<Vec<String>> {
    let path = fuzz_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let manifest: toml::Table = text
        .parse()
        .with_context(|| format!("{} is not TOML", path.display()))?;
    let names: Vec<String> = manifest
        .get("bin")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("name").and_then(toml::Value::as_str))
        .map(str::to_owned)
        .collect();
    if names.is_empty() {
        bail!("{} lists no [[bin]] fuzz targets", path.display());
    }
    Ok(names)
}

/// cargo-fuzz builds with flags only nightly rustc accepts.
fn ensure_nightly() -> Result<()> {
    let list = Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .context("fuzz: rustup is needed to find or install the nightly toolchain")?;
    let listed = String::from_utf8_lossy(&list.stdout)
        .lines()
        .any(|l| l.starts_with("nightly"));
    if !listed {
        eprintln!("fuzz: no nightly toolchain; installing it (minimal profile)");
        crate::run(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]))?;
    }
    Ok(())
}

fn ensure_cargo_fuzz() -> Result<()> {
    let present = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        eprintln!("fuzz: cargo-fuzz is missing; installing it from crates.io");
        crate::run(Command::new("cargo").args(["install", "cargo-fuzz", "--locked"]))?;
    }
    Ok(())
}

/// Test fixtures of the workspace that also seed a target, read where they live rather
/// than copied under `fuzz/corpus`.
const FIXTURE_SEEDS: &[(&str, &str)] = &[
    ("ui_dump", "crates/gui-driver/tests/data/android/home.xml"),
    (
        "ui_dump",
        "crates/gui-model-search/tests/data/android/EditActivity.xml",
    ),
    (
        "ui_dump",
        "crates/gui-model-search/tests/data/android/SettingsActivity.xml",
    ),
    (
        "monkey_log",
        "crates/gui-model-search/tests/data/android/monkey.log",
    ),
    (
        "script",
        "crates/gui-greybox/tests/data/listing1/web/listing1.js",
    ),
    (
        "class_file",
        "crates/gui-greybox/tests/data/fuzz/tableswitch-overflow.class",
    ),
    (
        "screenshot_png",
        "crates/gui-driver/tests/data/android/home-land.png",
    ),
    (
        "screenshot_png",
        "crates/gui-driver/tests/data/android/form.png",
    ),
];

fn fuzz_one(root: &Path, target: &str, o: &Options) -> Result<Outcome> {
    let seeds = root.join("fuzz/corpus").join(target);
    let corpus = root.join("target/fuzz-corpus").join(target);
    if corpus.exists() {
        std::fs::remove_dir_all(&corpus)
            .with_context(|| format!("cannot empty {}", corpus.display()))?;
    }
    std::fs::create_dir_all(&corpus)
        .with_context(|| format!("cannot create {}", corpus.display()))?;
    if seeds.is_dir() {
        for entry in
            std::fs::read_dir(&seeds).with_context(|| format!("cannot list {}", seeds.display()))?
        {
            let entry = entry?;
            if entry.file_type()?.is_file() {
                std::fs::copy(entry.path(), corpus.join(entry.file_name()))?;
            }
        }
    }
    for (_, rel) in FIXTURE_SEEDS.iter().filter(|(t, _)| *t == target) {
        let from = root.join(rel);
        let name = from.file_name().expect("fixture paths name files");
        std::fs::copy(&from, corpus.join(name))
            .with_context(|| format!("cannot copy the seed {}", from.display()))?;
    }
    let artifacts_dir = root.join("fuzz/artifacts").join(target);
    let before = files_in(&artifacts_dir);
    let log_path = root.join("target/fuzz/logs").join(format!("{target}.log"));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("cannot create {}", log_path.display()))?;

    let mut cmd = Command::new("cargo");
    cmd.current_dir(root)
        .args([
            "+nightly",
            "fuzz",
            "run",
            "--sanitizer",
            &o.sanitizer,
            target,
        ])
        .arg(&corpus)
        .arg("--")
        .arg(format!("-runs={}", o.runs))
        .arg(format!("-timeout={INPUT_TIMEOUT_S}"))
        .arg("-print_final_stats=1");
    if let Some(s) = o.max_time {
        cmd.arg(format!("-max_total_time={s}"));
    }
    cmd.stdout(log.try_clone()?).stderr(log);
    let started = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    let seconds = started.elapsed().as_secs_f64();

    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let artifacts: Vec<PathBuf> = files_in(&artifacts_dir)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    let failure = (!status.success() && artifacts.is_empty())
        .then(|| format!("libFuzzer exited with {status}; see {}", log_path.display()));
    Ok(Outcome {
        target: target.to_owned(),
        executions: executed_units(&text),
        seconds,
        artifacts,
        failure,
    })
}

/// `stat::number_of_executed_units`, printed by `-print_final_stats=1`; failing that the
/// count of the last status line (`#1234 ...`).
fn executed_units(log: &str) -> u64 {
    let stat = log.lines().rev().find_map(|l| {
        l.strip_prefix("stat::number_of_executed_units:")
            .and_then(|v| v.trim().parse().ok())
    });
    stat.or_else(|| {
        log.lines().rev().find_map(|l| {
            l.strip_prefix('#')
                .and_then(|r| r.split_whitespace().next())
                .and_then(|n| n.parse().ok())
        })
    })
    .unwrap_or(0)
}

fn files_in(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect()
}

fn rate(x: &Outcome) -> f64 {
    if x.seconds > 0.0 {
        x.executions as f64 / x.seconds
    } else {
        0.0
    }
}

fn report(outcomes: &[Outcome], o: &Options) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# cargo xtask fuzz\n\n{} executions asked per target, sanitizer {}{}; seconds are \
         wall-clock time of `cargo fuzz run` (start-up and seed loading included), {} \
         target(s) at a time.\n",
        o.runs,
        o.sanitizer,
        o.max_time
            .map(|t| format!(", at most {t} s per target"))
            .unwrap_or_default(),
        o.jobs
    );
    let _ = writeln!(s, "| target | executions | seconds | exec/s | result |");
    let _ = writeln!(s, "|---|---:|---:|---:|---|");
    for x in outcomes {
        let _ = writeln!(
            s,
            "| `{}` | {} | {:.0} | {:.0} | {} |",
            x.target,
            x.executions,
            x.seconds,
            rate(x),
            x.result()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_come_from_the_final_stats_or_the_last_status_line() {
        let log = "#2\tINITED cov: 10\n#5000\tNEW cov: 12\nDone 10000 runs in 2 second(s)\n\
                   stat::number_of_executed_units: 10000\nstat::average_exec_per_sec:     5000\n";
        assert_eq!(executed_units(log), 10000);
        assert_eq!(executed_units("#2\tINITED\n#4096\tpulse  cov: 3\n"), 4096);
        assert_eq!(executed_units("nothing"), 0);
    }

    #[test]
    fn unknown_options_and_sanitizers_are_refused() {
        assert!(parse(&["--runs".into(), "0".into()]).is_err());
        assert!(parse(&["--sanitizer".into(), "memory".into()]).is_err());
        let o = parse(&["--targets".into(), "a, b".into()]).unwrap();
        assert_eq!(o.targets, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(o.runs, 1_000_000);
    }
}
