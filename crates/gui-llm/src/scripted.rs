//! A scripted OpenAI-compatible server on 127.0.0.1, for tests of the whole pipeline over
//! real HTTP: a [`Responder`] decides each reply, and every request is kept for the test
//! to inspect.
//!
//! ```
//! use gui_llm::scripted::ScriptedServer;
//! use gui_llm::{ChatRequest, LlmClient, Message, OpenAiClient, OpenAiConfig};
//!
//! let server = ScriptedServer::recorded(vec!["tap 3".to_owned()]).unwrap();
//! let mut client = OpenAiClient::new(OpenAiConfig::new(server.endpoint())).unwrap();
//! let request = ChatRequest::new("action", vec![Message::user_text("what next?")]);
//! assert_eq!(client.chat(&request).unwrap().text, "tap 3");
//! assert_eq!(server.requests()[0].last_user_text, "what next?");
//! ```
//!
//! The server speaks just enough HTTP/1.1 for that: one request per connection (each
//! answer says `Connection: close`), `Content-Length` or chunked bodies, and
//! `Expect: 100-continue`. Each connection is served on its own thread, so a hanging
//! reply does not hold back a client's retry.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Decides the reply to each chat-completion request, in the order they arrive.
pub type Responder = Box<dyn FnMut(&ReceivedRequest) -> Reply + Send>;

/// A request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRequest {
    pub method: String,
    pub path: String,
    /// Header names lowercased, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when there is none or it is not JSON).
    pub body: Value,
    /// Every text part of every message, in order (a string content counts as one part).
    pub texts: Vec<String>,
    /// The text parts of the last user message, joined by `\n`.
    pub last_user_text: String,
    /// `image_url` parts over all messages.
    pub images: usize,
}

impl ReceivedRequest {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The `image_url` URLs over all messages, in order.
    pub fn image_urls(&self) -> Vec<&str> {
        messages(&self.body)
            .flat_map(content_parts)
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("image_url"))
            .filter_map(|part| part.pointer("/image_url/url").and_then(Value::as_str))
            .collect()
    }

    fn new(method: String, path: String, headers: Vec<(String, String)>, raw: &[u8]) -> Self {
        let body: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
        let mut texts = Vec::new();
        let mut images = 0;
        let mut last_user_text = String::new();
        for message in messages(&body) {
            let mut message_texts = Vec::new();
            match message.get("content") {
                Some(Value::String(text)) => message_texts.push(text.clone()),
                Some(Value::Array(parts)) => {
                    for part in parts {
                        match part.get("type").and_then(Value::as_str) {
                            Some("text") => {
                                if let Some(text) = part.get("text").and_then(Value::as_str) {
                                    message_texts.push(text.to_owned());
                                }
                            }
                            Some("image_url") => images += 1,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if message.get("role").and_then(Value::as_str) == Some("user") {
                last_user_text = message_texts.join("\n");
            }
            texts.extend(message_texts);
        }
        Self {
            method,
            path,
            headers,
            body,
            texts,
            last_user_text,
            images,
        }
    }
}

fn messages(body: &Value) -> impl Iterator<Item = &Value> {
    body.get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn content_parts(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The server's reply to one chat-completion request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// HTTP 200 with a chat completion whose content is this text. Its usage counts one
    /// token per four characters, rounded up: the request's texts for `prompt_tokens`,
    /// this text for `completion_tokens`.
    Answer(String),
    /// An HTTP error with this status and plain-text body.
    Status(u16, String),
    /// HTTP 429 with `Retry-After` set to this many seconds.
    RateLimited { retry_after_s: u64 },
    /// Wait this long, then close the connection without answering (to test timeouts).
    Hang(Duration),
    /// HTTP 200 with this body, which need not be a chat completion (or JSON).
    Garbage(String),
}

/// A chat-completions server on 127.0.0.1 serving until dropped.
pub struct ScriptedServer {
    address: SocketAddr,
    log: Arc<Mutex<Vec<ReceivedRequest>>>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedServer")
            .field("address", &self.address)
            .field("requests", &lock(&self.log).len())
            .finish_non_exhaustive()
    }
}

/// State the connection threads share.
struct Shared {
    responder: Mutex<Responder>,
    log: Arc<Mutex<Vec<ReceivedRequest>>>,
    stop: Arc<AtomicBool>,
}

/// A poisoned lock only means a responder panicked in another test thread; the data is
/// still what was recorded.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How long a connection may stay silent before the server gives up on it.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request body accepted (screenshots are well below).
const MAX_BODY: usize = 64 << 20;

impl ScriptedServer {
    /// Binds 127.0.0.1 on a free port and serves with `responder`.
    pub fn start(responder: Responder) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let address = listener.local_addr()?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            responder: Mutex::new(responder),
            log: Arc::clone(&log),
            stop: Arc::clone(&stop),
        });
        let acceptor = std::thread::Builder::new()
            .name(format!("scripted-llm-{}", address.port()))
            .spawn(move || accept_loop(&listener, &shared))?;
        Ok(Self {
            address,
            log,
            stop,
            acceptor: Some(acceptor),
        })
    }

    /// A server answering with `answers` in order, then HTTP 500 "script exhausted".
    pub fn recorded(answers: Vec<String>) -> io::Result<Self> {
        let mut answers = VecDeque::from(answers);
        Self::start(Box::new(move |_| match answers.pop_front() {
            Some(answer) => Reply::Answer(answer),
            None => Reply::Status(500, "script exhausted".to_owned()),
        }))
    }

    /// The base URL to configure a client with: `http://127.0.0.1:PORT/v1`.
    pub fn endpoint(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// The socket address the server listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        lock(&self.log).clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // `accept` blocks: a connection of our own wakes it to see the flag.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(shared);
        // Connection threads are not joined: each ends with its connection, and a
        // hanging one watches the stop flag.
        let spawned = std::thread::Builder::new()
            .name("scripted-llm-conn".to_owned())
            .spawn(move || {
                if let Err(err) = serve_connection(stream, &shared) {
                    tracing::debug!("scripted server connection: {err}");
                }
            });
        if let Err(err) = spawned {
            tracing::debug!("scripted server could not spawn a thread: {err}");
        }
    }
}

fn serve_connection(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);

    let request_line = read_line(&mut reader)?;
    let mut words = request_line.split_whitespace();
    let (Some(method), Some(path)) = (words.next(), words.next()) else {
        return respond(&mut writer, 400, "text/plain", &[], "bad request line");
    };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut headers = Vec::new();
    loop {
        let line = read_line(&mut reader)?;
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    };
    if header("expect").is_some_and(|value| value.eq_ignore_ascii_case("100-continue")) {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(&mut reader)?
    } else {
        let length = match header("content-length").map(str::parse::<usize>) {
            None => 0,
            Some(Ok(length)) if length <= MAX_BODY => length,
            Some(_) => {
                return respond(&mut writer, 400, "text/plain", &[], "bad content-length");
            }
        };
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };

    let request = ReceivedRequest::new(method, path, headers, &body);
    let route = (request.method.as_str(), request.path.as_str());
    match route {
        ("POST", "/v1/chat/completions") => {
            // The reply is decided and the request logged under one lock, so the log's
            // order is the order the responder saw.
            let reply = {
                let mut responder = lock(&shared.responder);
                let reply = if request.body.is_null() {
                    Reply::Status(400, "the body is not JSON".to_owned())
                } else {
                    responder(&request)
                };
                lock(&shared.log).push(request.clone());
                reply
            };
            send_reply(&mut writer, &request, reply, &shared.stop)
        }
        ("GET", "/v1/models") => {
            lock(&shared.log).push(request);
            let models = json!({
                "object": "list",
                "data": [{ "id": "scripted", "object": "model", "owned_by": "scripted" }],
            });
            respond(
                &mut writer,
                200,
                "application/json",
                &[],
                &models.to_string(),
            )
        }
        _ => {
            lock(&shared.log).push(request);
            respond(&mut writer, 404, "text/plain", &[], "not found")
        }
    }
}

fn send_reply(
    writer: &mut TcpStream,
    request: &ReceivedRequest,
    reply: Reply,
    stop: &AtomicBool,
) -> io::Result<()> {
    match reply {
        Reply::Answer(content) => {
            let prompt_chars: usize = request.texts.iter().map(|t| t.chars().count()).sum();
            let prompt_tokens = prompt_chars.div_ceil(4);
            let completion_tokens = content.chars().count().div_ceil(4);
            let model = request
                .body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("scripted");
            let completion = json!({
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{
                    "index": 0,
                    "message": { "role": "assistant", "content": content },
                    "finish_reason": "stop",
                }],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            });
            respond(
                writer,
                200,
                "application/json",
                &[],
                &completion.to_string(),
            )
        }
        Reply::Status(status, body) => respond(writer, status, "text/plain", &[], &body),
        Reply::RateLimited { retry_after_s } => respond(
            writer,
            429,
            "text/plain",
            &[("Retry-After", &retry_after_s.to_string())],
            "rate limited",
        ),
        Reply::Hang(duration) => {
            // In slices, so that dropping the server ends the wait.
            let until = Instant::now() + duration;
            while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10).min(until - Instant::now()));
            }
            Ok(())
        }
        Reply::Garbage(body) => respond(writer, 200, "application/json", &[], &body),
    }
}

fn respond(
    writer: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra_headers: &[(&str, &str)],
    body: &str,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        reason_phrase(status),
        body.len()
    );
    for (name, value) in extra_headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    writer.write_all(head.as_bytes())?;
    writer.write_all(body.as_bytes())?;
    writer.flush()
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// One header-section line without its line ending; an error at end of stream.
fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed mid-request",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(reader)?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 {
            // Trailers, up to the empty line.
            while !read_line(reader)?.is_empty() {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        read_line(reader)?;
    }
}
