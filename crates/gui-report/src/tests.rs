//! Run folders written by hand with `RunRecorder`, so every field a report shows is known.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use gui_core::{
    Action, ActionKind, ActionParam, CoverageSnapshot, Point, Screenshot, Signal, SignalKind, Size,
    StackFrame,
};
use gui_explore::{RunRecorder, StepRecord, StepTimings, StopReason, Summary};
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
    // Nothing of it survives as markup.
    assert!(!html.contains("<script"), "a script element in the report");
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("onerror=alert(1)>"));
}

#[test]
fn the_page_loads_nothing_from_outside() {
    let dir = tempfile::tempdir().unwrap();
    let html = render_html(&[load(dir.path(), true, true)], &HtmlOptions::default()).unwrap();
    let sources: Vec<&str> = html.split("src=\"").skip(1).collect();
    // Start screen, three steps, and the two screens around the bug.
    assert_eq!(sources.len(), 6);
    for s in sources {
        assert!(s.starts_with("data:image/png;base64,"), "{}", &s[..40]);
    }
    assert!(!html.contains("href=\"http"));
    assert!(!html.contains("url("));
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
    // Steps 0 and 2; step 1's file is gone and step 3 is past the limit.
    assert_eq!(html.matches("<img ").count(), 2);
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
    assert_eq!(html.matches("<svg").count(), 1);
    assert_eq!(html.matches("<polyline").count(), 2);
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
    std::fs::write(run_dir.join("agent.json"), "[1,").unwrap();
    let err = RunFolder::load(&run_dir).unwrap_err().to_string();
    assert!(err.contains("agent.json"), "{err}");

    std::fs::write(
        run_dir.join("run.json"),
        r#"{"format": "other", "format_version": 1}"#,
    )
    .unwrap();
    let err = RunFolder::load(&run_dir).unwrap_err().to_string();
    assert!(err.contains("run.json") && err.contains("other"), "{err}");
}
