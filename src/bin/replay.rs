//! `replay`: plays the steps of a recorded run again on a fresh device and says whether
//! each bug the run found shows up again. Works for runs of every strategy: it replays the
//! recorded actions, not the strategy.
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use gui_explore::{ExploreConfig, Scripted, explore};
use gui_report::{RunFolder, reproductions};
use gui_testing::cli::{RunArgs, TargetArgs, summary_line, write_report};

/// Replay a run folder's steps (all, or up to a step) and check its bugs reproduce.
///
/// Give the same app and device options as the original run (for the demo app, none).
/// Exit code: 0 every bug reproduced, 1 some did not, 2 the replay itself failed.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// The run folder to replay.
    run_dir: PathBuf,
    /// Replay the steps up to and including this one (for example a bug's first step).
    #[arg(long, value_name = "STEP")]
    until_step: Option<u64>,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    run: RunArgs,
}

fn main() {
    match replay() {
        Ok(all) => std::process::exit(if all { 0 } else { 1 }),
        Err(e) => {
            eprintln!("replay: {e:#}");
            std::process::exit(2);
        }
    }
}

/// Whether every bug of the original run (up to the step) came back.
fn replay() -> Result<bool> {
    let cli = Cli::parse();
    let original = RunFolder::load(&cli.run_dir)?;
    let until = cli.until_step.unwrap_or(original.step_count());
    let actions: Vec<_> = original
        .steps
        .iter()
        .take_while(|s| s.step <= until)
        .map(|s| s.action.clone())
        .collect();
    if actions.is_empty() {
        anyhow::bail!("{}: no step to replay", cli.run_dir.display());
    }
    let mut target = cli.target.start()?;
    let explore_config = ExploreConfig {
        steps: Some(actions.len() as u64),
        ..ExploreConfig::default()
    };
    let meta = cli.run.meta(
        "replay",
        &target,
        &explore_config,
        serde_json::json!({ "replay_of": cli.run_dir, "until_step": until }),
    );
    let mut recorder = cli.run.recorder("replay", &meta)?;
    let summary = explore(
        target.device.as_mut(),
        &mut Scripted::new(actions),
        &mut cli.run.throttle(),
        &mut recorder,
        &explore_config,
    )
    .context("replaying")?;
    println!("{}", summary_line("replay", &summary, ""));
    let replayed = RunFolder::load(recorder.dir())?;
    let found = reproductions(&original.signals, until, &replayed.signals);
    for r in &found {
        match r.replayed_step {
            Some(step) => println!(
                "reproduced at step {step} (originally step {}): {}",
                r.original_step, r.key
            ),
            None => println!(
                "NOT reproduced (originally step {}): {}",
                r.original_step, r.key
            ),
        }
    }
    if found.is_empty() {
        println!("the original run had no bug up to step {until}");
    }
    println!("run folder: {}", recorder.dir().display());
    println!("report: {}", write_report(recorder.dir())?.display());
    Ok(found.iter().all(|r| r.replayed_step.is_some()))
}
