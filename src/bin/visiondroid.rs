//! `visiondroid`: a multimodal LLM explores the app function by function on annotated
//! screenshots, then the testing history, cut into logically cohesive parts by Louvain,
//! is checked for non-crash functional bugs (VisionDroid). Any OpenAI-compatible chat
//! endpoint works (text-only models get the text view); the key is read from the
//! environment only. `--local-model FILE.gguf` runs a Gemma 3 model in process instead.
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use gui_llm::{
    ApiKey, Decision, DetectorConfig, ExampleSet, ExplorerConfig, FallbackCause,
    FunctionAwareExplorer, LlmClient, LocalConfig, LocalModel, OpenAiClient, OpenAiConfig,
    detect_bugs,
};
use gui_testing::cli::{self, CommonArgs, RunArgs, TargetArgs, summary_line, write_report};
use gui_testing::visiondroid::VisionDroidStrategy;

/// Explore an app with a multimodal LLM and report suspected non-crash bugs.
#[derive(Debug, Parser)]
#[command(name = "visiondroid", version, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Base URL of an OpenAI-compatible API (…/v1); default: $GUI_LLM_ENDPOINT.
    #[arg(long, value_name = "URL", alias = "endpoint")]
    llm_endpoint: Option<String>,
    /// Run this Gemma 3 GGUF model in process instead of calling an endpoint (text only;
    /// `cargo xtask llm-local --install` fetches one into target/models/gemma3/).
    #[arg(long, value_name = "FILE.gguf", conflicts_with = "llm_endpoint")]
    local_model: Option<PathBuf>,
    /// Tokens of prompt and answer the local model reads; longer prompts lose their middle.
    #[arg(long, default_value_t = 2048, requires = "local_model")]
    local_context: usize,
    /// The model takes no pictures: send the text view (GUI text and numbered widgets).
    /// Without it, a server's refusal of a picture switches to the text view.
    #[arg(long)]
    no_images: bool,
    /// Feedback rounds after an unusable answer (unparseable, unknown widget, truncated)
    /// before the step falls back to a random valid action.
    #[arg(long, default_value_t = 2)]
    answer_retries: u32,
    /// Longest answer, in tokens (default 400; 96 with --local-model, whose CPU decoding
    /// is slow and whose template answer fits in about 60).
    #[arg(long)]
    llm_max_tokens: Option<u32>,
    /// Model name; default: $GUI_LLM_MODEL, else gpt-4o.
    #[arg(long, value_name = "NAME")]
    llm_model: Option<String>,
    /// Seconds one model call may take.
    #[arg(long, default_value_t = 120)]
    llm_timeout: u64,
    /// Retries of a failed call (connection errors, 429, 5xx), with doubling waits.
    #[arg(long, default_value_t = 3)]
    llm_retries: u32,
    /// Example bugs for the detector (JSON list; default: the bundled examples).
    #[arg(long, value_name = "FILE")]
    examples: Option<PathBuf>,
    /// Examples retrieved per sub-sequence (the paper: 5).
    #[arg(long, default_value_t = gui_llm::DEFAULT_TOP_K)]
    top_k: usize,
    /// Explore only; skip the inter-page bug detector.
    #[arg(long)]
    no_detect: bool,
}

const EXAMPLES: &str = "Environment:
  GUI_LLM_ENDPOINT  base URL of the chat API, e.g. https://api.openai.com/v1 or
                    http://127.0.0.1:8080/v1 (llama.cpp, vLLM)
  GUI_LLM_MODEL     model name (default gpt-4o)
  GUI_LLM_API_KEY   the key (else OPENAI_API_KEY); never written to the run folder

Examples:
  visiondroid --steps 40 --seed 1              the bundled demo app
  visiondroid --url http://localhost:8080 --llm-model gpt-4o-mini --steps 100
  visiondroid --device desktop --app-command galculator --steps 30";

fn main() -> Result<()> {
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    let examples = match &cli.examples {
        Some(path) => ExampleSet::load(path)?,
        None => ExampleSet::bundled(),
    };
    cli.run.single_run_only(
        "visiondroid",
        "continuing would ask the model again about every recorded step",
    )?;
    let client: Box<dyn LlmClient> = match &cli.local_model {
        Some(path) => {
            let started = std::time::Instant::now();
            let model = LocalModel::load(LocalConfig {
                context: cli.local_context,
                seed: cli.run.seed,
                ..LocalConfig::new(path)
            })
            .with_context(|| format!("--local-model {}", path.display()))?;
            tracing::info!(
                "loaded {} in {:.1} s",
                model.name(),
                started.elapsed().as_secs_f64()
            );
            Box::new(model)
        }
        None => Box::new(OpenAiClient::new(llm_config(&cli)?)?),
    };
    let llm = client.describe();
    let mut target = cli.target.start()?;
    let explore_config = cli.run.explore_config();
    let explorer_config = ExplorerConfig {
        seed: cli.run.seed,
        app: target.url.clone(),
        // An in-process model is text only; no point offering it pictures.
        images: !cli.no_images && cli.local_model.is_none(),
        retries: cli.answer_retries,
        max_tokens: cli
            .llm_max_tokens
            .unwrap_or(if cli.local_model.is_some() { 96 } else { 400 }),
        ..ExplorerConfig::default()
    };
    let mut detector_config = DetectorConfig {
        seed: cli.run.seed,
        top_k: cli.top_k,
        ..DetectorConfig::default()
    };
    let meta = cli.run.meta(
        "visiondroid",
        &target,
        &explore_config,
        serde_json::json!({ "llm": llm, "explorer": explorer_config, "detector": detector_config }),
    );
    let mut recorder = cli.run.recorder("visiondroid", &meta)?;
    let mut strategy =
        VisionDroidStrategy::new(FunctionAwareExplorer::new(client, explorer_config));
    let outcome = cli::explore_one(
        &mut target,
        &mut strategy,
        &cli.run,
        &mut recorder,
        &explore_config,
        cli.common.verbose > 0,
    );
    // What the explorer learnt is written even when the run itself failed.
    let decisions = strategy.decisions().to_vec();
    let mut explorer = strategy.into_explorer();
    if !explorer.takes_images() {
        detector_config.max_images = 0;
    }
    let dead = explorer
        .endpoint_dead()
        .map(|(step, error)| (step, error.to_owned()));
    let detection = if cli.no_detect || outcome.is_err() || dead.is_some() {
        gui_llm::Detection::default()
    } else {
        let app = explorer.app().to_owned();
        let history = explorer.history().clone();
        detect_bugs(
            explorer.client_mut(),
            &app,
            &history,
            &examples,
            &detector_config,
        )
    };
    let mut bugs = explorer.screen_bugs().to_vec();
    bugs.extend(detection.bugs.iter().cloned());
    let answers = AnswerStats::of(&decisions, explorer.failures());
    let report = serde_json::json!({
        "llm": llm,
        "app": explorer.app(),
        "screens": explorer.screens(),
        "functions": explorer.history().functions(),
        "history": explorer.history().entries(),
        "decisions": decisions.iter().map(|(s, d)| serde_json::json!({"step": s, "decision": d})).collect::<Vec<_>>(),
        "failures": explorer.failures(),
        "answers": answers,
        "images": explorer.takes_images(),
        "image_refusal": explorer.image_refusal(),
        "endpoint_dead": dead.as_ref().map(|(step, error)| serde_json::json!({"step": step, "error": error})),
        "segments": detection.segments,
        "modularity": detection.modularity,
        "bugs": bugs,
        "accounting": explorer.accounting(),
    });
    let path = recorder.dir().join("visiondroid.json");
    gui_explore::write_atomic(&path, &serde_json::to_vec_pretty(&report)?)?;
    if let Some((step, error)) = &dead {
        // The report is written first, so the run folder is complete for inspection.
        let report = write_report(recorder.dir())?;
        bail!(
            "the model endpoint stopped answering (step {step}: {error}); the run ended there. \
             Run folder: {}, report: {}",
            recorder.dir().display(),
            report.display()
        );
    }
    let summary = outcome?;
    let acc = explorer.accounting();
    let extra = format!(
        ", {} functions, {} suspected bugs, {} model calls ({:.1} s each), {} tokens, \
         {}/{} first answers valid, {} fallbacks{}",
        explorer.history().functions().len(),
        bugs.len(),
        acc.calls,
        acc.mean_ms() / 1000.0,
        acc.prompt_tokens + acc.completion_tokens,
        answers.first_valid,
        answers.asked,
        answers.fallbacks,
        answers.by_cause_text(),
    );
    gui_testing::say!("{}", summary_line("visiondroid", &summary, &extra));
    for b in &bugs {
        gui_testing::say!(
            "suspected bug at steps {:?} on {}: {}",
            b.steps,
            b.screens.join(", "),
            b.description
        );
    }
    if !explorer.failures().is_empty() {
        eprintln!(
            "visiondroid: {} steps chose without the model (first: step {}: {})",
            explorer.failures().len(),
            explorer.failures()[0].step,
            explorer.failures()[0].reason
        );
    }
    gui_testing::say!("run folder: {}", recorder.dir().display());
    gui_testing::say!("report: {}", write_report(recorder.dir())?.display());
    Ok(())
}

/// How usable the model's answers were, over the steps.
#[derive(Debug, Default, serde::Serialize)]
struct AnswerStats {
    steps: usize,
    /// Steps on which the model was asked (not skipped after endpoint failures).
    asked: usize,
    /// Steps whose first answer was usable.
    first_valid: usize,
    /// Steps with a usable answer after feedback rounds.
    valid: usize,
    /// Steps that fell back to a random valid action.
    fallbacks: usize,
    by_cause: std::collections::BTreeMap<String, usize>,
    /// `first_valid / asked`.
    first_valid_rate: f64,
    /// `valid / asked`.
    valid_rate: f64,
}

impl AnswerStats {
    fn of(decisions: &[(u64, Decision)], failures: &[gui_llm::ExplorerFailure]) -> Self {
        let mut s = AnswerStats {
            steps: decisions.len(),
            ..Self::default()
        };
        let not_asked = failures
            .iter()
            .filter(|f| f.cause == FallbackCause::NotAsked)
            .count();
        s.asked = decisions.len().saturating_sub(not_asked);
        s.first_valid = decisions.iter().filter(|(_, d)| d.answers == 1).count();
        s.valid = decisions
            .iter()
            .filter(|(_, d)| d.fallback.is_none())
            .count();
        s.fallbacks = decisions.len() - s.valid;
        for f in failures {
            *s.by_cause.entry(f.cause.name().to_owned()).or_default() += 1;
        }
        if s.asked > 0 {
            s.first_valid_rate = s.first_valid as f64 / s.asked as f64;
            s.valid_rate = s.valid as f64 / s.asked as f64;
        }
        s
    }

    fn by_cause_text(&self) -> String {
        if self.by_cause.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = self
            .by_cause
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        format!(" ({})", parts.join(", "))
    }
}

/// The endpoint from the flags, else the environment; the key only from the environment
/// (a flag would leave it in shell history and process listings).
fn llm_config(cli: &Cli) -> Result<OpenAiConfig> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let Some(endpoint) = cli.llm_endpoint.clone().or_else(|| env("GUI_LLM_ENDPOINT")) else {
        bail!(
            "no LLM endpoint: give --llm-endpoint URL or set GUI_LLM_ENDPOINT to the base URL of \
             an OpenAI-compatible API (a hosted one, or a local llama.cpp or vLLM server)"
        );
    };
    let mut config = OpenAiConfig::from_vars(|name| match name {
        "GUI_LLM_ENDPOINT" => Some(endpoint.clone()),
        other => env(other),
    })?;
    if let Some(model) = &cli.llm_model {
        config.model = model.clone();
    }
    if config.api_key.is_none() {
        config.api_key = env("OPENAI_API_KEY").map(ApiKey::new);
    }
    config.timeout = Duration::from_secs(cli.llm_timeout.max(1));
    config.retries = cli.llm_retries;
    Ok(config)
}
