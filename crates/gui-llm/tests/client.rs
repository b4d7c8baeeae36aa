//! The OpenAI-compatible client against the scripted server, over real HTTP on 127.0.0.1.

use std::collections::HashMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use gui_llm::scripted::{Reply, ScriptedServer};
use gui_llm::{
    ApiKey, ChatRequest, Error, LlmClient, Message, OpenAiClient, OpenAiConfig, Part, Usage,
};

const KEY: &str = "sk-test-0123456789abcdef";

/// A configuration for tests: fast retries, short timeout.
fn config(endpoint: String) -> OpenAiConfig {
    OpenAiConfig {
        retries: 3,
        backoff: Duration::from_millis(10),
        timeout: Duration::from_secs(5),
        ..OpenAiConfig::new(endpoint)
    }
}

fn client(server: &ScriptedServer) -> OpenAiClient {
    OpenAiClient::new(config(server.endpoint())).unwrap()
}

fn question(text: &str) -> ChatRequest {
    ChatRequest::new("action", vec![Message::user_text(text)])
}

/// Serves `replies` in order, then fails the test's next call with a 500.
fn scripted(replies: Vec<Reply>) -> ScriptedServer {
    let mut replies = replies.into_iter();
    ScriptedServer::start(Box::new(move |_| {
        replies
            .next()
            .unwrap_or_else(|| Reply::Status(500, "script exhausted".to_owned()))
    }))
    .unwrap()
}

/// A small real PNG, as the pipeline sends.
fn png() -> Vec<u8> {
    let image = image::RgbaImage::from_pixel(4, 3, image::Rgba([10, 200, 30, 255]));
    let mut bytes = Vec::new();
    image
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    bytes
}

#[test]
fn round_trip_carries_text_and_image_and_counts() {
    let server = ScriptedServer::recorded(vec!["tap widget 7".to_owned()]).unwrap();
    let mut client = OpenAiClient::new(OpenAiConfig {
        model: "llava".to_owned(),
        price_per_1k_prompt: 2.0,
        price_per_1k_completion: 4.0,
        ..config(server.endpoint())
    })
    .unwrap();
    let png = png();
    let request = ChatRequest {
        max_tokens: 64,
        ..ChatRequest::new(
            "action",
            vec![
                Message::system("You test apps."),
                Message::user(vec![
                    Part::Text("Screen:".to_owned()),
                    Part::Image { png: png.clone() },
                    Part::Text("What next?".to_owned()),
                ]),
            ],
        )
    };
    let answer = client.chat(&request).unwrap();
    assert_eq!(answer.text, "tap widget 7");

    let received = server.requests();
    assert_eq!(received.len(), 1);
    let got = &received[0];
    assert_eq!(got.path, "/v1/chat/completions");
    assert_eq!(got.images, 1);
    assert_eq!(got.texts, ["You test apps.", "Screen:", "What next?"]);
    assert_eq!(got.last_user_text, "Screen:\nWhat next?");
    assert_eq!(got.body["model"], "llava");
    assert_eq!(got.body["max_tokens"], 64);
    assert_eq!(got.body["temperature"], 0.0);
    assert_eq!(got.body["messages"][1]["content"][1]["type"], "image_url");
    let urls = got.image_urls();
    let data = urls[0]
        .strip_prefix("data:image/png;base64,")
        .expect("a PNG data URL");
    use base64::Engine as _;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        png
    );
    assert!(got.header("authorization").is_none());

    // The scripted server counts a token per four characters, rounded up.
    let expected = Usage {
        prompt_tokens: (14 + 7 + 10_u64).div_ceil(4),
        completion_tokens: 12_u64.div_ceil(4),
    };
    assert_eq!(answer.usage, expected);
    let accounting = client.accounting();
    assert_eq!(accounting.calls, 1);
    assert_eq!(accounting.failed_calls, 0);
    assert_eq!(accounting.retries, 0);
    assert_eq!(accounting.images, 1);
    assert_eq!(accounting.prompt_tokens, expected.prompt_tokens);
    assert_eq!(accounting.completion_tokens, expected.completion_tokens);
    let cost = expected.prompt_tokens as f64 * 0.002 + expected.completion_tokens as f64 * 0.004;
    assert!((accounting.cost_usd - cost).abs() < 1e-12, "{accounting:?}");
    assert_eq!(client.describe(), format!("llava at {}", server.endpoint()));
}

#[test]
fn key_is_sent_but_never_shown() {
    let server = ScriptedServer::start(Box::new(|request| {
        if request.last_user_text == "echo" {
            // A careless server quoting the credentials back.
            let auth = request.header("authorization").unwrap_or("").to_owned();
            Reply::Status(401, format!("invalid credentials: {auth}"))
        } else {
            Reply::Answer("ok".to_owned())
        }
    }))
    .unwrap();
    let mut client = OpenAiClient::new(OpenAiConfig {
        api_key: Some(ApiKey::new(KEY)),
        ..config(server.endpoint())
    })
    .unwrap();
    client.chat(&question("hello")).unwrap();
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );

    let err = client.chat(&question("echo")).unwrap_err();
    assert!(matches!(err, Error::Status { status: 401, .. }), "{err:?}");
    for shown in [
        err.to_string(),
        format!("{err:?}"),
        format!("{client:?}"),
        client.describe(),
        format!("{:?}", client.config()),
        format!("{}", ApiKey::new(KEY)),
    ] {
        assert!(!shown.contains(KEY), "the key leaks in {shown}");
    }
    assert!(err.to_string().contains("invalid credentials: Bearer ***"));
    assert_eq!(format!("{:?}", ApiKey::new(KEY)), "ApiKey(***)");
    assert_eq!(client.accounting().calls, 2);
    assert_eq!(client.accounting().failed_calls, 1);
    assert_eq!(server.requests().len(), 2, "a 401 is not retried");
}

#[test]
fn server_errors_are_retried_with_backoff() {
    let server = scripted(vec![
        Reply::Status(500, "overloaded".to_owned()),
        Reply::Status(503, "still overloaded".to_owned()),
        Reply::Answer("done".to_owned()),
    ]);
    let mut client = client(&server);
    let start = Instant::now();
    let answer = client.chat(&question("go")).unwrap();
    assert_eq!(answer.text, "done");
    assert_eq!(server.requests().len(), 3);
    // Backoff 10 ms, then 20 ms.
    assert!(start.elapsed() >= Duration::from_millis(30));
    let accounting = client.accounting();
    assert_eq!((accounting.calls, accounting.retries), (1, 2));
    assert_eq!(accounting.failed_calls, 0);
}

#[test]
fn rate_limit_is_retried_after_the_servers_wait() {
    let server = scripted(vec![
        Reply::RateLimited { retry_after_s: 0 },
        Reply::Answer("after the wait".to_owned()),
    ]);
    let mut client = OpenAiClient::new(OpenAiConfig {
        // Only a Retry-After of 0 lets this test finish quickly.
        backoff: Duration::from_secs(60),
        ..config(server.endpoint())
    })
    .unwrap();
    let start = Instant::now();
    assert_eq!(client.chat(&question("go")).unwrap().text, "after the wait");
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(client.accounting().retries, 1);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn client_errors_are_not_retried() {
    let server = scripted(vec![
        Reply::Status(400, "unknown field `max_tokens`".to_owned()),
        Reply::Answer("never sent".to_owned()),
    ]);
    let mut client = client(&server);
    let err = client.chat(&question("go")).unwrap_err();
    match &err {
        Error::Status { status, body, .. } => {
            assert_eq!(*status, 400);
            assert!(body.contains("unknown field"), "{body}");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    assert!(err.to_string().contains("400"), "{err}");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(client.accounting().retries, 0);
    assert_eq!(client.accounting().failed_calls, 1);
}

#[test]
fn error_bodies_are_cut_short() {
    let server = scripted(vec![Reply::Status(422, "x".repeat(5000))]);
    let err = client(&server).chat(&question("go")).unwrap_err();
    let Error::Status { body, .. } = err else {
        panic!("expected a status error, got {err:?}");
    };
    assert!(
        body.chars().count() <= 300,
        "{} chars",
        body.chars().count()
    );
}

#[test]
fn persistent_server_errors_give_up() {
    let server = scripted(vec![]);
    let mut client = OpenAiClient::new(OpenAiConfig {
        retries: 2,
        ..config(server.endpoint())
    })
    .unwrap();
    let err = client.chat(&question("go")).unwrap_err();
    assert!(matches!(err, Error::Endpoint { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("500") && message.contains("script exhausted"),
        "{message}"
    );
    assert_eq!(server.requests().len(), 3);
    assert_eq!(client.accounting().retries, 2);
}

#[test]
fn garbage_is_a_bad_response() {
    for (body, missing) in [
        ("<html>proxy login</html>", "not JSON"),
        (r#"{"object": "list", "data": []}"#, "choices"),
        (r#"{"choices": []}"#, "empty"),
        (r#"{"choices": [{"index": 0}]}"#, "message"),
        (
            r#"{"error": {"message": "model not loaded"}}"#,
            "model not loaded",
        ),
    ] {
        let server = scripted(vec![Reply::Garbage(body.to_owned())]);
        let mut client = client(&server);
        let err = client.chat(&question("go")).unwrap_err();
        assert!(matches!(err, Error::BadResponse { .. }), "{body}: {err:?}");
        assert!(err.to_string().contains(missing), "{body}: {err}");
        assert_eq!(server.requests().len(), 1, "{body}: not retried");
        assert_eq!(client.accounting().failed_calls, 1);
    }
}

#[test]
fn content_parts_are_joined_and_missing_usage_is_estimated() {
    let body = r#"{"choices": [{"message": {"role": "assistant",
        "content": [{"type": "text", "text": "tap "}, {"type": "text", "text": "OK"}]}}]}"#;
    let server = scripted(vec![Reply::Garbage(body.to_owned())]);
    let mut client = client(&server);
    let answer = client.chat(&question("12345678")).unwrap();
    assert_eq!(answer.text, "tap OK");
    assert_eq!(
        answer.usage,
        Usage {
            prompt_tokens: 2,
            completion_tokens: 2
        }
    );
    assert_eq!(client.accounting().prompt_tokens, 2);
}

#[test]
fn hanging_server_times_out() {
    let server = scripted(vec![
        Reply::Hang(Duration::from_secs(3)),
        Reply::Hang(Duration::from_secs(3)),
    ]);
    let mut client = OpenAiClient::new(OpenAiConfig {
        timeout: Duration::from_millis(300),
        retries: 1,
        ..config(server.endpoint())
    })
    .unwrap();
    let start = Instant::now();
    let err = client.chat(&question("go")).unwrap_err();
    assert!(matches!(err, Error::Endpoint { .. }), "{err:?}");
    assert!(err.to_string().contains(&server.endpoint()), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(client.accounting().retries, 1);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn unreachable_endpoint_is_named() {
    // A port nobody listens on: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}/v1");
    let mut client = OpenAiClient::new(OpenAiConfig {
        retries: 1,
        ..config(endpoint.clone())
    })
    .unwrap();
    let err = client.chat(&question("anyone?")).unwrap_err();
    assert!(matches!(err, Error::Endpoint { .. }), "{err:?}");
    assert!(err.to_string().contains(&endpoint), "{err}");
    assert_eq!(client.accounting().retries, 1);
    assert_eq!(client.accounting().failed_calls, 1);
}

#[test]
fn bad_configurations_are_refused() {
    for endpoint in ["", "ftp://example.com/v1", "127.0.0.1:8080/v1", "http://"] {
        let err = OpenAiClient::new(OpenAiConfig::new(endpoint)).unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{endpoint}: {err:?}");
    }
    let no_model = OpenAiConfig {
        model: String::new(),
        ..OpenAiConfig::new("http://127.0.0.1:8080/v1")
    };
    assert!(matches!(OpenAiClient::new(no_model), Err(Error::Config(_))));
    let bad_key = OpenAiConfig {
        api_key: Some(ApiKey::new("sk-secret\nX-Injected: 1")),
        ..OpenAiConfig::new("http://127.0.0.1:8080/v1")
    };
    let err = OpenAiClient::new(bad_key).unwrap_err();
    assert!(!err.to_string().contains("sk-secret"), "{err}");
    // A trailing slash is tolerated.
    let client = OpenAiClient::new(OpenAiConfig::new("http://127.0.0.1:8080/v1/")).unwrap();
    assert_eq!(client.config().endpoint, "http://127.0.0.1:8080/v1");
    let https = OpenAiClient::new(OpenAiConfig::new("https://api.openai.com/v1"));
    if cfg!(feature = "tls") {
        https.unwrap();
    } else {
        let err = https.unwrap_err();
        assert!(err.to_string().contains("tls"), "{err}");
    }
}

#[test]
fn configuration_from_variables() {
    let from = |pairs: &[(&str, &str)]| {
        let vars: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        OpenAiConfig::from_vars(|name| vars.get(name).cloned())
    };

    let err = from(&[("GUI_LLM_MODEL", "llava")]).unwrap_err();
    assert!(matches!(err, Error::Config(_)), "{err:?}");
    assert!(err.to_string().contains("GUI_LLM_ENDPOINT"), "{err}");
    assert!(from(&[("GUI_LLM_ENDPOINT", "  ")]).is_err());

    let config = from(&[("GUI_LLM_ENDPOINT", "http://127.0.0.1:8080/v1")]).unwrap();
    assert_eq!(config.model, "gpt-4o");
    assert!(config.api_key.is_none());
    assert_eq!(config.timeout, Duration::from_secs(120));
    assert_eq!(config.retries, 3);

    let config = from(&[
        ("GUI_LLM_ENDPOINT", "https://api.example.com/v1"),
        ("GUI_LLM_MODEL", "qwen2-vl"),
        ("OPENAI_API_KEY", "sk-fallback"),
        ("GUI_LLM_TIMEOUT_S", "2.5"),
        ("GUI_LLM_RETRIES", "0"),
        ("GUI_LLM_PRICE_PER_1K_PROMPT", "0.005"),
    ])
    .unwrap();
    assert_eq!(config.model, "qwen2-vl");
    assert_eq!(
        config.api_key.as_ref().map(ApiKey::expose),
        Some("sk-fallback")
    );
    assert_eq!(config.timeout, Duration::from_millis(2500));
    assert_eq!(config.retries, 0);
    assert_eq!(config.price_per_1k_prompt, 0.005);

    let config = from(&[
        ("GUI_LLM_ENDPOINT", "http://localhost:8000/v1"),
        ("GUI_LLM_API_KEY", "sk-own"),
        ("OPENAI_API_KEY", "sk-fallback"),
    ])
    .unwrap();
    assert_eq!(config.api_key.as_ref().map(ApiKey::expose), Some("sk-own"));

    for (name, value) in [
        ("GUI_LLM_RETRIES", "many"),
        ("GUI_LLM_TIMEOUT_S", "-1"),
        ("GUI_LLM_TIMEOUT_S", "0"),
    ] {
        let err = from(&[
            ("GUI_LLM_ENDPOINT", "http://localhost:8000/v1"),
            (name, value),
        ])
        .unwrap_err();
        assert!(err.to_string().contains(name), "{name}={value}: {err}");
    }

    // The process environment goes through the same path; whatever it holds, a missing
    // endpoint is named.
    if std::env::var_os("GUI_LLM_ENDPOINT").is_none() {
        let err = OpenAiConfig::from_env().unwrap_err();
        assert!(err.to_string().contains("GUI_LLM_ENDPOINT"), "{err}");
    }
}

#[test]
fn scripted_server_lists_its_model_and_refuses_other_paths() {
    let server = ScriptedServer::recorded(vec![]).unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut models = agent
        .get(format!("{}/models", server.endpoint()))
        .call()
        .unwrap();
    assert_eq!(models.status().as_u16(), 200);
    let models: serde_json::Value = models.body_mut().read_json().unwrap();
    assert_eq!(models["data"][0]["id"], "scripted");
    let missing = agent
        .get(format!("{}/embeddings", server.endpoint()))
        .call()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/models", "/v1/embeddings"]);
}
