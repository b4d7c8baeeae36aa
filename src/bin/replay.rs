//! `replay`: plays the steps of a recorded run again on a fresh device and says whether
//! each bug the run found shows up again. Works for runs of every strategy: it replays the
//! recorded actions, not the strategy.
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use gui_core::Action;
use gui_explore::{
    DdminError, ExploreConfig, Minimised, Scripted, ddmin, explore, reproduces, reproductions,
};
use gui_report::RunFolder;
use gui_testing::cli::{self, CommonArgs, RunArgs, TargetArgs, announce_run, summary_line};

/// Replay a run folder's steps (all, up to a step, or chosen ones), check its bugs
/// reproduce, and optionally minimise the steps behind each.
///
/// Give the same app and device options as the original run (for the demo app, none).
/// Exit code: 0 every bug reproduced, 1 some did not, 2 the replay itself failed.
#[derive(Debug, Parser)]
#[command(name = "replay", version, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    /// The run folder to replay.
    run_dir: PathBuf,
    /// Replay the steps up to and including this one (for example a bug's first step).
    #[arg(long, value_name = "STEP", conflicts_with = "only_steps")]
    until_step: Option<u64>,
    /// Replay only these steps of the run, in order (for example a minimised
    /// reproduction: `--only-steps 4,9,12`).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', num_args = 1..)]
    only_steps: Vec<u64>,
    /// After the replay, shrink the steps behind each reproduced bug to the few it needs
    /// (delta debugging, one fresh replay per test) and write them to `minimised.json`
    /// and the report.
    #[arg(long)]
    minimise: bool,
    #[command(flatten)]
    target: TargetArgs,
    #[command(flatten)]
    run: RunArgs,
}

const EXAMPLES: &str = "Examples:
  replay runs/monkey-seed3-1764490000                  every step; did each bug come back?
  replay runs/monkey-seed3-1764490000 --until-step 57  up to a bug's first step
  replay runs/monkey-seed3-1764490000 --minimise       and shrink each bug's steps (ddmin)
  replay runs/monkey-seed3-1764490000 --only-steps 4,9,57   just these steps";

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
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    cli.run.single_run_only(
        "replay",
        "a replay is short; run it again from the recorded run instead",
    )?;
    let original = RunFolder::load(&cli.run_dir)?;
    let chosen = chosen_steps(&cli, &original)?;
    let until = chosen.last().map_or(0, |s| s.0);
    let actions: Vec<Action> = chosen.iter().map(|(_, a)| a.clone()).collect();
    let mut target = cli.target.start()?;
    let explore_config = ExploreConfig {
        steps: Some(actions.len() as u64),
        ..ExploreConfig::default()
    };
    let step_numbers: Vec<u64> = chosen.iter().map(|s| s.0).collect();
    let mut recorder = cli.run.open_run(
        "replay",
        &target,
        &explore_config,
        serde_json::json!({ "replay_of": cli.run_dir, "until_step": until, "steps": step_numbers }),
    )?;
    let summary = explore(
        target.device.as_mut(),
        &mut Scripted::new(actions),
        &mut cli.run.throttle()?,
        &mut recorder,
        &explore_config,
    )
    .context("replaying")?;
    gui_testing::say!("{}", summary_line("replay", &summary, ""));
    let replayed = RunFolder::load(recorder.dir())?;
    // Only bugs whose steps were all replayed can be expected back.
    let expected: Vec<_> = original
        .signals
        .iter()
        .filter(|s| cli.only_steps.is_empty() || step_numbers.contains(&s.first_step))
        .cloned()
        .collect();
    let found = reproductions(&expected, until, &replayed.signals);
    for r in &found {
        match r.replayed_step {
            Some(step) => gui_testing::say!(
                "reproduced at step {step} (originally step {}): {}",
                r.original_step,
                r.key
            ),
            None => gui_testing::say!(
                "NOT reproduced (originally step {}): {}",
                r.original_step,
                r.key
            ),
        }
    }
    if found.is_empty() {
        gui_testing::say!("the original run had no bug up to step {until}");
    }
    if cli.minimise {
        let mut all = Vec::new();
        for r in found.iter().filter(|r| r.replayed_step.is_some()) {
            // One bug that cannot be minimised (a flaky one) does not cost the others,
            // nor the replay's run folder and report.
            let minimised = minimise(
                &cli,
                &chosen,
                r.original_step,
                &r.key,
                target.device.as_mut(),
            );
            let m = match minimised {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("replay: could not minimise {}: {e:#}", r.key);
                    continue;
                }
            };
            gui_testing::say!(
                "minimised {} steps to {} in {} replays{}: {}",
                m.original_steps,
                m.steps.len(),
                m.tests,
                if m.confirmed {
                    ""
                } else {
                    " (NOT confirmed by a last replay)"
                },
                m.key
            );
            gui_testing::say!("  {}", m.replay_command());
            all.push(m);
        }
        let path = recorder.dir().join("minimised.json");
        gui_explore::write_atomic(&path, &serde_json::to_vec_pretty(&all)?)?;
    }
    announce_run(recorder.dir())?;
    Ok(found.iter().all(|r| r.replayed_step.is_some()))
}

/// The original run's steps to replay, as (step number, action), in order.
fn chosen_steps(cli: &Cli, original: &RunFolder) -> Result<Vec<(u64, Action)>> {
    let name = cli.run_dir.display();
    let chosen: Vec<(u64, Action)> = if cli.only_steps.is_empty() {
        let until = cli.until_step.unwrap_or(original.step_count());
        original
            .steps
            .iter()
            .take_while(|s| s.step <= until)
            .map(|s| (s.step, s.action.clone()))
            .collect()
    } else {
        let mut out = Vec::with_capacity(cli.only_steps.len());
        for n in &cli.only_steps {
            let Some(step) = original.steps.iter().find(|s| s.step == *n) else {
                bail!("--only-steps: {name} has no step {n}");
            };
            out.push((*n, step.action.clone()));
        }
        out
    };
    if chosen.is_empty() {
        bail!("{name}: no step to replay");
    }
    Ok(chosen)
}

/// Delta-debugs the replayed steps up to a bug's first step down to those it needs.
fn minimise(
    cli: &Cli,
    chosen: &[(u64, Action)],
    bug_step: u64,
    key: &str,
    device: &mut dyn gui_driver::Device,
) -> Result<Minimised> {
    let candidates: Vec<&(u64, Action)> = chosen.iter().filter(|s| s.0 <= bug_step).collect();
    let settle = cli.run.throttle.max_wait().max(Duration::from_millis(100));
    let mut throttle = cli.run.throttle()?;
    let mut test = |subset: &[usize]| {
        let actions: Vec<Action> = subset.iter().map(|&i| candidates[i].1.clone()).collect();
        reproduces(device, &mut throttle, &actions, key, settle)
    };
    let reduction = match ddmin(candidates.len(), &mut test) {
        Ok(r) => r,
        Err(DdminError::NotReproduced) => bail!(
            "minimising {key}: its {} steps did not show it again on a fresh start (a flaky bug?)",
            candidates.len()
        ),
        Err(DdminError::Test(e)) => return Err(e).context(format!("minimising {key}")),
    };
    let confirmed = test(&reduction.kept)?.is_some();
    Ok(Minimised {
        key: key.to_owned(),
        run: cli.run_dir.display().to_string(),
        original_steps: candidates.len() as u64,
        steps: reduction.kept.iter().map(|&i| candidates[i].0).collect(),
        actions: reduction
            .kept
            .iter()
            .map(|&i| candidates[i].1.clone())
            .collect(),
        tests: reduction.tests + 1,
        confirmed,
    })
}
