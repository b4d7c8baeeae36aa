//! `greybox`: event-flow and event-dependency graphs, sequence generation and replay
//! (Arlt et al., ISSTA 2012) on a web app (default: the bundled demo).
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Parser;
use gui_core::Size;
use gui_explore::{StopReason, Summary};
use gui_greybox::desktop::SwingApp;
use gui_greybox::js::JsConfig;
use gui_greybox::web::WebApp;
use gui_greybox::{
    Edg, Efg, GreyboxApp, Mode, ReadWrite, ReplayConfig, ReplayOutcome, RipConfig, plan, replay,
    rip,
};
use gui_testing::cli::{self, CommonArgs, TargetArgs, write_report};
use serde_json::json;

/// Rip an app's GUI into an event-flow graph, analyse its event handlers into an
/// event-dependency graph, generate test cases and replay them with a crash oracle.
#[derive(Debug, Parser)]
#[command(name = "greybox", version, about, after_help = EXAMPLES)]
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
    /// Run folder (default: runs/greybox-<unix time>).
    #[arg(long)]
    out: Option<PathBuf>,
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
  greybox --app-dir dist --helpers '$on,$delegate' --dry-run";

fn main() -> Result<()> {
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    let mode = match cli.mode.as_str() {
        "blackbox" => Mode::Blackbox {
            len: cli.len as usize,
        },
        _ => Mode::Greybox {
            len: cli.len as usize,
            top: cli.top.0,
        },
    };
    let dir = cli.out.clone().unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        PathBuf::from("runs").join(format!("greybox-{t}"))
    });
    // Bad input fails before anything starts: an earlier rip that does not read, or a run
    // folder that is already there.
    let reused = cli.efg.as_deref().map(read_efg).transpose()?;
    if dir.join("run.json").exists() {
        bail!(
            "{} already holds a run; choose another --out",
            dir.display()
        );
    }
    let mut _server = None;
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
            let mut js = JsConfig::default();
            js.helper_names.extend(cli.helpers.iter().cloned());
            let app = WebApp::new(device, &js).context("reading the app's scripts")?;
            for e in app.script_errors() {
                eprintln!("greybox: skipped part of the analysis: {e}");
            }
            (App::Web(Box::new(app)), url)
        }
    };
    let meta = json!({
        "strategy": "greybox",
        "url": url,
        "device": app.gui().describe(),
        "greybox": { "mode": mode, "input": cli.input, "max_events": cli.max_events,
                     "max_depth": cli.max_depth, "limit": cli.limit },
        "throttle": "settle",
    });
    let mut recorder = gui_explore::RunRecorder::create(&dir, &meta)
        .with_context(|| format!("creating run folder {}", dir.display()))?;

    // 1. The event-flow graph.
    let (efg, rip_ms) = match reused {
        Some(efg) => (efg, 0),
        None => {
            let config = RipConfig {
                max_events: cli.max_events,
                max_depth: cli.max_depth,
                input: cli.input.clone(),
                ..RipConfig::default()
            };
            let ripped = rip(app.gui(), &config).context("ripping the GUI")?;
            eprintln!(
                "greybox: ripped {} events, {} EFG edges, {} states in {:.1} s ({} events fired, {} broken paths)",
                ripped.efg.len(),
                ripped.efg.edge_count(),
                ripped.states,
                ripped.duration_ms as f64 / 1e3,
                ripped.fired,
                ripped.broken_paths
            );
            for f in &ripped.failed {
                eprintln!("greybox: firing failed while ripping: {f}");
            }
            let mut keys: Vec<&str> = ripped.signals.iter().map(|s| s.key.as_str()).collect();
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                eprintln!("greybox: seen while ripping: {k}");
            }
            (ripped.efg, ripped.duration_ms)
        }
    };
    write_json(&dir.join("efg.json"), &efg)?;

    // 2. The event-dependency graph (Algorithm 1).
    let rw: Vec<ReadWrite> = if cli.plain_edg {
        efg.events.iter().map(|e| app.read_write(e)).collect()
    } else {
        efg.read_writes(|e| app.read_write(e))
    };
    let edg_started = std::time::Instant::now();
    let mut edg = Edg::build(&rw);
    let overwritten = if cli.plain_edg {
        0
    } else {
        edg.drop_overwritten(&efg, &rw)
    };
    let edg_ms = edg_started.elapsed().as_secs_f64() * 1e3;
    write_json(
        &dir.join("edg.json"),
        &json!({
            "edges": edg.fields.iter().map(|((a, b), f)| json!({
                "from": efg.events[*a].id, "to": efg.events[*b].id,
                "weight": f.len(), "fields": f })).collect::<Vec<_>>(),
            "handlers": efg.events.iter().zip(&rw).map(|(e, rw)| json!({
                "event": e.id, "reads": rw.reads, "writes": rw.writes })).collect::<Vec<_>>(),
        }),
    )?;

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
        return Ok(());
    }

    // 4. Replay with the crash oracle.
    let config = ReplayConfig {
        input: cli.input.clone(),
    };
    let out = replay(app.gui(), &efg, &cases, Some(&mut recorder), &config)
        .context("replaying the test cases")?;
    let summary = summary(&out, &app.gui().describe(), mode);
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
        "replayed": cases.len(),
        "broken": out.broken,
        "lost": out.cases.iter().filter(|c| c.lost.is_some()).count(),
        "unreachable_events": p.generated.unreachable.len(),
        "rip_s": rip_ms as f64 / 1e3,
        "generation_ms": p.generation_ms,
        "generation_ms_per_sequence": p.generation_ms / p.generated.sequences.len().max(1) as f64,
        "execution_s": out.duration_ms as f64 / 1e3,
        "execution_s_per_case": out.duration_ms as f64 / 1e3 / cases.len().max(1) as f64,
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
        cases.len(),
        out.broken,
        out.steps,
        out.duration_ms as f64 / 1e3,
        out.signals.len()
    );
    for (key, (case, _)) in &out.signals {
        gui_testing::say!("  {key}  <- {}", efg.ids(&cases[*case].events).join(" , "));
    }
    gui_testing::say!("report: {}", report.display());
    Ok(())
}

fn summary(out: &ReplayOutcome, device: &str, mode: Mode) -> Summary {
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
        stopped_because: StopReason::Steps,
        coverage: out.coverage,
        unique_signals: out.signals.len(),
        signal_counts: counts,
        device_restarts: 0,
        failed_actions: 0,
        median_round_trip_ms: per_case.get(per_case.len() / 2).copied().unwrap_or(0.0),
        workers: 1,
        steps_by_worker: Vec::new(),
        resumed_at: Vec::new(),
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
