//! `monkey`: random events à la Android Monkey on a web app (default: the bundled demo).
use anyhow::Result;
use clap::Parser;
use gui_explore::{EventCategory, EventWeights, Monkey, MonkeyConfig, Strategy};
use gui_testing::cli::{self, CommonArgs, RunArgs, TargetArgs, announce_run, summary_line};

/// Explore an app with random events and record every step in a run folder.
#[derive(Debug, Parser)]
#[command(name = "monkey", version, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    run: RunArgs,
    /// Percentage of touch events (click, double, long, middle, right click).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pct_touch: Option<f64>,
    /// Percentage of motion events (drag, swipe).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pct_motion: Option<f64>,
    /// Percentage of text input events.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pct_text: Option<f64>,
    /// Percentage of navigation events (return).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pct_nav: Option<f64>,
    /// Percentage of page events (split screen, window size, orientation).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pct_page: Option<f64>,
    /// Percentage of system events (back switch, permissions, network, phone interrupt).
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pct_system: Option<f64>,
}

const EXAMPLES: &str = "Examples:
  monkey --steps 500 --seed 3                  the bundled demo app, 500 random events
  monkey --url http://localhost:8080 --minutes 10 --pct-text 30
  monkey --app-dir dist --mobile --throttle 400 --out runs/phone
  monkey --config monkey.toml -v               defaults from a file (keys are the flags)
  monkey --workers 2 --steps 1000              two browsers at once, one run folder
  monkey --resume runs/monkey-seed3-1796000000 continue a killed run where it stopped";

fn main() -> Result<()> {
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    let overrides: Vec<(EventCategory, f64)> = [
        (EventCategory::Touch, cli.pct_touch),
        (EventCategory::Motion, cli.pct_motion),
        (EventCategory::Text, cli.pct_text),
        (EventCategory::Nav, cli.pct_nav),
        (EventCategory::Page, cli.pct_page),
        (EventCategory::System, cli.pct_system),
    ]
    .into_iter()
    .filter_map(|(c, v)| v.map(|v| (c, v)))
    .collect();
    let weights = EventWeights::with_overrides(&overrides)?;
    let config = MonkeyConfig {
        seed: cli.run.seed,
        weights,
    };
    cli.run.check_workers(&cli.target)?;
    let mut target = cli.target.start()?;
    let explore_config = cli.run.explore_config();
    let mut recorder = cli.run.open_run(
        "monkey",
        &target,
        &explore_config,
        serde_json::json!({ "monkey": config }),
    )?;
    let summary = if cli.run.workers > 1 {
        // Each worker its own random stream; together they split the budget.
        let monkey = |i: u32| -> Result<Box<dyn Strategy>> {
            Ok(Box::new(Monkey::new(MonkeyConfig {
                seed: cli::worker_seed(config.seed, i),
                weights: config.weights,
            })))
        };
        cli::explore_workers(
            &cli.target,
            &cli.run,
            target,
            &mut recorder,
            &explore_config,
            &monkey,
        )?
    } else {
        cli::explore_one(
            &mut target,
            &mut Monkey::new(config),
            &cli.run,
            &mut recorder,
            &explore_config,
            cli.common.verbose > 0,
        )?
    };
    gui_testing::say!("{}", summary_line("monkey", &summary, ""));
    announce_run(recorder.dir())
}
