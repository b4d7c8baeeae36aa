//! VisionDroid ("Vision-driven Automated Mobile GUI Testing via Multimodal Large Language
//! Model"): non-crash functional bugs found by a multimodal LLM that sees annotated
//! screenshots, explores function by function with a testing history, and checks
//! logically cohesive parts of that history, cut by Louvain community detection.
//!
//! The crate knows no device: it reads a [`gui_core::Screenshot`] and the screen's
//! [`gui_core::UiHierarchy`], and returns [`gui_core::Action`]s and suspected bugs.

mod annotate;
mod answer;
mod client;
mod detector;
mod error;
mod explorer;
mod history;
#[cfg(feature = "local")]
mod local;
mod louvain;
pub mod prompt;
mod retrieve;
pub mod scripted;

pub use annotate::{
    ActionType, AnnotateConfig, AnnotatedWidget, Annotation, annotate, downscale_for_prompt,
    mark_action, number_widgets,
};
pub use answer::{
    ActionAnswer, DetectAnswer, Operation, parse_action_answer, parse_detect_answer,
    parse_input_answer,
};
pub use client::{
    Accounting, ApiKey, CallRecord, ChatAnswer, ChatRequest, LlmClient, Message, OpenAiClient,
    OpenAiConfig, Part, Role, Usage, refuses_images, without_images,
};
pub use detector::{
    Detection, DetectorConfig, Segment, detect_bugs, history_graph, segment_history,
};
pub use error::{Error, Result};
pub use explorer::{
    Decision, ExplorerConfig, ExplorerFailure, FallbackCause, FunctionAwareExplorer, SuspectedBug,
};
pub use history::{HistoryEntry, StepImage, TestingHistory};
#[cfg(feature = "local")]
pub use local::{Generation, GgufTokenizer, LocalConfig, LocalModel, OpenAiServer, serve_openai};
pub use louvain::{LouvainConfig, Partition, WeightedGraph, louvain, modularity};
pub use retrieve::{BugExample, BugScope, DEFAULT_TOP_K, ExampleSet, TextEmbedder, cosine, tokens};
