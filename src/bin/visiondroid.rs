//! `visiondroid`: a multimodal LLM explores the app function by function on annotated
//! screenshots, then the testing history, cut into logically cohesive parts by Louvain,
//! is checked for non-crash functional bugs (VisionDroid). Any OpenAI-compatible chat
//! endpoint with image input works; the key is read from the environment only.
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Parser;
use gui_llm::{
    ApiKey, DetectorConfig, ExampleSet, ExplorerConfig, FunctionAwareExplorer, OpenAiClient,
    OpenAiConfig, detect_bugs,
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
    #[arg(long, value_name = "URL")]
    llm_endpoint: Option<String>,
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
    let client = OpenAiClient::new(llm_config(&cli)?)?;
    let llm = gui_llm::LlmClient::describe(&client);
    let mut target = cli.target.start()?;
    let explore_config = cli.run.explore_config();
    let explorer_config = ExplorerConfig {
        seed: cli.run.seed,
        app: target.url.clone(),
        ..ExplorerConfig::default()
    };
    let detector_config = DetectorConfig {
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
    let mut strategy = VisionDroidStrategy::new(FunctionAwareExplorer::new(
        Box::new(client),
        explorer_config,
    ));
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
    let detection = if cli.no_detect || outcome.is_err() {
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
    let report = serde_json::json!({
        "llm": llm,
        "app": explorer.app(),
        "screens": explorer.screens(),
        "functions": explorer.history().functions(),
        "history": explorer.history().entries(),
        "decisions": decisions.iter().map(|(s, d)| serde_json::json!({"step": s, "decision": d})).collect::<Vec<_>>(),
        "failures": explorer.failures(),
        "segments": detection.segments,
        "modularity": detection.modularity,
        "bugs": bugs,
        "accounting": explorer.accounting(),
    });
    let path = recorder.dir().join("visiondroid.json");
    gui_explore::write_atomic(&path, &serde_json::to_vec_pretty(&report)?)?;
    let summary = outcome?;
    let acc = explorer.accounting();
    let extra = format!(
        ", {} functions, {} suspected bugs, {} model calls, {} tokens",
        explorer.history().functions().len(),
        bugs.len(),
        acc.calls,
        acc.prompt_tokens + acc.completion_tokens
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
