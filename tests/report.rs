//! Reports of real (simulated) runs: the HTML page opened in a real headless Chromium
//! stays inert whatever the app wrote into its messages, and the `report` binary's exit
//! code is the CI verdict.
//!
//! The browser test needs Debian's Chromium (`cargo xtask setup` installs it); without it
//! it fails with a message saying so, never skips.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gui_core::{SignalKind, StackFrame};
use gui_driver::{ChromiumConfig, ChromiumDevice, Device, SimApp, Simulator};
use gui_explore::{
    ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, RunRecorder, Scripted, SignalRecord,
    Strategy, explore, read_steps,
};
use gui_report::{HtmlOptions, RunFolder, render_html};

const PWN_SCRIPT: &str = "<script>window.__pwned=1</script>";
const PWN_IMG: &str = r#"<img src=x onerror="window.__pwned=2">"#;

/// Runs `strategy` on the simulated demo app for `steps` steps into `dir/name`.
fn simulated_run(dir: &Path, name: &str, strategy: &mut dyn Strategy, steps: u64) -> PathBuf {
    let run = dir.join(name);
    let meta = serde_json::json!({ "strategy": strategy.name(), "seed": 11 });
    let mut recorder = RunRecorder::create(&run, &meta).unwrap();
    recorder.durable = false;
    let config = ExploreConfig {
        steps: Some(steps),
        ..ExploreConfig::default()
    };
    let mut device = Simulator::new(SimApp::demo());
    let summary = explore(
        &mut device,
        strategy,
        &mut FixedThrottle::none(),
        &mut recorder,
        &config,
    )
    .unwrap();
    assert_eq!(summary.steps, steps);
    run
}

fn monkey_run(dir: &Path, steps: u64) -> PathBuf {
    let mut monkey = Monkey::new(MonkeyConfig {
        seed: 11,
        ..MonkeyConfig::default()
    });
    simulated_run(dir, "monkey", &mut monkey, steps)
}

/// A run that finds nothing: it only presses `return` on the start page.
fn clean_run(dir: &Path) -> PathBuf {
    let run = simulated_run(dir, "clean", &mut Scripted::new(vec![]), 5);
    assert!(RunFolder::load(&run).unwrap().signals.is_empty());
    run
}

/// Appends a signal, as a hostile app could word it, to the run's `signals.jsonl`.
fn inject_hostile_signal(run: &Path, step: u64) {
    let steps = read_steps(run).unwrap();
    let record = SignalRecord {
        key: format!("UncaughtException|Error: {PWN_SCRIPT}"),
        kind: SignalKind::UncaughtException,
        message: format!("Error: {PWN_SCRIPT} and {PWN_IMG} 'quoted' & more"),
        stack: vec![StackFrame {
            function: PWN_IMG.into(),
            url: "javascript:window.__pwned=3".into(),
            line: 1,
            column: 1,
        }],
        first_step: step,
        screenshot: steps[step as usize - 1].screenshot.clone(),
    };
    let mut line = serde_json::to_string(&record).unwrap();
    line.push('\n');
    let path = run.join("signals.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&line);
    std::fs::write(&path, text).unwrap();
}

/// Writes the report of `run` into `dir/report.html` and opens it in Chromium.
fn open_report(dir: &Path, run: RunFolder) -> ChromiumDevice {
    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    let path = dir.join("report.html");
    std::fs::write(&path, html).unwrap();
    common::launch(
        &format!("file://{}", path.display()),
        ChromiumConfig::default(),
    )
}

#[test]
fn a_report_with_hostile_messages_is_inert_in_a_real_browser() {
    let dir = tempfile::tempdir().unwrap();
    let run = monkey_run(dir.path(), 30);
    inject_hostile_signal(&run, 12);
    let mut device = open_report(dir.path(), RunFolder::load(&run).unwrap());
    let pwned = device.evaluate("typeof window.__pwned").unwrap();
    assert_eq!(pwned, "undefined", "markup from the app ran in the report");
    let signals = device.drain_signals().unwrap();
    assert!(signals.is_empty(), "the report page reported {signals:?}");

    let text = device.evaluate("document.body.innerText").unwrap();
    let text = text.as_str().unwrap();
    assert!(text.contains("monkey seed 11: 30 steps"), "{text}");
    // The hostile markup is shown as the text it is.
    assert!(text.contains(PWN_SCRIPT), "{text}");
    assert!(text.contains(PWN_IMG), "{text}");
    assert!(text.contains(&format!("replay {} --until-step 12", run.display())));
    let elements = device
        .evaluate("document.querySelectorAll('script, iframe, object, embed').length")
        .unwrap();
    assert_eq!(elements, 1, "only the report's own script");
    // Every thumbnail decoded under the page's content security policy: the end screen and
    // the two screens around the bug as images, and 30 step screens inside SVGs.
    let images = device
        .evaluate(
            "(() => { const all = [...document.images]; \
             return [all.length, all.filter(i => i.complete && i.naturalWidth > 0).length]; })()",
        )
        .unwrap();
    assert_eq!(images, serde_json::json!([3, 3]));
    let step_screens = device
        .evaluate("document.querySelectorAll('svg.shot image[href^=\"data:image/png\"]').length")
        .unwrap();
    assert_eq!(step_screens, 30);
    let plot_lines = device
        .evaluate("document.querySelectorAll('#coverage svg polyline').length")
        .unwrap();
    assert_eq!(plot_lines, 2, "coverage over steps and over time");
}

/// A PIRLTest run records the page and the widgets of every screen; its report draws the
/// page graph with one node per page (clicking one shows its entry), annotates every step,
/// and its pan-and-zoom script is the one the content security policy lets run.
#[test]
fn a_pirltest_report_shows_its_page_graph_and_annotated_steps_in_a_real_browser() {
    let dir = tempfile::tempdir().unwrap();
    let agent = gui_rl::PirlAgent::new(gui_rl::AgentConfig {
        seed: 3,
        ..gui_rl::AgentConfig::default()
    })
    .unwrap();
    let mut strategy = gui_testing::pirltest::PirlStrategy::new(agent);
    let run = simulated_run(dir.path(), "pirltest", &mut strategy, 25);
    let pages = strategy.agent().stats().pages;
    assert!(pages >= 2, "one page only");
    let folder = RunFolder::load(&run).unwrap();
    assert!(folder.steps.iter().all(|s| s.seen.is_some()));
    let mut device = open_report(dir.path(), folder);
    let nodes = device
        .evaluate("document.querySelectorAll('svg.graph a.node').length")
        .unwrap();
    assert_eq!(nodes, serde_json::json!(pages));
    let shots = device
        .evaluate(
            "[document.querySelectorAll('svg.shot').length, \
              document.querySelectorAll('svg.shot g rect').length]",
        )
        .unwrap();
    assert_eq!(shots[0], 25, "one annotated screen per step");
    assert!(shots[1].as_u64().unwrap() > 0, "no widget boxes drawn");
    // Clicking a node goes to that page's entry.
    let hash = device
        .evaluate(
            "(() => { const a = document.querySelectorAll('svg.graph a.node')[1]; \
              a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true})); \
              return location.hash; })()",
        )
        .unwrap();
    assert_eq!(hash, "#page-0-1");
    // The script ran: a wheel event zooms the graph.
    let zoomed = device
        .evaluate(
            "(() => { const g = document.querySelector('svg.graph'); \
              const before = g.getAttribute('viewBox'); \
              g.dispatchEvent(new WheelEvent('wheel', {deltaY: -100, clientX: 50, clientY: 50, cancelable: true})); \
              return before !== g.getAttribute('viewBox'); })()",
        )
        .unwrap();
    assert_eq!(zoomed, true, "the report's script did not run");
    let signals = device.drain_signals().unwrap();
    assert!(signals.is_empty(), "the report page reported {signals:?}");
}

fn report(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_report"))
        .args(args)
        .output()
        .expect("run report")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_report_binary_exits_with_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let clean = clean_run(dir.path());
    let out = report(&[&clean]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let html_path = clean.join("report.html");
    assert!(text(&out.stdout).contains(&html_path.display().to_string()));
    assert!(
        std::fs::read_to_string(&html_path)
            .unwrap()
            .contains("No bugs found.")
    );

    let buggy = monkey_run(dir.path(), 15);
    inject_hostile_signal(&buggy, 3);
    let junit = dir.path().join("out.xml");
    let json = dir.path().join("out.json");
    let html = dir.path().join("both.html");
    let out = Command::new(env!("CARGO_BIN_EXE_report"))
        .arg(&clean)
        .arg(&buggy)
        .arg("--html")
        .arg(&html)
        .arg("--junit")
        .arg(&junit)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for path in [&html, &junit, &json] {
        assert!(stdout.contains(&path.display().to_string()), "{stdout}");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(summary["exit_code"], 1);
    assert_eq!(summary["runs"][0]["unique_signals"], 0);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_valid_junit(&junit);
    assert!(xml.contains("<testsuite name=\"scripted seed 11\""));
    assert!(xml.contains("<testsuite name=\"monkey seed 11\""));
}

/// Validates a JUnit file against the schema CI servers read (`tests/data/junit.xsd`)
/// with xmllint, which `cargo xtask setup` installs (Debian `libxml2-utils`).
fn assert_valid_junit(path: &Path) {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit.xsd");
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(path)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run xmllint ({e}): `cargo xtask setup` installs libxml2-utils")
        });
    assert!(
        out.status.success(),
        "{} does not validate against {}: {}",
        path.display(),
        schema.display(),
        text(&out.stderr)
    );
}

#[test]
fn the_report_binary_names_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-run");
    let out = report(&[&missing]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(!missing.exists(), "nothing was written for a missing run");

    let run = clean_run(dir.path());
    std::fs::write(run.join("signals.jsonl"), "{oops}\n").unwrap();
    let out = report(&[&run]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("signals.jsonl:1"), "{err}");
}

#[test]
fn the_report_binary_renders_a_suite_folder_as_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for (strategy, steps) in [("monkey", 12), ("widget-random", 15)] {
        let run = monkey_run(&dir.path().join(strategy), steps);
        runs.push(gui_report::SuiteRun {
            app: "demo".into(),
            split: "tune".into(),
            kind: "form".into(),
            strategy: strategy.into(),
            seed: 1,
            result: gui_report::RunResult::of(&RunFolder::load(&run).unwrap()),
        });
    }
    let settings = gui_report::SuiteSettings {
        strategies: vec!["monkey".into(), "widget-random".into()],
        seeds: vec![1],
        steps: 15,
        throttle: "200".into(),
        jobs: 1,
        minutes: None,
    };
    let suite = gui_report::Suite::summarise(settings, &runs, 0);
    let folder = dir.path().join("suite");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("suite.json"),
        serde_json::to_vec(&suite).unwrap(),
    )
    .unwrap();
    let out = report(&[&folder]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(folder.join("report.html")).unwrap();
    assert!(html.contains("<h2>Split tune</h2>"), "{html}");
    assert!(html.contains("widget-random (median of 1 seed(s))"));
    assert_eq!(html.matches("<svg").count(), 1, "one plot for the one app");
    // A suite has no JUnit form, and a torn suite.json is named.
    let out = Command::new(env!("CARGO_BIN_EXE_report"))
        .arg(&folder)
        .arg("--junit")
        .arg(dir.path().join("x.xml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--junit"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(folder.join("suite.json"), "{\"settings\":").unwrap();
    let out = report(&[&folder]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("suite.json"),
        "{}",
        text(&out.stderr)
    );
}
