//! `pirltest`: curiosity-driven exploration from pixels (PIRLTest) on a web app (default:
//! the bundled demo). Records every step in the same run folder as `monkey` and writes the
//! learnt Q-network beside it.
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};
use clap::Parser;
use gui_explore::Strategy;
use gui_rl::{AgentConfig, Choice, PLUGINS, PirlAgent, Preset, QNetwork};
use gui_testing::cli::{self, CommonArgs, RunArgs, TargetArgs, announce_run, summary_line};
use gui_testing::pirltest::{PirlStrategy, PirlWorker};

// candle allocates a tensor per operation; mimalloc halves training time here.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Explore an app with the PIRLTest agent and record every step in a run folder.
#[derive(Debug, Parser)]
#[command(name = "pirltest", version, after_help = EXAMPLES)]
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
    /// The agent to start from: `paper` (the paper's algorithm alone: Eq. 1 for every
    /// step, Eq. 3 targets from the network being trained, Boltzmann over Q-values with
    /// system actions weighted 0.5, pages the same at 0.75, no plug-in), `default` (the
    /// paper with this workspace's plug-ins) or `random` (the default agent's vision and
    /// candidates, one drawn uniformly, no learning). `--plugins` and the numbers below
    /// change the preset.
    #[arg(long, default_value = "default", value_name = "paper|default|random", value_parser = preset)]
    preset: Preset,
    /// Plug-ins to switch on (`name`) or off (`-name`) on top of the preset,
    /// comma-separated, later ones winning; switching one on switches on what it needs.
    /// `--plugins list` prints the registry.
    #[arg(long, value_name = "a,b,-c", allow_hyphen_values = true)]
    plugins: Option<String>,
    /// Softmax temperature of the Boltzmann policy (preset: 1 in `paper`, 0.1 otherwise).
    #[arg(long, allow_hyphen_values = true)]
    temperature: Option<f64>,
    /// Discount γ of the Q-learning target (Eq. 3; preset: 0.9).
    #[arg(long, allow_hyphen_values = true)]
    gamma: Option<f64>,
    /// Reward of a step whose action changed nothing on the screen but its own widget's
    /// hover tint, in place of Eq. 1; `off` gives every step the reward of Eq. 1, as the
    /// paper does (the `idle-reward` plug-in; preset: 0 in `default`, off in `paper`).
    #[arg(long, value_name = "R|off", value_parser = idle_reward, allow_hyphen_values = true)]
    idle_reward: Option<IdleReward>,
    /// At most this many steps per screen run its commands (buttons that changed it and
    /// stayed in place) back to back in orders not yet run: every ordered pair, and every
    /// ordered triple on screens with at most 4 commands (the `command-sequences`
    /// plug-in; preset: off in `default`, 30 when `--plugins command-sequences` switches it
    /// on). 0 turns it off.
    #[arg(long)]
    sequence_budget: Option<u32>,
    /// After this many steps in a row that showed nothing new, choose by the effect prior
    /// and the frontier alone (the Q-values set equal) until a step shows something new
    /// (the `stall-reset` plug-in; preset: 20 in `default`). 0 never does.
    #[arg(long)]
    stall_steps: Option<u32>,
    /// A part of a page shows something new for at most this many distinct sights; later
    /// ones are values changing in place (the `region-sights` plug-in; preset: 4 in
    /// `default`). 0 sets no limit.
    #[arg(long)]
    region_sights: Option<u32>,
    /// The largest share of decisions made at a window size other than the start size
    /// (0 to 1; the `resize-budget` plug-in; preset: 0.1 in `default`). 1 sets no limit.
    #[arg(long)]
    resize_budget: Option<f64>,
    /// An action that changes at most this share of the screen (0 to 0.3) leaves the agent
    /// on its page without a page-store lookup (the `local-page` plug-in; preset: 0.03 in
    /// `default`). 0 looks every screen up, as the paper does.
    #[arg(long)]
    local_page: Option<f64>,
    /// Page similarity at or above which two screens are the same page (Section 3.3;
    /// preset: 0.75 in `paper`, 0.95 otherwise).
    #[arg(long)]
    same_page: Option<f64>,
    /// Adam step size of the Q-network (0.01 in the paper).
    #[arg(long)]
    learning_rate: Option<f64>,
    /// Take Eq. 3's targets from a frozen copy of the Q-network refreshed every this many
    /// retrainings (the `target-network` plug-in; preset: 10 in `default`); 0 takes them
    /// from the network being trained, as the paper does.
    #[arg(long)]
    target_every: Option<usize>,
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

fn preset(s: &str) -> std::result::Result<Preset, String> {
    s.parse().map_err(|e: gui_rl::Error| e.to_string())
}

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
  pirltest --resume runs/pirltest-seed1-1796000000   go on after a kill, with what was learnt
  pirltest --preset paper --steps 500          the paper's agent alone
  pirltest --preset random --steps 500         the widget-random baseline
  pirltest --plugins -stall-reset,command-states   the default agent, two plug-ins changed
  pirltest --plugins list                      the plug-ins, what each does, which are on";

/// The agent the preset, `--plugins` and the knobs given describe, in that order.
fn agent_config(cli: &Cli) -> Result<AgentConfig> {
    let mut config = AgentConfig {
        seed: cli.run.seed,
        ..AgentConfig::preset(cli.preset)
    };
    if let Some(spec) = &cli.plugins {
        config.apply_plugins(spec).context("--plugins")?;
    }
    fn set<T>(field: &mut T, given: Option<T>) {
        if let Some(v) = given {
            *field = v;
        }
    }
    set(&mut config.temperature, cli.temperature);
    set(&mut config.gamma, cli.gamma);
    set(&mut config.idle_reward, cli.idle_reward.map(|r| r.0));
    set(&mut config.sequence_budget, cli.sequence_budget);
    set(&mut config.stall_steps, cli.stall_steps);
    set(&mut config.region_sights, cli.region_sights);
    set(&mut config.resize_budget, cli.resize_budget);
    set(&mut config.local_page, cli.local_page);
    set(&mut config.pages.same_page, cli.same_page);
    set(&mut config.learning_rate, cli.learning_rate);
    set(&mut config.target_every, cli.target_every);
    // The learner retrains once per round of all workers: as often per unit of time as
    // with one worker, which is what the cores can give it.
    config.train_every = cli.train_every * cli.run.workers as usize;
    config.train_async = match cli.training {
        Training::Auto => cli.run.throttle.waits_on_screen(),
        Training::Wait => false,
        Training::Background => true,
    };
    config.memory.capacity = cli.memory_capacity as usize;
    config.pages.max_pages = cli.max_pages as usize;
    Ok(config)
}

/// The registry of plug-ins, for `--plugins list`.
fn plugin_table(config: &AgentConfig) -> String {
    let mut out = String::from("plug-in            default  role    what it does\n");
    for p in PLUGINS {
        out += &format!(
            "{:<18} {:<8} {:<7} {}{}\n",
            p.name,
            if p.in_default { "on" } else { "off" },
            format!("{:?}", p.role).to_lowercase(),
            p.summary,
            if p.needs.is_empty() {
                String::new()
            } else {
                format!(" (needs {})", p.needs.join(", "))
            }
        );
    }
    out + &format!(
        "on in this configuration: {}\n",
        config.plugins_on().join(", ")
    )
}

fn main() -> Result<()> {
    let mut cli: Cli = cli::parse();
    if cli.plugins.as_deref() == Some("list") {
        cli.plugins = None;
        print!("{}", plugin_table(&agent_config(&cli)?));
        return Ok(());
    }
    cli.common.init_logging();
    cli.run.check_workers(&cli.target)?;
    let config = agent_config(&cli)?;
    let learns = config.choice != Choice::Uniform;
    if !learns && (cli.model_in.is_some() || cli.model_out.is_some()) {
        bail!("--preset random learns nothing: --model-in and --model-out do not apply");
    }
    let mut agent = PirlAgent::new(config.clone()).context("building the PIRLTest agent")?;
    if let Some(path) = &cli.model_in {
        let network = QNetwork::load(path)?;
        agent = agent
            .with_network(network)
            .with_context(|| format!("--model-in {}", path.display()))?;
    }
    let mut target = cli.target.start()?;
    let explore_config = cli.run.explore_config();
    let mut recorder = cli.run.open_run(
        "pirltest",
        &target,
        &explore_config,
        serde_json::json!({
            "agent": config,
            "preset": cli.preset,
            "plugins": config.plugins_on(),
            "model_in": cli.model_in,
        }),
    )?;
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
    let model_out = learns.then(|| {
        cli.model_out
            .clone()
            .unwrap_or_else(|| recorder.dir().join("q_network.safetensors"))
    });
    if let Some(path) = &model_out {
        agent.save_network(path)?;
    }
    let stats = agent.stats();
    let agent_json = recorder.dir().join("agent.json");
    let report = serde_json::json!({
        "preset": cli.preset,
        "plugins": config.plugins_on(),
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
    announce_run(recorder.dir())?;
    if let Some(path) = &model_out {
        gui_testing::say!("Q-network: {}", path.display());
    }
    Ok(())
}
