//! Run folders' JSON-lines files: a folder with a valid `run.json` and arbitrary bytes as
//! `steps.jsonl` (or `signals.jsonl`, chosen by the first byte) loads or gives an error,
//! never a panic. One temporary folder serves every input.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use gui_report::RunFolder;
use libfuzzer_sys::fuzz_target;

const RUN_JSON: &str =
    r#"{"format":"gui-testing-run","format_version":1,"meta":{"strategy":"monkey","seed":1}}"#;

fn run_dir() -> &'static PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = DIR.get_or_init(|| tempfile::tempdir().expect("temporary folder"));
        std::fs::write(dir.path().join("run.json"), RUN_JSON).expect("write run.json");
        dir.path().to_path_buf()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, lines)) = data.split_first() else {
        return;
    };
    let dir = run_dir();
    let (target, other) = if selector & 1 == 0 {
        ("steps.jsonl", "signals.jsonl")
    } else {
        ("signals.jsonl", "steps.jsonl")
    };
    std::fs::write(dir.join(target), lines).expect("write the lines");
    std::fs::write(dir.join(other), b"").expect("empty the other file");
    if let Ok(run) = RunFolder::load(dir) {
        assert!(run.steps.len() + run.signals.len() <= lines.len());
    }
});
