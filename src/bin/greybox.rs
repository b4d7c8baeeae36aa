//! `greybox`: event-flow and event-dependency graphs, sequence generation and replay
//! (Arlt et al., ISSTA 2012) on a web app (default: the bundled demo).
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use gui_core::Size;
use gui_explore::{StopReason, Summary};
use gui_greybox::desktop::SwingApp;
use gui_greybox::js::JsConfig;
use gui_greybox::web::WebApp;
use gui_greybox::{
    Edg, Efg, GreyboxApp, Mode, ReadWrite, ReplayConfig, ReplayOutcome, RipConfig, RipCut,
    RipOutcome, RipState, Ripped, Ripper, plan, replay_watched,
};
use gui_testing::cli::{self, CommonArgs, TargetArgs, write_report};
use gui_testing::progress::{PhaseProgress, budget_text, format_duration};
use serde_json::{Value, json};

/// Rip an app's GUI into an event-flow graph, analyse its event handlers into an
/// event-dependency graph, generate test cases and replay them with a crash oracle.
#[derive(Debug, Parser)]
#[command(name = "greybox", version, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    target: TargetArgs,
    /// greybox: Algorithms 2 and 3 on the EDG and EFG; blackbox: every EFG path of --len
    /// events (the paper's baseline).
    #[arg(long, value_parser = ["greybox", "blackbox"], default_value = "greybox")]
    mode: String,
    /// Longest abstract sequence (greybox), or the path length (blackbox).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=6))]
    len: u64,
    /// Abstract sequences per event at most (greybox): a number or `inf`.
    #[arg(long, default_value = "inf", value_parser = parse_top)]
    top: Top,
    /// Reuse the event-flow graph of an earlier run (its `efg.json`) instead of ripping.
    #[arg(long, value_name = "FILE")]
    efg: Option<PathBuf>,
    /// Stop ripping after firing this many distinct events.
    #[arg(long, default_value_t = 400)]
    max_events: usize,
    /// Rip states at most this many events away from the start.
    #[arg(long, default_value_t = 8)]
    max_depth: usize,
    /// Text typed into input fields while ripping and replaying.
    #[arg(long, default_value = "test")]
    input: String,
    /// Replay at most this many test cases (the first ones generated).
    #[arg(long)]
    limit: Option<usize>,
    /// Generate and print the sequences; do not replay them.
    #[arg(long)]
    dry_run: bool,
    /// Build the EDG with Algorithm 1 alone: keep edges whose fields an event in between
    /// overwrites (see `Edg::drop_overwritten`) and leave out the effects the ripper
    /// observed (navigation listeners on the web).
    #[arg(long)]
    plain_edg: bool,
    /// Extra names of app functions that register event handlers (like todomvc's `$on`).
    #[arg(long, value_delimiter = ',')]
    helpers: Vec<String>,
    /// A Java Swing app instead of a web app: its class folders or jars (comma separated).
    /// It runs under Xvfb and is ripped through its pixels.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PATHS",
        requires = "java_main"
    )]
    java_classpath: Vec<PathBuf>,
    /// Compile the Java sources in this folder with javac first (into the run folder) and
    /// add the classes to the class path.
    #[arg(long, value_name = "DIR", requires = "java_main")]
    java_sources: Option<PathBuf>,
    /// The Java app's main class.
    #[arg(long, value_name = "CLASS")]
    java_main: Option<String>,
    /// Screen size of the X server for a Java app, WIDTHxHEIGHT.
    #[arg(long, default_value = "1024x768", value_parser = cli::parse_size)]
    screen: Size,
    /// Stop the whole run after this many minutes: the scripts' analysis, the rip, the
    /// generation and the replay share it. Replay stops starting test cases when it is
    /// spent.
    #[arg(long, allow_hyphen_values = true, value_parser = cli::parse_minutes)]
    minutes: Option<f64>,
    /// Stop ripping after this many minutes and go on with the events ripped (default:
    /// half of what --minutes leaves when the rip starts, 85% of it with --dry-run).
    #[arg(long, allow_hyphen_values = true, value_parser = cli::parse_minutes)]
    rip_minutes: Option<f64>,
    /// Restart the app before every event the rip fires, as the paper's test cases start
    /// (default: come back to the event's state without a restart when that verifiably
    /// works: the event left the page as it was, or Escape, a close button or history back
    /// restored it).
    #[arg(long)]
    restart_every_event: bool,
    /// Rip every event in depth-first order, as the paper (default: one event of each class
    /// of equivalent events first, the others while the rip's budget lasts; those left are
    /// reported as equivalent and take their representative's successors).
    #[arg(long)]
    no_grouping: bool,
    /// Run folder (default: runs/greybox-<unix time>).
    #[arg(long, conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Continue the run in this folder (a rip cut by its budget, or killed) with its own
    /// settings: the rip goes on from its `rip.json`, then test cases are generated and
    /// replayed again. Flags given with it win (e.g. a larger --rip-minutes).
    #[arg(long, value_name = "RUN_DIR")]
    resume: Option<PathBuf>,
}

/// The app under test, on the web or on the desktop.
enum App {
    Web(Box<WebApp>),
    Swing(Box<SwingApp>),
}

impl App {
    fn gui(&mut self) -> &mut dyn GreyboxApp {
        match self {
            App::Web(a) => a.as_mut(),
            App::Swing(a) => a.as_mut(),
        }
    }

    fn read_write(&self, event: &gui_greybox::Event) -> ReadWrite {
        match self {
            App::Web(a) => a.read_write(event),
            App::Swing(a) => a.read_write(event),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Top(Option<usize>);

fn parse_top(s: &str) -> Result<Top, String> {
    match s {
        "inf" | "∞" => Ok(Top(None)),
        n => match n.parse::<usize>() {
            Ok(v) if v > 0 => Ok(Top(Some(v))),
            _ => Err(format!("`{s}` is neither a positive number nor `inf`")),
        },
    }
}

const EXAMPLES: &str = "Examples:
  greybox                                      the bundled demo, grey-box, len 2, top inf (D)
  greybox --mode blackbox --len 2              every pair of events the GUI allows (B)
  greybox --len 3 --top 50 --efg runs/d/efg.json   reuse a rip (E)
  greybox --app-dir dist --helpers '$on,$delegate' --dry-run
  greybox --url http://localhost:8080 --minutes 5 --rip-minutes 3   bounded run
  greybox --resume runs/greybox-1796000000     continue a rip cut by its budget or killed";

fn main() -> Result<()> {
    let started = Instant::now();
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    let verbose = cli.common.verbose > 0;
    let mode = match cli.mode.as_str() {
        "blackbox" => Mode::Blackbox {
            len: cli.len as usize,
        },
        _ => Mode::Greybox {
            len: cli.len as usize,
            top: cli.top.0,
        },
    };
    let dir = match (&cli.resume, &cli.out) {
        (Some(d), _) | (None, Some(d)) => d.clone(),
        (None, None) => cli::default_run_dir("greybox"),
    };
    let total = cli.minutes.map(minutes);
    let deadline = total.map(|t| started + t);
    // Bad input fails before anything starts: an earlier rip that does not read, a run
    // folder that is already there, or one to resume that is not a greybox run.
    let reused = cli.efg.as_deref().map(read_efg).transpose()?;
    let mut reopened = match &cli.resume {
        Some(d) => Some(cli::reopen_run(d, "greybox")?),
        None => {
            cli::refuse_existing_run(&dir)?;
            None
        }
    };
    let prior_rip = match (&reopened, &reused) {
        (Some(_), None) => read_rip_state(&dir)?,
        _ => None,
    };
    announce(&cli, mode, &dir, prior_rip.as_ref(), total);

    let mut _server = None;
    let mut recorder = None;
    let (mut app, url) = match &cli.java_main {
        Some(main) => {
            let mut classpath = cli.java_classpath.clone();
            if let Some(src) = &cli.java_sources {
                let out = dir.join("classes");
                let classes = gui_greybox::java::compile_java(src, &out)
                    .with_context(|| format!("--java-sources {}", src.display()))?;
                classpath.push(classes);
            }
            if classpath.is_empty() {
                bail!("--java-main {main}: give --java-classpath or --java-sources");
            }
            let app = SwingApp::launch(&classpath, main, cli.screen)
                .with_context(|| format!("starting the Java app {main}"))?;
            for e in app.class_errors() {
                eprintln!("greybox: skipped a class file: {e}");
            }
            (App::Swing(Box::new(app)), format!("java {main}"))
        }
        None => {
            let (device, url, server) = cli.target.start_chromium()?;
            _server = server;
            // The run folder exists before the scripts are read and analysed (seconds to
            // minutes on a large app), so that even a run stopped then can be resumed.
            let device_name = gui_driver::Device::describe(&device);
            recorder = Some(open_run(
                reopened.take(),
                &dir,
                &meta(&cli, mode, &url, &device_name),
            )?);
            let mut js = JsConfig::default();
            js.helper_names.extend(cli.helpers.iter().cloned());
            let t = Instant::now();
            let app = WebApp::new(device, &js).context("reading the app's scripts")?;
            for e in app.script_errors() {
                eprintln!("greybox: skipped part of the analysis: {e}");
            }
            eprintln!(
                "greybox: read {} scripts ({} KiB) of {url} in {:.1} s",
                app.scripts().len(),
                app.scripts().iter().map(|s| s.source.len()).sum::<usize>() / 1024,
                t.elapsed().as_secs_f64()
            );
            (App::Web(Box::new(app)), url)
        }
    };
    let mut recorder = match recorder {
        Some(r) => r,
        None => {
            let device_name = app.gui().describe();
            open_run(reopened, &dir, &meta(&cli, mode, &url, &device_name))?
        }
    };
    let steps_before = recorder.take_prior().map_or(0, |p| p.last_step());
    let mut edg_of = EdgBuilder::new(cli.plain_edg);

    // 1. The event-flow graph, saved as it grows.
    let (efg, ripped) = match reused {
        Some(efg) => (efg, None),
        None => {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let budget = match (cli.rip_minutes.map(minutes), left) {
                (Some(r), Some(l)) => Some(r.min(l)),
                (Some(r), None) => Some(r),
                // Building the EDG and generating take time too (a minute for a dense EDG
                // of 700 events in a debug build).
                (None, Some(l)) if cli.dry_run => Some(l.mul_f64(0.85)),
                (None, Some(l)) => Some(l / 2),
                (None, None) => None,
            };
            let config = RipConfig {
                max_events: cli.max_events,
                max_depth: cli.max_depth,
                input: cli.input.clone(),
                budget,
                group_equivalent: !cli.no_grouping,
                cheap_return: !cli.restart_every_event,
                ..RipConfig::default()
            };
            let ripped = rip_saving(&mut app, &config, prior_rip, &dir, &mut edg_of, verbose)?;
            (ripped.efg.clone(), Some(ripped))
        }
    };
    write_json(&dir.join("efg.json"), &efg)?;

    // 2. The event-dependency graph (Algorithm 1).
    let edg_started = Instant::now();
    let (edg, rw, overwritten) = edg_of.build(&efg, &app);
    let edg_ms = edg_started.elapsed().as_secs_f64() * 1e3;
    write_edg(&dir, &efg, &edg, &rw)?;

    // 3. Test cases (Algorithms 2 and 3, or the black-box paths).
    let p = plan(&efg, &edg, mode);
    let mut cases = p.generated.sequences.clone();
    if let Some(limit) = cli.limit {
        cases.truncate(limit);
    }
    write_json(
        &dir.join("sequences.json"),
        &cases
            .iter()
            .map(|s| json!({ "events": efg.ids(&s.events), "focus": s.focus, "part": s.part }))
            .collect::<Vec<_>>(),
    )?;
    eprintln!(
        "greybox: {mode}: {} test cases from {} {} in {:.2} ms ({:.4} ms each); EDG {} edges in {edg_ms:.2} ms ({overwritten} dropped as overwritten on the way, {} events with observed effects)",
        p.generated.sequences.len(),
        p.abstract_sequences,
        if matches!(mode, Mode::Greybox { .. }) {
            "abstract sequences"
        } else {
            "EFG paths"
        },
        p.generation_ms,
        p.generation_ms / p.generated.sequences.len().max(1) as f64,
        edg.edge_count(),
        efg.effects.len()
    );
    if cli.dry_run {
        for s in &cases {
            gui_testing::say!("{}", efg.ids(&s.events).join(" , "));
        }
        if let Some(r) = &ripped {
            say_cut(r, &dir);
        }
        return Ok(());
    }

    // 4. Replay with the crash oracle, within what is left of the run's budget.
    let budget = deadline.map(|d| d.saturating_duration_since(Instant::now()));
    let config = ReplayConfig {
        input: cli.input.clone(),
        budget,
        steps_before,
    };
    let mut progress =
        PhaseProgress::start("greybox", "replaying", "test cases", verbose, deadline);
    let n = cases.len() as u64;
    let out = replay_watched(
        app.gui(),
        &efg,
        &cases,
        Some(&mut recorder),
        &config,
        &mut |case, out| {
            tracing::info!(
                "test case {}: {} events fired{}{}",
                case.sequence,
                case.fired,
                case.broken_at
                    .map_or(String::new(), |p| format!(", broke at event {p}")),
                if case.signals.is_empty() {
                    String::new()
                } else {
                    format!(", {}", case.signals.join(", "))
                }
            );
            progress.update(
                out.cases.len() as u64,
                n,
                &format!("{} broken, {} bugs", out.broken, out.signals.len()),
            );
        },
    )
    .context("replaying the test cases")?;
    progress.finish();
    let cut_by_time = out.not_replayed > 0
        || ripped
            .as_ref()
            .is_some_and(|r| r.cut == Some(RipCut::Budget));
    let summary = summary(&out, &app.gui().describe(), mode, cut_by_time);
    recorder.finish(&summary)?;
    let row = json!({
        "mode": mode,
        "configuration": mode.configuration().map(String::from),
        "events": efg.len(),
        "efg_edges": efg.edge_count(),
        "edg_edges": edg.edge_count(),
        "edg_dropped_overwritten": overwritten,
        "edg_ms": edg_ms,
        "events_with_effects": efg.effects.len(),
        "sequences": p.generated.sequences.len(),
        "replayed": out.cases.len(),
        "not_replayed": out.not_replayed,
        "broken": out.broken,
        "lost": out.cases.iter().filter(|c| c.lost.is_some()).count(),
        "unreachable_events": p.generated.unreachable.len(),
        "rip": ripped.as_ref().map(rip_report),
        "rip_s": ripped.as_ref().map_or(0.0, |r| r.duration_ms as f64 / 1e3),
        "generation_ms": p.generation_ms,
        "generation_ms_per_sequence": p.generation_ms / p.generated.sequences.len().max(1) as f64,
        "execution_s": out.duration_ms as f64 / 1e3,
        "execution_s_per_case": out.duration_ms as f64 / 1e3 / out.cases.len().max(1) as f64,
        "coverage": out.coverage,
        "covered_functions": app.gui().device().covered_functions()?,
        "bugs": out.signals.iter().map(|(k, (case, _))| json!({ "key": k, "first_case": case,
            "sequence": efg.ids(&cases[*case].events) })).collect::<Vec<_>>(),
    });
    write_json(&dir.join("greybox.json"), &row)?;
    let report = write_report(&dir)?;
    let cov = cli::coverage_text(out.coverage);
    gui_testing::say!(
        "greybox {mode}: {} test cases ({} broken), {} events fired in {:.1} s, coverage {cov}, {} unique signals",
        out.cases.len(),
        out.broken,
        out.steps,
        out.duration_ms as f64 / 1e3,
        out.signals.len()
    );
    for (key, (case, _)) in &out.signals {
        gui_testing::say!("  {key}  <- {}", efg.ids(&cases[*case].events).join(" , "));
    }
    if out.not_replayed > 0 {
        gui_testing::say!(
            "  cut: the time budget ran out with {} of {} test cases not replayed",
            out.not_replayed,
            cases.len()
        );
    }
    if let Some(r) = &ripped {
        say_cut(r, &dir);
    }
    gui_testing::say!("report: {}", report.display());
    Ok(())
}

fn minutes(m: f64) -> Duration {
    Duration::from_secs_f64(m * 60.0)
}

/// What `run.json` records about the run: its settings and the command line `--resume`
/// starts it again with.
fn meta(cli: &Cli, mode: Mode, url: &str, device: &str) -> Value {
    json!({
        "strategy": "greybox",
        "url": url,
        "device": device,
        "greybox": { "mode": mode, "input": cli.input, "max_events": cli.max_events,
                     "max_depth": cli.max_depth, "limit": cli.limit,
                     "minutes": cli.minutes, "rip_minutes": cli.rip_minutes,
                     "restart_every_event": cli.restart_every_event,
                     "no_grouping": cli.no_grouping },
        "throttle": "settle",
        "argv": cli::recorded_command_line(),
    })
}

/// The run folder: the one `--resume` reopened, or a new one.
fn open_run(
    reopened: Option<gui_explore::ReopenedRun>,
    dir: &Path,
    meta: &Value,
) -> Result<gui_explore::RunRecorder> {
    match reopened {
        Some(r) => r
            .resume()
            .with_context(|| format!("--resume {}", dir.display())),
        None => gui_explore::RunRecorder::create(dir, meta)
            .with_context(|| format!("creating run folder {}", dir.display())),
    }
}

/// The first line: what the run is about to do, and how long it may take.
fn announce(cli: &Cli, mode: Mode, dir: &Path, prior: Option<&RipState>, total: Option<Duration>) {
    let target = match (&cli.java_main, &cli.target.url, &cli.target.app_dir) {
        (Some(main), _, _) => format!("the Java app {main}"),
        (None, Some(url), _) => url.clone(),
        (None, None, Some(d)) => d.join(&cli.target.entry).display().to_string(),
        (None, None, None) => "the bundled demo app".into(),
    };
    let rip = match (&cli.efg, prior) {
        (Some(f), _) => format!("reuse the event-flow graph of {}", f.display()),
        (None, Some(s)) => format!(
            "continue the rip ({} of {} events found ripped so far) for {}",
            s.ripped(),
            s.known(),
            rip_budget_text(cli)
        ),
        (None, None) => format!(
            "rip its GUI (at most {} events, {} deep) for {}",
            cli.max_events,
            cli.max_depth,
            rip_budget_text(cli)
        ),
    };
    let then = if cli.dry_run {
        format!("generate {mode} test cases and print them")
    } else {
        format!("generate {mode} test cases and replay them")
    };
    eprintln!(
        "greybox: {target}: read its code, {rip}, {then}; whole run: {}; run folder {}",
        budget_text(total),
        dir.display()
    );
}

fn rip_budget_text(cli: &Cli) -> String {
    match (cli.rip_minutes, cli.minutes) {
        (Some(r), _) => budget_text(Some(minutes(r))),
        (None, Some(_)) if cli.dry_run => "85% of what --minutes leaves".into(),
        (None, Some(_)) => "half of what --minutes leaves".into(),
        (None, None) => "as long as it takes (no --minutes or --rip-minutes)".into(),
    }
}

/// Rips the app event by event, showing the progress and saving the rip (`rip.json`,
/// `efg.json`, `edg.json`) every few seconds and at the end, so that a rip that is
/// killed keeps what it learnt and `--resume` continues it.
fn rip_saving(
    app: &mut App,
    config: &RipConfig,
    prior: Option<RipState>,
    dir: &Path,
    edg_of: &mut EdgBuilder,
    verbose: bool,
) -> Result<Ripped> {
    const SAVE_EVERY: Duration = Duration::from_secs(3);
    let mut ripper = match prior {
        Some(state) => Ripper::resume(config, state),
        None => Ripper::new(config),
    };
    let deadline = ripper.time_left().map(|l| Instant::now() + l);
    let mut progress = PhaseProgress::start("greybox", "ripping", "events", verbose, deadline);
    let mut saved = Instant::now();
    let mut save_every = SAVE_EVERY;
    loop {
        let step = match ripper.step(app.gui()) {
            Ok(s) => s,
            Err(e) => {
                progress.finish();
                let edg = edg_of.cheap().then_some((&mut *edg_of, &*app));
                save_rip(dir, ripper.state(), config, edg)?;
                return Err(anyhow::Error::new(e).context(format!(
                    "ripping the GUI (what was ripped is saved; `greybox --resume {}` continues)",
                    dir.display()
                )));
            }
        };
        let Some(step) = step else { break };
        let what = match &step.outcome {
            RipOutcome::Fired { successors, new } => {
                format!("{successors} events enabled after it, {new} new")
            }
            RipOutcome::BrokenPath => "the path to its state no longer plays".into(),
            RipOutcome::Failed(e) => format!("firing failed: {e}"),
        };
        tracing::info!(
            "ripped {}: {what} ({} events fired, {} ms)",
            step.event,
            step.fired,
            step.duration_ms
        );
        let s = ripper.state();
        progress.update(
            s.ripped() as u64,
            s.known() as u64,
            &format!(
                "{} states, {} broken paths",
                s.seen_states.len(),
                s.broken_paths
            ),
        );
        // Saving a large rip takes time itself: at most a tenth of it. The EDG is saved
        // with it while that is quick; a dense one (hundreds of events that all share
        // fields) is written once, after the rip.
        if saved.elapsed() >= save_every {
            let t = Instant::now();
            let edg = edg_of.cheap().then_some((&mut *edg_of, &*app));
            save_rip(dir, ripper.state(), config, edg)?;
            save_every = SAVE_EVERY.max(t.elapsed() * 10);
            saved = Instant::now();
        }
    }
    progress.finish();
    // The EDG of the final EFG is built and written next, by the caller.
    save_rip(dir, ripper.state(), config, None)?;
    let ripped = ripper.finish();
    eprintln!(
        "greybox: ripped {} events, {} EFG edges, {} states in {:.1} s ({} events fired, {} broken paths)",
        ripped.efg.len(),
        ripped.efg.edge_count(),
        ripped.states,
        ripped.duration_ms as f64 / 1e3,
        ripped.fired,
        ripped.broken_paths
    );
    eprintln!(
        "greybox: rip time: {}",
        ripped.timing.summary(ripped.duration_ms)
    );
    if !ripped.equivalent.is_empty() {
        let representatives: std::collections::BTreeSet<&str> =
            ripped.equivalent.iter().map(|(_, r)| r.as_str()).collect();
        eprintln!(
            "greybox: {} events not fired are equivalent to {} that were (rip.json `equivalent`); they take those events' successors",
            ripped.equivalent.len(),
            representatives.len()
        );
    }
    for f in &ripped.failed {
        eprintln!("greybox: firing failed while ripping: {f}");
    }
    let mut keys: Vec<&str> = ripped.signals.iter().map(|s| s.key.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    for k in keys {
        eprintln!("greybox: seen while ripping: {k}");
    }
    Ok(ripped)
}

/// Writes the rip so far: `rip.json` (what `--resume` continues from, and what was cut),
/// the EFG and, when `edg` is given, the EDG it gives.
fn save_rip(
    dir: &Path,
    state: &RipState,
    config: &RipConfig,
    edg: Option<(&mut EdgBuilder, &App)>,
) -> Result<()> {
    let unripped = state.unripped();
    write_json(
        &dir.join("rip.json"),
        &json!({
            "finished": !state.has_work(),
            "cut": state.cut,
            "events_known": state.known(),
            "events_ripped": state.ripped(),
            "unripped": unripped,
            "states": state.seen_states.len(),
            "states_left": state.stack.len() + usize::from(state.working.is_some()),
            "equivalent": equivalent_report(&state.equivalents()),
            "elapsed_s": state.elapsed_ms as f64 / 1e3,
            "time": time_report(&state.timing, state.elapsed_ms),
            "config": config,
            "state": state,
        }),
    )?;
    let efg = state.efg_with_equivalents();
    write_json(&dir.join("efg.json"), &efg)?;
    if let Some((edg_of, app)) = edg {
        let t = Instant::now();
        let (edg, rw, _) = edg_of.build(&efg, app);
        write_edg(dir, &efg, &edg, &rw)?;
        edg_of.last = t.elapsed();
    }
    Ok(())
}

/// The rip of a run folder being resumed, if it has one.
fn read_rip_state(dir: &Path) -> Result<Option<RipState>> {
    let path = dir.join("rip.json");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut v: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("{}: not a rip", path.display()))?;
    let state: RipState = serde_json::from_value(v["state"].take())
        .with_context(|| format!("{}: not a rip", path.display()))?;
    if let Err(e) = state.efg.validate() {
        bail!("{}: {e}", path.display());
    }
    Ok(Some(state))
}

/// What `greybox.json` says about the rip: whether and why it was cut, and what it left.
fn rip_report(r: &Ripped) -> Value {
    json!({
        "cut": r.cut,
        "events_known": r.efg.len(),
        "events_ripped": r.efg.len() - r.unripped.len(),
        "unripped": r.unripped,
        "states": r.states,
        "fired": r.fired,
        "broken_paths": r.broken_paths,
        "equivalent": equivalent_report(&r.equivalent),
        "duration_s": r.duration_ms as f64 / 1e3,
        "time": time_report(&r.timing, r.duration_ms),
        "events_per_minute": (r.efg.len() - r.unripped.len()) as f64 * 60_000.0 / r.duration_ms.max(1) as f64,
    })
}

/// Events treated as equivalent to a ripped one, grouped by that one.
fn equivalent_report(pairs: &[(String, String)]) -> Value {
    let mut by: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for (event, representative) in pairs {
        by.entry(representative).or_default().push(event);
    }
    json!({ "events": pairs.len(), "by_representative": by })
}

/// Where the rip's time went, in seconds, with the rest (saving, bookkeeping) as `other_s`.
fn time_report(t: &gui_greybox::RipTiming, total_ms: u64) -> Value {
    let counted: u64 = t.parts().iter().map(|p| p.1).sum();
    let s = |ms: u64| ms as f64 / 1e3;
    json!({
        "restarts_s": s(t.restart_ms), "restarts": t.restarts,
        "path_replay_s": s(t.replay_ms), "firing_s": s(t.fire_ms), "waiting_s": s(t.wait_ms),
        "listing_s": s(t.listing_ms), "analysis_s": s(t.analysis_ms), "ways_back_s": s(t.return_ms),
        "other_s": s(total_ms.saturating_sub(counted)),
        "fired_in_place": t.in_place, "ways_back": t.returned, "ways_back_failed": t.return_failed,
    })
}

/// Says what the rip left out and why, and how to go on.
fn say_cut(r: &Ripped, dir: &Path) {
    let known = r.efg.len();
    let ripped = known - r.unripped.len();
    match r.cut {
        Some(cut) => gui_testing::say!(
            "  cut: the rip stopped at its {} after {}: {ripped} of {known} events found were ripped{}; \
             the test cases come from what was ripped; `greybox --resume {}` continues the rip",
            cut.name(),
            format_duration(Duration::from_millis(r.duration_ms)),
            if r.equivalent.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} of the others are equivalent to ripped ones)",
                    r.equivalent.len()
                )
            },
            dir.display()
        ),
        None if !r.unripped.is_empty() => gui_testing::say!(
            "  {} of {known} events found are offered only deeper than --max-depth and were not ripped",
            r.unripped.len()
        ),
        None => {}
    }
}

/// The EDG of an EFG, with each event's static reads and writes computed once.
struct EdgBuilder {
    plain: bool,
    handlers: HashMap<String, ReadWrite>,
    /// How long building and writing the EDG took last time.
    last: Duration,
}

impl EdgBuilder {
    fn new(plain: bool) -> EdgBuilder {
        EdgBuilder {
            plain,
            handlers: HashMap::new(),
            last: Duration::ZERO,
        }
    }

    /// Whether building and writing the EDG was quick enough last time to be done at
    /// every save of the rip.
    fn cheap(&self) -> bool {
        self.last < Duration::from_secs(1)
    }

    /// Algorithm 1 (with both refinements unless `plain`): the EDG, each event's reads
    /// and writes, and how many edges were dropped as overwritten on the way.
    fn build(&mut self, efg: &Efg, app: &App) -> (Edg, Vec<ReadWrite>, usize) {
        let mut handlers = |e: &gui_greybox::Event| {
            self.handlers
                .entry(e.id.clone())
                .or_insert_with(|| app.read_write(e))
                .clone()
        };
        let rw: Vec<ReadWrite> = if self.plain {
            efg.events.iter().map(&mut handlers).collect()
        } else {
            efg.read_writes(handlers)
        };
        let mut edg = Edg::build(&rw);
        let overwritten = if self.plain {
            0
        } else {
            edg.drop_overwritten(efg, &rw)
        };
        (edg, rw, overwritten)
    }
}

/// Shared fields listed edge by edge in `edg.json` at most; a denser EDG lists weights
/// only (each edge's fields are its source's writes that its target reads, less those
/// overwritten on the way, from `handlers`).
const EDG_FIELDS_LISTED: usize = 200_000;

/// Writes `edg.json`: edges with their weights (and shared fields, unless there are too
/// many), and each event's reads and writes.
fn write_edg(dir: &Path, efg: &Efg, edg: &Edg, rw: &[ReadWrite]) -> Result<()> {
    let listed: usize = edg.fields.values().map(Vec::len).sum();
    let with_fields = listed <= EDG_FIELDS_LISTED;
    let edges: Vec<Value> = edg
        .fields
        .iter()
        .map(|((a, b), f)| {
            let mut edge = json!({ "from": efg.events[*a].id, "to": efg.events[*b].id,
                                   "weight": f.len() });
            if with_fields {
                edge["fields"] = json!(f);
            }
            edge
        })
        .collect();
    let value = json!({
        "edges": edges,
        "fields_listed": with_fields,
        "handlers": efg.events.iter().zip(rw).map(|(e, rw)| json!({
            "event": e.id, "reads": rw.reads, "writes": rw.writes })).collect::<Vec<_>>(),
    });
    let path = dir.join("edg.json");
    // Hundreds of thousands of edges are read by programs, not people: no indentation.
    let bytes = if with_fields {
        serde_json::to_vec_pretty(&value)
    } else {
        serde_json::to_vec(&value)
    }
    .expect("json");
    Ok(gui_explore::write_atomic(&path, &bytes)?)
}

fn summary(out: &ReplayOutcome, device: &str, mode: Mode, cut_by_time: bool) -> Summary {
    let mut counts: HashMap<String, u64> = HashMap::new();
    for c in &out.cases {
        for k in &c.signals {
            *counts.entry(k.clone()).or_default() += 1;
        }
    }
    let mut per_case: Vec<f64> = out
        .cases
        .iter()
        .map(|c| c.duration_ms as f64 / c.fired.max(1) as f64)
        .collect();
    per_case.sort_by(f64::total_cmp);
    Summary {
        strategy: format!("greybox ({mode})"),
        device: device.to_owned(),
        throttle: "settle".into(),
        steps: out.steps,
        duration_ms: out.duration_ms,
        stopped_because: if cut_by_time {
            StopReason::Time
        } else {
            StopReason::Steps
        },
        coverage: out.coverage,
        unique_signals: out.signals.len(),
        signal_counts: counts,
        device_restarts: 0,
        failed_actions: 0,
        median_round_trip_ms: per_case.get(per_case.len() / 2).copied().unwrap_or(0.0),
        workers: 1,
        steps_by_worker: Vec::new(),
        resumed_at: Vec::new(),
        stop_note: None,
    }
}

fn read_efg(path: &Path) -> Result<Efg> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let efg: Efg = serde_json::from_str(&text)
        .with_context(|| format!("{}: not an event-flow graph", path.display()))?;
    if let Err(e) = efg.validate() {
        bail!("{}: {e}", path.display());
    }
    Ok(efg)
}

/// Writes a JSON file of the run folder atomically: a report never reads half of one.
fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).expect("json");
    Ok(gui_explore::write_atomic(path, &bytes)?)
}
