//! A small OpenAI-compatible HTTP server in front of a [`LocalModel`]: `GET /v1/models`
//! and `POST /v1/chat/completions` (non-streaming), on a loopback address.
//!
//! It speaks just enough HTTP/1.1 for the clients that matter here (ureq, curl, the
//! `openai` Python package): one request per connection, `Content-Length` bodies,
//! `Connection: close`. Connections get a thread each and queue for the one model.
//! A request with an image part is refused with HTTP 400 and llama.cpp's wording
//! ("image input is not supported"), so clients learn that the model is text only.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::LocalModel;
use crate::client::{Message, Part, Role};

/// The largest request body accepted (a chat of text; images are refused anyway).
const MAX_BODY: usize = 32 << 20;

/// A running server; stops when dropped.
#[derive(Debug)]
pub struct OpenAiServer {
    addr: SocketAddr,
    model_name: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl OpenAiServer {
    /// The base URL clients take (`http://127.0.0.1:PORT/v1`).
    pub fn endpoint(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn address(&self) -> SocketAddr {
        self.addr
    }

    /// The name `/v1/models` lists and completions carry.
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// Serves until the process ends.
    pub fn wait(mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for OpenAiServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves `model` on `addr` (such as `127.0.0.1:0` for any free port).
pub fn serve_openai(model: LocalModel, addr: &str) -> io::Result<OpenAiServer> {
    let listener = TcpListener::bind(addr)?;
    let addr = listener.local_addr()?;
    let model_name = model_id(model.name());
    let stop = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Mutex::new(model));
    let thread = {
        let stop = Arc::clone(&stop);
        let name = model_name.clone();
        std::thread::Builder::new()
            .name("openai-server".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let model = Arc::clone(&shared);
                    let name = name.clone();
                    std::thread::spawn(move || {
                        if let Err(e) = serve_connection(stream, &model, &name) {
                            tracing::debug!("openai-server: connection ended: {e}");
                        }
                    });
                }
            })?
    };
    Ok(OpenAiServer {
        addr,
        model_name,
        stop,
        thread: Some(thread),
    })
}

/// `Gemma 3 270m` -> `gemma-3-270m`.
fn model_id(name: &str) -> String {
    name.split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
        .to_lowercase()
}

fn serve_connection(stream: TcpStream, model: &Mutex<LocalModel>, name: &str) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut words = line.split_whitespace();
    let (method, path) = (
        words.next().unwrap_or("").to_owned(),
        words.next().unwrap_or("").to_owned(),
    );
    let mut length = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((key, value)) = header.split_once(':')
            && key.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut out = stream;
    let path = path.split('?').next().unwrap_or("").trim_end_matches('/');
    let (status, body) = match (method.as_str(), path) {
        ("GET", "/v1/models" | "/models") => (
            200,
            json!({"object": "list", "data": [{"id": name, "object": "model", "owned_by": "local"}]}),
        ),
        ("GET", "/health" | "/v1/health") => (200, json!({"status": "ok"})),
        ("POST", "/v1/chat/completions" | "/chat/completions") => match length {
            None => error(411, "a Content-Length is required"),
            Some(n) if n > MAX_BODY => error(413, "the request body is too large"),
            Some(n) => {
                let mut raw = vec![0; n];
                reader.read_exact(&mut raw)?;
                match serde_json::from_slice::<Value>(&raw) {
                    Ok(request) => complete(model, name, &request),
                    Err(e) => error(400, &format!("the body is not JSON: {e}")),
                }
            }
        },
        _ => error(404, &format!("no route for {method} {path}")),
    };
    let body = body.to_string();
    write!(
        out,
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        if status == 200 { "OK" } else { "Error" },
        body.len()
    )?;
    out.flush()
}

fn error(status: u16, message: &str) -> (u16, Value) {
    (
        status,
        json!({"error": {"message": message, "type": "invalid_request_error", "code": status}}),
    )
}

/// One chat completion: the messages read from the OpenAI format, the model run, the
/// answer in the same format.
fn complete(model: &Mutex<LocalModel>, name: &str, request: &Value) -> (u16, Value) {
    if request.get("stream").and_then(Value::as_bool) == Some(true) {
        return error(
            400,
            "streaming is not supported by this server; send stream: false",
        );
    }
    let Some(list) = request.get("messages").and_then(Value::as_array) else {
        return error(400, "no `messages` array");
    };
    let mut messages = Vec::with_capacity(list.len());
    for m in list {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("system" | "developer") => Role::System,
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => return error(400, &format!("unknown role {other:?}")),
        };
        let mut parts = Vec::new();
        match m.get("content") {
            Some(Value::String(text)) => parts.push(Part::Text(text.clone())),
            Some(Value::Array(items)) => {
                for item in items {
                    match item.get("type").and_then(Value::as_str) {
                        Some("text") => parts.push(Part::Text(
                            item.get("text")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                        )),
                        Some("image_url" | "input_image" | "image") => {
                            return error(
                                400,
                                &format!("image input is not supported: {name} takes text only"),
                            );
                        }
                        other => return error(400, &format!("unknown content part {other:?}")),
                    }
                }
            }
            Some(Value::Null) | None => {}
            Some(_) => return error(400, "`content` is neither text nor parts"),
        }
        messages.push(Message { role, parts });
    }
    let max_tokens = request
        .get("max_tokens")
        .or_else(|| request.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(256)
        .min(4096) as u32;
    let temperature = request
        .get("temperature")
        .and_then(Value::as_f64)
        .unwrap_or(0.0) as f32;
    let stop: Vec<String> = match request.get("stop") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let generation = {
        let mut model = model.lock().unwrap_or_else(|p| p.into_inner());
        model.generate(&messages, max_tokens, temperature, &stop)
    };
    match generation {
        Err(e) => error(500, &e.to_string()),
        Ok(g) => {
            let created = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            (
                200,
                json!({
                    "id": format!("chatcmpl-{created}"),
                    "object": "chat.completion",
                    "created": created,
                    "model": name,
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": g.text},
                        "finish_reason": g.finish_reason,
                    }],
                    "usage": {
                        "prompt_tokens": g.prompt_tokens,
                        "completion_tokens": g.completion_tokens,
                        "total_tokens": g.prompt_tokens + g.completion_tokens,
                    },
                }),
            )
        }
    }
}
