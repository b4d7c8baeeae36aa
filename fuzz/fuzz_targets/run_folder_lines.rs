//! Run folders' JSON-lines files: a folder with a valid `run.json` and arbitrary bytes as
//! `steps.jsonl`, `signals.jsonl` or `events.jsonl` (chosen by the first byte) loads for
//! a report and reopens for `--resume`, or gives an error, never a panic. One temporary
//! folder serves every input.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use gui_explore::RunRecorder;
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
    let files = ["steps.jsonl", "signals.jsonl", "events.jsonl"];
    let target = files[usize::from(selector) % files.len()];
    for f in files {
        let bytes = if f == target { lines } else { &[][..] };
        std::fs::write(dir.join(f), bytes).expect("write the lines");
    }
    if let Ok(run) = RunFolder::load(dir) {
        assert!(run.steps.len() + run.signals.len() <= lines.len());
    }
    if let Ok(mut resumed) = RunRecorder::resume(dir) {
        let prior = resumed.take_prior().expect("a reopened folder has a prior");
        assert!(prior.steps.len() + prior.signals.len() + prior.events.len() <= lines.len());
    }
});
