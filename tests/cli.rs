//! The `monkey` binary as a user runs it: good runs write a run folder, bad input is
//! refused with a message naming it.

use std::process::{Command, Output};

fn monkey(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_monkey"))
        .args(args)
        .output()
        .expect("run monkey")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_values_are_refused_with_the_option_named() {
    for (args, expect) in [
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
    ] {
        let out = monkey(&args);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
    }
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
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"], 6);
    assert!(summary["coverage"]["functions_covered"].as_u64().unwrap() > 0);
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
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
