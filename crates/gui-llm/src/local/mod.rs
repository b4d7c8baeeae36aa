//! An in-process chat model: a Gemma 3 GGUF file run on the CPU with candle
//! (`candle_transformers::models::quantized_gemma3`), its tokenizer read from the same
//! file. [`LocalModel`] is an [`LlmClient`], so `visiondroid --local-model FILE.gguf`
//! needs no server; [`serve_openai`] puts it behind a small OpenAI-compatible HTTP server
//! for tools that only speak HTTP (`cargo xtask llm-local`).
//!
//! The model is text only: a request with an image part is refused with
//! [`Error::ImagesUnsupported`], as a text-only llama.cpp server refuses it, and the
//! explorer then sends the text view instead.
//!
//! Decoding is greedy at temperature 0 (repeatable runs) and seeded sampling above it.
//! Prompts longer than the context keep their start (the instructions) and their end (the
//! question) and lose the middle.

mod serve;
mod tokenizer;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{Device, Tensor};
use candle_transformers::models::quantized_gemma3::ModelWeights;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use serve::{OpenAiServer, serve_openai};
pub use tokenizer::GgufTokenizer;

use crate::client::{Accounting, ChatAnswer, ChatRequest, LlmClient, Message, Part, Role, Usage};
use crate::error::{Error, Result};

/// Where the model is and how much of a prompt it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalConfig {
    /// A Gemma 3 GGUF file (any quantisation candle reads).
    pub model: PathBuf,
    /// Tokens of prompt plus answer; longer prompts lose their middle (default 2048).
    pub context: usize,
    /// Seeds sampling at temperatures above 0.
    pub seed: u64,
}

impl LocalConfig {
    pub fn new(model: impl Into<PathBuf>) -> Self {
        Self {
            model: model.into(),
            context: 2048,
            seed: 0,
        }
    }
}

/// What one generation came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    /// `stop` (end of turn) or `length` (the token cap).
    pub finish_reason: &'static str,
    /// Prompt tokens dropped to fit the context.
    pub dropped_tokens: usize,
}

/// A Gemma 3 model in process. Not `Sync`: one generation at a time.
pub struct LocalModel {
    config: LocalConfig,
    name: String,
    weights: ModelWeights,
    tokenizer: GgufTokenizer,
    device: Device,
    bos: u32,
    stops: Vec<u32>,
    rng: ChaCha8Rng,
    accounting: Accounting,
}

impl fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalModel")
            .field("model", &self.config.model)
            .field("context", &self.config.context)
            .field("vocab", &self.tokenizer.vocab_size())
            .finish_non_exhaustive()
    }
}

fn model_error(path: &Path, err: impl fmt::Display) -> Error {
    Error::BadFile {
        path: path.to_owned(),
        message: format!("not a usable Gemma 3 GGUF model: {err}"),
    }
}

impl LocalModel {
    /// Reads the weights and the tokenizer from `config.model`.
    pub fn load(config: LocalConfig) -> Result<Self> {
        let path = config.model.clone();
        let mut file = std::fs::File::open(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let content = gguf_file::Content::read(&mut file).map_err(|e| model_error(&path, e))?;
        let md = &content.metadata;
        let strings = |key: &str| -> Result<Vec<String>> {
            let values = md
                .get(key)
                .ok_or_else(|| model_error(&path, format!("no {key}")))?
                .to_vec()
                .map_err(|e| model_error(&path, e))?;
            values
                .iter()
                .map(|v| v.to_string().cloned().map_err(|e| model_error(&path, e)))
                .collect()
        };
        let pieces = strings("tokenizer.ggml.tokens")?;
        let numbers = |key: &str| -> Result<Vec<gguf_file::Value>> {
            Ok(md
                .get(key)
                .ok_or_else(|| model_error(&path, format!("no {key}")))?
                .to_vec()
                .map_err(|e| model_error(&path, e))?
                .clone())
        };
        let scores = numbers("tokenizer.ggml.scores")?
            .iter()
            .map(|v| v.to_f32().map_err(|e| model_error(&path, e)))
            .collect::<Result<Vec<_>>>()?;
        let types = numbers("tokenizer.ggml.token_type")?
            .iter()
            .map(|v| v.to_i32().map_err(|e| model_error(&path, e)))
            .collect::<Result<Vec<_>>>()?;
        let id =
            |key: &str, default: u32| md.get(key).and_then(|v| v.to_u32().ok()).unwrap_or(default);
        let bos = id("tokenizer.ggml.bos_token_id", 2);
        let eos = id("tokenizer.ggml.eos_token_id", 1);
        let unknown = id("tokenizer.ggml.unknown_token_id", 3);
        let name = md
            .get("general.name")
            .and_then(|v| v.to_string().ok().cloned())
            .unwrap_or_else(|| {
                path.file_stem()
                    .map_or("local".into(), |s| s.to_string_lossy().into_owned())
            });
        let tokenizer = GgufTokenizer::new(pieces, scores, types, unknown)?;
        let mut stops = vec![eos];
        stops.extend(tokenizer.piece_id("<end_of_turn>"));
        let device = Device::Cpu;
        let weights =
            load_weights(content, &mut file, &device).map_err(|e| model_error(&path, e))?;
        Ok(Self {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            config,
            name,
            weights,
            tokenizer,
            device,
            bos,
            stops,
            accounting: Accounting::default(),
        })
    }

    /// The model's name from its metadata (`Gemma 3 270m`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn tokenizer(&self) -> &GgufTokenizer {
        &self.tokenizer
    }

    /// Gemma's chat format: system text folded into the first user turn, each turn
    /// between `<start_of_turn>ROLE` and `<end_of_turn>`, ending with an open model turn.
    pub fn render_chat(messages: &[Message]) -> String {
        let mut out = String::new();
        let mut system = String::new();
        for m in messages {
            let text: Vec<&str> = m
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) => Some(t.as_str()),
                    Part::Image { .. } => None,
                })
                .collect();
            let text = text.join("\n");
            match m.role {
                Role::System => {
                    system += &text;
                    system += "\n\n";
                }
                Role::User => {
                    out += "<start_of_turn>user\n";
                    out += &std::mem::take(&mut system);
                    out += &text;
                    out += "<end_of_turn>\n";
                }
                Role::Assistant => {
                    out += "<start_of_turn>model\n";
                    out += &text;
                    out += "<end_of_turn>\n";
                }
            }
        }
        out + "<start_of_turn>model\n"
    }

    /// Token ids of a rendered chat: BOS, then the text with the turn markers as their
    /// control pieces (the SentencePiece pass would spell them out character by character).
    fn encode_chat(&self, rendered: &str) -> Vec<u32> {
        let mut ids = vec![self.bos];
        let markers = ["<start_of_turn>", "<end_of_turn>"];
        let mut rest = rendered;
        while !rest.is_empty() {
            let next = markers
                .iter()
                .filter_map(|m| rest.find(m).map(|at| (at, *m)))
                .min();
            match next {
                Some((at, marker)) => {
                    ids.extend(self.tokenizer.encode(&rest[..at]));
                    ids.extend(self.tokenizer.piece_id(marker));
                    rest = &rest[at + marker.len()..];
                }
                None => {
                    ids.extend(self.tokenizer.encode(rest));
                    rest = "";
                }
            }
        }
        ids
    }

    /// Generates the answer to `messages`, at most `max_tokens` long, ending early at the
    /// first of `stop` that follows some text (the stop text is not returned).
    pub fn generate(
        &mut self,
        messages: &[Message],
        max_tokens: u32,
        temperature: f32,
        stop: &[String],
    ) -> Result<Generation> {
        let mut ids = self.encode_chat(&Self::render_chat(messages));
        let budget = self
            .config
            .context
            .saturating_sub(max_tokens as usize)
            .max(64);
        let mut dropped = 0;
        if ids.len() > budget {
            // Keep the head (instructions) and the tail (the question and the open turn).
            let head = budget / 4;
            dropped = ids.len() - budget;
            ids.drain(head..head + dropped);
        }
        let prompt_tokens = ids.len();
        let path = self.config.model.clone();
        let err = |e: candle_core::Error| model_error(&path, e);
        let input = Tensor::new(ids.as_slice(), &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(err)?;
        let mut logits = self.weights.forward(&input, 0).map_err(err)?;
        let mut out = Vec::new();
        let mut finish_reason = "length";
        for _ in 0..max_tokens {
            let next = self.pick(&logits, temperature).map_err(err)?;
            if self.stops.contains(&next) {
                finish_reason = "stop";
                break;
            }
            out.push(next);
            if !stop.is_empty() {
                let text = self.tokenizer.decode(&out);
                let start = text.len() - text.trim_start().len();
                if let Some(at) = stop
                    .iter()
                    .filter_map(|s| text[start..].find(s.as_str()))
                    .min()
                {
                    return Ok(Generation {
                        text: text[..start + at].to_owned(),
                        prompt_tokens,
                        completion_tokens: out.len(),
                        finish_reason: "stop",
                        dropped_tokens: dropped,
                    });
                }
            }
            if out.len() as u32 == max_tokens {
                break;
            }
            let input = Tensor::new(&[next], &self.device)
                .and_then(|t| t.unsqueeze(0))
                .map_err(err)?;
            logits = self
                .weights
                .forward(&input, prompt_tokens + out.len() - 1)
                .map_err(err)?;
        }
        Ok(Generation {
            text: self.tokenizer.decode(&out),
            prompt_tokens,
            completion_tokens: out.len(),
            finish_reason,
            dropped_tokens: dropped,
        })
    }

    /// Greedy at temperature 0, else a seeded draw from the softmax of logits / T.
    fn pick(&mut self, logits: &Tensor, temperature: f32) -> candle_core::Result<u32> {
        let logits = logits.squeeze(0)?.to_dtype(candle_core::DType::F32)?;
        if temperature <= 0.0 {
            return logits.argmax(0)?.to_scalar::<u32>();
        }
        let values: Vec<f32> = logits.to_vec1()?;
        let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let weights: Vec<f32> = values
            .iter()
            .map(|v| ((v - max) / temperature).exp())
            .collect();
        let total: f32 = weights.iter().sum();
        let mut draw = self.rng.random::<f32>() * total;
        for (i, w) in weights.iter().enumerate() {
            draw -= w;
            if draw <= 0.0 {
                return Ok(i as u32);
            }
        }
        Ok((weights.len() - 1) as u32)
    }

    fn endpoint(&self) -> String {
        format!("local:{}", self.config.model.display())
    }
}

/// Whether candle's CPU backend has a SIMD dot product for `dtype` (`quantized/avx.rs`);
/// the others run a scalar loop, several times slower.
fn has_fast_kernel(dtype: GgmlDType) -> bool {
    !matches!(
        dtype,
        GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1 | GgmlDType::Q8_1
    )
}

/// The weights, with tensors of a type without a fast kernel re-quantized to Q8_0 first.
///
/// Why: a "Q4_K_M" file of a model whose width (640) is no multiple of 256 keeps most of
/// its matrices in Q5_0 (the k-quants need rows of 256), and candle has no SIMD Q5_0 dot
/// product; Q8_0 has one and loses nothing against Q5_0. The converted file is built in
/// memory (one more copy of the weights, about a second on load).
fn load_weights(
    content: gguf_file::Content,
    file: &mut std::fs::File,
    device: &Device,
) -> candle_core::Result<ModelWeights> {
    if content
        .tensor_infos
        .values()
        .all(|info| has_fast_kernel(info.ggml_dtype))
    {
        return ModelWeights::from_gguf(content, file, device);
    }
    let mut tensors = Vec::with_capacity(content.tensor_infos.len());
    for (name, info) in &content.tensor_infos {
        let mut tensor = content.tensor(file, name, device)?;
        if !has_fast_kernel(info.ggml_dtype) {
            tensor = QTensor::quantize(&tensor.dequantize(device)?, GgmlDType::Q8_0)?;
        }
        tensors.push((name.as_str(), tensor));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let refs: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let mut converted = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut converted, &metadata, &refs)?;
    drop(tensors);
    converted.set_position(0);
    let content = gguf_file::Content::read(&mut converted)?;
    ModelWeights::from_gguf(content, &mut converted, device)
}

impl LlmClient for LocalModel {
    fn chat(&mut self, request: &ChatRequest) -> Result<ChatAnswer> {
        let start = Instant::now();
        let images = request
            .messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter(|p| matches!(p, Part::Image { .. }))
            .count();
        let result = if images > 0 {
            Err(Error::ImagesUnsupported {
                endpoint: self.endpoint(),
                message: format!(
                    "{} takes text only; the request has {images} images",
                    self.name
                ),
            })
        } else {
            self.generate(
                &request.messages,
                request.max_tokens,
                request.temperature,
                &request.stop,
            )
            .map(|g| ChatAnswer {
                text: g.text,
                usage: Usage {
                    prompt_tokens: g.prompt_tokens as u64,
                    completion_tokens: g.completion_tokens as u64,
                },
                finish_reason: Some(g.finish_reason.to_owned()),
            })
        };
        self.accounting
            .record(&request.purpose, start.elapsed(), 0, &result, (0.0, 0.0));
        result
    }

    fn accounting(&self) -> &Accounting {
        &self.accounting
    }

    fn describe(&self) -> String {
        format!("{} in process ({})", self.name, self.config.model.display())
    }
}
