//! `cargo xtask desktop-compare`: `monkey` and `pirltest`, unchanged, on X11 programs under
//! Xvfb (`--device desktop`), over seeds: programs on PATH (xcalc, xedit) and
//! `listing1-swing`, the grey-box paper's Listing 1 as a Swing app. Per run: distinct screens (screenshots with
//! different pixels) and actions that changed the screen (more than 64 pixels differ
//! from the screen before, by more than 8 in a channel: gui-explore's frame rule, so a
//! blinking caret does not count). Finished runs are reused (delete `<out>/<app>` to run
//! an app again).
//!
//! Writes `target/desktop-compare/report.md` and prints it.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use gui_core::Screenshot;

const USAGE: &str = "usage: cargo xtask desktop-compare [--apps xcalc,xedit,listing1-swing] [--seeds 1,2,3] \
     [--steps N] [--viewport WxH] [--out DIR]";

const TOOLS: [&str; 2] = ["monkey", "pirltest"];

struct Options {
    apps: Vec<String>,
    seeds: Vec<u64>,
    steps: u64,
    viewport: String,
    out: PathBuf,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        apps: vec!["xcalc".into(), "xedit".into(), "listing1-swing".into()],
        seeds: vec![1, 2, 3],
        steps: 100,
        viewport: "800x600".into(),
        out: crate::root().join("target/desktop-compare"),
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        match flag {
            "--apps" => o.apps = value.split(',').map(str::to_owned).collect(),
            "--seeds" => {
                o.seeds = value
                    .split(',')
                    .map(|s| s.parse().with_context(|| format!("--seeds: `{s}`")))
                    .collect::<Result<_>>()?
            }
            "--steps" => o.steps = value.parse().context("--steps")?,
            "--viewport" => o.viewport = value.to_owned(),
            "--out" => o.out = PathBuf::from(value),
            other => bail!("unknown option `{other}`\n{USAGE}"),
        }
    }
    if o.apps.is_empty() || o.seeds.is_empty() {
        bail!("give at least one app and one seed\n{USAGE}");
    }
    Ok(o)
}

/// What one run reached.
#[derive(Debug, Clone, Copy)]
struct Reach {
    distinct: usize,
    changed: usize,
    steps: usize,
}

pub fn run(rest: &[String]) -> Result<()> {
    let o = parse(rest)?;
    crate::setup()?;
    let bins = crate::build_release(&TOOLS)?;
    let mut rows: Vec<(String, &str, u64, Reach)> = Vec::new();
    for app in &o.apps {
        let command = app_command(app, &o.out)?;
        let target: Vec<String> = [
            "--device",
            "desktop",
            "--app-command",
            command.as_str(),
            "--viewport",
            o.viewport.as_str(),
        ]
        .map(str::to_owned)
        .to_vec();
        for tool in TOOLS {
            for &seed in &o.seeds {
                let dir = o.out.join(app).join(format!("{tool}-seed{seed}"));
                if !dir.join("summary.json").is_file() {
                    crate::greybox_bench::remove(&dir)?;
                    crate::greybox_bench::run_tool(
                        &bins.join(tool),
                        &target,
                        &["--steps", &o.steps.to_string(), "--seed", &seed.to_string()],
                        &dir,
                    )?;
                }
                rows.push((app.clone(), tool, seed, reach(&dir)?));
            }
        }
    }
    let report = table(&o, &rows);
    std::fs::create_dir_all(&o.out)?;
    let path = o.out.join("report.md");
    std::fs::write(&path, &report).with_context(|| path.display().to_string())?;
    println!("{report}");
    eprintln!("desktop-compare: wrote {}", path.display());
    Ok(())
}

/// The command that starts `app`: a program on PATH, or `listing1-swing`, the grey-box
/// paper's Listing 1 as a Java Swing app (compiled with javac into `out` first).
fn app_command(app: &str, out: &Path) -> Result<String> {
    if app != "listing1-swing" {
        return Ok(app.to_owned());
    }
    let sources = crate::root().join("crates/gui-greybox/tests/data/listing1/java");
    let classes = out.join("listing1-classes");
    std::fs::create_dir_all(&classes)?;
    let mut javac = std::process::Command::new("javac");
    javac.arg("-d").arg(&classes);
    for entry in std::fs::read_dir(&sources).with_context(|| sources.display().to_string())? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "java") {
            javac.arg(path);
        }
    }
    let status = javac
        .status()
        .context("running javac (apt-get install default-jdk)")?;
    if !status.success() {
        bail!("javac failed on {}", sources.display());
    }
    let classes = classes.display().to_string();
    if classes.contains(' ') {
        bail!("the class folder {classes} has a space; --app-command splits at spaces");
    }
    Ok(format!("java -cp {classes} MainWindow"))
}

/// Distinct screens and screen-changing actions of a run folder.
fn reach(dir: &Path) -> Result<Reach> {
    let steps = gui_explore::read_steps(dir).with_context(|| dir.display().to_string())?;
    let load = |rel: &str| {
        Screenshot::load(&dir.join(rel)).with_context(|| format!("{}/{rel}", dir.display()))
    };
    let mut before = load("screenshots/step-000000.png")?;
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    seen.insert(before.pixels().as_raw().clone());
    let mut changed = 0;
    for s in &steps {
        let after = load(&s.screenshot)?;
        let area = (after.width() as f64 * after.height() as f64).max(1.0);
        if after.size() != before.size() || after.diff_fraction(&before, 8) * area > 64.0 {
            changed += 1;
        }
        seen.insert(after.pixels().as_raw().clone());
        before = after;
    }
    Ok(Reach {
        distinct: seen.len(),
        changed,
        steps: steps.len(),
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn table(o: &Options, rows: &[(String, &str, u64, Reach)]) -> String {
    let mut s = String::new();
    let seeds: Vec<String> = o.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        s,
        "# monkey and pirltest on desktop programs\n\nCommand: `cargo xtask desktop-compare \
         --apps {} --seeds {} --steps {} --viewport {}`. Each run starts the program under its \
         own Xvfb; distinct screens are screenshots with different pixels (the start screen \
         included); a changing action leaves more than 64 pixels different by more than 8 in \
         a channel.\n",
        o.apps.join(","),
        seeds.join(","),
        o.steps,
        o.viewport
    );
    let _ = writeln!(
        s,
        "| app | seed | distinct screens: monkey / pirltest | changing actions: monkey / pirltest |\n|---|---|---|---|"
    );
    let pick = |app: &str, tool: &str, seed: u64| {
        rows.iter()
            .find(|r| r.0 == app && r.1 == tool && r.2 == seed)
            .map(|r| r.3)
    };
    for app in &o.apps {
        let mut totals = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        for &seed in &o.seeds {
            let (Some(m), Some(p)) = (pick(app, "monkey", seed), pick(app, "pirltest", seed))
            else {
                continue;
            };
            let _ = writeln!(
                s,
                "| {app} | {seed} | {} / {} | {} / {} |",
                m.distinct, p.distinct, m.changed, p.changed
            );
            for (t, r) in [m, p].iter().enumerate() {
                totals[0][t].push(r.distinct as f64);
                totals[1][t].push(r.changed as f64 / r.steps.max(1) as f64 * o.steps as f64);
            }
        }
        let ratio = |v: &[Vec<f64>; 2]| mean(&v[1]) / mean(&v[0]).max(1e-9);
        let _ = writeln!(
            s,
            "| **{app}** | mean | {:.1} / {:.1} (x{:.2}) | {:.1} / {:.1} (x{:.2}) |",
            mean(&totals[0][0]),
            mean(&totals[0][1]),
            ratio(&totals[0]),
            mean(&totals[1][0]),
            mean(&totals[1][1]),
            ratio(&totals[1]),
        );
    }
    s
}
