//! The end of a run: its HTML report and its closing lines.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gui_explore::Summary;

/// Writes `report.html` (see gui-report) into a finished run folder and returns its path;
/// files the report had to leave out are named on stderr.
pub fn write_report(run_dir: &std::path::Path) -> Result<PathBuf> {
    let runs = [gui_report::RunFolder::load(run_dir)?];
    for warning in &runs[0].warnings {
        eprintln!("report: warning: {warning}");
    }
    let html = gui_report::render_html(&runs, &gui_report::HtmlOptions::default())?;
    let path = run_dir.join("report.html");
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The last lines of every strategy binary: writes the run folder's report and says where
/// the folder and the report are.
pub fn announce_run(run_dir: &Path) -> Result<()> {
    crate::say!("run folder: {}", run_dir.display());
    crate::say!("report: {}", write_report(run_dir)?.display());
    Ok(())
}

/// Coverage for summary lines: `F/T functions, B% of bytes`, or `n/a`.
pub fn coverage_text(coverage: Option<gui_core::CoverageSnapshot>) -> String {
    coverage.map_or_else(
        || "n/a".to_owned(),
        |c| {
            format!(
                "{}/{} functions, {:.1}% of bytes",
                c.functions_covered,
                c.functions_total,
                100.0 * c.byte_ratio()
            )
        },
    )
}

/// The closing line of a run: `NAME: steps, time, coverage, unique signals, median step`,
/// then `extra` (", 5 pages" and the like).
pub fn summary_line(strategy: &str, summary: &Summary, extra: &str) -> String {
    let cov = coverage_text(summary.coverage);
    format!(
        "{strategy}: {} steps in {:.1} s, coverage {cov}, {} unique signals, median step {:.1} ms{extra}",
        summary.steps,
        summary.duration_ms as f64 / 1e3,
        summary.unique_signals,
        summary.median_round_trip_ms
    )
}
