//! `report`: one HTML page, JUnit XML and a JSON summary from run folders, and an exit code
//! for CI (0 no bug, 1 bugs found, 2 the report could not be made).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use gui_report::{HtmlOptions, RunFolder, exit_code, json_summary, junit_xml, render_html};
use gui_testing::cli::{self, CommonArgs};

/// Report on run folders: what each run did, what it covered and the bugs it found.
#[derive(Debug, Parser)]
#[command(name = "report", version, after_help = EXAMPLES)]
struct Cli {
    #[command(flatten)]
    common: CommonArgs,
    /// Run folders written by `monkey`, `pirltest` or any `RunRecorder`; or one suite
    /// folder written by `cargo xtask suite` (it holds `suite.json`), rendered as one page
    /// of tables and a coverage plot per app.
    #[arg(value_name = "RUN_DIR", required = true)]
    runs: Vec<PathBuf>,
    /// Where to write the HTML page. Default: `RUN_DIR/report.html` for one run,
    /// `report.html` in the current folder for several.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Also write a JSON summary here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Steps that get a screenshot thumbnail in the step table.
    #[arg(long, value_name = "N", default_value_t = HtmlOptions::default().thumbnail_steps)]
    thumbnails: u64,
}

const EXAMPLES: &str = "Examples:
  report runs/pirltest-seed1-1764490000          writes report.html into the run folder
  report runs/a runs/b --html compare.html       one page, one coverage line per run
  report runs/* --junit junit.xml --json summary.json   for CI; exit 1 when a bug was found
  report target/suite/tune                       a suite: DIR/report.html with its tables and plots";

/// Exit code when the report could not be made (bad input, unwritable output).
const EXIT_TOOL_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli: Cli = cli::parse();
    cli.common.init_logging();
    match run(&cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("report: error: {e:#}");
            ExitCode::from(EXIT_TOOL_ERROR)
        }
    }
}

fn run(cli: &Cli) -> Result<i32> {
    if let [dir] = cli.runs.as_slice()
        && dir.join("suite.json").is_file()
    {
        return suite(cli, dir);
    }
    // The library's errors already name the folder or file (and line) at fault.
    let runs = cli
        .runs
        .iter()
        .map(RunFolder::load)
        .collect::<Result<Vec<_>, _>>()?;
    for run in &runs {
        for warning in &run.warnings {
            eprintln!("report: warning: {warning}");
        }
    }
    let html_path = match (&cli.html, cli.runs.as_slice()) {
        (Some(path), _) => path.clone(),
        (None, [one]) => one.join("report.html"),
        (None, _) => PathBuf::from("report.html"),
    };
    let options = HtmlOptions {
        thumbnail_steps: cli.thumbnails,
        ..HtmlOptions::default()
    };
    write(&html_path, render_html(&runs, &options)?.as_bytes())?;
    gui_testing::say!("html: {}", html_path.display());
    if let Some(path) = &cli.junit {
        write(path, junit_xml(&runs).as_bytes())?;
        gui_testing::say!("junit: {}", path.display());
    }
    if let Some(path) = &cli.json {
        write(path, &serde_json::to_vec_pretty(&json_summary(&runs))?)?;
        gui_testing::say!("json: {}", path.display());
    }
    let bugs: usize = runs.iter().map(|r| r.signals.len()).sum();
    gui_testing::say!(
        "{} run(s), {bugs} distinct signal(s){}",
        runs.len(),
        if runs.iter().all(RunFolder::is_complete) {
            ""
        } else {
            ", incomplete run(s) without summary.json"
        }
    );
    Ok(exit_code(&runs))
}

/// Renders the suite in `dir`; its runs' signals are in their own reports, so the exit
/// code is 0.
fn suite(cli: &Cli, dir: &Path) -> Result<i32> {
    if cli.junit.is_some() {
        anyhow::bail!("--junit takes run folders, not a suite: give the suite's run folders");
    }
    let suite = gui_report::Suite::load(dir)?;
    let html_path = cli.html.clone().unwrap_or_else(|| dir.join("report.html"));
    write(&html_path, suite.html().as_bytes())?;
    gui_testing::say!("html: {}", html_path.display());
    if let Some(path) = &cli.json {
        write(path, &serde_json::to_vec_pretty(&suite)?)?;
        gui_testing::say!("json: {}", path.display());
    }
    gui_testing::say!(
        "{} app(s), {} strategies, {} run(s) not finished",
        suite.apps.len(),
        suite.settings.strategies.len(),
        suite.missing_runs
    );
    Ok(0)
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}
