//! The multimodal LLM behind a trait: an OpenAI-compatible chat-completions client that
//! sends screenshots as base64 PNG data URLs, retries what retrying can cure, and keeps
//! token and cost accounts.
//!
//! One wire format serves hosted APIs and local servers alike (llama.cpp's `llama-server`,
//! vLLM's OpenAI server, the [`crate::scripted`] test server), so the pipeline never
//! knows which model answers it.

use std::fmt;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// Who speaks a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    /// The role's name in the chat-completions format.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One piece of a message: text, or a PNG-encoded image (an annotated screenshot).
#[derive(Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    /// PNG bytes; sent as a `data:image/png;base64,...` URL in an `image_url` part.
    Image {
        png: Vec<u8>,
    },
}

// Images are hundreds of kilobytes: debug output shows their size, not their bytes.
impl fmt::Debug for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Text(text) => f.debug_tuple("Text").field(text).finish(),
            Part::Image { png } => write!(f, "Image {{ png: {} bytes }}", png.len()),
        }
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    /// A system message holding `text`.
    pub fn system(text: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            parts: vec![Part::Text(text.into())],
        }
    }

    /// A user message made of `parts` (text and images, in the order the model sees them).
    pub fn user(parts: Vec<Part>) -> Self {
        Self {
            role: Role::User,
            parts,
        }
    }

    /// A user message holding only `text`.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::user(vec![Part::Text(text.into())])
    }

    /// An earlier answer of the model, replayed as context.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            parts: vec![Part::Text(text.into())],
        }
    }

    fn image_count(&self) -> usize {
        self.parts
            .iter()
            .filter(|part| matches!(part, Part::Image { .. }))
            .count()
    }

    fn text_chars(&self) -> usize {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.chars().count(),
                Part::Image { .. } => 0,
            })
            .sum()
    }

    /// The message in the chat-completions format. A message of a single text part is
    /// sent with a plain string as content: every compatible server accepts that form,
    /// while some local servers and chat templates reject content arrays in system and
    /// assistant messages.
    fn to_json(&self) -> Value {
        let content = match self.parts.as_slice() {
            [Part::Text(text)] => Value::String(text.clone()),
            parts => Value::Array(parts.iter().map(part_json).collect()),
        };
        json!({ "role": self.role.as_str(), "content": content })
    }
}

fn part_json(part: &Part) -> Value {
    match part {
        Part::Text(text) => json!({ "type": "text", "text": text }),
        Part::Image { png } => {
            let data = base64::engine::general_purpose::STANDARD.encode(png);
            json!({
                "type": "image_url",
                "image_url": { "url": format!("data:image/png;base64,{data}") },
            })
        }
    }
}

/// One call to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// Upper bound on the answer's length, in tokens (default 512).
    pub max_tokens: u32,
    /// Sampling temperature (default 0.0: the most likely answer, for repeatable runs).
    pub temperature: f32,
    /// What the call is for ("action", "input", "function", "detect", ...); used only in
    /// logs and accounting, never sent to the endpoint.
    pub purpose: String,
    /// Texts that end the answer where they first appear (OpenAI's `stop`, at most 4);
    /// not part of the answer.
    pub stop: Vec<String>,
}

impl Default for ChatRequest {
    fn default() -> Self {
        Self {
            messages: Vec::new(),
            max_tokens: 512,
            temperature: 0.0,
            purpose: String::new(),
            stop: Vec::new(),
        }
    }
}

impl ChatRequest {
    /// A request with the default limits.
    pub fn new(purpose: impl Into<String>, messages: Vec<Message>) -> Self {
        Self {
            messages,
            purpose: purpose.into(),
            ..Self::default()
        }
    }

    /// Image parts over all messages.
    pub fn image_count(&self) -> usize {
        self.messages.iter().map(Message::image_count).sum()
    }
}

/// `messages` with every image part removed (the text view, for text-only models).
pub fn without_images(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|m| Message {
            role: m.role,
            parts: m
                .parts
                .iter()
                .filter(|p| matches!(p, Part::Text(_)))
                .cloned()
                .collect(),
        })
        .collect()
}

/// Whether an error body says the model takes no images. The wordings of llama.cpp
/// ("image input is not supported", "...mmproj"), vLLM ("not a multimodal model"),
/// Ollama ("does not support images") and OpenAI ("does not support image input").
pub fn refuses_images(body: &str) -> bool {
    let body = body.to_lowercase();
    [
        "image input is not supported",
        "does not support image",
        "not a multimodal",
        "mmproj",
        "image_url is not supported",
        "images are not supported",
        "takes text only",
        "vision is not supported",
    ]
    .iter()
    .any(|phrase| body.contains(phrase))
}

/// The model's answer to a [`ChatRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatAnswer {
    pub text: String,
    pub usage: Usage,
    /// Why the model stopped, when the server says: `stop`, or `length` when the answer
    /// was cut at `max_tokens` (a truncated answer).
    pub finish_reason: Option<String>,
}

impl ChatAnswer {
    /// Whether the answer stopped at the token cap rather than where the model ended it.
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }
}

/// Tokens one call consumed, as the endpoint reported them.
///
/// When the endpoint reports no usage, [`OpenAiClient`] estimates one token per four
/// characters of text (prompt text for `prompt_tokens`, the answer for
/// `completion_tokens`; images are not counted), so that accounts stay roughly right with
/// servers that omit the field.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// What a client has spent so far; written into a run's report.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accounting {
    /// Calls of [`LlmClient::chat`], failed ones included.
    pub calls: u64,
    /// Calls that returned an error.
    pub failed_calls: u64,
    /// Attempts beyond the first, over all calls.
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Images sent, counted once per call however many attempts it took.
    pub images: u64,
    /// Cost from the configured prices per 1000 tokens.
    pub cost_usd: f64,
    /// Time spent inside [`LlmClient::chat`], waits between retries included.
    pub wall_ms: u64,
    /// One record per call, in order: what it was for, how long it took, its tokens.
    #[serde(default)]
    pub log: Vec<CallRecord>,
}

/// One call of [`LlmClient::chat`], as kept in [`Accounting::log`].
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    pub purpose: String,
    /// Wall time of the call, retries and waits included.
    pub ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Attempts beyond the first.
    pub retries: u32,
    /// `stop`, `length`, ... when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// The error, for a failed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Accounting {
    /// Adds one call: `retries` beyond the first attempt, prices in US dollars per 1000
    /// prompt and completion tokens.
    pub fn record(
        &mut self,
        purpose: &str,
        elapsed: Duration,
        retries: u32,
        result: &Result<ChatAnswer>,
        (price_prompt, price_completion): (f64, f64),
    ) {
        let ms = elapsed.as_millis() as u64;
        self.calls += 1;
        self.wall_ms += ms;
        self.retries += u64::from(retries);
        let mut record = CallRecord {
            purpose: purpose.to_owned(),
            ms,
            retries,
            ..CallRecord::default()
        };
        match result {
            Ok(answer) => {
                self.prompt_tokens += answer.usage.prompt_tokens;
                self.completion_tokens += answer.usage.completion_tokens;
                self.cost_usd += answer.usage.prompt_tokens as f64 / 1000.0 * price_prompt
                    + answer.usage.completion_tokens as f64 / 1000.0 * price_completion;
                record.prompt_tokens = answer.usage.prompt_tokens;
                record.completion_tokens = answer.usage.completion_tokens;
                record.finish_reason = answer.finish_reason.clone();
            }
            Err(err) => {
                self.failed_calls += 1;
                record.error = Some(err.to_string());
            }
        }
        self.log.push(record);
    }

    /// Mean wall time of a call, in milliseconds (0 before the first call).
    pub fn mean_ms(&self) -> f64 {
        if self.calls == 0 {
            0.0
        } else {
            self.wall_ms as f64 / self.calls as f64
        }
    }
}

/// A chat model: the seam between the VisionDroid pipeline and whatever answers it.
pub trait LlmClient {
    /// Sends `request` and returns the model's answer.
    fn chat(&mut self, request: &ChatRequest) -> Result<ChatAnswer>;
    /// Calls, tokens and cost so far.
    fn accounting(&self) -> &Accounting;
    /// Which model at which endpoint, for logs and reports. Never holds a secret.
    fn describe(&self) -> String;
}

impl<C: LlmClient + ?Sized> LlmClient for &mut C {
    fn chat(&mut self, request: &ChatRequest) -> Result<ChatAnswer> {
        (**self).chat(request)
    }
    fn accounting(&self) -> &Accounting {
        (**self).accounting()
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
}

impl<C: LlmClient + ?Sized> LlmClient for Box<C> {
    fn chat(&mut self, request: &ChatRequest) -> Result<ChatAnswer> {
        (**self).chat(request)
    }
    fn accounting(&self) -> &Accounting {
        (**self).accounting()
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// A secret API key. It prints as `ApiKey(***)` and cannot be serialized, so it reaches
/// neither logs nor the run folder; only the `Authorization` header sees its value.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the `Authorization` header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for ApiKey {
    fn from(key: String) -> Self {
        Self(key)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Where and how [`OpenAiClient`] talks to a chat-completions endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// Base URL such as `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`; the
    /// client posts to `{endpoint}/chat/completions`.
    pub endpoint: String,
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when set; local servers usually need none.
    pub api_key: Option<ApiKey>,
    /// Limit on one attempt, connection to last byte (default 120 s).
    pub timeout: Duration,
    /// Attempts after the first one fails with something retrying can cure (default 3).
    pub retries: u32,
    /// Wait before the first retry, doubled before each further one (default 1 s).
    pub backoff: Duration,
    /// US dollars per 1000 prompt tokens (default 0: local models are free).
    pub price_per_1k_prompt: f64,
    /// US dollars per 1000 completion tokens (default 0).
    pub price_per_1k_completion: f64,
}

impl Default for OpenAiConfig {
    /// No endpoint (which [`OpenAiClient::new`] rejects) and the default model and limits.
    fn default() -> Self {
        Self {
            endpoint: String::new(),
            model: DEFAULT_MODEL.to_owned(),
            api_key: None,
            timeout: Duration::from_secs(120),
            retries: 3,
            backoff: Duration::from_secs(1),
            price_per_1k_prompt: 0.0,
            price_per_1k_completion: 0.0,
        }
    }
}

const DEFAULT_MODEL: &str = "gpt-4o";

/// Environment variables read by [`OpenAiConfig::from_env`].
const VAR_ENDPOINT: &str = "GUI_LLM_ENDPOINT";
const VAR_MODEL: &str = "GUI_LLM_MODEL";
const VAR_API_KEY: &str = "GUI_LLM_API_KEY";
const VAR_OPENAI_API_KEY: &str = "OPENAI_API_KEY";
const VAR_TIMEOUT: &str = "GUI_LLM_TIMEOUT_S";
const VAR_RETRIES: &str = "GUI_LLM_RETRIES";
const VAR_PRICE_PROMPT: &str = "GUI_LLM_PRICE_PER_1K_PROMPT";
const VAR_PRICE_COMPLETION: &str = "GUI_LLM_PRICE_PER_1K_COMPLETION";

impl OpenAiConfig {
    /// The defaults with `endpoint`.
    pub fn new(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            ..Self::default()
        }
    }

    /// The configuration from the process environment; see [`OpenAiConfig::from_vars`].
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The configuration from variables looked up by `get` (the environment, in
    /// [`OpenAiConfig::from_env`]); empty values count as unset:
    ///
    /// - `GUI_LLM_ENDPOINT` (required): the base URL;
    /// - `GUI_LLM_MODEL` (default `gpt-4o`);
    /// - `GUI_LLM_API_KEY`, else `OPENAI_API_KEY` (optional: local servers need none);
    /// - `GUI_LLM_TIMEOUT_S`: seconds per attempt, fractions allowed (default 120);
    /// - `GUI_LLM_RETRIES` (default 3);
    /// - `GUI_LLM_PRICE_PER_1K_PROMPT`, `GUI_LLM_PRICE_PER_1K_COMPLETION`: US dollars per
    ///   1000 tokens, for the cost account (default 0).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = |name: &str| get(name).filter(|value| !value.trim().is_empty());
        let endpoint = get(VAR_ENDPOINT).ok_or_else(|| {
            Error::Config(format!(
                "{VAR_ENDPOINT} is not set; it names the chat-completions base URL, such as \
                 https://api.openai.com/v1 or http://127.0.0.1:8080/v1"
            ))
        })?;
        let mut config = Self::new(endpoint.trim());
        if let Some(model) = get(VAR_MODEL) {
            config.model = model.trim().to_owned();
        }
        config.api_key = get(VAR_API_KEY)
            .or_else(|| get(VAR_OPENAI_API_KEY))
            .map(|key| ApiKey::new(key.trim()));
        if let Some(value) = get(VAR_TIMEOUT) {
            let seconds: f64 = parse_var(VAR_TIMEOUT, &value)?;
            config.timeout = Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|timeout| !timeout.is_zero())
                .ok_or_else(|| {
                    Error::Config(format!(
                        "{VAR_TIMEOUT}={value:?} is not a positive number of seconds"
                    ))
                })?;
        }
        if let Some(value) = get(VAR_RETRIES) {
            config.retries = parse_var(VAR_RETRIES, &value)?;
        }
        if let Some(value) = get(VAR_PRICE_PROMPT) {
            config.price_per_1k_prompt = parse_price(VAR_PRICE_PROMPT, &value)?;
        }
        if let Some(value) = get(VAR_PRICE_COMPLETION) {
            config.price_per_1k_completion = parse_price(VAR_PRICE_COMPLETION, &value)?;
        }
        Ok(config)
    }
}

fn parse_var<T: std::str::FromStr>(name: &str, value: &str) -> Result<T>
where
    T::Err: fmt::Display,
{
    value
        .trim()
        .parse()
        .map_err(|err| Error::Config(format!("{name}={value:?}: {err}")))
}

fn parse_price(name: &str, value: &str) -> Result<f64> {
    let price: f64 = parse_var(name, value)?;
    if price.is_finite() && price >= 0.0 {
        Ok(price)
    } else {
        Err(Error::Config(format!(
            "{name}={value:?} is not a price (a number >= 0)"
        )))
    }
}

/// The longest excerpt of an error body kept in an [`Error`].
const EXCERPT_CHARS: usize = 300;
/// The longest wait a `Retry-After` header can impose.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// A blocking client of an OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiClient {
    config: OpenAiConfig,
    url: String,
    agent: ureq::Agent,
    accounting: Accounting,
}

impl fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("endpoint", &self.config.endpoint)
            .field("model", &self.config.model)
            .field("api_key", &self.config.api_key)
            .field("timeout", &self.config.timeout)
            .field("retries", &self.config.retries)
            .field("accounting", &self.accounting)
            .finish_non_exhaustive()
    }
}

/// What one attempt came to.
enum Attempt {
    Answered(String),
    /// Worth another attempt: a connection failure, a timeout, HTTP 429 or 5xx. `wait`
    /// is the server's `Retry-After`, when it gave one.
    Retry {
        reason: String,
        wait: Option<Duration>,
    },
    Failed(Error),
}

impl OpenAiClient {
    /// A client for `config`; checks the endpoint, model, timeout and key format.
    pub fn new(mut config: OpenAiConfig) -> Result<Self> {
        config.endpoint = config.endpoint.trim().trim_end_matches('/').to_owned();
        let endpoint = &config.endpoint;
        let rest = if let Some(rest) = endpoint.strip_prefix("https://") {
            if !cfg!(feature = "tls") {
                return Err(Error::Config(format!(
                    "endpoint {endpoint} uses HTTPS, but gui-llm was built without its `tls` \
                     feature; enable it or use a plain http:// endpoint"
                )));
            }
            rest
        } else if let Some(rest) = endpoint.strip_prefix("http://") {
            rest
        } else {
            return Err(Error::Config(format!(
                "endpoint {endpoint:?} is not an http:// or https:// URL"
            )));
        };
        if rest.is_empty() || rest.starts_with('/') {
            return Err(Error::Config(format!(
                "endpoint {endpoint:?} names no host"
            )));
        }
        if config.model.trim().is_empty() {
            return Err(Error::Config(format!(
                "no model named for endpoint {endpoint}"
            )));
        }
        if config.timeout.is_zero() {
            return Err(Error::Config("the LLM timeout is zero".to_owned()));
        }
        if let Some(key) = &config.api_key {
            // Said without the key: the message may be logged.
            if key.expose().is_empty() || !key.expose().bytes().all(|b| b.is_ascii_graphic()) {
                return Err(Error::Config(
                    "the API key is empty or holds characters an HTTP header cannot carry"
                        .to_owned(),
                ));
            }
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            // Statuses are classified below (retry 429/5xx, report other 4xx with body).
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}/chat/completions", config.endpoint);
        Ok(Self {
            config,
            url,
            agent,
            accounting: Accounting::default(),
        })
    }

    /// The configuration in use (the endpoint without a trailing slash).
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    fn request_body(&self, request: &ChatRequest) -> Vec<u8> {
        let messages: Vec<Value> = request.messages.iter().map(Message::to_json).collect();
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": false,
        });
        if !request.stop.is_empty() {
            body["stop"] = json!(request.stop.iter().take(4).collect::<Vec<_>>());
        }
        body.to_string().into_bytes()
    }

    fn attempt(&self, body: &[u8]) -> Attempt {
        let mut builder = self.agent.post(&self.url).content_type("application/json");
        if let Some(key) = &self.config.api_key {
            builder = builder.header("Authorization", format!("Bearer {}", key.expose()));
        }
        let mut response = match builder.send(body) {
            Ok(response) => response,
            Err(err) => return self.transport_failure(err),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<f64>().ok())
            .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
            .map(|wait| wait.min(MAX_RETRY_AFTER));
        let text = match response.body_mut().read_to_string() {
            Ok(text) => text,
            Err(err) => return self.transport_failure(err),
        };
        match status {
            200..=299 => Attempt::Answered(text),
            429 | 500..=599 => Attempt::Retry {
                reason: format!("HTTP {status}: {}", self.excerpt(&text)),
                wait: retry_after,
            },
            _ if refuses_images(&text) => Attempt::Failed(Error::ImagesUnsupported {
                endpoint: self.config.endpoint.clone(),
                message: format!("HTTP {status}: {}", self.excerpt(&text)),
            }),
            _ => Attempt::Failed(Error::Status {
                endpoint: self.config.endpoint.clone(),
                status,
                body: self.excerpt(&text),
            }),
        }
    }

    fn transport_failure(&self, err: ureq::Error) -> Attempt {
        let reason = self.scrub(&err.to_string());
        match err {
            ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Protocol(_) => Attempt::Retry { reason, wait: None },
            _ => Attempt::Failed(Error::Endpoint {
                endpoint: self.config.endpoint.clone(),
                message: reason,
            }),
        }
    }

    /// `text` without the API key, should a server echo it.
    fn scrub(&self, text: &str) -> String {
        match &self.config.api_key {
            Some(key) if !key.expose().is_empty() => text.replace(key.expose(), "***"),
            _ => text.to_owned(),
        }
    }

    /// The start of a body for an error message: key scrubbed first (so that no cut
    /// leaves part of it), then at most [`EXCERPT_CHARS`] characters.
    fn excerpt(&self, body: &str) -> String {
        let body = self.scrub(body.trim());
        if body.chars().count() <= EXCERPT_CHARS {
            return body;
        }
        let mut excerpt: String = body.chars().take(EXCERPT_CHARS - 3).collect();
        excerpt.push_str("...");
        excerpt
    }

    fn bad_response(&self, message: String) -> Error {
        Error::BadResponse {
            endpoint: self.config.endpoint.clone(),
            message,
        }
    }

    /// The answer text and usage in a chat-completion body.
    fn parse_completion(&self, request: &ChatRequest, body: &str) -> Result<ChatAnswer> {
        let value: Value = serde_json::from_str(body).map_err(|err| {
            self.bad_response(format!(
                "the body is not JSON ({err}): {}",
                self.excerpt(body)
            ))
        })?;
        if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(self.bad_response(format!(
                "the server reported an error: {}",
                self.excerpt(&message)
            )));
        }
        let choice = match value.get("choices").and_then(Value::as_array) {
            None => {
                return Err(
                    self.bad_response(format!("no `choices` array in {}", self.excerpt(body)))
                );
            }
            Some(choices) => choices
                .first()
                .ok_or_else(|| self.bad_response("`choices` is empty".to_owned()))?,
        };
        let content = choice
            .get("message")
            .ok_or_else(|| self.bad_response("no `choices[0].message`".to_owned()))?
            .get("content")
            .ok_or_else(|| self.bad_response("no `choices[0].message.content`".to_owned()))?;
        let text = match content {
            Value::String(text) => text.clone(),
            // Some servers answer with content parts, like the ones requests carry.
            Value::Array(parts) => parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
            Value::Null => {
                let reason = choice
                    .get("finish_reason")
                    .and_then(Value::as_str)
                    .unwrap_or("none given");
                return Err(self.bad_response(format!(
                    "`choices[0].message.content` is null (finish reason: {reason})"
                )));
            }
            other => {
                return Err(self.bad_response(format!(
                    "`choices[0].message.content` is neither text nor parts: {}",
                    self.excerpt(&other.to_string())
                )));
            }
        };
        let finish_reason = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let usage = value.get("usage");
        let reported = |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64);
        let usage = match (reported("prompt_tokens"), reported("completion_tokens")) {
            (Some(prompt_tokens), Some(completion_tokens)) => Usage {
                prompt_tokens,
                completion_tokens,
            },
            _ => {
                let prompt_chars: usize = request.messages.iter().map(Message::text_chars).sum();
                tracing::debug!(
                    purpose = %request.purpose,
                    "the endpoint reported no usage; estimating 4 characters per token"
                );
                Usage {
                    prompt_tokens: estimate_tokens(prompt_chars),
                    completion_tokens: estimate_tokens(text.chars().count()),
                }
            }
        };
        Ok(ChatAnswer {
            text,
            usage,
            finish_reason,
        })
    }

    /// Attempts until an answer, a failure retrying cannot cure, or no retries left.
    fn chat_with_retries(
        &mut self,
        request: &ChatRequest,
        attempt: &mut u32,
    ) -> Result<ChatAnswer> {
        let body = self.request_body(request);
        let mut backoff = self.config.backoff;
        loop {
            match self.attempt(&body) {
                Attempt::Answered(text) => return self.parse_completion(request, &text),
                Attempt::Failed(err) => return Err(err),
                Attempt::Retry { reason, wait } => {
                    if *attempt >= self.config.retries {
                        return Err(Error::Endpoint {
                            endpoint: self.config.endpoint.clone(),
                            message: format!("{reason} (gave up after {} attempts)", *attempt + 1),
                        });
                    }
                    let wait = wait.unwrap_or(backoff);
                    tracing::warn!(
                        endpoint = %self.config.endpoint,
                        purpose = %request.purpose,
                        attempt = *attempt + 1,
                        wait_ms = wait.as_millis() as u64,
                        "LLM call failed, retrying: {reason}"
                    );
                    std::thread::sleep(wait);
                    backoff = backoff.saturating_mul(2);
                    *attempt += 1;
                }
            }
        }
    }
}

fn estimate_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

impl LlmClient for OpenAiClient {
    fn chat(&mut self, request: &ChatRequest) -> Result<ChatAnswer> {
        let start = Instant::now();
        let mut retries = 0;
        let result = self.chat_with_retries(request, &mut retries);
        let elapsed = start.elapsed();
        self.accounting.images += request.image_count() as u64;
        let prices = (
            self.config.price_per_1k_prompt,
            self.config.price_per_1k_completion,
        );
        self.accounting
            .record(&request.purpose, elapsed, retries, &result, prices);
        match &result {
            Ok(answer) => tracing::debug!(
                purpose = %request.purpose,
                prompt_tokens = answer.usage.prompt_tokens,
                completion_tokens = answer.usage.completion_tokens,
                ms = elapsed.as_millis() as u64,
                "LLM call answered"
            ),
            Err(_) => {
                tracing::debug!(purpose = %request.purpose, ms = elapsed.as_millis() as u64, "LLM call failed")
            }
        }
        result
    }

    fn accounting(&self) -> &Accounting {
        &self.accounting
    }

    fn describe(&self) -> String {
        format!("{} at {}", self.config.model, self.config.endpoint)
    }
}
