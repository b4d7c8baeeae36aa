//! Monkey++ on the bundled demo app in real Chromium: the model is built from the app's
//! scripts and a survey of its screens, the search plans every control, and the plan
//! carried out on the page covers the whole interface and runs into the demo's bugs.

use gui_core::{Action, ActionKind, Point};
use gui_driver::{ChromiumConfig, ChromiumDevice, StaticServer};
use gui_explore::{StepRecord, StepTimings};
use gui_greybox::js::JsConfig;
use gui_greybox::web::WebApp;
use gui_model_search::web::{OUTSIDE, WebModelConfig, build_web_model, map_recorded_run, run_plan};
use gui_model_search::{Bound, Effect, Reuse, SearchConfig, VertexKind, bfs_bound, search};

fn effect_of<'m>(model: &'m gui_model_search::AppModel, id: &str) -> Option<&'m Effect> {
    let v = model
        .vertices
        .iter()
        .find(|v| v.id == id)
        .unwrap_or_else(|| panic!("no control {id}"));
    match &v.kind {
        VertexKind::Ui { effect, .. } => effect.as_ref(),
        _ => panic!("{id} is not a control"),
    }
}

#[test]
fn the_demo_is_modelled_searched_and_covered_in_chromium() {
    let server = StaticServer::demo().expect("serve the demo app");
    let device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())
        .unwrap_or_else(|e| panic!("cannot start Chromium (`cargo xtask setup` installs it): {e}"));
    let mut app = WebApp::new(device, &JsConfig::default()).unwrap();
    let built = build_web_model(&mut app, &WebModelConfig::default()).unwrap();
    let model = &built.model;
    let names: Vec<&str> = model.screens.iter().map(|s| s.name.as_str()).collect();
    for want in [
        "#/home",
        "#/settings",
        "#/list",
        "dialog #help-dialog",
        "dialog #confirm-dialog",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(want)),
            "{want} not in {names:?}"
        );
    }
    assert!(model.launch.ends_with("#/home"), "{}", model.launch);
    assert!(
        matches!(effect_of(model, "#nav-settings click"), Some(Effect::Launch(s)) if s.ends_with("#/settings"))
    );
    assert_eq!(effect_of(model, "#help-close click"), Some(&Effect::Finish));
    assert_eq!(effect_of(model, "#confirm-no click"), Some(&Effect::Finish));
    assert_eq!(effect_of(model, "#home-counter-btn click"), None);
    // The static model spares the survey the controls whose code cannot change screens.
    assert!(
        built.skipped > built.probes / 2,
        "{} skipped, {} fired",
        built.skipped,
        built.probes
    );
    // Screens are come back to with Back; a restart only where Back cannot restore the
    // listing (Archive removed the rows; the confirm dialog's Yes removed one).
    assert!(
        built.backs > 2 * built.resets,
        "{} returns by Back, {} restarts",
        built.backs,
        built.resets
    );
    let counts = model.count();
    assert!(counts.methods > 50 && counts.statements > 300, "{counts:?}");

    let config = SearchConfig {
        reuse: Reuse::NewInstance,
        ..SearchConfig::default()
    };
    let plan = search(model, &config).unwrap();
    assert!(plan.unreached.is_empty(), "{:?}", plan.unreached);
    assert_eq!(plan.interface_coverage(), 1.0);
    let bound = bfs_bound(model, &config, &plan.touched(), Some(plan.interactions())).unwrap();
    let ratio = plan.interactions() as f64 / bound.value() as f64;
    assert!(
        (1.0..=1.2).contains(&ratio),
        "{} interactions against {bound:?}",
        plan.interactions()
    );
    assert!(
        bound.value() > counts.ui,
        "{bound:?}: leaving screens costs moves too"
    );
    assert!(matches!(bound, Bound::Exact(_) | Bound::AtLeast(_)));

    let live = run_plan(&mut app, model, &plan, "test", None).unwrap();
    assert!(live.missing.is_empty(), "{:?}", live.missing);
    assert_eq!(live.interface_coverage, 1.0);
    // Select all + Archive leaves no rows to tick: one restart brings them back.
    assert!(live.recoveries >= 1);
    assert!(live.steps.len() <= plan.interactions() + 3 * live.recoveries);
    let keys: Vec<&str> = live.signals.iter().map(|(_, s)| s.key.as_str()).collect();
    assert!(keys.iter().any(|k| k.contains("undoArchive")), "{keys:?}");
    assert!(keys.iter().any(|k| k.contains("checkout")), "{keys:?}");

    // A recorded run is re-executed and its touches mapped onto the controls: one on
    // the Settings button, one on empty space, one Back.
    gui_greybox::GreyboxApp::reset(&mut app).unwrap();
    let r = app
        .chromium()
        .element_rect("#nav-settings")
        .unwrap()
        .expect("nav-settings is shown");
    let step = |n: u64, action: Action| StepRecord {
        step: n,
        action,
        screenshot: String::new(),
        viewport: gui_core::Size::new(1280, 800),
        coverage: None,
        new_signals: Vec::new(),
        signals_observed: 0,
        error: None,
        timings: StepTimings::default(),
        elapsed_ms: 0,
        seen: None,
        worker: None,
        signal_keys: Vec::new(),
        new_functions: Vec::new(),
    };
    let steps = vec![
        step(1, Action::at(ActionKind::Click, r.center())),
        step(2, Action::at(ActionKind::Click, Point::new(1270, 790))),
        step(3, Action::new(ActionKind::Return)),
    ];
    let mapped = map_recorded_run(&mut app, model, &steps).unwrap();
    assert_eq!(mapped.events, 3);
    assert_eq!(mapped.hits, 1);
    assert_eq!(mapped.covered, ["#nav-settings click"]);
    assert_eq!(mapped.curve.len(), 3);
    assert!((mapped.interface_coverage - 1.0 / counts.ui as f64).abs() < 1e-9);
}

/// Plain links are read, not followed: one to another origin leads outside the app, one
/// to another window leaves the page where it is. Links of the app's own page are fired,
/// and the survey comes back from them with Back.
#[test]
fn the_survey_reads_plain_links_and_fires_the_app_own() {
    let dir = tempfile::tempdir().unwrap();
    // 192.0.2.1 is reserved for documentation: following the link would wait for a host
    // that never answers.
    std::fs::write(
        dir.path().join("index.html"),
        r##"<!doctype html><title>links</title>
<a id="two" href="#/two">two</a> <a id="three" href="#/three">three</a>
<a id="out" href="http://192.0.2.1/elsewhere">elsewhere</a>
<a id="tab" href="other.html" target="_blank">in a new tab</a>
<p id="where"></p>
<script>
  // The second link shows on the start page only: the survey has to come back for it.
  const show = () => {
    document.getElementById('where').textContent = location.hash;
    document.getElementById('three').hidden = location.hash !== '';
  };
  window.addEventListener('hashchange', show);
  show();
</script>"##,
    )
    .unwrap();
    let server = StaticServer::folder(dir.path(), "index.html").expect("serve the page");
    let device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())
        .unwrap_or_else(|e| panic!("cannot start Chromium (`cargo xtask setup` installs it): {e}"));
    let mut app = WebApp::new(device, &JsConfig::default()).unwrap();
    let built = build_web_model(&mut app, &WebModelConfig::default()).unwrap();
    let model = &built.model;
    assert_eq!(
        effect_of(model, "#out click"),
        Some(&Effect::Launch(OUTSIDE.into()))
    );
    assert_eq!(effect_of(model, "#tab click"), None);
    assert!(
        matches!(effect_of(model, "#three click"), Some(Effect::Launch(s)) if s.ends_with("index.html#/three"))
    );
    assert_eq!(built.read_links, 2);
    assert_eq!(built.probes, 2, "only the two hash links are fired");
    // From #/two, Back brings the start page back for the next link: no restart but
    // the first.
    assert_eq!(built.resets, 1);
    assert!(built.backs >= 1);
    assert!(model.screens.iter().any(|s| s.name == OUTSIDE));
}

/// The shared page of `tests/data/scale`: twelve rows that one handler serves (each opens
/// the row dialog), listed before a toolbar whose New and Help open dialogs of their own.
fn scale_app() -> (StaticServer, WebApp) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/scale");
    let server = StaticServer::folder(&dir, "index.html").expect("serve tests/data/scale");
    let device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())
        .unwrap_or_else(|e| panic!("cannot start Chromium (`cargo xtask setup` installs it): {e}"));
    (server, WebApp::new(device, &JsConfig::default()).unwrap())
}

fn row(i: usize) -> String {
    format!("#rows > li:nth-of-type({i}) > button:nth-of-type(1) click")
}

#[test]
fn the_survey_fires_one_row_of_a_list_and_takes_the_others_as_equivalent() {
    let (_server, mut app) = scale_app();
    let config = WebModelConfig {
        second_pass: false,
        ..WebModelConfig::default()
    };
    let built = build_web_model(&mut app, &config).unwrap();
    let s = &built.survey;
    // One row fired for all twelve: the others are recorded as equivalent to it...
    let equivalent: Vec<&String> = s.equivalent.keys().collect();
    assert_eq!(equivalent.len(), 11, "{:?}", s.equivalent);
    for i in 2..=12 {
        assert_eq!(s.equivalent.get(&row(i)), Some(&row(1)), "row {i}");
    }
    // ...and take its effect in the model: each opens the row dialog.
    for i in [1, 7, 12] {
        assert!(
            matches!(effect_of(&built.model, &row(i)), Some(Effect::Launch(d)) if d == "dialog #row-dialog"),
            "row {i}: {:?}",
            effect_of(&built.model, &row(i))
        );
    }
    // New, Help, the first row and the three dialogs' Close.
    assert_eq!(built.probes, 6);

    // With the second pass (the default, budget permitting) every row is fired after all,
    // and the toolbar, which follows the rows on the page, went first.
    let (_server, mut app) = scale_app();
    let mut order = Vec::new();
    let built = gui_model_search::web::build_web_model_watched(
        &mut app,
        &WebModelConfig::default(),
        None,
        &mut |p| order.push(p.probe.control.clone()),
    )
    .unwrap();
    assert!(built.survey.equivalent.is_empty());
    assert_eq!(built.probes, 17);
    let at = |id: &str| order.iter().position(|c| c == id).unwrap();
    assert!(
        at("#new click") < at(&row(1)) && at("#help click") < at(&row(1)),
        "{order:?}"
    );
    assert!(
        (2..=12).all(|i| at(&row(i)) > at("#row-close click")),
        "{order:?}"
    );
}

#[test]
fn the_survey_comes_back_by_escape_and_restarts_only_with_restart_every_probe() {
    let (_server, mut app) = scale_app();
    let built = build_web_model(&mut app, &WebModelConfig::default()).unwrap();
    // Each dialog a probe opened is closed by Escape (or its Close button) and the page's
    // controls are checked to be all back; only the first load is a restart.
    assert_eq!(built.resets, 1, "{} restarts", built.resets);
    assert!(built.backs >= 12, "{} returns by Back", built.backs);
    assert!(built.survey.timing.back_ms > 0);

    let (_server, mut app) = scale_app();
    let config = WebModelConfig {
        restart_every_probe: true,
        ..WebModelConfig::default()
    };
    let restarted = build_web_model(&mut app, &config).unwrap();
    assert_eq!(restarted.backs, 0);
    assert!(restarted.resets >= 12, "{} restarts", restarted.resets);
    // The same model either way.
    for i in [1, 12] {
        assert_eq!(
            effect_of(&built.model, &row(i)),
            effect_of(&restarted.model, &row(i))
        );
    }
    assert_eq!(built.model.screens.len(), restarted.model.screens.len());
}
