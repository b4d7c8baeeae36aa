//! `cargo xtask adat-bench`: throttle policies side by side on the demo app, after the AdaT
//! paper's RQ2 and RQ3.
//!
//! RQ2 (bug replay): the step sequences of four seeded demo bugs (A, B, D and E, see
//! `examples/apps/demo/README.md`) are recorded once with a generous 1500 ms wait, then
//! replayed by the `replay` binary with each policy, `--reps` times, each on a fresh
//! Chromium and server. Per policy: bugs reproduced, and the replays' wall time (the run
//! folders' `duration_ms`: actions, waits, screenshots and coverage; not the browser
//! start, which is the same for all) against `fixed:1000`.
//!
//! RQ3 (exploration): `monkey` and `pirltest` explore the demo app for `--explore-steps`
//! steps with `fixed:200`, `fixed:1000`, `consecutive` and `adat`. Per run: functions
//! covered and distinct screens per minute (a screen is its 64-bit difference hash; the
//! same for both strategies), and for `pirltest` the pages its agent found.
//!
//! Writes `target/adat-bench/report.md` (and the run folders beside it) and prints it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use gui_core::{Action, ActionKind, ActionParam, Point};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, StaticServer};
use gui_explore::{ExploreConfig, FixedThrottle, RunRecorder, Scripted, explore};

const USAGE: &str = "usage: cargo xtask adat-bench [--reps N] [--policies P,P,...] \
     [--explore-steps N (0: skip RQ3)] [--explore-policies P,P,...] [--out DIR]";

struct Options {
    reps: u32,
    policies: Vec<String>,
    explore_steps: u64,
    explore_policies: Vec<String>,
    out: PathBuf,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        reps: 3,
        policies: [
            "fixed:200",
            "fixed:400",
            "fixed:600",
            "fixed:800",
            "fixed:1000",
            "consecutive",
            "adat",
        ]
        .map(str::to_owned)
        .to_vec(),
        explore_steps: 100,
        explore_policies: ["fixed:200", "fixed:1000", "consecutive", "adat"]
            .map(str::to_owned)
            .to_vec(),
        out: crate::root().join("target/adat-bench"),
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        let list = |v: &str| v.split(',').map(str::to_owned).collect::<Vec<_>>();
        match flag {
            "--reps" => o.reps = value.parse().context("--reps")?,
            "--policies" => o.policies = list(value),
            "--explore-steps" => o.explore_steps = value.parse().context("--explore-steps")?,
            "--explore-policies" => o.explore_policies = list(value),
            "--out" => o.out = PathBuf::from(value),
            other => bail!("unknown option `{other}`\n{USAGE}"),
        }
    }
    if o.reps == 0 || o.policies.is_empty() {
        bail!("--reps and --policies must not be empty\n{USAGE}");
    }
    Ok(o)
}

/// A seeded demo bug: its name, the text its signal key contains, and its steps.
struct Bug {
    name: &'static str,
    needle: &'static str,
    actions: Vec<Action>,
}

fn click(p: Point) -> Action {
    Action::at(ActionKind::Click, p)
}

/// The steps of bugs A, B, D and E, with element centres read from the rendered demo.
fn bug_scripts(url: &str) -> Result<Vec<Bug>> {
    let mut d = ChromiumDevice::launch(url, ChromiumConfig::default())
        .context("starting Chromium (cargo xtask setup installs it)")?;
    let center = |d: &mut ChromiumDevice, selector: &str| -> Result<Point> {
        Ok(d.element_rect(selector)?
            .with_context(|| format!("{selector} is not on the demo page"))?
            .center())
    };
    let visit = |d: &mut ChromiumDevice, nav: Point| -> Result<()> {
        d.perform(&click(nav))?;
        // Longer than every load of the demo (the feed's 700 ms).
        std::thread::sleep(Duration::from_millis(1500));
        Ok(())
    };
    let navs: BTreeMap<&str, Point> = ["list", "cart", "form", "feed"]
        .into_iter()
        .map(|r| Ok((r, center(&mut d, &format!("#nav-{r}"))?)))
        .collect::<Result<_>>()?;
    // The nav buttons are on the home screen only; each visit goes back there.
    let centers = |d: &mut ChromiumDevice, nav: &str, selectors: &[&str]| -> Result<Vec<Point>> {
        visit(d, navs[nav])?;
        let found = selectors
            .iter()
            .map(|s| center(d, s))
            .collect::<Result<Vec<_>>>()?;
        let home = center(d, "#back-home")?;
        visit(d, home)?;
        Ok(found)
    };
    let list = centers(
        &mut d,
        "list",
        &["#list-select-all", "#list-archive", "#list-undo"],
    )?;
    let cart = centers(&mut d, "cart", &["#cart-coupon", "#cart-apply"])?;
    // The coupon's status line moves Checkout down: read it after applying one.
    visit(&mut d, navs["cart"])?;
    let mut typed = Action::at(ActionKind::Input, cart[0]);
    typed.param = Some(ActionParam::Text("save10".into()));
    d.perform(&typed)?;
    d.perform(&click(cart[1]))?;
    std::thread::sleep(Duration::from_millis(500));
    let checkout = center(&mut d, "#cart-checkout")?;
    let home = center(&mut d, "#back-home")?;
    visit(&mut d, home)?;
    // Submit is below the fold at 1280x800: Enter in the email field submits the form.
    let email = centers(&mut d, "form", &["#form-email"])?[0];
    let claim = centers(&mut d, "feed", &["#feed-claim"])?[0];
    let (all, archive, undo) = (list[0], list[1], list[2]);
    let apply = cart[1];
    Ok(vec![
        Bug {
            name: "A",
            needle: "reading 'length'",
            actions: vec![click(navs["list"]), click(all), click(archive), click(undo)],
        },
        Bug {
            name: "B",
            needle: "reading 'percent'",
            actions: vec![click(navs["cart"]), typed, click(apply), click(checkout)],
        },
        Bug {
            name: "D",
            needle: "invalid email",
            actions: vec![click(navs["form"]), {
                let mut a = Action::at(ActionKind::Input, email);
                a.param = Some(ActionParam::Text("not-an-email\n".into()));
                a
            }],
        },
        Bug {
            name: "E",
            needle: "reading 'code'",
            actions: vec![click(navs["feed"]), click(claim)],
        },
    ])
}

/// Records a bug's steps with a 1500 ms wait and checks that the bug shows.
fn record_trace(url: &str, bug: &Bug, dir: &Path) -> Result<()> {
    if dir.join("summary.json").is_file() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(dir);
    let mut device = ChromiumDevice::launch(url, ChromiumConfig::default())?;
    let mut recorder = RunRecorder::create(
        dir,
        &serde_json::json!({"strategy": "scripted", "bug": bug.name}),
    )?;
    let summary = explore(
        &mut device,
        &mut Scripted::new(bug.actions.clone()),
        &mut FixedThrottle::ms(1500),
        &mut recorder,
        &ExploreConfig {
            steps: Some(bug.actions.len() as u64),
            ..ExploreConfig::default()
        },
    )?;
    if !summary.signal_counts.keys().any(|k| k.contains(bug.needle)) {
        bail!(
            "bug {}: its steps did not show `{}` even with 1500 ms waits: {:?}",
            bug.name,
            bug.needle,
            summary.signal_counts
        );
    }
    Ok(())
}

fn summary_of(dir: &Path) -> Result<serde_json::Value> {
    let path = dir.join("summary.json");
    serde_json::from_slice(&std::fs::read(&path).with_context(|| path.display().to_string())?)
        .with_context(|| path.display().to_string())
}

/// A 64-bit difference hash: 9x8 gray cells, one bit per horizontal neighbour pair.
fn dhash(path: &Path) -> Result<u64> {
    let img = image::open(path)
        .with_context(|| path.display().to_string())?
        .to_luma8();
    let small = image::imageops::thumbnail(&img, 9, 8);
    let mut h = 0u64;
    for y in 0..8 {
        for x in 0..8 {
            h = (h << 1) | u64::from(small.get_pixel(x, y)[0] > small.get_pixel(x + 1, y)[0]);
        }
    }
    Ok(h)
}

pub fn run(rest: &[String]) -> Result<()> {
    let o = parse(rest)?;
    crate::setup()?;
    let release = crate::build_release(&["replay", "monkey", "pirltest"])?;
    let bin = |name: &str| release.join(name);
    std::fs::create_dir_all(&o.out)?;
    let mut report = String::new();

    // RQ2: replaying the bugs' steps.
    let server = StaticServer::demo()?;
    let url = server.url();
    let bugs = bug_scripts(&url)?;
    for bug in &bugs {
        record_trace(&url, bug, &o.out.join("traces").join(bug.name))?;
    }
    writeln!(
        report,
        "# Throttle policies on the demo app\n\n## Replaying the steps of seeded bugs (RQ2)\n\n\
         Bugs {}; {} replays each, Chromium 1280x800. Time: the replays' run time (actions, \
         waits, screenshots, coverage), summed over bugs, median over repetitions.\n",
        bugs.iter().map(|b| b.name).collect::<Vec<_>>().join(", "),
        o.reps
    )?;
    writeln!(
        report,
        "| policy | reproduced | {} | time (s) | vs fixed:1000 |",
        bugs.iter()
            .map(|b| format!("bug {}", b.name))
            .collect::<Vec<_>>()
            .join(" | ")
    )?;
    writeln!(report, "|---|---|{}---|---|", "---|".repeat(bugs.len()))?;
    let mut rows = Vec::new();
    for policy in &o.policies {
        let mut found: BTreeMap<&str, u32> = BTreeMap::new();
        let mut times = Vec::new();
        for rep in 0..o.reps {
            let mut total_ms = 0.0;
            for bug in &bugs {
                let dir = o.out.join("replays").join(format!(
                    "{}-{}-rep{rep}",
                    policy.replace(':', "_"),
                    bug.name
                ));
                if !dir.join("summary.json").is_file() {
                    let _ = std::fs::remove_dir_all(&dir);
                    eprintln!(
                        "adat-bench: bug {} with {policy}, repetition {rep}",
                        bug.name
                    );
                    let out = std::process::Command::new(bin("replay"))
                        .arg(o.out.join("traces").join(bug.name))
                        .args(["--throttle", policy])
                        .arg("--out")
                        .arg(&dir)
                        .output()
                        .context("running replay")?;
                    if out.status.code() == Some(2) {
                        bail!(
                            "replay with {policy} failed: {}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                    }
                }
                let summary = summary_of(&dir)?;
                total_ms += summary["duration_ms"].as_f64().unwrap_or(0.0);
                let shown = summary["signal_counts"]
                    .as_object()
                    .is_some_and(|m| m.keys().any(|k| k.contains(bug.needle)));
                *found.entry(bug.name).or_default() += u32::from(shown);
            }
            times.push(total_ms / 1000.0);
        }
        rows.push((policy.clone(), found, crate::median(&times)));
    }
    let reference = rows.iter().find(|r| r.0 == "fixed:1000").map(|r| r.2);
    for (policy, found, time) in &rows {
        let total: u32 = found.values().sum();
        let per_bug: Vec<String> = bugs
            .iter()
            .map(|b| format!("{}/{}", found.get(b.name).copied().unwrap_or(0), o.reps))
            .collect();
        let ratio = reference.map_or("".to_owned(), |r| format!("{:.2}", time / r));
        writeln!(
            report,
            "| {policy} | {total}/{} | {} | {time:.2} | {ratio} |",
            o.reps as usize * bugs.len(),
            per_bug.join(" | ")
        )?;
    }
    drop(server);

    // RQ3: exploring with each policy.
    if o.explore_steps > 0 {
        writeln!(
            report,
            "\n## Exploring the demo app (RQ3)\n\n{} steps, seed 1, Chromium 1280x800. Screens: \
             distinct 64-bit difference hashes of the step screenshots.\n",
            o.explore_steps
        )?;
        writeln!(
            report,
            "| strategy | policy | minutes | functions | functions/min | screens | screens/min | agent pages |"
        )?;
        writeln!(report, "|---|---|---|---|---|---|---|---|")?;
        for strategy in ["monkey", "pirltest"] {
            for policy in &o.explore_policies {
                let dir = o.out.join("explore").join(format!(
                    "{strategy}-{}-{}",
                    policy.replace(':', "_"),
                    o.explore_steps
                ));
                if !dir.join("summary.json").is_file() {
                    let _ = std::fs::remove_dir_all(&dir);
                    eprintln!("adat-bench: {strategy} with {policy}");
                    let mut cmd = std::process::Command::new(bin(strategy));
                    cmd.args(["--steps", &o.explore_steps.to_string(), "--seed", "1"])
                        .args(["--throttle", policy])
                        .arg("--out")
                        .arg(&dir);
                    crate::run(&mut cmd)?;
                }
                let summary = summary_of(&dir)?;
                let minutes = summary["duration_ms"].as_f64().unwrap_or(0.0) / 60_000.0;
                let functions = summary["coverage"]["functions_covered"]
                    .as_u64()
                    .unwrap_or(0);
                let mut screens = BTreeSet::new();
                for entry in std::fs::read_dir(dir.join("screenshots"))? {
                    screens.insert(dhash(&entry?.path())?);
                }
                let pages = std::fs::read(dir.join("agent.json"))
                    .ok()
                    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                    .and_then(|v| v["stats"]["pages"].as_u64())
                    .map_or(String::new(), |p| p.to_string());
                let per_min = |x: f64| if minutes > 0.0 { x / minutes } else { 0.0 };
                writeln!(
                    report,
                    "| {strategy} | {policy} | {minutes:.2} | {functions} | {:.1} | {} | {:.1} | {pages} |",
                    per_min(functions as f64),
                    screens.len(),
                    per_min(screens.len() as f64)
                )?;
            }
        }
    }
    let path = o.out.join("report.md");
    std::fs::write(&path, &report)?;
    println!("{report}\nwritten to {}", path.display());
    Ok(())
}

const TRAIN_USAGE: &str = "usage: cargo xtask adat-train [--data DIR] [--seed N] [--epochs N] \
     [--test-app APP]... [--synthetic N] [--learning-rate R] [--min-change S] \
     [--archs mobilenet,cnn3] [--out MODEL.safetensors]";

/// The apps `adat-train` holds out unless told otherwise: the two recorded apps that look
/// least like the others (a JSON tree editor with menus, a code editor).
const TEST_APPS: &[&str] = &["jsoneditor", "ace"];

/// `cargo xtask adat-train`: trains the shipped rendering-state network
/// (`crates/gui-vision/models/render_net.safetensors`) and the 3-layer CNN baseline on the
/// frames of `cargo xtask adat-data`, with whole apps held out, and scores both and the
/// consecutive-frame heuristic on them.
pub fn train(rest: &[String]) -> Result<()> {
    let mut data = crate::root().join("target/adat-data");
    let mut out = crate::root().join("crates/gui-vision/models/render_net.safetensors");
    let mut seed = "1".to_owned();
    let mut epochs = "6".to_owned();
    let mut test_apps: Vec<String> = Vec::new();
    let mut synthetic = "1".to_owned();
    // The shipped network's settings (docs/adat.md, "The shipped network").
    let mut learning_rate = "0.01".to_owned();
    let mut min_change = "0".to_owned();
    let mut archs = vec!["mobilenet".to_owned(), "cnn3".to_owned()];
    for (flag, value) in crate::flag_values(rest, TRAIN_USAGE)? {
        let value = value.to_owned();
        match flag {
            "--data" => data = PathBuf::from(value),
            "--out" => out = PathBuf::from(value),
            "--seed" => seed = value,
            "--epochs" => epochs = value,
            "--test-app" => test_apps.push(value),
            "--synthetic" => synthetic = value,
            "--learning-rate" => learning_rate = value,
            "--min-change" => min_change = value,
            "--archs" => archs = value.split(',').map(str::to_owned).collect(),
            other => bail!("unknown option `{other}`\n{TRAIN_USAGE}"),
        }
    }
    if !data.join("labels.jsonl").is_file() {
        bail!(
            "{}: no labels.jsonl; collect frames first with `cargo xtask adat-data`",
            data.display()
        );
    }
    let adat = crate::build_release(&["adat"])?.join("adat");
    let cnn3 = crate::root().join("target/adat-models/cnn3.safetensors");
    std::fs::create_dir_all(cnn3.parent().expect("has a parent"))?;
    if test_apps.is_empty() {
        test_apps = TEST_APPS.iter().map(|s| (*s).to_owned()).collect();
    }
    for arch in &archs {
        let model = match arch.as_str() {
            "mobilenet" => &out,
            "cnn3" => &cnn3,
            other => bail!("unknown network `{other}` (mobilenet or cnn3)\n{TRAIN_USAGE}"),
        };
        let mut cmd = std::process::Command::new(&adat);
        cmd.arg("train")
            .arg("--data")
            .arg(&data)
            .arg("--out")
            .arg(model)
            .args(["--seed", &seed, "--arch", arch, "--synthetic", &synthetic])
            .args([
                "--learning-rate",
                &learning_rate,
                "--min-change",
                &min_change,
            ]);
        for app in &test_apps {
            cmd.args(["--test-app", app]);
        }
        cmd.args(["--epochs", &epochs]);
        crate::run(&mut cmd)?;
    }
    Ok(())
}
