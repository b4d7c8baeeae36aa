//! `monkeypp`: Monkey++, a model-driven depth-first search for interface coverage
//! (default: the bundled demo app in Chromium). Also maps Android Monkey logs, and runs of
//! our own `monkey`, onto the model to say how much of the interface they reached.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use gui_explore::{StopReason, Summary};
use gui_greybox::js::JsConfig;
use gui_greybox::web::WebApp;
use gui_model_search::web::{
    LiveConfig, LiveCut, LiveOutcome, SurveyState, WebModel, WebModelConfig,
    build_web_model_watched, map_recorded_run, run_plan_watched,
};
use gui_model_search::{
    AppModel, Bound, DumpSet, Interaction, MapConfig, Reuse, SearchConfig, SearchPlan, bfs_bound,
    map_monkey_log, parse_monkey_log, search,
};
use gui_testing::cli::{self, CommonArgs, TargetArgs, write_report};
use gui_testing::progress::{PhaseProgress, budget_text, format_duration};
use serde_json::{Value, json};

/// Build an app model (code, controls, screens), search it depth first for every control
/// and carry the interactions out, reporting interface coverage step by step.
#[derive(Debug, Parser)]
#[command(name = "monkeypp", version, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    /// Use this model (the JSON form, e.g. an Android app's) instead of building one.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Text typed into fields.
    #[arg(long, default_value = "test")]
    input: String,
    /// Survey screens at most this many controls away from the start page.
    #[arg(long, default_value_t = 6)]
    max_depth: usize,
    /// Fire every control in the survey, not only those whose code may change the screen.
    #[arg(long)]
    probe_all: bool,
    /// After each control the survey fires, wait until the page has not changed for
    /// this long before reading the screen it shows.
    #[arg(long, value_name = "MS", default_value_t = WebModelConfig::default().quiet_ms)]
    survey_quiet_ms: u64,
    /// Survey every control when its screen is surveyed (default: one control of each
    /// class of equivalent controls first, toolbars and menus before list rows, the others
    /// after the whole survey while its budget lasts; those left take their
    /// representative's effect and are listed in `survey.json`).
    #[arg(long)]
    no_grouping: bool,
    /// After each survey probe that left its screen, restart the app to come back
    /// (default: Back or Escape first, and a restart only when the screen's controls are
    /// not all back).
    #[arg(long)]
    restart_every_probe: bool,
    /// Take each screen's controls in model order (the paper's plain DFS) instead of
    /// staying controls first.
    #[arg(long)]
    plain_dfs: bool,
    /// Plan only: print the interactions, do not carry them out.
    #[arg(long)]
    dry_run: bool,
    /// Map an Android Monkey log (`adb shell monkey -v ...` output) onto --model.
    #[arg(long, value_name = "FILE", requires_all = ["model", "dumps"])]
    monkey_log: Option<PathBuf>,
    /// UI Automator dumps for --monkey-log, one `<Screen>.xml` per screen.
    #[arg(long, value_name = "DIR")]
    dumps: Option<PathBuf>,
    /// Re-execute a run folder of our `monkey` on the app and report the interface
    /// coverage it reached.
    #[arg(long, value_name = "DIR")]
    monkey_run: Option<PathBuf>,
    /// Carry the plan out as made: do not plan again from the screen the page shows when
    /// it diverges from the model.
    #[arg(long)]
    no_replan: bool,
    /// Stop the whole run after this many minutes: the analysis, the survey and the live
    /// run share it. The live run stops starting interactions when it is spent.
    #[arg(long, allow_hyphen_values = true, value_parser = cli::parse_minutes)]
    minutes: Option<f64>,
    /// Stop surveying after this many minutes and plan from the model surveyed so far
    /// (default: half of what --minutes leaves when the survey starts, all of it with
    /// --dry-run).
    #[arg(long, allow_hyphen_values = true, value_parser = cli::parse_minutes)]
    survey_minutes: Option<f64>,
    /// Run folder (default: runs/monkeypp-<unix time>).
    #[arg(long, conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Continue the run in this folder (a survey cut by its budget, or killed) with its own
    /// settings: the survey goes on from its `survey.json`, then the plan is made and
    /// carried out again. Flags given with it win (e.g. a larger --survey-minutes).
    #[arg(long, value_name = "RUN_DIR")]
    resume: Option<PathBuf>,
}

const EXAMPLES: &str = "Examples:
  monkeypp                                     the bundled demo: model, search, live run, report
  monkeypp --dry-run                           print the plan only
  monkeypp --url http://localhost:8080 --probe-all
  monkeypp --model app.json --monkey-log monkey.txt --dumps dumps/   Android Monkey's coverage
  monkeypp --monkey-run runs/monkey-1700000000   how far a monkey run got
  monkeypp --url http://localhost:8080 --minutes 5 --survey-minutes 2   bounded run
  monkeypp --resume runs/monkeypp-1796000000   continue a survey cut by its budget or killed";

fn main() -> Result<()> {
    let started = Instant::now();
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    let verbose = cli.common.verbose > 0;
    // Bad input fails before anything starts.
    let given = cli
        .model
        .as_deref()
        .map(|p| AppModel::from_json_file(p).with_context(|| format!("--model {}", p.display())))
        .transpose()?;
    if let Some(log) = &cli.monkey_log {
        let model = given.expect("clap requires --model");
        let dumps = cli.dumps.as_deref().expect("clap requires --dumps");
        return map_android(&model, log, dumps, cli.out.as_deref());
    }
    let config = |model: &AppModel| SearchConfig {
        reuse: if model.platform == "web" {
            Reuse::NewInstance
        } else {
            Reuse::BringToFront
        },
        local_first: !cli.plain_dfs,
        ..SearchConfig::default()
    };
    if cli.dry_run
        && let Some(model) = &given
    {
        // A given model needs no app to plan over.
        let plan = search(model, &config(model)).context("searching the model")?;
        let bound = bfs_bound(
            model,
            &config(model),
            &plan.touched(),
            Some(plan.interactions()),
        )
        .context("bounding the search")?;
        print_plan(&plan, bound);
        return Ok(());
    }
    let dir = match (&cli.resume, &cli.out) {
        (Some(d), _) | (None, Some(d)) => d.clone(),
        (None, None) => cli::default_run_dir("monkeypp"),
    };
    let total = cli.minutes.map(minutes);
    let deadline = total.map(|t| started + t);
    let reopened = match &cli.resume {
        Some(d) => Some(cli::reopen_run(d, "monkeypp")?),
        None => {
            cli::refuse_existing_run(&dir)?;
            None
        }
    };
    let prior = match (&reopened, &given) {
        (Some(_), None) => read_survey(&dir)?,
        _ => None,
    };
    let recorded = cli
        .monkey_run
        .as_deref()
        .map(|d| {
            gui_explore::read_steps(d).with_context(|| format!("--monkey-run {}", d.display()))
        })
        .transpose()?;
    announce(&cli, &dir, prior.as_ref(), total);

    let (device, url, _server) = cli.target.start_chromium()?;
    // The run folder exists before the scripts are read and analysed (seconds to minutes
    // on a large app), so that even a run stopped then can be resumed.
    let meta = json!({
        "strategy": "monkeypp",
        "url": url,
        "device": gui_driver::Device::describe(&device),
        "monkeypp": { "input": cli.input, "max_depth": cli.max_depth, "probe_all": cli.probe_all,
                      "plain_dfs": cli.plain_dfs, "replan": !cli.no_replan,
                      "minutes": cli.minutes, "survey_minutes": cli.survey_minutes,
                      "no_grouping": cli.no_grouping,
                      "restart_every_probe": cli.restart_every_probe },
        "throttle": "settle",
        "argv": cli::recorded_command_line(),
    });
    let mut recorder = match reopened {
        Some(r) => r
            .resume()
            .with_context(|| format!("--resume {}", dir.display()))?,
        None => gui_explore::RunRecorder::create(&dir, &meta)
            .with_context(|| format!("creating run folder {}", dir.display()))?,
    };
    // A resumed run carries its plan out again; its steps follow the earlier ones.
    let steps_before = recorder.take_prior().map_or(0, |p| p.last_step());
    let t = Instant::now();
    let mut app = WebApp::new(device, &JsConfig::default()).context("reading the app's scripts")?;
    for e in app.script_errors() {
        eprintln!("monkeypp: skipped part of the analysis: {e}");
    }
    eprintln!(
        "monkeypp: read {} scripts ({} KiB) of {url} in {:.1} s",
        app.scripts().len(),
        app.scripts().iter().map(|s| s.source.len()).sum::<usize>() / 1024,
        t.elapsed().as_secs_f64()
    );

    // 1. The model, saved as the survey goes.
    let (model, survey) = match given {
        Some(m) => (m, None),
        None => {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let budget = match (cli.survey_minutes.map(minutes), left) {
                (Some(s), Some(l)) => Some(s.min(l)),
                (Some(s), None) => Some(s),
                (None, Some(l)) if cli.dry_run => Some(l),
                (None, Some(l)) => Some(l / 2),
                (None, None) => None,
            };
            let config = WebModelConfig {
                input: cli.input.clone(),
                max_depth: cli.max_depth,
                probe_all: cli.probe_all,
                quiet_ms: cli.survey_quiet_ms,
                budget,
                group_equivalent: !cli.no_grouping,
                restart_every_probe: cli.restart_every_probe,
                ..WebModelConfig::default()
            };
            let built = survey_saving(&mut app, &config, prior, &dir, verbose)?;
            (built.model, Some(built.survey))
        }
    };
    write_json(&dir.join("model.json"), &model)?;

    if let Some(steps) = recorded {
        let mapped =
            map_recorded_run(&mut app, &model, &steps).context("re-executing the monkey run")?;
        write_json(&dir.join("mapped.json"), &mapped)?;
        gui_testing::say!(
            "monkey run: {} events, {} on controls ({:.1}% hit rate), interface coverage {:.1}% ({}/{})",
            mapped.events,
            mapped.hits,
            100.0 * mapped.hit_rate(),
            100.0 * mapped.interface_coverage,
            mapped.covered.len(),
            model.count().ui
        );
        return Ok(());
    }

    // 2. The search, and the breadth-first bound it is measured against.
    let config = config(&model);
    let plan = search(&model, &config).context("searching the model")?;
    let bound = bound(&model, &config, &plan)?;
    write_json(&dir.join("plan.json"), &plan)?;
    if cli.dry_run {
        print_plan(&plan, bound);
        if let Some(s) = &survey {
            say_survey_cut(s, &dir);
        }
        return Ok(());
    }
    print_plan_line(&plan, bound);

    // 3. The interactions on the page, within what is left of the run's budget.
    let live_config = LiveConfig {
        input: cli.input.clone(),
        replan: !cli.no_replan,
        search: config.clone(),
        budget: deadline.map(|d| d.saturating_duration_since(Instant::now())),
        max_interactions: None,
        steps_before,
    };
    let mut progress = PhaseProgress::start(
        "monkeypp",
        "carrying out",
        "interactions",
        verbose,
        deadline,
    );
    let live = run_plan_watched(
        &mut app,
        &model,
        &plan,
        &live_config,
        Some(&mut recorder),
        &mut |step, out| {
            tracing::info!(
                "{}: now on {}{}",
                interaction_text(&step.interaction),
                step.screen,
                match (&step.expected, step.done) {
                    (_, false) => " (not offered)".to_string(),
                    (Some(e), true) if *e != step.screen => format!(" (the model expected {e})"),
                    _ => String::new(),
                }
            );
            progress.update(
                out.steps.len() as u64,
                (out.steps.len() + out.not_done) as u64,
                &format!(
                    "interface coverage {:.0}%, {} diverged, {} re-plans",
                    100.0 * step.interface_coverage,
                    out.diverged,
                    out.replans
                ),
            );
        },
    )
    .context("carrying out the plan")?;
    progress.finish();
    let device = gui_greybox::GreyboxApp::describe(&mut app);
    recorder.finish(&summary(&live, &device))?;
    let row = json!({
        "app": model.app,
        "model": model.count(),
        "survey": survey.as_ref().map(survey_report),
        "planned_interactions": plan.interactions(),
        "interactions": live.steps.len(),
        "bound": bound,
        // Interactions carried out (restarts that brought controls back included).
        "ratio_to_bound": live.steps.len() as f64 / bound.value().max(1) as f64,
        "planned_ratio_to_bound": plan.interactions() as f64 / bound.value().max(1) as f64,
        "planned_interface_coverage": plan.interface_coverage(),
        "interface_coverage": live.interface_coverage,
        "covered_ui": live.covered_ui,
        "ui_total": plan.ui_total,
        "planned_ui": live.planned_ui,
        "unreached": plan.unreached,
        "missing": live.missing,
        "missed": live.missed,
        "diverged": live.diverged,
        "replans": live.replans,
        "recoveries": live.recoveries,
        "cut": live.cut,
        "not_done": live.not_done,
        "curve": live.steps.iter().map(|s| s.interface_coverage).collect::<Vec<_>>(),
        "coverage": live.coverage,
        "bugs": live.signals.iter().map(|(step, s)| json!({ "key": s.key, "step": step }))
            .collect::<Vec<_>>(),
    });
    write_json(&dir.join("monkeypp.json"), &row)?;
    let report = write_report(&dir)?;
    gui_testing::say!(
        "monkeypp: {} interactions ({} restarts to bring controls back, {} re-plans), interface coverage {:.1}% ({}/{}; planned {:.1}%), {} missing, {} diverged, coverage {}, {} unique signals",
        live.steps.len(),
        live.recoveries,
        live.replans,
        100.0 * live.interface_coverage,
        live.covered_ui,
        plan.ui_total,
        100.0 * plan.interface_coverage(),
        live.missing.len(),
        live.diverged,
        cli::coverage_text(live.coverage),
        live.signals.len()
    );
    for (step, s) in &live.signals {
        gui_testing::say!("  {}  (step {step})", s.key);
    }
    if !live.missed.is_empty() {
        gui_testing::say!("  missed {} controls:", live.missed.len());
        for m in &live.missed {
            gui_testing::say!("    {} ({:?}): {}", m.control, m.label, m.why.name());
        }
    }
    if live.cut.is_some() {
        gui_testing::say!(
            "  cut: {} planned interactions not carried out ({})",
            live.not_done,
            match live.cut {
                Some(LiveCut::Budget) => "time budget",
                _ => "interaction cap",
            }
        );
    }
    if let Some(s) = &survey {
        say_survey_cut(s, &dir);
    }
    gui_testing::say!("report: {}", report.display());
    Ok(())
}

fn minutes(m: f64) -> Duration {
    Duration::from_secs_f64(m * 60.0)
}

fn interaction_text(i: &Interaction) -> String {
    match i {
        Interaction::Touch(id) => format!("touch {id}"),
        Interaction::Back => "back".into(),
        Interaction::Relaunch => "relaunch".into(),
    }
}

/// The first line: what the run is about to do, and how long it may take.
fn announce(cli: &Cli, dir: &Path, prior: Option<&SurveyState>, total: Option<Duration>) {
    let target = match (&cli.target.url, &cli.target.app_dir) {
        (Some(url), _) => url.clone(),
        (None, Some(d)) => d.join(&cli.target.entry).display().to_string(),
        (None, None) => "the bundled demo app".into(),
    };
    let survey_budget = match (cli.survey_minutes, cli.minutes) {
        (Some(s), _) => budget_text(Some(minutes(s))),
        (None, Some(_)) if cli.dry_run => "what --minutes leaves".into(),
        (None, Some(_)) => "half of what --minutes leaves".into(),
        (None, None) => "as long as it takes (no --minutes or --survey-minutes)".into(),
    };
    let model = match (&cli.model, prior) {
        (Some(m), _) => format!("use the model {}", m.display()),
        (None, Some(s)) => format!(
            "continue the survey ({} controls found, {} decided, {} screens) for {survey_budget}",
            s.ui.len(),
            s.probed.len(),
            s.screens.len()
        ),
        (None, None) => format!(
            "analyse its code and survey its screens (at most {} controls deep) for {survey_budget}",
            cli.max_depth
        ),
    };
    let then = if cli.monkey_run.is_some() {
        "map the monkey run onto the model"
    } else if cli.dry_run {
        "plan the interactions and print them"
    } else {
        "plan the interactions and carry them out"
    };
    eprintln!(
        "monkeypp: {target}: {model}, {then}; whole run: {}; run folder {}",
        budget_text(total),
        dir.display()
    );
}

/// Builds the web model, showing the survey's progress and saving it (`survey.json`,
/// `model.json`) every few seconds and at the end, so that a survey that is killed keeps
/// what it found and `--resume` continues it.
fn survey_saving(
    app: &mut WebApp,
    config: &WebModelConfig,
    prior: Option<SurveyState>,
    dir: &Path,
    verbose: bool,
) -> Result<WebModel> {
    const SAVE_EVERY: Duration = Duration::from_secs(3);
    let deadline = config.budget.map(|b| Instant::now() + b);
    let mut progress = PhaseProgress::start("monkeypp", "surveying", "controls", verbose, deadline);
    let mut saved = Instant::now();
    let mut save_every = SAVE_EVERY;
    let mut failed: Option<anyhow::Error> = None;
    let built = build_web_model_watched(app, config, prior, &mut |p| {
        let probe = p.probe;
        tracing::info!(
            "surveyed {} on {}: {} ({} ms)",
            probe.control,
            probe.screen,
            match (&probe.error, &probe.led_to) {
                (Some(e), _) => format!("firing failed: {e}"),
                (None, Some(to)) => format!("led to {to}"),
                (None, None) => format!("stayed, {} controls appeared", probe.appeared),
            },
            probe.duration_ms
        );
        let s = p.state;
        progress.update(
            s.probed.len() as u64,
            s.ui.len() as u64,
            &format!(
                "{} fired, {} screens ({} surveyed)",
                s.probes,
                s.screens.len(),
                s.finished.len()
            ),
        );
        // Saving a large model takes time itself: at most a tenth of it.
        if failed.is_none() && saved.elapsed() >= save_every {
            let t = Instant::now();
            if let Err(e) = save_survey(dir, s, p.model().ok().as_ref()) {
                failed = Some(e);
            }
            save_every = SAVE_EVERY.max(t.elapsed() * 10);
            saved = Instant::now();
        }
    });
    progress.finish();
    if let Some(e) = failed {
        return Err(e.context("saving the survey"));
    }
    let built = built.context("building the app model")?;
    save_survey(dir, &built.survey, Some(&built.model))?;
    let n = built.model.count();
    eprintln!(
        "monkeypp: model of {} screens, {} controls, {} methods, {} statements, {} edges; \
         static analysis {:.0} ms, survey {:.1} s ({} controls fired, {} skipped by the model; \
         {} links read; {} restarts, {} returns by Back)",
        n.screens,
        n.ui,
        n.methods,
        n.statements,
        n.edges,
        built.static_ms,
        built.survey_ms / 1e3,
        built.probes,
        built.skipped,
        built.read_links,
        built.resets,
        built.backs
    );
    let s = &built.survey;
    eprintln!(
        "monkeypp: survey time: {}; analysis of the scripts {:.1} s",
        s.timing.summary(s.elapsed_ms),
        built.static_ms / 1e3
    );
    if !s.equivalent.is_empty() {
        let representatives: std::collections::BTreeSet<&String> = s.equivalent.values().collect();
        eprintln!(
            "monkeypp: {} controls not fired are equivalent to {} that were (survey.json `equivalent`); they take those controls' effects",
            s.equivalent.len(),
            representatives.len()
        );
    }
    Ok(built)
}

/// Writes the survey so far (`survey.json`, what `--resume` continues from) and, when
/// given, the model it gives.
fn save_survey(dir: &Path, survey: &SurveyState, model: Option<&AppModel>) -> Result<()> {
    let mut report = survey_report(survey);
    report["state"] = serde_json::to_value(survey).expect("the survey serialises");
    write_json(&dir.join("survey.json"), &report)?;
    if let Some(m) = model {
        write_json(&dir.join("model.json"), m)?;
    }
    Ok(())
}

/// What the run folder says about the survey: whether and why it was cut, and what it
/// left.
fn survey_report(s: &SurveyState) -> Value {
    json!({
        "finished": !s.has_work(),
        "cut": s.cut,
        "controls_known": s.ui.len(),
        "controls_decided": s.probed.len(),
        "controls_fired": s.probes,
        "unprobed": s.unprobed(),
        "screens_known": s.screens.len(),
        "screens_surveyed": s.finished.len(),
        "screens_unfinished": s.unfinished(),
        "equivalent": equivalent_report(&s.equivalent),
        "elapsed_s": s.elapsed_ms as f64 / 1e3,
        "controls_per_minute": s.probed.len() as f64 * 60_000.0 / s.elapsed_ms.max(1) as f64,
        "time": time_report(s),
    })
}

/// Controls decided as equivalent to a fired one, grouped by that one.
fn equivalent_report(pairs: &std::collections::BTreeMap<String, String>) -> Value {
    let mut by: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for (control, representative) in pairs {
        by.entry(representative).or_default().push(control);
    }
    json!({ "controls": pairs.len(), "by_representative": by })
}

/// Where the survey's time went, in seconds, with the rest (the survey's bookkeeping,
/// saving) as `other_s`.
fn time_report(s: &SurveyState) -> Value {
    let t = &s.timing;
    let counted: u64 = t.parts().iter().map(|p| p.1).sum();
    let secs = |ms: u64| ms as f64 / 1e3;
    json!({
        "restarts_s": secs(t.restart_ms), "restarts": s.resets, "ways_back_s": secs(t.back_ms),
        "returns_by_back": s.backs, "firing_s": secs(t.fire_ms), "waiting_s": secs(t.wait_ms),
        "listing_s": secs(t.listing_ms), "other_s": secs(s.elapsed_ms.saturating_sub(counted)),
    })
}

/// The survey of a run folder being resumed, if it has one.
fn read_survey(dir: &Path) -> Result<Option<SurveyState>> {
    let path = dir.join("survey.json");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut v: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: not a survey", path.display()))?;
    let state = serde_json::from_value(v["state"].take())
        .with_context(|| format!("{}: not a survey", path.display()))?;
    Ok(Some(state))
}

/// Says what the survey left out and why, and how to go on.
fn say_survey_cut(s: &SurveyState, dir: &Path) {
    let unprobed = s.unprobed();
    if let Some(cut) = s.cut {
        gui_testing::say!(
            "  cut: the survey stopped at its {} after {}: {} of {} controls found were surveyed, {} screens left unfinished; \
             the plan comes from what was surveyed; `monkeypp --resume {}` continues the survey",
            cut.name(),
            format_duration(Duration::from_millis(s.elapsed_ms)),
            s.probed.len(),
            s.ui.len(),
            s.unfinished().len(),
            dir.display()
        );
    } else if !unprobed.is_empty() {
        gui_testing::say!(
            "  {} controls found were not surveyed (they appeared after a control fired in place, or sit deeper than --max-depth)",
            unprobed.len()
        );
    }
}

fn print_plan_line(plan: &SearchPlan, bound: Bound) {
    let b = match bound {
        Bound::Exact(n) => format!("{n}"),
        Bound::AtLeast(n) => format!(">= {n}"),
    };
    gui_testing::say!(
        "plan: {} interactions for {}/{} controls ({:.1}% interface coverage); breadth-first bound {b}, ratio {:.2}",
        plan.interactions(),
        plan.covered_ui(),
        plan.ui_total,
        100.0 * plan.interface_coverage(),
        plan.interactions() as f64 / bound.value().max(1) as f64
    );
    if !plan.unreached.is_empty() {
        gui_testing::say!("  not reached: {}", plan.unreached.join(", "));
    }
}

/// The fewest interactions touching what `plan` touches, over plans whose screen stack
/// stays within one screen deeper than the plan's own.
fn bound(model: &AppModel, config: &SearchConfig, plan: &SearchPlan) -> Result<Bound> {
    let deepest = plan.steps.iter().map(|s| s.stack.len()).max().unwrap_or(1);
    let config = SearchConfig {
        max_depth: deepest + 1,
        ..config.clone()
    };
    bfs_bound(model, &config, &plan.touched(), Some(plan.interactions()))
        .context("bounding the search")
}

/// The plan, one interaction a line, then its summary line.
fn print_plan(plan: &SearchPlan, bound: Bound) {
    for s in &plan.steps {
        match &s.interaction {
            Interaction::Touch(id) => gui_testing::say!("touch {id}   [{}]", s.screen),
            Interaction::Back => gui_testing::say!("back   [{}]", s.screen),
            Interaction::Relaunch => gui_testing::say!("relaunch   [{}]", s.screen),
        }
    }
    print_plan_line(plan, bound);
}

fn map_android(model: &AppModel, log: &Path, dumps: &Path, out: Option<&Path>) -> Result<()> {
    let text =
        std::fs::read_to_string(log).with_context(|| format!("--monkey-log {}", log.display()))?;
    let parsed = parse_monkey_log(&text);
    for m in &parsed.malformed {
        eprintln!(
            "monkeypp: {}:{}: skipped ({}): {}",
            log.display(),
            m.line,
            m.reason,
            m.text
        );
    }
    let dumps = DumpSet::load_dir(dumps).with_context(|| format!("--dumps {}", dumps.display()))?;
    let mapped = map_monkey_log(model, &parsed, &dumps, &MapConfig::default())
        .context("mapping the Monkey log onto the model")?;
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        write_json(&dir.join("mapped.json"), &mapped)?;
    }
    gui_testing::say!(
        "monkey: {} events, {} on controls ({:.1}% hit rate), interface coverage {:.1}%",
        mapped.events,
        mapped.hits,
        100.0 * mapped.hit_rate(),
        100.0 * mapped.interface_coverage
    );
    let config = SearchConfig::default();
    let plan = search(model, &config).context("searching the model")?;
    let bound = bound(model, &config, &plan)?;
    print_plan_line(&plan, bound);
    Ok(())
}

fn summary(live: &LiveOutcome, device: &str) -> Summary {
    let mut counts: HashMap<String, u64> = HashMap::new();
    for (_, s) in &live.signals {
        *counts.entry(s.key.clone()).or_default() += 1;
    }
    Summary {
        strategy: "monkeypp".into(),
        device: device.to_owned(),
        throttle: "settle".into(),
        steps: live.steps.len() as u64,
        duration_ms: live.duration_ms,
        stopped_because: StopReason::Steps,
        coverage: live.coverage,
        unique_signals: live.signals.len(),
        signal_counts: counts,
        device_restarts: 0,
        failed_actions: live.missing.len() as u64,
        median_round_trip_ms: {
            let mut ms: Vec<f64> = live.steps.iter().map(|s| s.round_trip_ms).collect();
            ms.sort_by(f64::total_cmp);
            ms.get(ms.len() / 2).copied().unwrap_or(0.0)
        },
        workers: 1,
        steps_by_worker: Vec::new(),
        resumed_at: Vec::new(),
        stop_note: None,
    }
}

/// Writes a JSON file of the run folder atomically: a report never reads half of one.
fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).expect("json");
    Ok(gui_explore::write_atomic(path, &bytes)?)
}
