//! `visiondroid` as a user runs it, against a local OpenAI-compatible server over real
//! HTTP whose answers come from a scripted stand-in for a competent model
//! (tests/common/competent_model.rs): it explores the demo app in Chromium, and the
//! detector finds the demo's seeded wrong cart total (bug C1) from the history.

use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

mod common;
use common::competent_model::CompetentModel;
use gui_llm::scripted::{Reply, ScriptedServer};

const KEY: &str = "sk-test-NEVER-WRITE-ME-4242";

fn visiondroid(args: &[&str], endpoint: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_visiondroid"));
    cmd.args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("GUI_LLM_MODEL")
        .env("GUI_LLM_API_KEY", KEY);
    match endpoint {
        Some(e) => cmd.env("GUI_LLM_ENDPOINT", e),
        None => cmd.env_remove("GUI_LLM_ENDPOINT"),
    };
    cmd.output().expect("run visiondroid")
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_competent_model_finds_the_wrong_cart_total_and_the_key_stays_secret() {
    let model = Arc::new(Mutex::new(CompetentModel::new()));
    let keys = Arc::new(Mutex::new(Vec::new()));
    let server = {
        let (model, keys) = (model.clone(), keys.clone());
        ScriptedServer::start(Box::new(move |req| {
            keys.lock()
                .unwrap()
                .push(req.header("authorization").unwrap_or("").to_owned());
            if req.images == 0 {
                return Reply::Status(400, "the prompt has no screenshot".into());
            }
            model.lock().unwrap().respond(req)
        }))
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = visiondroid(
        &[
            "--steps",
            "10",
            "--seed",
            "1",
            "--throttle",
            "100",
            "--out",
            run.to_str().unwrap(),
        ],
        Some(&server.endpoint()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("10 steps"), "{stdout}");
    // Shown with --nocapture: the summary line with model calls and tokens.
    println!("{stdout}");

    // Every call carried the key, and nothing the tool wrote contains it.
    let keys = keys.lock().unwrap();
    assert!(!keys.is_empty());
    assert!(
        keys.iter().all(|k| k == &format!("Bearer {KEY}")),
        "{keys:?}"
    );
    for file in files_under(&run) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "{} contains the API key",
            file.display()
        );
    }
    assert!(!stdout.contains(KEY));

    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("visiondroid.json")).unwrap()).unwrap();
    // The plan was followed: the explorer never had to choose by itself.
    assert_eq!(
        v["failures"].as_array().unwrap().len(),
        0,
        "{:#}",
        v["failures"]
    );
    let functions: Vec<&str> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[0].as_str().unwrap())
        .collect();
    assert!(functions.contains(&"Change cart quantity"), "{functions:?}");
    assert!(functions.contains(&"Remove a todo item"), "{functions:?}");
    // The history was cut into several parts and the cart part was checked.
    let segments = v["segments"].as_array().unwrap();
    assert!(segments.len() >= 3, "{segments:#?}");
    let bugs = v["bugs"].as_array().unwrap();
    let inter: Vec<&serde_json::Value> =
        bugs.iter().filter(|b| b["scope"] == "inter_page").collect();
    assert_eq!(inter.len(), 1, "{bugs:#?}");
    let bug = inter[0];
    assert!(
        bug["description"].as_str().unwrap().contains("$17.75"),
        "{bug:#}"
    );
    assert!(
        bug["screens"][0].as_str().unwrap().contains("cart"),
        "{bug:#}"
    );
    // The step it names is the one whose screen shows Notebook × 3 billed as 2.
    let step = bug["steps"][0].as_u64().unwrap();
    let entry = v["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["step"] == step)
        .unwrap();
    assert!(
        entry["texts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "cart-total: \"$17.75\""),
        "{entry:#}"
    );
    // The model saw the same contradiction on the screen itself.
    assert!(bugs.iter().any(|b| b["scope"] == "intra_page"), "{bugs:#?}");
    let m = model.lock().unwrap();
    assert!(m.answered.contains(&"detect"));
    drop(m);

    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("VisionDroid: suspected non-crash bugs"));
    assert!(html.contains("numerical calculation error"));
    assert!(!html.contains(KEY));
}

#[test]
fn without_an_endpoint_or_with_a_dead_one_the_tool_says_what_is_wrong() {
    let out = visiondroid(&["--steps", "2"], None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("GUI_LLM_ENDPOINT"), "{err}");

    // A dead endpoint (issue 52): once it has failed 3 times in a row (the explorer
    // chose those steps by itself), the run ends early, the run folder is complete, the
    // tool exits with an error that says so, and the key appears nowhere.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = visiondroid(
        &[
            "--steps",
            "10",
            "--throttle",
            "50",
            "--llm-retries",
            "0",
            "--out",
            run.to_str().unwrap(),
        ],
        Some(&format!("http://127.0.0.1:{port}/v1")),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("stopped answering (step 3"), "{err}");
    assert!(!err.contains(KEY));
    assert!(run.join("report.html").is_file());
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("visiondroid.json")).unwrap()).unwrap();
    assert_eq!(v["failures"].as_array().unwrap().len(), 3);
    assert_eq!(v["failures"][0]["cause"], "endpoint");
    assert_eq!(v["endpoint_dead"]["step"], 3);
    assert_eq!(v["answers"]["fallbacks"], 3);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"], 3, "{summary:#}");
    assert_eq!(summary["stopped_because"], "strategy");
    assert!(
        summary["stop_note"].as_str().unwrap().contains("step 3"),
        "{summary:#}"
    );
    assert!(
        v["failures"][0]["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("127.0.0.1:{port}")),
        "{:#}",
        v["failures"]
    );
}
