//! The `monkey` and `pirltest` binaries as a user runs them: good runs write a run folder,
//! bad input is refused with a message naming it.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the binary `exe` with `args` to its end.
fn run_bin(exe: &str, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {exe}: {e}"))
}

fn monkey(args: &[&str]) -> Output {
    run_bin(env!("CARGO_BIN_EXE_monkey"), args)
}

fn pirltest(args: &[&str]) -> Output {
    run_bin(env!("CARGO_BIN_EXE_pirltest"), args)
}

fn greybox(args: &[&str]) -> Output {
    run_bin(env!("CARGO_BIN_EXE_greybox"), args)
}

fn monkeypp(args: &[&str]) -> Output {
    run_bin(env!("CARGO_BIN_EXE_monkeypp"), args)
}

fn adat(args: &[&str]) -> Output {
    run_bin(env!("CARGO_BIN_EXE_adat"), args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A JSON file of a run folder (`run.json`, `summary.json`, `agent.json`), parsed.
fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `tool` with `common` and then each case's words, and checks that each is refused
/// with a message that contains the case's text.
fn assert_each_refused(tool: fn(&[&str]) -> Output, common: &[&str], cases: &[(Vec<&str>, &str)]) {
    for (args, expect) in cases {
        let all = [common, args].concat();
        let out = tool(&all);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn bad_values_are_refused_with_the_option_named() {
    let cases = [
        (vec!["--steps", "0"], "--steps"),
        (vec!["--steps", "many"], "--steps"),
        (vec!["--viewport", "10x10"], "out of range"),
        (vec!["--viewport", "wide"], "WIDTHxHEIGHT"),
        (vec!["--throttle", "-5"], "--throttle"),
        (vec!["--minutes", "0"], "minutes"),
        (vec!["--pct-touch", "150"], "--pct-touch"),
        (
            vec!["--pct-touch", "80", "--pct-nav", "30"],
            "more than 100",
        ),
        (vec!["--url", "ftp://example"], "--url ftp://example"),
        (vec!["--device", "phone"], "--device"),
        (vec!["--dialogs", "maybe"], "--dialogs"),
        (vec!["--hang-after", "0"], "--hang-after"),
        (vec!["--js-heap-mb", "4"], "--js-heap-mb"),
    ];
    assert_each_refused(monkey, &[], &cases);
}

#[test]
fn a_config_file_gives_defaults_that_flags_override() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("monkey.toml");
    std::fs::write(
        &config,
        "device = \"simulator\"\nsteps = 50\nseed = 4\nthrottle = 0\n",
    )
    .unwrap();
    let run = dir.path().join("run");
    let out = monkey(&[
        "--config",
        config.to_str().unwrap(),
        "--steps",
        "4",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = read_json(&run.join("run.json"));
    assert_eq!(meta["meta"]["seed"], 4, "from the file");
    assert_eq!(meta["meta"]["explore"]["steps"], 4, "the flag wins");

    std::fs::write(&config, "stepz = 5\n").unwrap();
    let out = monkey(&["--config", config.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("monkey.toml") && err.contains("stepz"),
        "{err}"
    );
    assert!(
        !err.contains("gui-testing"),
        "the binary names itself: {err}"
    );
}

#[test]
fn throttle_policies_are_chosen_by_name_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    for (policy, recorded) in [
        ("adat", "adat:1000"),
        ("consecutive:500", "consecutive:500"),
    ] {
        let run = dir.path().join(policy.replace(':', "_"));
        let out = monkey(&[
            "--device",
            "simulator",
            "--steps",
            "3",
            "--throttle",
            policy,
            "--out",
            run.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{policy}: {}", stderr(&out));
        let meta = read_json(&run.join("run.json"));
        assert_eq!(meta["meta"]["throttle"], recorded);
        let steps = gui_explore::read_steps(&run).unwrap();
        let waited = steps[0]
            .timings
            .throttle
            .expect("the policy's outcome per step");
        // Both looked at the screen; the still simulated screen lets the consecutive-frame
        // policy go on at its second frame.
        assert!(waited.frames >= 1, "{policy}: {waited:?}");
        if policy.starts_with("consecutive") {
            assert!(!waited.capped && waited.frames == 2, "{policy}: {waited:?}");
        }
    }
    let out = monkey(&["--device", "simulator", "--throttle", "adaptive"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("adaptive"), "{}", stderr(&out));
}

#[test]
fn an_existing_run_folder_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let ok = monkey(&["--device", "simulator", "--steps", "3", "--out", out]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let again = monkey(&["--device", "simulator", "--steps", "3", "--out", out]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already holds a run"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn unreachable_url_and_missing_chromium_say_what_is_wrong() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/app");
    let dir = tempfile::tempdir().unwrap();
    let out = monkey(&[
        "--url",
        &url,
        "--steps",
        "2",
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&url) && stderr(&out).contains("ERR_CONNECTION_REFUSED"),
        "{}",
        stderr(&out)
    );

    let out = Command::new(env!("CARGO_BIN_EXE_monkey"))
        .args([
            "--steps",
            "2",
            "--out",
            dir.path().join("r2").to_str().unwrap(),
        ])
        .env("GUI_CHROMIUM", "/nonexistent/chromium")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("Chromium not found") && err.contains("cargo xtask setup"),
        "{err}"
    );
}

#[test]
fn a_run_on_the_demo_app_writes_a_complete_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = monkey(&[
        "--steps",
        "6",
        "--seed",
        "3",
        "--throttle",
        "50",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("6 steps"));
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["steps"], 6);
    assert!(summary["coverage"]["functions_covered"].as_u64().unwrap() > 0);
    let meta = read_json(&run.join("run.json"));
    assert_eq!(meta["format_version"], 1);
    assert_eq!(meta["meta"]["seed"], 3);
    assert!(
        meta["meta"]["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    let steps = gui_explore::read_steps(&run).unwrap();
    assert_eq!(steps.len(), 6);
    assert!(run.join("screenshots/step-000000.png").is_file());
    for s in &steps {
        gui_core::Screenshot::load(&run.join(&s.screenshot)).unwrap();
    }
}

#[test]
fn killing_the_tool_leaves_every_finished_step_readable() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_monkey"))
        .args([
            "--device",
            "simulator",
            "--steps",
            "100000",
            "--throttle",
            "1",
            "--out",
            run.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(run.join("steps.jsonl")).map_or(0, |s| s.lines().count()) < 30 {
        assert!(
            std::time::Instant::now() < deadline,
            "monkey wrote no steps"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL: no chance to finish anything
    child.wait().unwrap();
    let steps = gui_explore::read_steps(&run).unwrap();
    assert!(steps.len() >= 30);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s.step, i as u64 + 1);
        gui_core::Screenshot::load(&run.join(&s.screenshot)).unwrap();
    }
    assert!(!run.join("summary.json").exists());
}

#[test]
fn pirltest_saves_what_it_learnt_and_starts_from_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    let out = pirltest(&[
        "--device",
        "simulator",
        "--steps",
        "6",
        "--seed",
        "2",
        "--progress",
        "0",
        "--out",
        first.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("pirltest: 6 steps"), "{stdout}");
    let agent = read_json(&first.join("agent.json"));
    assert_eq!(agent["stats"]["decisions"], 6);
    assert_eq!(agent["errors"].as_array().map(Vec::len), Some(0));
    let model = first.join("q_network.safetensors");
    assert!(model.is_file());
    let report = std::fs::read_to_string(first.join("report.html")).unwrap();
    assert!(report.contains("pirltest seed 2: 6 steps"), "{report:.400}");
    assert!(stdout.contains("report.html"), "{stdout}");
    // A fixed throttle: decisions wait for learning, so the seed fixes the run.
    let run = read_json(&first.join("run.json"));
    assert_eq!(run["meta"]["agent"]["train_async"], false, "{run}");

    let second = dir.path().join("second");
    let out = pirltest(&[
        "--device",
        "simulator",
        "--steps",
        "3",
        "--progress",
        "0",
        "--model-in",
        model.to_str().unwrap(),
        "--training",
        "background",
        "--out",
        second.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = read_json(&second.join("run.json"));
    assert!(run.to_string().contains("q_network.safetensors"), "{run}");
    assert_eq!(run["meta"]["agent"]["train_async"], true, "{run}");

    // The same network goes on learning on another platform: a desktop program under
    // Xvfb (the agent sees only pixels, so nothing in the model is platform-bound).
    let third = dir.path().join("third");
    let out = pirltest(&[
        "--device",
        "desktop",
        "--app-command",
        "xcalc",
        "--viewport",
        "640x480",
        "--steps",
        "3",
        "--progress",
        "0",
        "--model-in",
        model.to_str().unwrap(),
        "--out",
        third.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let agent = read_json(&third.join("agent.json"));
    assert_eq!(agent["stats"]["decisions"], 3);
    assert_eq!(agent["errors"].as_array().map(Vec::len), Some(0));
}

#[test]
fn pirltest_refuses_bad_models_and_settings_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.safetensors");
    std::fs::write(&corrupt, b"not a model").unwrap();
    let missing = dir.path().join("missing.safetensors");
    let cases = [
        (
            vec!["--model-in", corrupt.to_str().unwrap()],
            "corrupt.safetensors",
        ),
        (
            vec!["--model-in", missing.to_str().unwrap()],
            "missing.safetensors",
        ),
        (vec!["--temperature", "-1"], "temperature"),
        (vec!["--train-every", "0"], "train_every"),
        (vec!["--gamma", "1.5"], "gamma"),
        (
            vec!["--idle-reward", "none"],
            "neither a finite number nor `off`",
        ),
        (vec!["--idle-reward", "inf"], "--idle-reward"),
    ];
    assert_each_refused(pirltest, &["--device", "simulator", "--steps", "2"], &cases);
}

/// `--preset` picks the agent and `--plugins` changes it; `agent.json` and `run.json`
/// name both.
#[test]
fn pirltest_presets_and_plugins_are_recorded_in_the_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    for (preset, plugins, expect_plugins, model) in [
        ("paper", None, vec![], true),
        (
            "random",
            None,
            vec![
                "modal-focus",
                "local-page",
                "anchor-match",
                "resize-budget",
                "local-novelty",
                "region-sights",
            ],
            false,
        ),
        (
            "paper",
            Some("stall-reset,-stall-reset,optimistic"),
            vec!["optimistic"],
            true,
        ),
    ] {
        let out_dir = dir.path().join(format!("{preset}-{}", plugins.is_some()));
        let mut args = vec![
            "--device",
            "simulator",
            "--steps",
            "4",
            "--progress",
            "0",
            "--preset",
            preset,
            "--out",
            out_dir.to_str().unwrap(),
        ];
        if let Some(p) = plugins {
            args.extend(["--plugins", p]);
        }
        let out = pirltest(&args);
        assert!(out.status.success(), "{preset}: {}", stderr(&out));
        let agent = read_json(&out_dir.join("agent.json"));
        assert_eq!(agent["preset"], preset, "{agent}");
        assert_eq!(
            agent["plugins"],
            serde_json::json!(expect_plugins),
            "{agent}"
        );
        assert_eq!(agent["stats"]["decisions"], 4, "{agent}");
        assert_eq!(
            out_dir.join("q_network.safetensors").is_file(),
            model,
            "{preset}"
        );
        let run = read_json(&out_dir.join("run.json"));
        assert_eq!(run["meta"]["preset"], preset, "{run}");
        if preset == "paper" {
            assert_eq!(run["meta"]["agent"]["pages"]["same_page"], 0.75, "{run}");
            assert_eq!(run["meta"]["agent"]["idle_reward"], serde_json::Value::Null);
            assert_eq!(run["meta"]["agent"]["target_every"], 0);
        } else {
            assert_eq!(agent["stats"]["memory"], 0, "{agent}");
            assert_eq!(agent["stats"]["retrainings"], 0, "{agent}");
        }
    }
    let out = pirltest(&["--plugins", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    for p in gui_rl::PLUGINS {
        assert!(table.contains(p.name), "{table}");
    }
}

#[test]
fn pirltest_refuses_unknown_presets_and_plugins_listing_the_known_ones() {
    let cases = [
        (vec!["--preset", "fast"], "paper, default, random"),
        (vec!["--plugins", "effect-prior,telepathy"], "`telepathy`"),
        (vec!["--plugins", "-telepathy"], "stall-reset"),
        (
            vec!["--preset", "random", "--plugins", "effect-prior"],
            "effect-prior",
        ),
        (
            vec!["--preset", "random", "--model-out", "x.safetensors"],
            "--model-out",
        ),
    ];
    assert_each_refused(pirltest, &["--device", "simulator", "--steps", "2"], &cases);
}

#[test]
fn greybox_refuses_bad_options_and_a_broken_event_flow_graph_by_name() {
    let out = greybox(&["--top", "0"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--top"), "{}", stderr(&out));
    let out = greybox(&["--len", "9"]);
    assert!(stderr(&out).contains("--len"), "{}", stderr(&out));
    let out = greybox(&["--java-main", "Main"]);
    assert!(
        stderr(&out).contains("--java-classpath"),
        "{}",
        stderr(&out)
    );
    // A device the analysis cannot read is refused by name, not replaced by Chromium.
    let out = greybox(&["--device", "android", "--package", "org.example"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--device android is not supported here"),
        "{}",
        stderr(&out)
    );

    let dir = tempfile::tempdir().unwrap();
    let efg = dir.path().join("efg.json");
    let efg_s = efg.to_str().unwrap();
    let out_dir = dir.path().join("run");
    for (text, says) in [
        ("{\"events\": [", "not an event-flow graph"),
        // Well-formed JSON whose edges point at events that do not exist.
        (
            r#"{"events": [{"id": "a", "label": "a", "window": "w", "kind": "click"}],
                "initial": [0], "follows": [[3]]}"#,
            "followed by 3",
        ),
        // Observed effects of an event that is not there.
        (
            r#"{"events": [{"id": "a", "label": "a", "window": "w", "kind": "click"}],
                "initial": [0], "follows": [[0]],
                "effects": {"5": {"reads": ["state.route"], "writes": []}}}"#,
            "effects are recorded for event 5",
        ),
    ] {
        std::fs::write(&efg, text).unwrap();
        let out = greybox(&["--efg", efg_s, "--out", out_dir.to_str().unwrap()]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains("efg.json") && err.contains(says), "{err}");
    }
    assert!(
        !out_dir.join("run.json").exists(),
        "nothing started, nothing written"
    );
}

#[test]
fn monkeypp_names_a_bad_model_and_plans_a_good_one_without_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model.json");
    let model_s = model.to_str().unwrap();
    let out = monkeypp(&["--model", model_s, "--dry-run"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("model.json"), "{}", stderr(&out));
    std::fs::write(&model, "{\"app\": ").unwrap();
    let err = stderr(&monkeypp(&["--model", model_s, "--dry-run"]));
    assert!(
        err.contains("model.json") && err.contains("not an app model"),
        "{err}"
    );
    // Well-formed, but a control launches a screen the model does not have.
    std::fs::write(
        &model,
        r#"{"app": "a", "launch": "A", "screens": [{"name": "A"}], "edges": [],
            "vertices": [{"id": "go", "type": "ui", "screens": ["A"], "label": "Go",
                          "effect": {"launch": "Nowhere"}}]}"#,
    )
    .unwrap();
    let err = stderr(&monkeypp(&["--model", model_s, "--dry-run"]));
    assert!(
        err.contains("model.json") && err.contains("`Nowhere`"),
        "{err}"
    );
    // --monkey-log needs a model and dumps.
    let err = stderr(&monkeypp(&["--monkey-log", model_s]));
    assert!(err.contains("--model") || err.contains("--dumps"), "{err}");

    // The paper's Figure 1: three touches cover the interface.
    std::fs::write(
        &model,
        r#"{"app": "fig1", "launch": "A", "screens": [{"name": "A"}, {"name": "B"}],
            "edges": [], "vertices": [
              {"id": "SayHi", "type": "ui", "screens": ["A"], "label": "SayHi"},
              {"id": "StartB", "type": "ui", "screens": ["A"], "label": "StartB",
               "effect": {"launch": "B"}},
              {"id": "SayBye", "type": "ui", "screens": ["B"], "label": "SayBye"}]}"#,
    )
    .unwrap();
    let out = monkeypp(&["--model", model_s, "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("touch SayHi") && text.contains("touch SayBye"),
        "{text}"
    );
    assert!(
        text.contains("3 interactions for 3/3 controls") && text.contains("bound 3,"),
        "{text}"
    );
}

/// The same binaries drive a desktop program under Xvfb with `--device desktop`.
#[test]
fn monkey_and_pirltest_drive_a_desktop_program_unchanged() {
    let out = monkey(&["--device", "desktop", "--steps", "3"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--app-command"), "{}", stderr(&out));
    let out = monkey(&["--app-command", "xcalc", "--steps", "3"]);
    assert!(
        stderr(&out).contains("--device desktop"),
        "{}",
        stderr(&out)
    );

    let dir = tempfile::tempdir().unwrap();
    for (bin, steps) in [
        (env!("CARGO_BIN_EXE_monkey"), "12"),
        (env!("CARGO_BIN_EXE_pirltest"), "8"),
    ] {
        let run = dir.path().join(steps);
        let out = Command::new(bin)
            .args(["--device", "desktop", "--app-command", "xcalc"])
            .args(["--viewport", "640x480", "--seed", "1", "--steps", steps])
            .arg("--out")
            .arg(&run)
            .output()
            .expect("run the binary");
        assert!(
            out.status.success(),
            "{bin} on xcalc (x11-apps and xvfb come from `cargo xtask setup`): {}",
            stderr(&out)
        );
        let lines = std::fs::read_to_string(run.join("steps.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), steps.parse::<usize>().unwrap());
        let meta = std::fs::read_to_string(run.join("run.json")).unwrap();
        assert!(meta.contains("desktop: xcalc"), "{meta}");
        assert!(run.join("report.html").is_file());
    }
}

/// `pirltest --mobile` explores the demo as a phone: only the mobile actions are chosen.
#[test]
fn pirltest_on_a_phone_emulated_page_uses_the_mobile_actions() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("phone");
    let out = pirltest(&[
        "--mobile",
        "--seed",
        "3",
        "--steps",
        "12",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let steps = std::fs::read_to_string(run.join("steps.jsonl")).unwrap();
    assert_eq!(steps.lines().count(), 12);
    for line in steps.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let kind = v["action"]["kind"].as_str().unwrap().to_owned();
        assert!(
            !["mid_click", "right_click", "window_size"].contains(&kind.as_str()),
            "a desktop-web action on a phone: {kind}"
        );
        assert!(v["error"].is_null(), "{line}");
    }
}

/// `--device android` drives an app over adb; here the fake `adb` of gui-driver's tests
/// plays the phone (no real device or emulator exists on these machines).
#[test]
fn monkey_and_pirltest_drive_an_android_app_through_adb() {
    let out = monkey(&["--device", "android", "--steps", "3"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--package"), "{}", stderr(&out));
    let out = monkey(&["--package", "com.example.fake", "--steps", "3"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--device android"),
        "{}",
        stderr(&out)
    );

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let adb = root.join("crates/gui-driver/tests/fake_adb/adb");
    let app = root.join("crates/gui-driver/tests/data/android/app.json");
    let dir = tempfile::tempdir().unwrap();
    let mut taps = 0;
    for bin in [env!("CARGO_BIN_EXE_monkey"), env!("CARGO_BIN_EXE_pirltest")] {
        let name = std::path::Path::new(bin).file_name().unwrap().to_owned();
        let run = dir.path().join(&name).join("run");
        let state = dir.path().join(&name).join("phone");
        let out = Command::new(bin)
            .args(["--device", "android", "--package", "com.example.fake"])
            .args(["--activity", ".MainActivity", "--adb"])
            .arg(&adb)
            .args(["--seed", "2", "--steps", "5", "--throttle", "0", "--out"])
            .arg(&run)
            .env("FAKE_ADB_APP", &app)
            .env("FAKE_ADB_STATE", &state)
            .output()
            .expect("run the binary");
        assert!(out.status.success(), "{bin}: {}", stderr(&out));
        let steps = std::fs::read_to_string(run.join("steps.jsonl")).unwrap();
        assert_eq!(steps.lines().count(), 5, "{bin}");
        let meta = std::fs::read_to_string(run.join("run.json")).unwrap();
        assert!(meta.contains("android: com.example.fake"), "{meta}");
        let log = std::fs::read_to_string(state.join("log.txt")).unwrap();
        assert!(log.contains("shell am start -W"), "{bin}: {log}");
        assert!(log.contains("exec-out screencap -p"), "{bin}: {log}");
        assert!(log.contains("shell input "), "{bin}: {log}");
        // Which actions a seed picks is the strategy's affair; a click it picked must
        // reach the phone as a tap.
        let clicked = steps.lines().any(|l| {
            let step: serde_json::Value = serde_json::from_str(l).unwrap();
            step["action"]["kind"] == "click"
        });
        assert!(!clicked || log.contains("shell input tap "), "{bin}: {log}");
        taps += log.matches("shell input tap ").count();
    }
    // Between them, the two runs took the tap path.
    assert!(taps > 0);
}

#[test]
fn monkey_drives_the_demo_app_through_a_webdriver_endpoint() {
    let driver = gui_driver::ChromeDriver::spawn().unwrap_or_else(|e| {
        panic!("{e}\nthis test needs a local chromedriver: run `cargo xtask setup`")
    });
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = monkey(&[
        "--webdriver",
        driver.url(),
        "--steps",
        "5",
        "--throttle",
        "50",
        "--out",
        run.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}\nchromedriver said:\n{}",
        stderr(&out),
        driver.output()
    );
    let steps = gui_explore::read_steps(&run).unwrap();
    assert_eq!(steps.len(), 5);
    for s in &steps {
        assert!(s.error.is_none(), "step {}: {:?}", s.step, s.error);
        let coverage = s
            .coverage
            .as_ref()
            .expect("coverage through the passthrough");
        assert!(coverage.functions_covered > 0, "{coverage:?}");
        // The window was sized so that the page, not the window, has the viewport's size.
        let shot = gui_core::Screenshot::load(&run.join(&s.screenshot)).unwrap();
        assert_eq!(shot.size(), s.viewport, "step {}", s.step);
    }
    // A WebDriver endpoint cannot run a desktop program.
    let out = monkey(&[
        "--webdriver",
        driver.url(),
        "--device",
        "desktop",
        "--steps",
        "1",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--webdriver"), "{}", stderr(&out));
}

#[test]
fn a_reader_that_goes_away_ends_the_tool_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_monkey"))
        .args(["--device", "simulator", "--steps", "3", "--throttle", "0"])
        .arg("--out")
        .arg(&run)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // `monkey ... | head -c 0`: nobody reads the summary.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {err}", out.status);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(gui_explore::read_steps(&run).unwrap().len(), 3);
}

#[test]
fn adat_refuses_bad_training_and_scoring_settings_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("no-data");
    let out = dir.path().join("m.safetensors");
    let (data, out) = (data.to_str().unwrap(), out.to_str().unwrap());
    let model = gui_vision::render::shipped_render_net_path();
    let model = model.to_str().unwrap();
    let train = |extra: &[&'static str]| [&["train", "--data", data, "--out", out], extra].concat();
    let evaluate =
        |extra: &[&'static str]| [&["evaluate", "--data", data, "--model", model], extra].concat();
    for (args, expect) in [
        (
            train(&["--min-change", "2"]),
            "--min-change takes a share between 0 and 1, not 2",
        ),
        (
            train(&["--learning-rate", "0"]),
            "--learning-rate must be a positive number, not 0",
        ),
        (
            evaluate(&["--min-change", "1.5"]),
            "--min-change takes a share between 0 and 1, not 1.5",
        ),
        // Good settings reach the data set, and its absence is named.
        (train(&["--min-change", "0.01"]), "labels.jsonl"),
    ] {
        let o = adat(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(expect), "{args:?}: {}", stderr(&o));
    }
    assert!(!std::path::Path::new(out).exists(), "no model was written");
}

#[test]
fn adat_evaluate_prints_what_one_screenshot_can_reach() {
    // Three frames of an app the shipped network never saw: a finished screen, a
    // partial frame that looks exactly like it, and a partial frame unlike it.
    let dir = tempfile::tempdir().unwrap();
    let frame = |name: &str, shade: u8| {
        image::RgbImage::from_pixel(640, 400, image::Rgb([shade, shade, shade]))
            .save(dir.path().join(name))
            .unwrap();
    };
    frame("a.png", 250);
    frame("b.png", 40);
    std::fs::write(
        dir.path().join("labels.jsonl"),
        concat!(
            "{\"file\":\"a.png\",\"app\":\"unseen\",\"label\":\"full\",\"change\":0}\n",
            "{\"file\":\"a.png\",\"app\":\"unseen\",\"label\":\"partial\",\"change\":0.003}\n",
            "{\"file\":\"b.png\",\"app\":\"unseen\",\"label\":\"partial\",\"change\":0.9}\n",
        ),
    )
    .unwrap();
    let model = gui_vision::render::shipped_render_net_path();
    let o = adat(&[
        "evaluate",
        "--data",
        dir.path().to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // Calling the look-alike pair full loses its partial frame: P 1/2, R 1.
    let line = |start: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no line `{start}` in:\n{out}"))
            .to_owned()
    };
    assert!(line("identical").contains("P 0.500 R 1.000"), "{out}");
    assert!(line("within 0.5 %").contains("P 0.500 R 1.000"), "{out}");
}
