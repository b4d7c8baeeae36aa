//! `--workers` and `--resume` as a user runs them: parallel browsers into one run folder, a
//! shared PIRLTest agent, and runs continued after `kill -9`.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gui_explore::{EventRecord, Summary, read_steps};

fn tool(name: &str, args: &[&str]) -> Output {
    let bin = match name {
        "monkey" => env!("CARGO_BIN_EXE_monkey"),
        _ => env!("CARGO_BIN_EXE_pirltest"),
    };
    Command::new(bin).args(args).output().expect("run the tool")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn summary(dir: &Path) -> Summary {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

fn events(dir: &Path) -> Vec<EventRecord> {
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn agent_stats(dir: &Path) -> serde_json::Value {
    let agent: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("agent.json")).unwrap()).unwrap();
    agent["stats"].clone()
}

fn lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("steps.jsonl")).map_or(0, |s| s.lines().count())
}

/// Steps 1..=n, in order, each with a screenshot that decodes.
fn assert_every_step(dir: &Path, n: u64) {
    let steps = read_steps(dir).unwrap();
    assert_eq!(
        steps.iter().map(|s| s.step).collect::<Vec<_>>(),
        (1..=n).collect::<Vec<_>>()
    );
    for s in &steps {
        gui_core::Screenshot::load(&dir.join(&s.screenshot)).unwrap();
    }
}

#[test]
fn pirltest_killed_with_sigkill_resumes_with_its_agent_and_counters() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pirltest"))
        .args([
            "--device",
            "simulator",
            "--throttle",
            "0",
            "--steps",
            "40",
            "--seed",
            "3",
            "--out",
            run.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while lines(&run) < 15 {
        assert!(Instant::now() < deadline, "pirltest wrote no steps");
        assert!(child.try_wait().unwrap().is_none(), "pirltest ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = read_steps(&run).unwrap().len() as u64;
    assert!(!run.join("summary.json").exists());

    // Only the folder is named: the settings come from its run.json.
    let out = ok(&tool("pirltest", &["--resume", run.to_str().unwrap()]));
    assert!(out.contains("pirltest: 40 steps"), "{out}");
    assert_every_step(&run, 40);
    let s = summary(&run);
    assert_eq!(s.resumed_at, vec![before]);
    let evs = events(&run);
    assert!(
        !evs.iter().any(|e| e.event == "replay_diverged"),
        "the agent replayed its recorded steps with other choices: {evs:?}"
    );
    // The agent went on from what it had: every step is one of its decisions, and its
    // memory holds the transitions of both parts (less the one cut by the restart).
    let stats = agent_stats(&run);
    assert_eq!(stats["decisions"], 40, "{stats}");
    assert!(stats["memory"].as_u64().unwrap() >= 37, "{stats}");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(meta["meta"]["seed"], 3);
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        report.contains(&format!("resumed after step {before}")),
        "{report:.600}"
    );
}

#[test]
fn monkey_resumes_with_a_larger_budget_and_refuses_another_tools_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let first = ["--device", "simulator", "--throttle", "0", "--steps", "12"];
    let mut args = first.to_vec();
    args.extend(["--out", run.to_str().unwrap()]);
    ok(&tool("monkey", &args));
    // A finished run goes on when given more steps; flags given now win.
    ok(&tool(
        "monkey",
        &["--resume", run.to_str().unwrap(), "--steps", "20"],
    ));
    assert_every_step(&run, 20);
    assert_eq!(summary(&run).steps, 20);

    let wrong = tool("pirltest", &["--resume", run.to_str().unwrap()]);
    assert!(!wrong.status.success());
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(err.contains("holds a monkey run"), "{err}");
    assert!(
        run.join("summary.json").is_file(),
        "a refused --resume leaves the folder as it was"
    );

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let missing = tool("monkey", &["--resume", empty.to_str().unwrap()]);
    assert!(!missing.status.success());
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("--resume") && err.contains("run.json"),
        "{err}"
    );
}

#[test]
fn two_pirltest_workers_feed_one_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let out = ok(&tool(
        "pirltest",
        &[
            "--device",
            "simulator",
            "--throttle",
            "0",
            "--steps",
            "24",
            "--workers",
            "2",
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert!(out.contains("pirltest: 24 steps"), "{out}");
    assert_every_step(&run, 24);
    let s = summary(&run);
    assert_eq!(s.workers, 2);
    assert_eq!(s.steps_by_worker.iter().sum::<u64>(), 24);
    assert!(s.steps_by_worker.iter().all(|n| *n > 0), "{s:?}");
    let stats = agent_stats(&run);
    // One agent made every decision; its memory holds both workers' transitions.
    assert_eq!(stats["decisions"], 24, "{stats}");
    assert_eq!(stats["memory"], 22, "{stats}");
    assert!(run.join("q_network.safetensors").is_file());
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(report.contains("24 steps by 2 workers"), "{report:.600}");
}

#[test]
fn two_monkey_workers_drive_two_browsers_into_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ok(&tool(
        "monkey",
        &[
            "--workers",
            "2",
            "--steps",
            "16",
            "--throttle",
            "100",
            "--seed",
            "5",
            "--out",
            run.to_str().unwrap(),
        ],
    ));
    assert_every_step(&run, 16);
    let s = summary(&run);
    assert_eq!(s.steps_by_worker.len(), 2);
    assert!(s.steps_by_worker.iter().all(|n| *n > 0), "{s:?}");
    // Coverage counts the functions either browser ran, by name.
    let steps = read_steps(&run).unwrap();
    let union: std::collections::HashSet<&String> =
        steps.iter().flat_map(|s| &s.new_functions).collect();
    let covered = s.coverage.expect("Chromium measures coverage");
    assert_eq!(covered.functions_covered, union.len() as u64);
    assert!(covered.functions_covered > 0);
    assert!(run.join("screenshots/start-000000-w1.png").is_file());
}

#[test]
fn tools_that_cannot_scale_out_say_so() {
    let out = Command::new(env!("CARGO_BIN_EXE_visiondroid"))
        .args(["--workers", "2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--workers is not supported"), "{err}");

    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_replay"))
        .arg(tmp.path())
        .args(["--resume", tmp.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--resume"), "{err}");
}

#[test]
fn a_second_process_is_refused_a_run_folder_until_the_first_is_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut first = Command::new(env!("CARGO_BIN_EXE_monkey"))
        .args([
            "--device",
            "simulator",
            "--throttle",
            "1",
            "--steps",
            "100000",
        ])
        .args(["--out", run.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while lines(&run) < 5 {
        assert!(Instant::now() < deadline, "monkey wrote no steps");
        assert!(first.try_wait().unwrap().is_none(), "monkey ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    let second = tool("monkey", &["--resume", run.to_str().unwrap()]);
    first.kill().unwrap(); // SIGKILL: its lock stays behind
    first.wait().unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains(&run.display().to_string()), "{err}");
    assert!(err.contains(&format!("process {}", first.id())), "{err}");

    // The holder is gone: its lock is taken over and the run goes on.
    let n = read_steps(&run).unwrap().len() as u64 + 3;
    let steps = n.to_string();
    ok(&tool(
        "monkey",
        &["--resume", run.to_str().unwrap(), "--steps", &steps],
    ));
    assert_every_step(&run, n);
    assert!(!run.join("run.lock").exists());
}
