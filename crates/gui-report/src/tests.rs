//! Run folders written by hand with `RunRecorder`, so every field a report shows is known.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use gui_core::{
    Action, ActionKind, ActionParam, CoverageSnapshot, Point, Rect, Screenshot, Signal, SignalKind,
    Size, StackFrame, Widget, WidgetKind,
};
use gui_explore::{
    EventRecord, Insight, Minimised, RunRecorder, StepRecord, StepTimings, StopReason, Summary,
};
use serde_json::json;

use crate::escape::escape;
use crate::*;

const HOSTILE_MESSAGE: &str = r#"TypeError: <script>alert('x')</script> "q" & more"#;
const HOSTILE_TEXT: &str = r#""><img src=x onerror=alert(1)>"#;

fn screen(step: u64) -> Screenshot {
    let img = image::RgbImage::from_pixel(640, 400, image::Rgb([step as u8 * 40, 90, 200]));
    Screenshot::new(img, 1.0, step).unwrap()
}

fn coverage(covered: u64) -> CoverageSnapshot {
    CoverageSnapshot {
        functions_covered: covered,
        functions_total: 12,
        ..CoverageSnapshot::default()
    }
}

fn hostile_signal() -> Signal {
    Signal::new(
        SignalKind::UncaughtException,
        HOSTILE_MESSAGE,
        vec![StackFrame {
            function: "<lambda>".into(),
            url: "http://127.0.0.1:1/app.js?a=1&b=2".into(),
            line: 3,
            column: 7,
        }],
    )
}

/// A three-step run; `bug` puts a signal at step 2; `finish` writes summary.json.
fn write_run(dir: &Path, bug: bool, finish: bool) -> PathBuf {
    let run = dir.join(if bug { "buggy" } else { "clean" });
    let mut rec =
        RunRecorder::create(&run, &json!({"strategy": "monkey", "seed": 3, "url": "x"})).unwrap();
    rec.durable = false;
    rec.save_screenshot(0, &screen(0)).unwrap();
    let mut counts = HashMap::new();
    for step in 1..=3 {
        let shot = rec.save_screenshot(step, &screen(step)).unwrap();
        let mut new_signals = vec![];
        if bug && step == 2 {
            let signal = hostile_signal();
            rec.append_signal(&signal, step, &shot).unwrap();
            counts.insert(signal.key.clone(), 2);
            new_signals.push(signal.key);
        }
        let mut action = Action::at(ActionKind::Input, Point::new(5, 6));
        action.param = Some(ActionParam::Text(HOSTILE_TEXT.into()));
        rec.append_step(&StepRecord {
            step,
            action,
            screenshot: shot,
            viewport: Size::new(640, 400),
            coverage: Some(coverage(step * 3)),
            new_signals,
            signals_observed: 0,
            error: (step == 3).then(|| "cannot <type> here".to_owned()),
            timings: StepTimings::default(),
            elapsed_ms: step * 100,
            // Pages 0 -> 1 -> 0 -> ..., with a button the page shows.
            seen: Some(Insight {
                page: Some((step + 1) % 2),
                widgets: vec![Widget::new(
                    Rect::new(4, 4, 20, 10),
                    WidgetKind::Button,
                    0.9,
                )],
            }),
            worker: None,
            signal_keys: Vec::new(),
            new_functions: Vec::new(),
        })
        .unwrap();
    }
    if finish {
        rec.finish(&Summary {
            strategy: "monkey".into(),
            device: "simulator".into(),
            throttle: "none".into(),
            steps: 3,
            duration_ms: 321,
            stopped_because: StopReason::Steps,
            coverage: Some(coverage(9)),
            unique_signals: counts.len(),
            signal_counts: counts,
            device_restarts: 0,
            failed_actions: 1,
            median_round_trip_ms: 1.0,
            workers: 1,
            steps_by_worker: Vec::new(),
            resumed_at: Vec::new(),
            stop_note: None,
        })
        .unwrap();
    }
    run
}

fn load(dir: &Path, bug: bool, finish: bool) -> RunFolder {
    RunFolder::load(write_run(dir, bug, finish)).unwrap()
}

#[test]
fn app_text_is_escaped_in_text_and_in_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let html = render_html(&[load(dir.path(), true, true)], &HtmlOptions::default()).unwrap();
    // Text context: the message and the step error.
    assert!(html.contains(&format!(
        "<pre class=\"message\">{}</pre>",
        escape(HOSTILE_MESSAGE)
    )));
    assert!(
        html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &quot;q&quot; &amp; more")
    );
    assert!(html.contains("cannot &lt;type&gt; here"));
    assert!(html.contains("app.js?a=1&amp;b=2"));
    // Attribute context: the typed text in a tooltip, the signal key in a heading's title.
    assert!(html.contains(r#"title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;""#));
    assert!(html.contains(
        "<h4 title=\"UncaughtException|TypeError: &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; \
         &quot;q&quot; &amp; more|&lt;lambda&gt;@http://127.0.0.1:1/app.js?a=1&amp;b=2:3:7\">"
    ));
    // Nothing of it survives as markup: the one script is the report's own.
    assert_eq!(
        html.matches("<script").count(),
        1,
        "a script element in the report"
    );
    assert!(html.contains(&format!("<script>{}</script>", crate::html::SCRIPT)));
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("onerror=alert(1)>"));
}

#[test]
fn the_page_loads_nothing_from_outside() {
    let dir = tempfile::tempdir().unwrap();
    let html = render_html(&[load(dir.path(), true, true)], &HtmlOptions::default()).unwrap();
    let sources: Vec<&str> = html.split("src=\"").skip(1).collect();
    let links: Vec<&str> = html.split("href=\"").skip(1).collect();
    assert!(sources.len() >= 2 && links.len() >= 6);
    for s in sources.into_iter().chain(links) {
        assert!(
            s.starts_with("data:image/png;base64,") || s.starts_with('#'),
            "{}",
            &s[..40]
        );
    }
    assert!(!html.contains("href=\"http"));
    // CSS and SVG references stay inside the page (`url(#arrow-0)`).
    assert!(html.split("url(").skip(1).all(|s| s.starts_with('#')));
    assert!(html.contains("Content-Security-Policy"));
}

#[test]
fn thumbnails_are_scaled_to_the_configured_width() {
    let dir = tempfile::tempdir().unwrap();
    let run = load(dir.path(), false, true);
    for (width, want) in [(320, (320, 200)), (1000, (640, 400))] {
        let options = HtmlOptions {
            thumbnail_width: width,
            ..HtmlOptions::default()
        };
        let html = render_html(std::slice::from_ref(&run), &options).unwrap();
        let data = html
            .split("data:image/png;base64,")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap();
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let img = image::load_from_memory(&png).unwrap();
        assert_eq!((img.width(), img.height()), want);
    }
}

#[test]
fn only_the_first_steps_get_thumbnails_and_missing_screens_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = write_run(dir.path(), false, true);
    std::fs::remove_file(run_dir.join("screenshots/step-000001.png")).unwrap();
    let run = RunFolder::load(&run_dir).unwrap();
    let options = HtmlOptions {
        thumbnail_steps: 2,
        ..HtmlOptions::default()
    };
    let html = render_html(&[run], &options).unwrap();
    // Steps 1 and 2 show the screens they were chosen on (0, and 1 whose file is gone);
    // step 3 and the end screen are past the limit.
    assert_eq!(html.matches("<svg class=\"shot\"").count(), 1);
    assert!(html.contains("screen before step 1"));
    assert!(!html.contains("screen before step 3"));
    assert!(!html.contains("screen after step 3"));
    assert!(
        html.contains("step-000001.png"),
        "the missing file is named"
    );
}

#[test]
fn several_runs_share_one_coverage_plot() {
    let dir = tempfile::tempdir().unwrap();
    let runs = [load(dir.path(), true, true), load(dir.path(), false, true)];
    let html = render_html(&runs, &HtmlOptions::default()).unwrap();
    assert_eq!(html.matches("<section id=\"coverage\">").count(), 1);
    // Over steps and over time, one line per run in each.
    assert_eq!(html.matches("<polyline").count(), 4);
    assert!(html.contains("<title>Functions covered over time</title>"));
    assert!(html.contains("monkey seed 3 (buggy)") && html.contains("monkey seed 3 (clean)"));
    assert!(matches!(
        render_html(&[], &HtmlOptions::default()),
        Err(Error::NoRuns)
    ));
}

#[test]
fn the_summary_shows_totals_and_agent_pages() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = write_run(dir.path(), true, true);
    std::fs::write(run_dir.join("agent.json"), r#"{"stats": {"pages": 5}}"#).unwrap();
    let run = RunFolder::load(&run_dir).unwrap();
    assert_eq!(run.pages(), Some(5));
    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    assert!(html.contains("3 steps in 0.3 s, 9 of 12 functions covered"));
    assert!(html.contains("9 / 12 (75.0%)"));
    assert!(html.contains("seen 2 times"));
    assert!(html.contains("<td class=\"n\">5</td>"), "pages found");
    assert!(html.contains(&format!(
        "replay {} --until-step 2",
        escape(&run_dir.display().to_string())
    )));
}

#[test]
fn junit_has_one_suite_per_run_and_one_case_per_signal() {
    let dir = tempfile::tempdir().unwrap();
    let runs = [load(dir.path(), true, true), load(dir.path(), false, true)];
    let xml = junit_xml(&runs);
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    assert!(xml.contains("tests=\"3\" failures=\"2\" errors=\"0\""));
    assert_eq!(xml.matches("<testsuite ").count(), 2);
    assert_eq!(xml.matches("<testcase ").count(), 3);
    assert_eq!(xml.matches("<failure ").count(), 2);
    assert!(xml.contains(
        "<testsuite name=\"monkey seed 3\" tests=\"2\" failures=\"2\" errors=\"0\" skipped=\"0\" time=\"0.321\">"
    ));
    assert!(
        xml.contains("name=\"exploration\" time=\"0.321\"/>"),
        "clean run passes"
    );
    assert!(xml.contains(&format!("<failure message=\"{}\"", escape(HOSTILE_MESSAGE))));
    assert!(xml.contains("at &lt;lambda&gt; (http://127.0.0.1:1/app.js?a=1&amp;b=2:3:7)"));
    assert!(!xml.contains("<script") && !xml.contains("<lambda"));
    // Every element that opens is closed.
    for tag in ["testsuites", "testsuite", "properties", "failure"] {
        assert_eq!(
            xml.matches(&format!("<{tag} ")).count() + xml.matches(&format!("<{tag}>")).count(),
            xml.matches(&format!("</{tag}>")).count(),
            "{tag}"
        );
    }
}

#[test]
fn exit_code_is_one_exactly_when_a_run_found_a_bug() {
    let dir = tempfile::tempdir().unwrap();
    let clean = load(dir.path(), false, true);
    let buggy = load(dir.path(), true, true);
    assert_eq!(exit_code(std::slice::from_ref(&clean)), EXIT_CLEAN);
    assert_eq!(exit_code(std::slice::from_ref(&buggy)), EXIT_BUGS);
    assert_eq!(exit_code(&[clean.clone(), buggy.clone()]), EXIT_BUGS);
    let summary = json_summary(&[clean, buggy]);
    assert_eq!(summary["exit_code"], 1);
    assert_eq!(summary["unique_signals"], 1);
    assert_eq!(summary["runs"][1]["bugs"][0]["first_step"], 2);
    assert_eq!(summary["runs"][1]["bugs"][0]["occurrences"], 2);
    assert_eq!(summary["runs"][1]["bugs"][0]["message"], HOSTILE_MESSAGE);
    assert_eq!(summary["runs"][0]["stopped_because"], "steps");
    assert_eq!(summary["runs"][0]["coverage"]["functions_covered"], 9);
}

#[test]
fn a_killed_run_with_torn_lines_still_reports() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = write_run(dir.path(), true, false);
    for (file, torn) in [
        ("steps.jsonl", r#"{"step":4,"act"#),
        ("signals.jsonl", r#"{"key":"Crash|"#),
    ] {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(run_dir.join(file))
            .unwrap();
        f.write_all(torn.as_bytes()).unwrap();
    }
    let run = RunFolder::load(&run_dir).unwrap();
    assert!(!run.is_complete());
    assert_eq!(run.steps.len(), 3);
    assert_eq!(run.signals.len(), 1);
    assert_eq!(run.step_count(), 3);
    assert_eq!(run.duration_ms(), 300);
    assert_eq!(run.coverage().unwrap().functions_covered, 9);
    assert_eq!(run.occurrences(&run.signals[0].key), None);

    let html = render_html(std::slice::from_ref(&run), &HtmlOptions::default()).unwrap();
    assert!(html.contains("incomplete run (no summary.json)"));
    let xml = junit_xml(std::slice::from_ref(&run));
    assert!(xml.contains("has no summary.json"), "{xml}");
    assert!(xml.contains("failures=\"2\""));
    assert_eq!(json_summary(&[run])["runs"][0]["complete"], false);
}

#[test]
fn a_killed_clean_run_fails_its_exploration_case_but_not_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let runs = [load(dir.path(), false, false)];
    assert_eq!(exit_code(&runs), EXIT_CLEAN);
    let xml = junit_xml(&runs);
    assert!(xml.contains("tests=\"1\" failures=\"1\""));
    assert!(xml.contains("<failure message=\"the run did not end normally"));
}

#[test]
fn a_torn_optional_file_is_left_out_with_a_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = write_run(dir.path(), true, true);
    // Cut short as by a crash in the middle of a plain write.
    for name in [
        "agent.json",
        "greybox.json",
        "monkeypp.json",
        "visiondroid.json",
    ] {
        std::fs::write(run_dir.join(name), r#"{"stats": {"pa"#).unwrap();
    }
    // JSON, but not minimised reproductions.
    std::fs::write(run_dir.join("minimised.json"), r#"{"key": 1}"#).unwrap();
    let run = RunFolder::load(&run_dir).unwrap();
    assert!(run.agent.is_none() && run.greybox.is_none() && run.minimised.is_empty());
    assert_eq!(run.steps.len(), 3, "the rest of the folder is read");
    for name in [
        "agent.json",
        "greybox.json",
        "monkeypp.json",
        "visiondroid.json",
        "minimised.json",
    ] {
        let path = run_dir.join(name).display().to_string();
        assert!(
            run.warnings.iter().any(|w| w.contains(&path)),
            "{name}: {:?}",
            run.warnings
        );
    }
    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    assert!(html.contains("Left out of this report"));
    assert!(html.contains("the report leaves agent.json out"));
    assert!(html.contains("3 steps in 0.3 s"));
}

#[test]
fn errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = RunFolder::load(&missing).unwrap_err();
    assert!(matches!(err, Error::MissingFolder { .. }));
    assert!(err.to_string().contains("nope"), "{err}");

    let err = RunFolder::load(dir.path()).unwrap_err();
    assert!(matches!(err, Error::NotARunFolder { .. }), "{err}");

    let run_dir = write_run(dir.path(), true, true);
    let signals = run_dir.join("signals.jsonl");
    let good = std::fs::read_to_string(&signals).unwrap();
    std::fs::write(&signals, format!("{good}{{\"key\": 1}}\n")).unwrap();
    let err = RunFolder::load(&run_dir).unwrap_err().to_string();
    assert!(err.contains("signals.jsonl:2"), "{err}");
    std::fs::write(&signals, good).unwrap();

    std::fs::write(run_dir.join("steps.jsonl"), "not json\n").unwrap();
    let err = RunFolder::load(&run_dir).unwrap_err().to_string();
    assert!(err.contains("steps.jsonl:1"), "{err}");

    let run_dir = write_run(dir.path(), false, true);
    std::fs::write(run_dir.join("summary.json"), "{").unwrap();
    let err = RunFolder::load(&run_dir).unwrap_err().to_string();
    assert!(err.contains("summary.json"), "{err}");
    std::fs::remove_file(run_dir.join("summary.json")).unwrap();

    std::fs::write(
        run_dir.join("run.json"),
        r#"{"format": "other", "format_version": 1}"#,
    )
    .unwrap();
    let err = RunFolder::load(&run_dir).unwrap_err().to_string();
    assert!(err.contains("run.json") && err.contains("other"), "{err}");
}

#[test]
fn the_page_graph_has_the_recorded_pages_and_transitions() {
    let dir = tempfile::tempdir().unwrap();
    let run = load(dir.path(), true, true);
    let graph = PageGraph::of(&run);
    // Steps 1, 2, 3 were chosen on pages 0, 1, 0.
    assert_eq!(graph.nodes.len(), 2);
    assert_eq!((graph.nodes[0].page, graph.nodes[0].column), (0, 0));
    assert_eq!((graph.nodes[1].page, graph.nodes[1].column), (1, 1));
    assert_eq!(graph.nodes[0].steps, vec![1, 3]);
    let edges: Vec<(u64, u64, Vec<u64>)> = graph
        .edges
        .iter()
        .map(|e| (e.from, e.to, e.steps.clone()))
        .collect();
    assert_eq!(edges, vec![(0, 1, vec![1]), (1, 0, vec![2])]);
    assert_eq!(graph.moves[&3], (0, None));

    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    assert_eq!(html.matches("<a class=\"node\"").count(), 2);
    assert!(html.contains("id=\"page-0-1\""));
    assert_eq!(html.matches("<path class=\"edge").count(), 2);
    assert!(html.contains("page 0 → page 1: 1 time (steps 1)"));
    // The CSP admits exactly the report's script.
    assert!(html.contains(&format!("script-src {}", crate::html::script_hash())));
}

#[test]
fn a_strategy_without_pages_gets_no_graph() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = load(dir.path(), false, true);
    for s in &mut run.steps {
        s.seen = None;
    }
    assert!(PageGraph::of(&run).is_empty());
    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    assert!(!html.contains("id=\"pages\""));
    assert!(!html.contains("class=\"legend\""));
}

#[test]
fn steps_show_the_detected_widgets_and_the_action_on_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let html = render_html(&[load(dir.path(), false, true)], &HtmlOptions::default()).unwrap();
    let button = WidgetKind::Button.index();
    // One button box per step, labelled, and the action's point as a ring (640 px wide
    // screens of a 640 px viewport: no scaling).
    assert_eq!(
        html.matches(&format!(
            "<g class=\"k{button}\"><rect x=\"4\" y=\"4\" width=\"20\" height=\"10\""
        ))
        .count(),
        3
    );
    assert!(html.contains(">button</text><title>button (0.90)</title>"));
    assert_eq!(
        html.matches("<circle class=\"act\" cx=\"5\" cy=\"6\"")
            .count(),
        3
    );
}

#[test]
fn minimised_reproductions_are_shown_with_their_replay_command() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = write_run(dir.path(), true, true);
    let m = Minimised {
        key: "UncaughtException|TypeError: <b>|f@/app.js:1:1".into(),
        run: "runs/x y".into(),
        original_steps: 40,
        steps: vec![13, 26, 40],
        actions: vec![Action::at(ActionKind::Click, Point::new(1, 2)); 3],
        tests: 21,
        confirmed: true,
    };
    std::fs::write(
        run_dir.join("minimised.json"),
        serde_json::to_vec(&[m]).unwrap(),
    )
    .unwrap();
    let html = render_html(
        &[RunFolder::load(&run_dir).unwrap()],
        &HtmlOptions::default(),
    )
    .unwrap();
    assert!(html.contains("<h2>Minimised reproductions</h2>"));
    assert!(html.contains("3 of 40 steps of <code>runs/x y</code> are needed (21 replays)"));
    assert!(html.contains("TypeError: &lt;b&gt;"));
    assert!(html.contains("replay &#39;runs/x y&#39; --only-steps 13,26,40"));
}

#[test]
fn greybox_runs_show_their_test_case_figures_and_the_sequence_behind_each_bug() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_run(dir.path(), true, true);
    std::fs::write(
        path.join("greybox.json"),
        serde_json::json!({
            "mode": {"mode": "greybox", "len": 2, "top": null},
            "configuration": "D",
            "events": 64, "efg_edges": 644, "edg_edges": 295, "sequences": 321,
            "replayed": 321, "broken": 2, "generation_ms": 35.5,
            "generation_ms_per_sequence": 0.11, "execution_s": 269.1,
            "execution_s_per_case": 0.84,
            "bugs": [{"key": "UncaughtException|TypeError: <b>", "first_case": 3,
                      "sequence": ["#nav-settings click", "#a<img> click"]}],
        })
        .to_string(),
    )
    .unwrap();
    let run = RunFolder::load(&path).unwrap();
    assert!(run.greybox.is_some());
    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    assert!(html.contains("<h2>Grey-box test cases</h2>"));
    assert!(html.contains("greybox, configuration D, len 2, top ∞."));
    assert!(html.contains("<td class=\"n\">321</td>"));
    assert!(html.contains("#nav-settings click → #a&lt;img&gt; click"));
    assert!(html.contains("TypeError: &lt;b&gt;"));
    // Runs of other strategies have no such section.
    let other = load(tempfile::tempdir().unwrap().path(), false, true);
    let html = render_html(&[other], &HtmlOptions::default()).unwrap();
    assert!(!html.contains("Grey-box test cases"));
}

#[test]
fn monkeypp_runs_show_the_plan_against_its_bound_and_what_was_not_covered() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_run(dir.path(), true, true);
    std::fs::write(
        path.join("monkeypp.json"),
        serde_json::json!({
            "model": {"screens": 13, "ui": 62, "methods": 77, "statements": 447, "edges": 698},
            "planned_interactions": 74, "interactions": 76,
            "bound": {"at_least": 72}, "ratio_to_bound": 1.0277,
            "interface_coverage": 0.5, "covered_ui": 31, "ui_total": 62,
            "recoveries": 1, "unreached": ["#x<y> click"], "missing": [],
        })
        .to_string(),
    )
    .unwrap();
    let run = RunFolder::load(&path).unwrap();
    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    assert!(html.contains("<h2>Monkey++ interface coverage</h2>"));
    assert!(html.contains("a model of 13 screens, 62 controls, 77 methods and 447 statements"));
    assert!(html.contains("<td class=\"n\">≥ 72</td><td class=\"n\">1.03</td>"));
    assert!(html.contains("50.0% (31/62)"));
    assert!(html.contains("Not reached by the plan: <code>#x&lt;y&gt; click</code>"));
    assert!(!html.contains("Not offered when planned"));
    let other = load(tempfile::tempdir().unwrap().path(), false, true);
    let html = render_html(&[other], &HtmlOptions::default()).unwrap();
    assert!(!html.contains("Monkey++ interface coverage"));
}

#[test]
fn visiondroid_runs_show_each_suspected_bug_with_its_screens_and_reasoning() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_run(dir.path(), true, true);
    std::fs::write(
        path.join("visiondroid.json"),
        serde_json::json!({
            "llm": "gpt-4o at http://127.0.0.1:1/v1",
            "functions": [["Change cart quantity", 2], ["Open <settings>", 1]],
            "segments": [{"index": 0, "steps": [1, 2], "functions": [], "checked": true}],
            "modularity": 0.42,
            "failures": [],
            "accounting": {"calls": 7, "prompt_tokens": 1200, "completion_tokens": 90},
            "bugs": [{
                "scope": "inter_page", "steps": [1], "screens": ["#/cart"],
                "functions": ["Change cart quantity"], "category": "numerical calculation error",
                "description": "the total <b>$17.75</b> is not the sum", "reasoning": "2.50 + 12.00 + 7.25",
                "segment": 0
            }],
        })
        .to_string(),
    )
    .unwrap();
    let run = RunFolder::load(&path).unwrap();
    let html = render_html(&[run], &HtmlOptions::default()).unwrap();
    assert!(html.contains("<h2>VisionDroid: suspected non-crash bugs</h2>"));
    assert!(html.contains("7 model calls, 1200 prompt and 90 completion tokens"));
    assert!(html.contains("Change cart quantity ×2, Open &lt;settings&gt; ×1"));
    assert!(html.contains("the total &lt;b&gt;$17.75&lt;/b&gt; is not the sum"));
    assert!(html.contains("Steps 1 (across screens) on <code>#/cart</code>"));
    assert!(html.contains("<figcaption>step 1</figcaption>"));
    let other = load(tempfile::tempdir().unwrap().path(), false, true);
    let html = render_html(&[other], &HtmlOptions::default()).unwrap();
    assert!(!html.contains("VisionDroid"));
}

/// Appends `(after_step, event, detail)` lines to the run's `events.jsonl`, as the loop
/// writes them.
fn append_events(run_dir: &Path, events: &[(u64, &str, &str)]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(run_dir.join("events.jsonl"))
        .unwrap();
    for &(after_step, event, detail) in events {
        let record = EventRecord {
            after_step,
            event: event.into(),
            detail: detail.into(),
            worker: None,
        };
        writeln!(f, "{}", serde_json::to_string(&record).unwrap()).unwrap();
    }
}

const HOSTILE_DIALOG: &str = r#"alert "<script>alert(1)</script>" accepted (×3)"#;

/// A clean run whose device answered four dialogs (three folded into one line), closed a
/// tab, brought the app back once, and was lost and restarted once.
fn run_with_device_events(dir: &Path) -> PathBuf {
    let run_dir = write_run(dir, false, true);
    append_events(
        &run_dir,
        &[
            (1, "dialog", r#"confirm "Delete?" accepted"#),
            (2, "dialog", HOSTILE_DIALOG),
            (2, "tab_closed", "https://ads.example/?a=1&b=2"),
            (3, "left_app", "https://elsewhere.example/"),
            (3, "device_lost", "click: target closed"),
            (3, "device_restarted", "after step 3"),
            // A grey-box replay's line: neither the device's nor a restart.
            (3, "test_case", "test case 1 done"),
        ],
    );
    run_dir
}

#[test]
fn what_the_device_handled_is_counted_listed_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunFolder::load(run_with_device_events(dir.path())).unwrap();
    assert_eq!(run.events.len(), 7);
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
    let html = render_html(std::slice::from_ref(&run), &HtmlOptions::default()).unwrap();
    assert!(html.contains("<h2>What the device handled</h2>"));
    for (label, kind, n) in [
        ("dialogs answered", "dialog", 4),
        ("tabs closed", "tab_closed", 1),
        ("returns to the app", "left_app", 1),
        ("downloads", "download", 0),
    ] {
        assert!(html.contains(&format!("<th>{label}</th>")), "{label}");
        assert!(
            html.contains(&format!("<td class=\"n\" data-kind=\"{kind}\">{n}</td>")),
            "{kind}"
        );
    }
    // One row per line, its step linking to the step's row.
    assert!(html.contains(
        "<tr><td class=\"n\"><a href=\"#step-0-2\">2</a></td><td>tab_closed</td>\
         <td>https://ads.example/?a=1&amp;b=2</td></tr>"
    ));
    assert!(html.contains(r#"<td>confirm &quot;Delete?&quot; accepted</td>"#));
    assert!(html.contains(&format!("<td>{}</td>", escape(HOSTILE_DIALOG))));
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the report's own script"
    );
    // The restarts have their own section; other lines are not shown.
    assert!(html.contains("<h2>Device restarts</h2>"));
    assert!(html.contains("<td>device_lost</td><td>click: target closed</td>"));
    assert!(html.contains("<td>device_restarted</td>"));
    assert!(!html.contains("test case 1 done"));

    // Not bugs: no signal, no failure, a clean exit, counts beside the verdict.
    assert!(!run.has_bugs());
    assert!(!html.contains("class=\"bad\""));
    let xml = junit_xml(std::slice::from_ref(&run));
    assert!(xml.contains("tests=\"1\" failures=\"0\""), "{xml}");
    assert!(!xml.contains("<failure"));
    assert!(!xml.contains("Delete?") && !xml.contains("ads.example"));
    assert_eq!(exit_code(std::slice::from_ref(&run)), EXIT_CLEAN);
    let summary = json_summary(std::slice::from_ref(&run));
    let counts = &summary["runs"][0]["device_events"];
    assert_eq!(counts["dialog"], 4);
    assert_eq!(counts["tab_closed"], 1);
    assert_eq!(counts["left_app"], 1);
    assert_eq!(counts["download"], 0);
    assert_eq!(summary["unique_signals"], 0);
}

#[test]
fn long_event_tables_say_how_many_rows_they_leave_out() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = run_with_device_events(dir.path());
    let options = HtmlOptions {
        event_rows: 2,
        ..HtmlOptions::default()
    };
    let html = render_html(&[RunFolder::load(&run_dir).unwrap()], &options).unwrap();
    // Four device lines, two shown; the counts still cover all of them.
    assert!(html.contains(&format!(
        "<p>And 2 more, not shown; all are in <code>{}</code>.</p>",
        escape(&run_dir.join("events.jsonl").display().to_string())
    )));
    assert!(!html.contains("ads.example"));
    assert!(html.contains("<td class=\"n\" data-kind=\"left_app\">1</td>"));
    // Both restart lines fit.
    assert!(html.contains("<td>device_restarted</td>"));
}

#[test]
fn a_run_without_device_events_has_no_such_section() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = write_run(dir.path(), false, true);
    std::fs::remove_file(run_dir.join("events.jsonl")).unwrap();
    let run = RunFolder::load(&run_dir).unwrap();
    assert!(run.events.is_empty() && run.warnings.is_empty());
    let html = render_html(std::slice::from_ref(&run), &HtmlOptions::default()).unwrap();
    assert!(!html.contains("What the device handled"));
    assert!(!html.contains("Device restarts"));
    assert_eq!(
        json_summary(&[run])["runs"][0]["device_events"]["dialog"],
        0
    );
    // Beside a run that has some, it says so.
    let other_dir = tempfile::tempdir().unwrap();
    let other = RunFolder::load(run_with_device_events(other_dir.path())).unwrap();
    let runs = [RunFolder::load(&run_dir).unwrap(), other];
    let html = render_html(&runs, &HtmlOptions::default()).unwrap();
    assert!(html.contains("The device handled nothing for the app."));
    assert!(html.contains("The device was never lost and the run never resumed."));
}

#[test]
fn torn_and_malformed_event_lines_are_left_out_with_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = run_with_device_events(dir.path());
    let events = run_dir.join("events.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&events)
        .unwrap();
    f.write_all(b"{\"after_step\": \"three\"}\n").unwrap();
    append_events(&run_dir, &[(3, "download", "report.pdf")]);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&events)
        .unwrap();
    f.write_all(br#"{"after_step":3,"event":"dia"#).unwrap();
    let run = RunFolder::load(&run_dir).unwrap();
    assert_eq!(
        run.events.len(),
        8,
        "the lines around the bad ones are kept"
    );
    let path = events.display().to_string();
    assert_eq!(run.warnings.len(), 2, "{:?}", run.warnings);
    assert!(
        run.warnings
            .iter()
            .any(|w| w.starts_with(&format!("{path}:8: "))
                && w.ends_with("the report leaves that event out"))
    );
    assert!(
        run.warnings
            .iter()
            .any(|w| w.starts_with(&format!("{path}:10: the last line was cut short")))
    );
    let html = render_html(std::slice::from_ref(&run), &HtmlOptions::default()).unwrap();
    assert!(html.contains("Left out of this report"));
    assert!(html.contains("<td class=\"n\" data-kind=\"download\">1</td>"));
}

/// A finished run of `steps` steps whose coverage starts at 10 functions after step 1 and
/// grows by `per_step` each step after; `hang` adds a hang signal.
fn gain_run(dir: &Path, name: &str, per_step: u64, steps: u64, hang: bool) -> RunFolder {
    let run = dir.join(name);
    let mut rec = RunRecorder::create(&run, &json!({"strategy": name, "seed": 1})).unwrap();
    rec.durable = false;
    for step in 1..=steps {
        let shot = rec.save_screenshot(step, &screen(step % 5)).unwrap();
        if hang && step == 2 {
            let signal = Signal::new(
                SignalKind::Crash,
                "the page stopped answering (hang)",
                Vec::new(),
            );
            rec.append_signal(&signal, step, &shot).unwrap();
        }
        let covered = 10 + per_step * (step - 1);
        rec.append_step(&StepRecord {
            step,
            action: Action::at(ActionKind::Click, Point::new(1, 1)),
            screenshot: shot,
            viewport: Size::new(640, 400),
            coverage: Some(CoverageSnapshot {
                functions_covered: covered,
                functions_total: 500,
                bytes_covered: covered * 100,
                ..CoverageSnapshot::default()
            }),
            new_signals: Vec::new(),
            signals_observed: 0,
            error: None,
            timings: StepTimings {
                choose_ms: 10.0,
                ..StepTimings::default()
            },
            elapsed_ms: step * 1000,
            seen: None,
            worker: None,
            signal_keys: Vec::new(),
            new_functions: Vec::new(),
        })
        .unwrap();
    }
    rec.finish(&Summary {
        strategy: name.into(),
        device: "simulator".into(),
        throttle: "200".into(),
        steps,
        duration_ms: steps * 1000,
        stopped_because: StopReason::Steps,
        coverage: None,
        unique_signals: 0,
        signal_counts: HashMap::new(),
        device_restarts: 0,
        failed_actions: 0,
        median_round_trip_ms: 1.0,
        workers: 1,
        steps_by_worker: Vec::new(),
        resumed_at: Vec::new(),
        stop_note: None,
    })
    .unwrap();
    RunFolder::load(run).unwrap()
}

#[test]
fn a_suite_takes_medians_over_seeds_then_apps_and_ratios_to_both_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let settings = SuiteSettings {
        strategies: vec!["monkey".into(), "widget-random".into(), "pirltest".into()],
        seeds: vec![1, 2],
        steps: 11,
        throttle: "200".into(),
        jobs: 2,
        minutes: Some(2.0),
    };
    let mut runs = Vec::new();
    // Per-step gains on app a: monkey 1 and 3 (median gain 20), widget-random 4 (40),
    // pirltest 6 (60, one run with a hang). App b is in the test split: pirltest only.
    for (i, (app, split, strategy, seed, per_step, hang)) in [
        ("a", "tune", "monkey", 1, 1, false),
        ("a", "tune", "monkey", 2, 3, false),
        ("a", "tune", "widget-random", 1, 4, false),
        ("a", "tune", "pirltest", 1, 6, true),
        ("b", "test", "pirltest", 1, 2, false),
    ]
    .into_iter()
    .enumerate()
    {
        runs.push(SuiteRun {
            app: app.into(),
            split: split.into(),
            kind: "editor".into(),
            strategy: strategy.into(),
            seed,
            result: RunResult::of(&gain_run(dir.path(), &format!("r{i}"), per_step, 11, hang)),
        });
    }
    let suite = Suite::summarise(settings, &runs, 3);
    assert_eq!(suite.missing_runs, 3);
    assert_eq!(suite.apps.len(), 2);
    let a = &suite.apps[0];
    assert_eq!(a.app, "a");
    let row = |name: &str| a.strategies.iter().find(|s| s.strategy == name).unwrap();
    assert_eq!(row("monkey").runs, 2);
    assert_eq!(row("monkey").function_gain, 20.0);
    assert_eq!(row("monkey").byte_gain, 2000.0);
    assert_eq!(row("pirltest").function_gain, 60.0);
    assert_eq!(row("pirltest").vs_monkey, Some(3.0));
    assert_eq!(row("pirltest").vs_widget_random, Some(1.5));
    assert_eq!((row("pirltest").hangs, row("pirltest").crashes), (1.0, 0.0));
    assert!((row("pirltest").agent_share - 0.01).abs() < 1e-9);
    assert!((row("pirltest").steps_per_minute - 60.0).abs() < 1e-9);
    // The curve starts at 0 after step 1 and ends at the gain.
    let curve = &a.curves["pirltest"];
    assert_eq!(curve.first(), Some(&(1, 0.0)));
    assert_eq!(curve.last(), Some(&(11, 60.0)));
    // App b has no baseline: no ratios, and its split has one app.
    let b = &suite.apps[1];
    assert_eq!(b.strategies.len(), 1);
    assert_eq!(b.strategies[0].vs_monkey, None);
    let split = |s: &str, st: &str| {
        suite
            .splits
            .iter()
            .find(|r| r.split == s && r.strategy == st)
            .unwrap()
    };
    assert_eq!(split("tune", "pirltest").vs_monkey, Some(3.0));
    assert_eq!(split("test", "pirltest").function_gain, 20.0);
    assert_eq!(split("test", "pirltest").vs_monkey, None);
    assert!(
        !suite
            .splits
            .iter()
            .any(|r| r.split == "test" && r.strategy == "monkey")
    );

    let md = suite.markdown();
    assert!(md.contains("3 run(s) have not finished"), "{md}");
    assert!(md.contains("bounded in time get 2 min"), "{md}");
    assert!(
        md.contains("| pirltest | 1 | 60 | 6000 | 3.00x | 1.50x |"),
        "{md}"
    );
    let html = suite.html();
    assert!(html.contains("Functions gained beyond the first step on a"));
    assert_eq!(html.matches("<svg").count(), 2);
    // suite.json round-trips.
    std::fs::write(
        dir.path().join("suite.json"),
        serde_json::to_vec(&suite).unwrap(),
    )
    .unwrap();
    assert_eq!(Suite::load(dir.path()).unwrap(), suite);
    std::fs::write(dir.path().join("suite.json"), "{").unwrap();
    let e = Suite::load(dir.path()).unwrap_err().to_string();
    assert!(e.contains("suite.json") && e.contains("not a suite"), "{e}");
}

#[test]
fn an_ablation_is_judged_against_each_run_of_its_base_by_the_default_rule() {
    let dir = tempfile::tempdir().unwrap();
    let strategies = ["pirltest", "pirltest#again", "pirltest:-x", "pirltest:+y"];
    let settings = SuiteSettings {
        strategies: strategies.iter().map(|s| (*s).to_owned()).collect(),
        seeds: vec![1],
        steps: 11,
        throttle: "200".into(),
        jobs: 1,
        minutes: None,
    };
    // Per-step gains. Without x, app a gains more (6 against 5: x costs it 17 %), app b
    // and c less; with y, every app gains at least as much as the default.
    let gains = [
        ("a", [5, 5, 6, 5]),
        ("b", [4, 4, 2, 5]),
        ("c", [3, 3, 1, 3]),
    ];
    let mut runs = Vec::new();
    for (app, per_step) in gains {
        for (strategy, g) in strategies.iter().zip(per_step) {
            let name = format!("{app}-{}", strategy.replace(['#', ':', '+'], "_"));
            runs.push(SuiteRun {
                app: app.into(),
                split: "tune".into(),
                kind: "editor".into(),
                strategy: (*strategy).into(),
                seed: 1,
                result: RunResult::of(&gain_run(dir.path(), &name, g, 11, false)),
            });
        }
    }
    let suite = Suite::summarise(settings, &runs, 0);
    let row = |s: &str, b: &str| {
        suite
            .ablations
            .iter()
            .find(|r| r.strategy == s && r.base == b)
            .unwrap_or_else(|| panic!("no row {s} against {b}: {:?}", suite.ablations))
    };
    // Two bases for each ablation; a labelled rerun is set against its base with no
    // verdict.
    assert_eq!(suite.ablations.len(), 5, "{:?}", suite.ablations);
    let rerun = row("pirltest#again", "pirltest");
    assert_eq!(
        (rerun.worst_ratio, rerun.plugins_earn_place),
        (Some(1.0), None)
    );
    let off = row("pirltest:-x", "pirltest");
    assert_eq!(off.apps, 3);
    assert_eq!((off.function_gain, off.base_gain), (20.0, 40.0));
    // x raises the median but costs app a more than 10 %: it does not earn its place.
    assert_eq!(off.worst_app.as_deref(), Some("a"));
    assert!((off.worst_ratio.unwrap() - 50.0 / 60.0).abs() < 1e-9);
    assert_eq!(off.plugins_earn_place, Some(false));
    let on = row("pirltest:+y", "pirltest#again");
    assert_eq!(on.plugins_earn_place, Some(true));
    assert_eq!(on.function_gain, 50.0);
    let md = suite.markdown();
    assert!(md.contains("### Ablations on `tune`"), "{md}");
    assert!(
        md.contains("| pirltest:-x | pirltest | 3 | 20 | 40 | 0.50x | a 0.83x | no |"),
        "{md}"
    );
    assert!(suite.html().contains("<h3>Ablations on tune</h3>"));
}
