//! `cargo xtask greybox-bench`: the grey-box paper's experiment (Tables 3 and 4) on the
//! demo app and subject apps.
//!
//! Each app's GUI is ripped once into an event-flow graph (`greybox --dry-run`); every
//! configuration then generates its test cases from that same graph and replays them
//! (`greybox --efg`). Per app and configuration: test cases, broken ones, generation
//! time, execution time, function and byte coverage of the app's scripts, and distinct
//! signals. Configuration D (grey-box, len 2) is checked against B (black-box, len 2):
//! the ratio of test cases, and whether D covers at least what B covers (by function
//! name, listing the functions only B covers).
//!
//! Apps: `demo`, the subjects of `xtask/subjects.toml` by name, and the paper's Listing 1
//! as `listing1-web` and `listing1-swing` (a Swing app under Xvfb). Finished runs are
//! reused (delete `<out>/<app>/<configuration>` to run one again).
//!
//! Writes `target/greybox-bench/report.md` (with the run folders beside it) and prints it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

const USAGE: &str = "usage: cargo xtask greybox-bench [--apps demo,NAME,...] \
     [--configs A,B,C,D,E,F] [--max-events N] [--out DIR]";

/// Subject apps whose handlers the analysis reaches, with the page to open.
const DEFAULT_APPS: &str = "demo,todomvc-backbone,todomvc-vanillajs,todomvc-vue";

struct Options {
    apps: Vec<String>,
    configs: Vec<char>,
    max_events: usize,
    out: PathBuf,
}

fn parse(rest: &[String]) -> Result<Options> {
    let mut o = Options {
        apps: DEFAULT_APPS.split(',').map(str::to_owned).collect(),
        configs: vec!['A', 'B', 'D'],
        max_events: 120,
        out: crate::root().join("target/greybox-bench"),
    };
    for (flag, value) in crate::flag_values(rest, USAGE)? {
        match flag {
            "--apps" => o.apps = value.split(',').map(str::to_owned).collect(),
            "--configs" => o.configs = value.chars().filter(|c| *c != ',').collect(),
            "--max-events" => o.max_events = value.parse().context("--max-events")?,
            "--out" => o.out = PathBuf::from(value),
            other => bail!("unknown option `{other}`\n{USAGE}"),
        }
    }
    if let Some(c) = o.configs.iter().find(|c| !"ABCDEF".contains(**c)) {
        bail!("configuration `{c}` is not one of Table 3's A-F\n{USAGE}");
    }
    Ok(o)
}

/// The `greybox` flags of a configuration of Table 3.
fn config_args(c: char) -> &'static [&'static str] {
    match c {
        'A' => &["--mode", "blackbox", "--len", "1"],
        'B' => &["--mode", "blackbox", "--len", "2"],
        'C' => &["--mode", "blackbox", "--len", "3"],
        'D' => &["--mode", "greybox", "--len", "2", "--top", "inf"],
        'E' => &["--mode", "greybox", "--len", "3", "--top", "50"],
        _ => &["--mode", "greybox", "--len", "3", "--top", "100"],
    }
}

/// `--app-dir`/`--entry` (or nothing, for the bundled demo) of an app.
fn app_args(name: &str) -> Result<Vec<String>> {
    let listing1 = crate::root().join("crates/gui-greybox/tests/data/listing1");
    match name {
        "demo" => return Ok(Vec::new()),
        // The paper's example, as a web page and as a Swing app under Xvfb.
        "listing1-web" => {
            return Ok(vec![
                "--app-dir".into(),
                listing1.join("web").display().to_string(),
            ]);
        }
        "listing1-swing" => {
            return Ok(vec![
                "--java-sources".into(),
                listing1.join("java").display().to_string(),
                "--java-main".into(),
                "MainWindow".into(),
            ]);
        }
        _ => {}
    }
    subject_args(name)
}

/// `--app-dir`/`--entry` of a subject of `xtask/subjects.toml`, fetched if needed.
pub(crate) fn subject_args(name: &str) -> Result<Vec<String>> {
    let (dir, entry) = crate::fetch_subject(name)?;
    Ok(vec![
        "--app-dir".into(),
        dir.display().to_string(),
        "--entry".into(),
        entry,
    ])
}

pub fn run(rest: &[String]) -> Result<()> {
    if let Some(done) = crate::in_release("greybox-bench", rest) {
        return done;
    }
    let o = parse(rest)?;
    crate::setup()?;
    let bin = crate::build_release(&["greybox"])?.join("greybox");
    let mut rows: Vec<(String, char, Value)> = Vec::new();
    for app in &o.apps {
        let target = app_args(app)?;
        let rip_dir = o.out.join(app).join("rip");
        if !rip_dir.join("efg.json").is_file() {
            remove(&rip_dir)?;
            run_tool(
                &bin,
                &target,
                &["--dry-run", "--max-events", &o.max_events.to_string()],
                &rip_dir,
            )?;
        }
        let efg = rip_dir.join("efg.json");
        for &c in &o.configs {
            let dir = o.out.join(app).join(c.to_string());
            // A finished run is reused: delete its folder to run it again.
            if !dir.join("greybox.json").is_file() {
                remove(&dir)?;
                let mut args: Vec<&str> = config_args(c).to_vec();
                let efg_s = efg.display().to_string();
                args.extend(["--efg", efg_s.as_str()]);
                run_tool(&bin, &target, &args, &dir)?;
            }
            let row = read_json(&dir.join("greybox.json"))?;
            rows.push((app.clone(), c, row));
        }
    }
    let report = table(&o, &rows);
    std::fs::create_dir_all(&o.out)?;
    let path = o.out.join("report.md");
    std::fs::write(&path, &report).with_context(|| path.display().to_string())?;
    println!("{report}");
    eprintln!("greybox-bench: wrote {}", path.display());
    Ok(())
}

/// Runs a tool with an app's options, `args` and `--out out`, keeping its output in
/// `out.log`; fails naming the log when the tool does.
pub(crate) fn run_tool(bin: &Path, target: &[String], args: &[&str], out: &Path) -> Result<()> {
    let mut cmd = Command::new(bin);
    cmd.args(target).args(args).arg("--out").arg(out);
    eprintln!("$ {cmd:?}");
    let o = cmd
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let log = out.with_extension("log");
    if let Some(parent) = log.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut text = o.stdout.clone();
    text.extend_from_slice(&o.stderr);
    std::fs::write(&log, &text)?;
    if !o.status.success() {
        bail!(
            "{cmd:?} failed ({}); its output is in {}",
            o.status,
            log.display()
        );
    }
    Ok(())
}

pub(crate) fn remove(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(())
}

pub(crate) fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    serde_json::from_str(&text).with_context(|| path.display().to_string())
}

fn table(o: &Options, rows: &[(String, char, Value)]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Grey-box vs black-box test cases (Arlt et al., Tables 3 and 4)\n\n\
         Command: `cargo xtask greybox-bench --apps {} --configs {} --max-events {}`.\n\
         One rip per app; every configuration replays its test cases from a fresh start \
         (reload, storage cleared). Coverage: functions and bytes of the app's own scripts \
         that ran (V8 precise coverage). Signals: distinct uncaught exceptions and console \
         errors.\n",
        o.apps.join(","),
        o.configs.iter().collect::<String>(),
        o.max_events
    );
    let _ = writeln!(
        s,
        "| app | conf | events | EFG edges | EDG edges | # es | # broken es | gen t (ms) | gen t per es (ms) | exec t (s) | exec t per tc (s) | functions | bytes | signals |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (app, c, r) in rows {
        let cov = &r["coverage"];
        let ratio = |a: &str, b: &str| {
            let (a, b) = (
                cov[a].as_f64().unwrap_or(0.0),
                cov[b].as_f64().unwrap_or(0.0),
            );
            if b > 0.0 { 100.0 * a / b } else { f64::NAN }
        };
        // Desktop apps have no coverage measure.
        let (functions, bytes) = if cov.is_null() {
            ("n/a".to_owned(), "n/a".to_owned())
        } else {
            (
                format!(
                    "{}/{} ({:.1}%)",
                    cov["functions_covered"],
                    cov["functions_total"],
                    ratio("functions_covered", "functions_total")
                ),
                format!("{:.1}%", ratio("bytes_covered", "bytes_total")),
            )
        };
        let _ = writeln!(
            s,
            "| {app} | {c} | {} | {} | {} | {} | {} | {:.1} | {:.3} | {:.1} | {:.2} | {functions} | {bytes} | {} |",
            r["events"],
            r["efg_edges"],
            r["edg_edges"],
            r["sequences"],
            r["broken"],
            r["generation_ms"].as_f64().unwrap_or(0.0),
            r["generation_ms_per_sequence"].as_f64().unwrap_or(0.0),
            r["execution_s"].as_f64().unwrap_or(0.0),
            r["execution_s_per_case"].as_f64().unwrap_or(0.0),
            r["bugs"].as_array().map_or(0, Vec::len),
        );
    }
    let _ = writeln!(s, "\n## D against B\n");
    let _ = writeln!(
        s,
        "| app | es D / es B | functions D - B | bytes D - B (points) | D covers B | functions only B covers | signals only D finds |\n|---|---|---|---|---|---|---|"
    );
    for app in &o.apps {
        let find = |c: char| {
            rows.iter()
                .find(|(a, k, _)| a == app && *k == c)
                .map(|r| &r.2)
        };
        let (Some(b), Some(d)) = (find('B'), find('D')) else {
            continue;
        };
        let n = |r: &Value, k: &str| r[k].as_f64().unwrap_or(0.0);
        let c = |r: &Value, k: &str| r["coverage"][k].as_f64().unwrap_or(0.0);
        let bytes = |r: &Value| 100.0 * c(r, "bytes_covered") / c(r, "bytes_total").max(1.0);
        let keys = |r: &Value| -> Vec<String> {
            r["bugs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["key"].as_str())
                .map(|k| k.split('@').next().unwrap_or(k).replace('|', "\\|"))
                .collect()
        };
        let only_d: Vec<String> = keys(d)
            .into_iter()
            .filter(|k| !keys(b).contains(k))
            .collect();
        if d["coverage"].is_null() {
            let _ = writeln!(
                s,
                "| {app} | {:.2} | n/a | n/a | n/a | n/a | {} |",
                n(d, "sequences") / n(b, "sequences").max(1.0),
                if only_d.is_empty() {
                    "-".to_owned()
                } else {
                    only_d.join("; ")
                }
            );
            continue;
        }
        // By name when both runs list their functions (`script-path@start-end`), else by
        // count.
        let names = |r: &Value| -> Option<Vec<String>> {
            let list = r["covered_functions"].as_array()?;
            Some(
                list.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            )
        };
        let (covers, only_b) = match (names(b), names(d)) {
            (Some(nb), Some(nd)) => {
                let only: Vec<String> = nb.into_iter().filter(|f| !nd.contains(f)).collect();
                (only.is_empty(), only)
            }
            _ => (
                c(d, "functions_covered") >= c(b, "functions_covered"),
                Vec::new(),
            ),
        };
        let _ = writeln!(
            s,
            "| {app} | {:.2} | {:+} | {:+.1} | {} | {} | {} |",
            n(d, "sequences") / n(b, "sequences").max(1.0),
            c(d, "functions_covered") - c(b, "functions_covered"),
            bytes(d) - bytes(b),
            if covers { "yes" } else { "no" },
            if only_b.is_empty() {
                "-".to_owned()
            } else {
                only_b.join(", ")
            },
            if only_d.is_empty() {
                "-".to_owned()
            } else {
                only_d.join("; ")
            }
        );
    }
    s
}
