//! `monkeypp`: Monkey++, a model-driven depth-first search for interface coverage
//! (default: the bundled demo app in Chromium). Also maps Android Monkey logs, and runs of
//! our own `monkey`, onto the model to say how much of the interface they reached.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Parser;
use gui_explore::{StopReason, Summary};
use gui_greybox::js::JsConfig;
use gui_greybox::web::WebApp;
use gui_model_search::web::{
    LiveOutcome, WebModelConfig, build_web_model, map_recorded_run, run_plan,
};
use gui_model_search::{
    AppModel, Bound, DumpSet, Interaction, MapConfig, Reuse, SearchConfig, SearchPlan, bfs_bound,
    map_monkey_log, parse_monkey_log, search,
};
use gui_testing::cli::{self, CommonArgs, TargetArgs, write_report};
use serde_json::json;

/// Build an app model (code, controls, screens), search it depth first for every control
/// and carry the interactions out, reporting interface coverage step by step.
#[derive(Debug, Parser)]
#[command(name = "monkeypp", version, about, after_help = EXAMPLES)]
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
    /// Run folder (default: runs/monkeypp-<unix time>).
    #[arg(long)]
    out: Option<PathBuf>,
}

const EXAMPLES: &str = "Examples:
  monkeypp                                     the bundled demo: model, search, live run, report
  monkeypp --dry-run                           print the plan only
  monkeypp --url http://localhost:8080 --probe-all
  monkeypp --model app.json --monkey-log monkey.txt --dumps dumps/   Android Monkey's coverage
  monkeypp --monkey-run runs/monkey-1700000000   how far a monkey run got";

fn main() -> Result<()> {
    let cli: Cli = cli::parse();
    cli.common.init_logging();
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
    let dir = cli.out.clone().unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        PathBuf::from("runs").join(format!("monkeypp-{t}"))
    });
    if dir.join("run.json").exists() {
        bail!(
            "{} already holds a run; choose another --out",
            dir.display()
        );
    }
    let recorded = cli
        .monkey_run
        .as_deref()
        .map(|d| {
            gui_explore::read_steps(d).with_context(|| format!("--monkey-run {}", d.display()))
        })
        .transpose()?;

    let (device, url, _server) = cli.target.start_chromium()?;
    let mut app = WebApp::new(device, &JsConfig::default()).context("reading the app's scripts")?;
    for e in app.script_errors() {
        eprintln!("monkeypp: skipped part of the analysis: {e}");
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;

    // 1. The model.
    let (model, build) = match given {
        Some(m) => (m, None),
        None => {
            let config = WebModelConfig {
                input: cli.input.clone(),
                max_depth: cli.max_depth,
                probe_all: cli.probe_all,
                quiet_ms: cli.survey_quiet_ms,
                ..WebModelConfig::default()
            };
            let built = build_web_model(&mut app, &config).context("building the app model")?;
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
            let info = json!({ "static_ms": built.static_ms, "survey_ms": built.survey_ms,
                "probes": built.probes, "skipped": built.skipped, "resets": built.resets, "backs": built.backs, "read_links": built.read_links,
                "static_effects": built.static_effects,
                "signals": built.signals.iter().map(|s| &s.key).collect::<Vec<_>>() });
            (built.model, Some(info))
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
        return Ok(());
    }
    print_plan_line(&plan, bound);

    // 3. The interactions on the page.
    let meta = json!({
        "strategy": "monkeypp",
        "url": url,
        "device": gui_greybox::GreyboxApp::describe(&mut app),
        "monkeypp": { "input": cli.input, "max_depth": cli.max_depth, "probe_all": cli.probe_all,
                      "plain_dfs": cli.plain_dfs },
        "throttle": "settle",
    });
    let mut recorder = gui_explore::RunRecorder::create(&dir, &meta)
        .with_context(|| format!("creating run folder {}", dir.display()))?;
    let live = run_plan(&mut app, &model, &plan, &cli.input, Some(&mut recorder))
        .context("carrying out the plan")?;
    let device = gui_greybox::GreyboxApp::describe(&mut app);
    recorder.finish(&summary(&live, &device))?;
    let row = json!({
        "app": model.app,
        "model": model.count(),
        "build": build,
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
        "unreached": plan.unreached,
        "missing": live.missing,
        "diverged": live.diverged,
        "recoveries": live.recoveries,
        "curve": live.steps.iter().map(|s| s.interface_coverage).collect::<Vec<_>>(),
        "coverage": live.coverage,
        "bugs": live.signals.iter().map(|(step, s)| json!({ "key": s.key, "step": step }))
            .collect::<Vec<_>>(),
    });
    write_json(&dir.join("monkeypp.json"), &row)?;
    let report = write_report(&dir)?;
    gui_testing::say!(
        "monkeypp: {} interactions ({} restarts to bring controls back), interface coverage {:.1}% ({}/{}), {} missing, {} diverged, coverage {}, {} unique signals",
        live.steps.len(),
        live.recoveries,
        100.0 * live.interface_coverage,
        live.covered_ui,
        plan.ui_total,
        live.missing.len(),
        live.diverged,
        cli::coverage_text(live.coverage),
        live.signals.len()
    );
    for (step, s) in &live.signals {
        gui_testing::say!("  {}  (step {step})", s.key);
    }
    gui_testing::say!("report: {}", report.display());
    Ok(())
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
    }
}

/// Writes a JSON file of the run folder atomically: a report never reads half of one.
fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).expect("json");
    Ok(gui_explore::write_atomic(path, &bytes)?)
}
