//! The committed fuzz seeds (`fuzz/corpus/<target>/`) replayed through the parsers of the
//! fuzz targets (`fuzz/fuzz_targets/<target>.rs`) in the ordinary test suite, so a parser
//! change that brings back a crash once fixed fails `cargo test` and not only the next
//! `cargo xtask fuzz`, which needs nightly and hours.
//!
//! Each replay below calls the parser the way its fuzz target does, with the same checks
//! on the result; an input may be refused, but nothing may panic. Every target of
//! `fuzz/Cargo.toml` must have a replay here and a non-empty corpus, so neither a new
//! target nor a lost corpus passes unnoticed.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use clap::Parser;
use gui_testing::cli::{CommonArgs, RunArgs, TargetArgs, parse_from};

/// Feeds one input to a target's parser; panics (an assertion of the target included)
/// are the failures.
type Replay = fn(&[u8], &Path);

/// Every fuzz target and its replay, in the order of `fuzz/Cargo.toml`.
const TARGETS: &[(&str, Replay)] = &[
    ("screenshot_png", screenshot_png),
    ("bracket_tree", bracket_tree),
    ("monkey_log", monkey_log),
    ("ui_dump", ui_dump),
    ("class_file", class_file),
    ("script", script),
    ("toml_config", toml_config),
    ("llm_answers", llm_answers),
    ("logcat", logcat),
    ("run_folder_lines", run_folder_lines),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The `[[bin]]` names of `fuzz/Cargo.toml`.
fn declared_targets() -> BTreeSet<String> {
    let path = fuzz_dir().join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let manifest: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()));
    manifest["bin"]
        .as_array()
        .unwrap_or_else(|| panic!("{} lists no [[bin]] targets", path.display()))
        .iter()
        .map(|bin| {
            bin["name"]
                .as_str()
                .expect("a [[bin]] has a name")
                .to_owned()
        })
        .collect()
}

/// The files of `fuzz/corpus/<target>`, sorted; fails when there are none.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join("corpus").join(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "the corpus of fuzz target {target} is missing ({}: {e})",
            dir.display()
        )
    });
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "the corpus of fuzz target {target} ({}) is empty",
        dir.display()
    );
    files
}

#[test]
fn every_fuzz_target_has_a_replay_and_seeds() {
    let replayed: BTreeSet<String> = TARGETS.iter().map(|(t, _)| t.to_string()).collect();
    assert_eq!(
        replayed,
        declared_targets(),
        "the targets replayed here and the [[bin]]s of fuzz/Cargo.toml differ"
    );
    for (target, _) in TARGETS {
        corpus(target);
    }
}

#[test]
fn every_committed_fuzz_seed_is_parsed_without_a_panic() {
    let scratch = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut inputs = 0;
    for (target, replay) in TARGETS {
        let work = scratch.path().join(target);
        std::fs::create_dir_all(&work).unwrap();
        for file in corpus(target) {
            let data = std::fs::read(&file).unwrap();
            inputs += 1;
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| replay(&data, &work))) {
                let message = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                failures.push(format!("{target}: {}: {message}", file.display()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {inputs} seeds panicked:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// libFuzzer hands `&str` targets only the inputs that are UTF-8; so does this.
fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

fn screenshot_png(data: &[u8], _: &Path) {
    if let Ok(shot) = gui_core::Screenshot::from_png(data, "fuzz", 1.0, 0) {
        assert!(shot.width() > 0 && shot.height() > 0);
    }
}

fn bracket_tree(data: &[u8], _: &Path) {
    let Some(text) = text(data) else { return };
    if let Ok(tree) = gui_layout::LayoutTree::parse(text) {
        assert!(!tree.is_empty());
        let written = tree.to_bracket();
        let again =
            gui_layout::LayoutTree::parse(&written).expect("written bracket notation parses");
        assert_eq!(again.to_bracket(), written);
    }
}

fn monkey_log(data: &[u8], _: &Path) {
    let Some(text) = text(data) else { return };
    let _ = gui_model_search::parse_monkey_log(text);
}

fn ui_dump(data: &[u8], _: &Path) {
    let Some(xml) = text(data) else { return };
    let _ = gui_model_search::UiDump::parse(xml);
    if let Err(e) = gui_driver::fuzzing::parse_ui_dump(xml, "fuzz.xml") {
        assert!(
            e.to_string().contains("fuzz.xml"),
            "error does not name the dump: {e}"
        );
    }
}

fn class_file(data: &[u8], _: &Path) {
    if let Ok(db) = gui_greybox::java::ClassDb::from_bytes("fuzz.class", data) {
        assert_eq!(db.classes().count(), 1);
        let _ = db.listeners();
    }
}

fn script(data: &[u8], _: &Path) {
    use gui_greybox::js::{JsAnalysis, JsConfig, Script};
    let Some(source) = text(data) else { return };
    let scripts = [Script {
        name: "fuzz.js".into(),
        source: source.into(),
    }];
    let analysis = JsAnalysis::analyse(&scripts, &JsConfig::default());
    for e in analysis.errors() {
        assert_eq!(e.script, "fuzz.js");
    }
    for f in 0..analysis.functions().len() {
        let _ = analysis.read_write(f);
    }
}

/// The options of `monkey`, as the `toml_config` target reads them.
#[derive(Debug, Parser)]
struct MonkeyOptions {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    run: RunArgs,
}

fn toml_config(data: &[u8], work: &Path) {
    let path = work.join("fuzz.toml");
    std::fs::write(&path, data).expect("write the config file");
    let args = ["monkey".into(), "--config".into(), path.into_os_string()];
    if let Err(e) = parse_from::<MonkeyOptions>(args) {
        // A file that is not TOML at all is reported against the file's name.
        let is_toml = text(data).is_some_and(|t| t.parse::<toml::Table>().is_ok());
        if !is_toml {
            let message = e.to_string();
            assert!(
                message.contains("fuzz.toml"),
                "error does not name the file: {message}"
            );
        }
    }
}

fn llm_answers(data: &[u8], _: &Path) {
    let Some(text) = text(data) else { return };
    let _ = gui_llm::parse_action_answer(text);
    let _ = gui_llm::parse_detect_answer(text);
    let _ = gui_llm::parse_input_answer(text);
}

fn logcat(data: &[u8], _: &Path) {
    let Some(text) = text(data) else { return };
    let _ = gui_driver::fuzzing::logcat_signals("com.example.notes", text);
}

const RUN_JSON: &str =
    r#"{"format":"gui-testing-run","format_version":1,"meta":{"strategy":"monkey","seed":1}}"#;

fn run_folder_lines(data: &[u8], dir: &Path) {
    let Some((&selector, lines)) = data.split_first() else {
        return;
    };
    std::fs::write(dir.join("run.json"), RUN_JSON).expect("write run.json");
    let files = ["steps.jsonl", "signals.jsonl", "events.jsonl"];
    let target = files[usize::from(selector) % files.len()];
    for f in files {
        let bytes = if f == target { lines } else { &[][..] };
        std::fs::write(dir.join(f), bytes).expect("write the lines");
    }
    if let Ok(run) = gui_report::RunFolder::load(dir) {
        assert!(run.steps.len() + run.signals.len() <= lines.len());
    }
    if let Ok(mut resumed) = gui_explore::RunRecorder::resume(dir) {
        let prior = resumed.take_prior().expect("a reopened folder has a prior");
        assert!(prior.steps.len() + prior.signals.len() + prior.events.len() <= lines.len());
    }
}
