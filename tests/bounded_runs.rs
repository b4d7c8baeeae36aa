//! `greybox` and `monkeypp` on a budget, as a user runs them in real Chromium: a rip or a
//! survey cut by its time budget still ends with results from what it found, a killed
//! rip and a cut survey continue with `--resume`, native dialogs do not hold the ripper
//! up, and a Monkey++ plan the page does not follow is planned again from where the page
//! is.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn run(bin: &str, args: &[&str]) -> Output {
    let out = Command::new(bin).args(args).output().expect("run the tool");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("cannot find Chromium") && !err.contains("BrowserNotFound"),
        "Chromium is missing (`cargo xtask setup` installs it): {err}"
    );
    out
}

fn greybox(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_greybox"), args)
}

fn monkeypp(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_monkeypp"), args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_rip_cut_by_its_budget_still_generates_test_cases_from_what_it_ripped() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("run");
    // The demo's 64 events take about half a minute to rip; 6 s cuts the rip short.
    let out = greybox(&[
        "--dry-run",
        "--rip-minutes",
        "0.1",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("greybox: the bundled demo app: ")
            && first.contains("rip its GUI")
            && first.contains("for 6 s"),
        "the first line says what is done and for how long: {first}"
    );
    assert!(
        stdout.contains("cut: the rip stopped at its time budget"),
        "{stdout}"
    );
    let rip = read(&out_dir.join("rip.json"));
    assert_eq!(rip["cut"], "budget");
    assert_eq!(rip["finished"], false);
    let (known, ripped) = (
        rip["events_known"].as_u64().unwrap(),
        rip["events_ripped"].as_u64().unwrap(),
    );
    assert!(ripped > 0 && ripped < known, "{ripped} of {known} ripped");
    assert_eq!(
        rip["unripped"].as_array().unwrap().len() as u64,
        known - ripped
    );
    let efg = read(&out_dir.join("efg.json"));
    assert_eq!(efg["events"].as_array().unwrap().len() as u64, known);
    assert!(read(&out_dir.join("edg.json"))["handlers"].is_array());
    let sequences = read(&out_dir.join("sequences.json"));
    let n = sequences.as_array().unwrap().len();
    assert!(n > 0, "test cases come from the partial EFG");
    assert_eq!(
        stdout.lines().filter(|l| l.contains(" click")).count(),
        n,
        "each test case is printed"
    );
}

#[test]
fn a_killed_rip_resumes_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_greybox"))
        .args([
            "--dry-run",
            "--max-events",
            "14",
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start greybox");
    // The rip is saved every few seconds: wait for a save with a few events in it.
    let rip_path = out_dir.join("rip.json");
    let started = Instant::now();
    let before = loop {
        if let Ok(bytes) = std::fs::read(&rip_path)
            && let Ok(rip) = serde_json::from_slice::<Value>(&bytes)
            && rip["events_ripped"].as_u64().unwrap_or(0) >= 3
        {
            break rip;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("greybox ended ({status}) before saving its rip: is Chromium installed?");
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "no rip saved in 90 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let ripped_before = before["events_ripped"].as_u64().unwrap();
    let ids = |efg: &Value| -> Vec<String> {
        efg["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let events_before = ids(&before["state"]["efg"]);
    assert!(ripped_before < 14, "killed mid-rip");

    // The folder's own settings (the demo, --dry-run, --max-events 14) come back.
    let out = greybox(&["--resume", out_dir.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr
            .lines()
            .next()
            .unwrap_or_default()
            .contains(&format!("continue the rip ({ripped_before} of ")),
        "{stderr}"
    );
    let rip = read(&rip_path);
    assert_eq!(rip["events_ripped"], 14, "{}", rip["events_ripped"]);
    assert_eq!(rip["cut"], "max_events");
    let events_after = ids(&read(&out_dir.join("efg.json")));
    assert!(
        events_after.starts_with(&events_before),
        "the resumed rip extends the EFG it found before"
    );
    assert!(events_after.len() >= events_before.len());
    assert!(
        stdout.contains("cut: the rip stopped at its max events"),
        "{stdout}"
    );
    assert!(
        !read(&out_dir.join("sequences.json"))
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn native_dialogs_do_not_hold_up_the_ripper() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("run");
    let out = greybox(&[
        "--app-dir",
        &data("dialogs"),
        "--dry-run",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // A dialog left unanswered blocks the page, and the event's firing times out.
    assert!(!stderr.contains("firing failed"), "{stderr}");
    let rip = read(&out_dir.join("rip.json"));
    assert_eq!(rip["finished"], true);
    assert!(rip["state"]["failed"].as_array().unwrap().is_empty());
    let ids: Vec<&str> = rip["state"]["done"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for id in [
        "#alert click",
        "#confirm click",
        "#prompt click",
        "#later click",
        "#name type",
    ] {
        assert!(ids.contains(&id), "{id} not ripped: {ids:?}");
    }
}

#[test]
fn budgets_and_run_folders_to_resume_are_checked_before_anything_starts() {
    for (out, flag) in [
        (greybox(&["--rip-minutes", "0"]), "--rip-minutes"),
        (greybox(&["--minutes", "-2"]), "--minutes"),
        (monkeypp(&["--survey-minutes", "soon"]), "--survey-minutes"),
    ] {
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains(flag), "{}", text(&out.stderr));
    }
    // A folder of another tool's run is refused by name, and left as it was.
    let dir = tempfile::tempdir().unwrap();
    let run_json = dir.path().join("run.json");
    let written = r#"{"format": "gui-testing-run", "format_version": 1,
                      "meta": {"strategy": "greybox", "argv": ["--dry-run"]}}"#;
    std::fs::write(&run_json, written).unwrap();
    let out = monkeypp(&["--resume", dir.path().to_str().unwrap()]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("holds a greybox run"), "{err}");
    assert_eq!(std::fs::read_to_string(&run_json).unwrap(), written);
    assert!(!dir.path().join("run.lock").exists());
    // --out and --resume name two folders: one of them is a mistake.
    let out = greybox(&["--resume", dir.path().to_str().unwrap(), "--out", "b"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--out"), "{}", text(&out.stderr));
}

#[test]
fn a_monkeypp_plan_that_diverges_is_planned_again_from_the_screen_the_page_shows() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("run");
    let out = monkeypp(&[
        "--app-dir",
        &data("diverge"),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr
            .lines()
            .next()
            .unwrap_or_default()
            .starts_with("monkeypp: ")
            && stderr.contains("survey its screens"),
        "{stderr}"
    );
    let row = read(&out_dir.join("monkeypp.json"));
    assert_eq!(row["planned_interface_coverage"], 1.0);
    // Arm makes Next open B instead of A: the page diverges there, once.
    assert!(row["diverged"].as_u64().unwrap() >= 1, "{row}");
    assert!(row["replans"].as_u64().unwrap() >= 1, "{row}");
    // Planned again from B, then A after a relaunch (Next leads to A only from a fresh
    // start): every control is touched, none needed a restart to be found.
    assert_eq!(row["interface_coverage"], 1.0, "{stdout}");
    assert!(row["missed"].as_array().unwrap().is_empty(), "{row}");
    assert_eq!(row["recoveries"], 0);
    assert!(stdout.contains("re-plans"), "{stdout}");
    let steps = std::fs::read_to_string(out_dir.join("steps.jsonl")).unwrap();
    assert_eq!(
        steps.lines().count() as u64,
        row["interactions"].as_u64().unwrap()
    );
}

#[test]
fn a_survey_cut_by_its_budget_plans_from_what_it_found_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("run");
    // The demo's survey fires a few dozen controls; 1.5 s is a handful of them.
    let out = monkeypp(&[
        "--dry-run",
        "--survey-minutes",
        "0.025",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("cut: the survey stopped at its time budget"),
        "{stdout}"
    );
    let survey = read(&out_dir.join("survey.json"));
    assert_eq!(survey["cut"], "budget");
    assert_eq!(survey["finished"], false);
    let model = read(&out_dir.join("model.json"));
    let controls = |m: &Value| {
        m["vertices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["type"] == "ui")
            .count()
    };
    let before = controls(&model);
    assert!(before > 0);
    assert!(
        stdout.contains("plan: "),
        "a plan from the partial model: {stdout}"
    );

    // Resumed without a budget, the survey finishes and the model grows.
    let out = monkeypp(&[
        "--resume",
        out_dir.to_str().unwrap(),
        "--survey-minutes",
        "5",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("continue the survey"), "{stderr}");
    let survey = read(&out_dir.join("survey.json"));
    assert_eq!(survey["finished"], true, "{stdout}");
    let model = read(&out_dir.join("model.json"));
    assert!(controls(&model) > before);
    let names: Vec<&str> = model["screens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.iter().any(|n| n.ends_with("#/settings")), "{names:?}");
}

/// The events of a greybox run folder's `efg.json` as (event, successor) id pairs.
fn efg_edges(efg: &Value) -> std::collections::BTreeSet<(String, String)> {
    let ids: Vec<&str> = efg["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    efg["follows"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .flat_map(|(from, to)| {
            let ids = &ids;
            to.as_array().unwrap().iter().map(move |t| {
                (
                    ids[from].to_owned(),
                    ids[t.as_u64().unwrap() as usize].to_owned(),
                )
            })
        })
        .collect()
}

fn row(i: usize) -> String {
    format!("#rows > li:nth-of-type({i}) > button:nth-of-type(1) click")
}

#[test]
fn a_rip_fires_the_toolbar_before_a_list_of_equivalent_rows_and_reports_those_left() {
    // tests/data/scale: twelve rows with one handler, listed before a toolbar.
    let dir = tempfile::tempdir().unwrap();
    let rip_of = |name: &str, extra: &[&str]| {
        let out_dir = dir.path().join(name);
        let page = data("scale");
        let mut args = vec![
            "--app-dir",
            &page,
            "--dry-run",
            "--max-events",
            "8",
            "--out",
        ];
        let out_str = out_dir.to_str().unwrap().to_owned();
        args.push(&out_str);
        args.extend_from_slice(extra);
        let out = greybox(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        (
            read(&out_dir.join("rip.json")),
            read(&out_dir.join("efg.json")),
        )
    };
    let (rip, efg) = rip_of("grouped", &[]);
    let done: Vec<&str> = rip["state"]["done"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    for toolbar in ["#new click", "#help click", "#count click"] {
        assert!(done.contains(&toolbar), "{toolbar} ripped first: {done:?}");
    }
    // Eight events: the toolbar, two dialogs' Close, the first row and its dialog's Close,
    // and one more row; the ten rows left are equivalent to the first.
    let by = &rip["equivalent"]["by_representative"];
    assert_eq!(rip["equivalent"]["events"], 10, "{}", rip["equivalent"]);
    assert_eq!(by[row(1)].as_array().map(Vec::len), Some(10), "{by}");
    // They take its successors in the EFG, so test cases can go on after them.
    let edges = efg_edges(&efg);
    let after = |e: &str| -> std::collections::BTreeSet<&str> {
        edges
            .iter()
            .filter(|(a, _)| a == e)
            .map(|(_, b)| b.as_str())
            .collect()
    };
    assert!(!after(&row(1)).is_empty());
    assert_eq!(after(&row(9)), after(&row(1)));

    // In the paper's depth-first order the rows, first on the page, take the budget.
    let (rip, _) = rip_of("plain", &["--no-grouping"]);
    let done = rip["state"]["done"].as_array().unwrap();
    assert!(!done.iter().any(|d| d == "#help click"), "{done:?}");
    assert_eq!(rip["equivalent"]["events"], 0);
}

#[test]
fn a_rip_comes_back_without_restarting_where_it_can_and_finds_the_same_graph() {
    let dir = tempfile::tempdir().unwrap();
    let rip_of = |name: &str, extra: &[&str]| {
        let out_dir = dir.path().join(name);
        let out_str = out_dir.to_str().unwrap().to_owned();
        let page = data("scale");
        let mut args = vec!["--app-dir", &page, "--dry-run", "--out", &out_str];
        args.extend_from_slice(extra);
        let out = greybox(&args);
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains("greybox: rip time: "), "{stderr}");
        (
            read(&out_dir.join("rip.json")),
            read(&out_dir.join("efg.json")),
        )
    };
    let (cheap, cheap_efg) = rip_of("cheap", &[]);
    let (paper, paper_efg) = rip_of("paper", &["--restart-every-event"]);
    let ripped = cheap["events_ripped"].as_u64().unwrap();
    assert_eq!(ripped, 18);
    let t = &cheap["time"];
    // Escape closes each row's dialog, and the rows are fired in place after it; the
    // restarts left are after Count (which changed the page) and after each dialog's Close.
    assert!(t["ways_back"].as_u64().unwrap() >= 10, "{t}");
    assert!(t["fired_in_place"].as_u64().unwrap() >= 10, "{t}");
    assert!(t["restarts"].as_u64().unwrap() <= 6, "{t}");
    let p = &paper["time"];
    assert!(
        p["restarts"].as_u64().unwrap() > ripped,
        "one per event: {p}"
    );
    assert_eq!(p["ways_back"], 0);
    for part in [
        "restarts_s",
        "waiting_s",
        "listing_s",
        "analysis_s",
        "firing_s",
    ] {
        assert!(t[part].as_f64().is_some(), "{part} in {t}");
    }
    assert_eq!(
        efg_edges(&cheap_efg),
        efg_edges(&paper_efg),
        "the cheap way back finds the graph restarts find"
    );
}
