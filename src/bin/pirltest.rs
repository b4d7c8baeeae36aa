//! `pirltest`: curiosity-driven exploration from pixels (PIRLTest) on a web app (default:
//! the bundled demo). Records every step in the same run folder as `monkey` and writes the
//! learnt Q-network beside it.
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use clap::Parser;
use gui_explore::Strategy;
use gui_rl::{AgentConfig, PirlAgent, QNetwork};
use gui_testing::cli::{self, CommonArgs, RunArgs, TargetArgs, summary_line, write_report};
use gui_testing::pirltest::{PirlStrategy, PirlWorker};

// candle allocates a tensor per operation; mimalloc halves training time here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Explore an app with the PIRLTest agent and record every step in a run folder.
#[derive(Debug, Parser)]
#[command(name = "pirltest", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Start from a Q-network saved by an earlier run.
    #[arg(long, value_name = "FILE")]
    model_in: Option<PathBuf>,
    /// Where to write the learnt Q-network (default: q_network.safetensors in the run
    /// folder).
    #[arg(long, value_name = "FILE")]
    model_out: Option<PathBuf>,
    /// Softmax temperature of the Boltzmann policy.
    #[arg(long, default_value_t = AgentConfig::default().temperature, allow_hyphen_values = true)]
    temperature: f64,
    /// Divide each choice's Q-values by their spread over the screen's candidates, so
    /// that --temperature is in units of that spread.
    #[arg(long)]
    spread_scale: bool,
    /// Discount γ of the Q-learning target (Eq. 3).
    #[arg(long, default_value_t = AgentConfig::default().gamma, allow_hyphen_values = true)]
    gamma: f64,
    /// Reward of a step whose action changed nothing on the screen but its own widget's
    /// hover tint, in place of Eq. 1; `off` gives every step the reward of Eq. 1, as the
    /// paper does.
    #[arg(long, default_value = "0", value_name = "R|off", value_parser = idle_reward, allow_hyphen_values = true)]
    idle_reward: IdleReward,
    /// Choose by Q-values alone, as the paper does, without weighing each action by the
    /// chance, learnt during the run, that it changes the screen.
    #[arg(long)]
    no_effect_prior: bool,
    /// Treat a dialog over a dimmed backdrop like any other screen, rather than as a page
    /// of its own whose widgets alone take input.
    #[arg(long)]
    no_modal_focus: bool,
    /// Weigh each action by its own record alone, rather than raising an action that
    /// led to another page to the best untried chance reachable through it.
    #[arg(long)]
    no_frontier: bool,
    /// Weigh a route to a page by that page's best chance alone, rather than also by
    /// the summed chances of its likely untried actions beyond those of the page the
    /// agent is on.
    #[arg(long)]
    no_frontier_mass: bool,
    /// Keep one record per action of a page for the whole run, rather than counting an
    /// action that once showed something new as untried again after another action
    /// changed its page's state.
    #[arg(long)]
    no_state_refresh: bool,
    /// Judge whether an action that stays on its page showed something new by the whole
    /// screen, rather than by the part of it the action changed.
    #[arg(long)]
    whole_screen_novelty: bool,
    /// Right after a command (a button that changed its page and stayed on it), keep a
    /// record per (command, next action), and come back to a command while actions right
    /// after it are untried.
    #[arg(long)]
    command_states: bool,
    /// At most this many steps per screen run its commands (buttons that changed it and
    /// stayed in place) back to back in orders not yet run: every ordered pair, and every
    /// ordered triple on screens with at most 4 commands. Buttons never clicked are tried
    /// as would-be commands. The policy starts each run. A value set on a screen with at
    /// most 4 commands (text typed, a box ticked) starts its orders and budget again,
    /// twice at most. 0 turns it off.
    #[arg(long, default_value_t = AgentConfig::default().sequence_budget)]
    sequence_budget: u32,
    /// Do not type into a screen's untyped text fields before its next command while its
    /// commands run back to back (each field once; the default types first).
    #[arg(long)]
    no_fields_first: bool,
    /// Do not click each other screen's one known command (the start screen's counter)
    /// once more after a setting changed (a box ticked, a switch turned, a choice made).
    #[arg(long)]
    no_settings_recheck: bool,
    /// Weigh an action never executed on its page by its own chance only, not also by
    /// what a page not seen yet offers (the mean untried mass of new pages).
    #[arg(long)]
    no_fresh_exits: bool,
    /// When an action puts its page in a new state, start the page's count of executed
    /// actions (Eq. 1's n) again, so that step is paid as one onto an unexplored page.
    #[arg(long)]
    state_reward: bool,
    /// Rank actions never executed on their page by the network's guess, as the paper
    /// does. By default every such action that the prior weighs at least half as much as
    /// the page's best takes the page's best Q-value (optimistic initial values).
    #[arg(long)]
    no_optimistic: bool,
    /// After this many steps in a row that showed nothing new, choose by the effect prior
    /// and the frontier alone (the Q-values set equal) until a step shows something new.
    /// 0 never does.
    #[arg(long, default_value_t = AgentConfig::default().stall_steps)]
    stall_steps: u32,
    /// A part of a page shows something new for at most this many distinct sights; later
    /// ones are values changing in place (typed text, a counter, a slider's readout).
    /// 0 sets no limit.
    #[arg(long, default_value_t = AgentConfig::default().region_sights)]
    region_sights: u32,
    /// Match a page's widgets by IoU alone, as the paper does. By default a widget that
    /// keeps its left edge, top edge and height is the same widget whatever its width
    /// (a slider's track, a field's text).
    #[arg(long)]
    no_anchor_match: bool,
    /// A screen that would be a new page, but differs from a screen of a known page in at
    /// most --local-page of its cells, is that page (the same form with other values).
    #[arg(long)]
    print_pages: bool,
    /// The largest share of decisions made at a window size other than the start size
    /// (0 to 1); once spent, the agent resizes back and stays. 1 sets no limit.
    #[arg(long, default_value_t = AgentConfig::default().resize_budget)]
    resize_budget: f64,
    /// An action that changes at most this share of the screen (0 to 0.3) leaves the agent
    /// on its page without a page-store lookup: typed text, a tick, a one-line message.
    /// 0 looks every screen up, as the paper does.
    #[arg(long, default_value_t = AgentConfig::default().local_page)]
    local_page: f64,
    /// Page similarity at or above which two screens are the same page (Section 3.3).
    #[arg(long, default_value_t = AgentConfig::default().pages.same_page)]
    same_page: f64,
    /// Adam step size of the Q-network (0.01 in the paper).
    #[arg(long, default_value_t = AgentConfig::default().learning_rate)]
    learning_rate: f64,
    /// Take Eq. 3's targets from a frozen copy of the Q-network refreshed every this many
    /// retrainings (a target network, not in the paper); 0 takes them from the network
    /// being trained, as the paper does.
    #[arg(long, default_value_t = AgentConfig::default().target_every)]
    target_every: usize,
    /// Retrain the Q-network every this many steps (of each worker, with --workers).
    #[arg(long, default_value_t = AgentConfig::default().train_every)]
    train_every: usize,
    /// `wait`: each decision waits for the retraining in flight, so the seed fixes the
    /// run. `background`: a decision uses the network of the last retraining that has
    /// finished, and the device never waits for learning. `auto` (the default):
    /// `background` under a throttle that waits on the screen (adat, consecutive), whose
    /// runs the seed does not fix anyway, `wait` under a fixed one.
    #[arg(long, value_enum, default_value_t = Training::Auto)]
    training: Training,
    /// Most transitions the exploration memory keeps; the oldest go first. Bounds the
    /// agent's memory use in long runs (about 1.2 KiB per transition).
    #[arg(long, default_value_t = gui_rl::MemoryConfig::default().capacity as u64, value_parser = clap::value_parser!(u64).range(1..))]
    memory_capacity: u64,
    /// Most abstract pages the agent keeps; past it, a new screen joins its nearest page.
    #[arg(long, default_value_t = AgentConfig::default().pages.max_pages as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_pages: u64,
    /// With -v, log the agent's state every this many steps (0: never).
    #[arg(long, default_value_t = 10)]
    progress: u64,
}

/// `--training`: when the agent's decisions wait for learning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Training {
    Auto,
    Wait,
    Background,
}

/// `--idle-reward`: a finite number, or `off`.
#[derive(Debug, Clone, Copy)]
struct IdleReward(Option<f64>);

fn idle_reward(s: &str) -> std::result::Result<IdleReward, String> {
    if s == "off" {
        return Ok(IdleReward(None));
    }
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() => Ok(IdleReward(Some(r))),
        _ => Err(format!("`{s}` is neither a finite number nor `off`")),
    }
}

const EXAMPLES: &str = "Examples:
  pirltest --steps 300 --seed 1                the bundled demo app; report in the run folder
  pirltest --url http://localhost:8080 --minutes 15 --model-out app.safetensors
  pirltest --app-dir dist --model-in app.safetensors --steps 200   reuse what was learnt
  pirltest --config pirltest.toml -v           defaults from a file (keys are the flags)
  pirltest --workers 2 --steps 600             two browsers feeding one agent
  pirltest --resume runs/pirltest-seed1-1796000000   go on after a kill, with what was learnt";

fn main() -> Result<()> {
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    cli.run.check_workers(&cli.target)?;
    let mut config = AgentConfig {
        seed: cli.run.seed,
        temperature: cli.temperature,
        spread_scale: cli.spread_scale,
        gamma: cli.gamma,
        idle_reward: cli.idle_reward.0,
        effect_prior: !cli.no_effect_prior,
        modal_focus: !cli.no_modal_focus,
        frontier: !cli.no_frontier,
        frontier_mass: !cli.no_frontier_mass,
        state_refresh: !cli.no_state_refresh,
        resize_budget: cli.resize_budget,
        local_page: cli.local_page,
        local_novelty: !cli.whole_screen_novelty,
        command_states: cli.command_states,
        sequence_budget: cli.sequence_budget,
        fields_first: !cli.no_fields_first,
        settings_recheck: !cli.no_settings_recheck,
        fresh_exits: !cli.no_fresh_exits,
        state_reward: cli.state_reward,
        optimistic: !cli.no_optimistic,
        stall_steps: cli.stall_steps,
        region_sights: cli.region_sights,
        anchor_match: !cli.no_anchor_match,
        print_pages: cli.print_pages,
        // The learner retrains once per round of all workers: as often per unit of time
        // as with one worker, which is what the cores can give it.
        train_every: cli.train_every * cli.run.workers as usize,
        train_async: match cli.training {
            Training::Auto => cli.run.throttle.waits_on_screen(),
            Training::Wait => false,
            Training::Background => true,
        },
        learning_rate: cli.learning_rate,
        target_every: cli.target_every,
        ..AgentConfig::default()
    };
    config.pages.same_page = cli.same_page;
    config.memory.capacity = cli.memory_capacity as usize;
    config.pages.max_pages = cli.max_pages as usize;
    let mut agent = PirlAgent::new(config.clone()).context("building the PIRLTest agent")?;
    if let Some(path) = &cli.model_in {
        let network = QNetwork::load(path)?;
        agent = agent
            .with_network(network)
            .with_context(|| format!("--model-in {}", path.display()))?;
    }
    let mut target = cli.target.start()?;
    let explore_config = cli.run.explore_config();
    let meta = cli.run.meta(
        "pirltest",
        &target,
        &explore_config,
        serde_json::json!({ "agent": config, "model_in": cli.model_in }),
    );
    let mut recorder = cli.run.recorder("pirltest", &meta)?;
    let (outcome, mut agent, errors) = if cli.run.workers > 1 {
        // One agent for all workers: each reads its screens on its own thread and decides
        // with the shared page store, memory and Q-network.
        let shared = Arc::new(Mutex::new(agent));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let worker = |i: u32| -> Result<Box<dyn Strategy>> {
            Ok(Box::new(PirlWorker::new(
                shared.clone(),
                i as usize,
                errors.clone(),
            )))
        };
        let outcome = cli::explore_workers(
            &cli.target,
            &cli.run,
            target,
            &mut recorder,
            &explore_config,
            &worker,
        );
        let agent = Arc::into_inner(shared)
            .context("the workers still hold the agent")?
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        let errors = errors.lock().map(|e| e.clone()).unwrap_or_default();
        (outcome, agent, errors)
    } else {
        let mut strategy = PirlStrategy::new(agent);
        if cli.progress > 0 {
            strategy = strategy.with_progress(cli.progress);
        }
        let outcome = cli::explore_one(
            &mut target,
            &mut strategy,
            &cli.run,
            &mut recorder,
            &explore_config,
            cli.common.verbose > 0,
        );
        let errors = strategy.errors().to_vec();
        (outcome, strategy.into_agent(), errors)
    };
    // What was learnt is saved even when the run itself failed.
    let model_out = cli
        .model_out
        .clone()
        .unwrap_or_else(|| recorder.dir().join("q_network.safetensors"));
    agent.save_network(&model_out)?;
    let stats = agent.stats();
    let agent_json = recorder.dir().join("agent.json");
    let report = serde_json::json!({
        "stats": stats,
        "errors": errors,
        "model": model_out,
    });
    gui_explore::write_atomic(&agent_json, &serde_json::to_vec_pretty(&report)?)?;
    let summary = outcome?;
    let extra = format!(
        ", {} pages, agent {:.1} ms/step",
        stats.pages,
        stats.timings.total_ms() / stats.decisions.max(1) as f64
    );
    gui_testing::say!("{}", summary_line("pirltest", &summary, &extra));
    for (step, e) in errors.iter().take(5) {
        eprintln!("pirltest: the agent failed at step {step}: {e}");
    }
    gui_testing::say!("run folder: {}", recorder.dir().display());
    gui_testing::say!("report: {}", write_report(recorder.dir())?.display());
    gui_testing::say!("Q-network: {}", model_out.display());
    Ok(())
}
