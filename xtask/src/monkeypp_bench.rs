//! `cargo xtask monkeypp-bench`: the Monkey++ paper's comparison (its Table II) on the
//! demo app and subject apps: Monkey++'s interactions and interface coverage, the
//! breadth-first bound on the interactions, and the interface coverage a 500-event run
//! of our `monkey` reached on the same model.
//!
//! Per app: `monkeypp` builds the model, searches it and carries the plan out; `monkey`
//! sends random events; `monkeypp --model --monkey-run` re-executes the monkey run and
//! maps each touch onto the model's controls. Finished runs are reused (delete
//! `<out>/<app>` to run an app again).
//!
//! Writes `target/monkeypp-bench/report.md` and prints it.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::Value;

const USAGE: &str = "usage: cargo xtask monkeypp-bench [--apps demo,NAME,...] \
     [--events N] [--seed S] [--out DIR]";

/// The subjects whose handlers the analysis finds (as in greybox-bench).
const DEFAULT_APPS: &str = "demo,todomvc-backbone,todomvc-vanillajs,todomvc-vue";

struct Options {
    apps: Vec<String>,
    events: u64,
    seed: u64,
    out: PathBuf,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        apps: DEFAULT_APPS.split(',').map(str::to_owned).collect(),
        events: 500,
        seed: 1,
        out: crate::root().join("target/monkeypp-bench"),
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        match flag {
            "--apps" => o.apps = value.split(',').map(str::to_owned).collect(),
            "--events" => o.events = value.parse().context("--events")?,
            "--seed" => o.seed = value.parse().context("--seed")?,
            "--out" => o.out = PathBuf::from(value),
            other => bail!("unknown option `{other}`\n{USAGE}"),
        }
    }
    Ok(o)
}

/// `--app-dir`/`--entry` (or nothing, for the bundled demo) of an app.
fn app_args(name: &str) -> Result<Vec<String>> {
    match name {
        "demo" => Ok(Vec::new()),
        _ => crate::greybox_bench::subject_args(name),
    }
}

pub fn run(rest: &[String]) -> Result<()> {
    if let Some(done) = crate::in_release("monkeypp-bench", rest) {
        return done;
    }
    let o = parse(rest)?;
    crate::setup()?;
    let bins = crate::build_release(&["monkeypp", "monkey"])?;
    let mut rows = Vec::new();
    for app in &o.apps {
        let target = app_args(app)?;
        let base = o.out.join(app);
        let pp = base.join("monkeypp");
        if !pp.join("monkeypp.json").is_file() {
            crate::greybox_bench::remove(&pp)?;
            crate::greybox_bench::run_tool(&bins.join("monkeypp"), &target, &[], &pp)?;
        }
        let monkey = base.join("monkey");
        if !monkey.join("summary.json").is_file() {
            crate::greybox_bench::remove(&monkey)?;
            let (steps, seed) = (o.events.to_string(), o.seed.to_string());
            crate::greybox_bench::run_tool(
                &bins.join("monkey"),
                &target,
                &["--steps", &steps, "--seed", &seed],
                &monkey,
            )?;
        }
        let mapped = base.join("mapped");
        if !mapped.join("mapped.json").is_file() {
            crate::greybox_bench::remove(&mapped)?;
            let model = pp.join("model.json").display().to_string();
            let run = monkey.display().to_string();
            crate::greybox_bench::run_tool(
                &bins.join("monkeypp"),
                &target,
                &["--model", &model, "--monkey-run", &run],
                &mapped,
            )?;
        }
        rows.push((
            app.clone(),
            crate::greybox_bench::read_json(&pp.join("monkeypp.json"))?,
            crate::greybox_bench::read_json(&mapped.join("mapped.json"))?,
        ));
    }
    let report = table(&o, &rows);
    std::fs::create_dir_all(&o.out)?;
    let path = o.out.join("report.md");
    std::fs::write(&path, &report).with_context(|| path.display().to_string())?;
    println!("{report}");
    eprintln!("monkeypp-bench: wrote {}", path.display());
    Ok(())
}

/// Events after which a coverage curve first reaches its final value.
fn events_to_final(curve: &[Value]) -> usize {
    let last = curve.last().and_then(Value::as_f64).unwrap_or(0.0);
    curve
        .iter()
        .position(|v| v.as_f64().unwrap_or(0.0) >= last - 1e-12)
        .map_or(0, |i| i + 1)
}

fn table(o: &Options, rows: &[(String, Value, Value)]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Monkey++ against Monkey (Table II of the Monkey++ paper)\n\n\
         Command: `cargo xtask monkeypp-bench --apps {} --events {} --seed {}`.\n\
         Interface coverage: controls (UI vertices of the model) touched over all controls. \
         Bound: the fewest interactions touching the same controls, breadth first over the \
         same moves (exact unless marked >=); ratio: interactions carried out (restarts that brought back controls the plan needed included) over the bound. Monkey: our `monkey` binary with its default \
         event mix, re-executed with each touch mapped onto the model.\n",
        o.apps.join(","),
        o.events,
        o.seed
    );
    let _ = writeln!(
        s,
        "| app | screens | controls | methods | statements | static model (ms) | survey (s) | Monkey++ interactions | bound | ratio | Monkey++ coverage | Monkey events | Monkey hit rate | Monkey coverage | Monkey events to its final coverage |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (app, pp, m) in rows {
        let f = |v: &Value| v.as_f64().unwrap_or(0.0);
        let bound = match (&pp["bound"]["exact"], &pp["bound"]["at_least"]) {
            (Value::Number(n), _) => n.to_string(),
            (_, Value::Number(n)) => format!(">= {n}"),
            _ => "?".into(),
        };
        let curve = m["curve"].as_array().cloned().unwrap_or_default();
        let _ = writeln!(
            s,
            "| {app} | {} | {} | {} | {} | {:.0} | {:.1} | {} ({} planned) | {bound} | {:.2} | {:.1}% ({}/{}) | {} | {:.1}% | {:.1}% ({}) | {} |",
            pp["model"]["screens"],
            pp["model"]["ui"],
            pp["model"]["methods"],
            pp["model"]["statements"],
            f(&pp["build"]["static_ms"]),
            f(&pp["build"]["survey_ms"]) / 1e3,
            pp["interactions"],
            pp["planned_interactions"],
            f(&pp["ratio_to_bound"]),
            100.0 * f(&pp["interface_coverage"]),
            pp["covered_ui"],
            pp["ui_total"],
            m["events"],
            100.0 * f(&m["hits"]) / f(&m["events"]).max(1.0),
            100.0 * f(&m["interface_coverage"]),
            m["covered"].as_array().map_or(0, Vec::len),
            events_to_final(&curve),
        );
    }
    s
}
