use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Parser;
use gui_core::Size;
use gui_explore::RunRecorder;

use super::*;

#[derive(Debug, Parser)]
struct Demo {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[arg(long, value_delimiter = ',')]
    only: Vec<u64>,
}

fn demo(config: &str, args: &[&str]) -> Result<Demo, clap::Error> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    std::fs::write(&path, config).unwrap();
    let mut argv: Vec<OsString> = vec!["demo".into(), "--config".into(), path.into()];
    argv.extend(args.iter().map(OsString::from));
    parse_from(argv)
}

#[test]
fn config_keys_are_flags_and_the_command_line_wins() {
    let d = demo(
        "steps = 300\nseed = 7\nmobile = true\nviewport = \"400x800\"\nonly = [1, 2]\n",
        &["--seed", "9"],
    )
    .unwrap();
    assert_eq!(d.run.steps, Some(300));
    assert_eq!(d.run.seed, 9, "the command line wins");
    assert!(d.target.mobile);
    assert_eq!(d.target.viewport, Size::new(400, 800));
    assert_eq!(d.only, vec![1, 2]);
    // Snake or kebab case, and a switch left off.
    let d = demo("app-dir = \"x\"\nmobile = false\n", &[]).unwrap();
    assert_eq!(d.target.app_dir, Some(PathBuf::from("x")));
    assert!(!d.target.mobile);
}

#[test]
fn settle_takes_seconds_and_refuses_others_by_value() {
    assert_eq!(
        demo("", &["--settle", "2.5"]).unwrap().target.settle,
        Some(2.5)
    );
    assert_eq!(demo("", &[]).unwrap().target.settle, None);
    for bad in ["-1", "soon", "601"] {
        let e = demo("", &["--settle", bad]).unwrap_err().to_string();
        assert!(e.contains(bad) && e.contains("--settle"), "{e}");
    }
}

#[test]
fn bad_config_files_are_named_with_the_problem() {
    let e = demo("stepz = 3\n", &[]).unwrap_err().to_string();
    assert!(
        e.contains("run.toml") && e.contains("unknown key `stepz`"),
        "{e}"
    );
    assert!(e.contains("steps"), "the known keys are listed: {e}");
    let e = demo("steps = [\n", &[]).unwrap_err().to_string();
    assert!(e.contains("run.toml"), "{e}");
    let e = demo("steps = 0\n", &[]).unwrap_err().to_string();
    assert!(e.contains("--steps"), "{e}");
    let e = demo("[run]\nsteps = 1\n", &[]).unwrap_err().to_string();
    assert!(e.contains("unknown key `run`"), "{e}");
    let e = parse_from::<Demo>(["demo", "--config", "/no/such.toml"].map(OsString::from))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/no/such.toml"), "{e}");
}

/// A run folder of `strategy` recording the command line `argv`, finished, with a
/// step line torn by a kill after it.
fn recorded_run(strategy: &str, argv: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let meta = serde_json::json!({"strategy": strategy, "workers": 1, "argv": argv});
    let mut recorder = RunRecorder::create(&dir, &meta).unwrap();
    recorder.finish(&serde_json::json!({"steps": 0})).unwrap();
    drop(recorder);
    let mut steps = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("steps.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut steps, br#"{"step":1,"ac"#).unwrap();
    (tmp, dir)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn resume(dir: &Path, args: &[&str]) -> Result<Demo, clap::Error> {
    let mut argv: Vec<OsString> = vec!["demo".into(), "--resume".into(), dir.into()];
    argv.extend(args.iter().map(OsString::from));
    parse_from(argv)
}

#[test]
fn resume_with_another_strategy_leaves_the_folder_untouched() {
    let (_tmp, dir) = recorded_run("monkey", &["--device", "simulator"]);
    let before = snapshot(&dir);
    let d = resume(&dir, &[]).unwrap();
    let err = d
        .run
        .recorder("pirltest", &serde_json::json!({}))
        .unwrap_err();
    assert!(format!("{err:#}").contains("holds a monkey run"), "{err:#}");
    assert_eq!(
        snapshot(&dir),
        before,
        "summary.json, the torn line, no lock"
    );

    // The right strategy resumes it: the summary goes, to be written at the end.
    let recorder = d.run.recorder("monkey", &serde_json::json!({})).unwrap();
    assert!(!dir.join("summary.json").exists());
    drop(recorder);
}

#[test]
fn a_run_folder_being_written_is_refused_naming_the_process() {
    let (_tmp, dir) = recorded_run("monkey", &["--device", "simulator"]);
    let d = resume(&dir, &[]).unwrap();
    let first = d.run.recorder("monkey", &serde_json::json!({})).unwrap();
    let err = format!(
        "{:#}",
        d.run
            .recorder("monkey", &serde_json::json!({}))
            .unwrap_err()
    );
    assert!(err.contains(&dir.display().to_string()), "{err}");
    assert!(
        err.contains(&format!("process {}", std::process::id())),
        "{err}"
    );
    drop(first);
    d.run.recorder("monkey", &serde_json::json!({})).unwrap();
}

#[test]
fn resume_refuses_a_program_named_only_by_the_run_folder() {
    let (_tmp, dir) = recorded_run(
        "monkey",
        &[
            "--device",
            "desktop",
            "--app-command",
            "sh -c evil",
            "--seed",
            "3",
        ],
    );
    let e = resume(&dir, &[]).unwrap_err().to_string();
    assert!(e.contains("--app-command 'sh -c evil'"), "{e}");
    assert!(e.contains("again with --resume"), "{e}");
    let e = resume(&dir, &["--app-command", "xcalc"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--app-command"),
        "another value is no consent: {e}"
    );

    // Named again, with the same value: the run goes on with its settings.
    let d = resume(&dir, &["--app-command=sh -c evil"]).unwrap();
    assert_eq!(d.target.app_command.as_deref(), Some("sh -c evil"));
    assert_eq!(d.run.seed, 3);

    // Recorded from a config file (`--flag=value`), and the other launching flags.
    let (_tmp, dir) = recorded_run("monkey", &["--device=android", "--adb=/tmp/adb"]);
    let e = resume(&dir, &[]).unwrap_err().to_string();
    assert!(e.contains("--adb /tmp/adb"), "{e}");
    let (_tmp, dir) = recorded_run("monkey", &["--package", "com.example"]);
    let e = resume(&dir, &[]).unwrap_err().to_string();
    assert!(e.contains("--package com.example"), "{e}");
    // A config file given now counts as naming it again.
    let cfg = dir.parent().unwrap().join("android.toml");
    std::fs::write(&cfg, "package = \"com.example\"\n").unwrap();
    let d = resume(&dir, &["--config", cfg.to_str().unwrap()]).unwrap();
    assert_eq!(d.target.package.as_deref(), Some("com.example"));
}

#[test]
fn viewport_values_are_checked() {
    assert_eq!(parse_size("412x915").unwrap(), Size::new(412, 915));
    assert!(parse_size("0x10").unwrap_err().contains("out of range"));
    assert!(parse_size("wide").unwrap_err().contains("WIDTHxHEIGHT"));
    assert!(parse_minutes("-1").is_err());
}
