use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use gui_core::{ActionParam, SignalKind, SwipeDirection, Target};
use gui_explore::{SignalRecord, StepRecord};

use crate::escape::{escape, shell_quote};
use crate::plot::coverage_svg;
use crate::{Error, Result, RunFolder};

/// What goes into the HTML report.
#[derive(Debug, Clone)]
pub struct HtmlOptions {
    /// Heading and `<title>` of the page.
    pub title: String,
    /// Steps that get a thumbnail in the step table (the start screen counts as step 0).
    /// Every step still gets a row.
    pub thumbnail_steps: u64,
    /// Thumbnails wider than this are scaled down to it, keeping the aspect ratio.
    pub thumbnail_width: u32,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        Self {
            title: "gui-testing report".to_owned(),
            thumbnail_steps: 200,
            thumbnail_width: 320,
        }
    }
}

/// The screenshots of a run shown small, each PNG decoded and scaled once even when both
/// a bug and the step table show it.
#[derive(Debug, Default)]
struct Thumbnails {
    width: u32,
    /// A data URI, or why the screenshot cannot be shown.
    cache: HashMap<std::path::PathBuf, std::result::Result<String, String>>,
}

impl Thumbnails {
    /// An `<img>` of the screenshot, or a note naming the file when it cannot be shown: a
    /// damaged screenshot should not hide the rest of the report.
    fn img(&mut self, run: &RunFolder, rel: &str, alt: &str) -> String {
        let path = run.dir.join(rel);
        let width = self.width;
        let uri = self.cache.entry(path.clone()).or_insert_with(|| {
            thumbnail_png(&path, width)
                .map(|png| {
                    format!(
                        "data:image/png;base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(png)
                    )
                })
                .map_err(|e| e.to_string())
        });
        match uri {
            Ok(uri) => format!(
                r#"<img src="{uri}" alt="{}" decoding="async">"#,
                escape(alt)
            ),
            Err(problem) => format!(r#"<span class="missing">{}</span>"#, escape(problem)),
        }
    }
}

fn thumbnail_png(path: &Path, width: u32) -> Result<Vec<u8>> {
    let bad = |message: String| Error::io(path, std::io::Error::other(message));
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .map_err(|e| bad(e.to_string()))?;
    if img.width() > width {
        let height = (u64::from(img.height()) * u64::from(width) / u64::from(img.width())).max(1);
        // `thumbnail_exact` averages the source pixels under each target pixel: right for
        // shrinking, and 10x faster than `resize` with a Triangle filter here (150 steps
        // at 1280x800: 2 s instead of 27 s in a debug build, where `imageops::resize` is
        // instantiated in this crate and so left unoptimised).
        img = img.thumbnail_exact(width, height as u32);
    }
    let mut png = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| bad(e.to_string()))?;
    Ok(png)
}

const STYLE: &str = r#"
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td { background: #fff0f0; } tr.failed td { color: #a60; }
.ok { color: #070; } .fail { color: #b00; font-weight: bold; }
.bug { border: 1px solid #e5b5b5; border-radius: 4px; padding: 0 1em 1em; margin: 1em 0; }
.bug h4 .kind { background: #b00; color: #fff; border-radius: 3px; padding: 0 4px; margin-right: 6px; font-size: 0.85em; }
pre, code { font: 12px/1.3 ui-monospace, monospace; }
pre.message { white-space: pre-wrap; background: #faf6f6; padding: 6px; }
ol.stack { margin: 0; }
.shots { display: flex; gap: 1em; flex-wrap: wrap; }
figure { margin: 0; } figcaption { font-size: 0.85em; color: #555; }
img { border: 1px solid #ccc; display: block; }
td img { max-width: 160px; height: auto; }
.missing { color: #a60; font-style: italic; }
details > summary { cursor: pointer; font-weight: bold; margin: 0.5em 0; }
svg text { font: 11px sans-serif; fill: #333; }
"#;

/// Renders one self-contained HTML page for `runs`: inline CSS and SVG, screenshots as
/// embedded PNG thumbnails, no script and no external resource (the page's content
/// security policy forbids both, a second guard behind [`escape`]).
pub fn render_html(runs: &[RunFolder], options: &HtmlOptions) -> Result<String> {
    if runs.is_empty() {
        return Err(Error::NoRuns);
    }
    let mut thumbs = Thumbnails {
        width: options.thumbnail_width.max(1),
        ..Thumbnails::default()
    };
    let mut h = String::new();
    let title = escape(&options.title);
    // `write!` into a String cannot fail.
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>{title}</h1>
"#
    );
    summary_section(&mut h, runs);
    let plot = coverage_svg(runs);
    if !plot.is_empty() {
        h.push_str("<section id=\"coverage\">\n<h2>Coverage over steps</h2>\n");
        h.push_str(&plot);
        h.push_str("</section>\n");
    }
    h.push_str("<section id=\"bugs\">\n<h2>Bugs</h2>\n");
    for (r, run) in runs.iter().enumerate() {
        bugs_section(&mut h, &mut thumbs, r, run);
    }
    h.push_str("</section>\n<section id=\"steps\">\n<h2>Steps</h2>\n");
    for (r, run) in runs.iter().enumerate() {
        steps_section(&mut h, &mut thumbs, r, run, options);
        // Each run's screenshots are its own; keep memory to one run's thumbnails.
        thumbs.cache.clear();
    }
    h.push_str("</section>\n</body>\n</html>\n");
    Ok(h)
}

fn summary_section(h: &mut String, runs: &[RunFolder]) {
    h.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n<ul>\n");
    for run in runs {
        let bugs = run.signals.len();
        let verdict = if bugs > 0 {
            format!(
                r#"<span class="fail">{bugs} {}</span>"#,
                plural(bugs as u64, "bug", "bugs")
            )
        } else {
            r#"<span class="ok">no bugs</span>"#.to_owned()
        };
        let coverage = run.coverage().map_or(String::new(), |c| {
            format!(
                ", {} of {} functions covered",
                c.functions_covered, c.functions_total
            )
        });
        let _ = writeln!(
            h,
            "<li><b>{}</b>: {} steps in {}{coverage}, {verdict}{}</li>",
            escape(&run.name()),
            run.step_count(),
            duration(run.duration_ms()),
            if run.is_complete() {
                ""
            } else {
                r#", <span class="fail">incomplete run (no summary.json)</span>"#
            }
        );
    }
    h.push_str(
        "</ul>\n<table>\n<tr><th>run folder</th><th>strategy</th><th>seed</th><th>steps</th>\
         <th>duration</th><th>stopped</th><th>functions covered</th><th>unique signals</th>\
         <th>occurrences</th><th>pages found</th><th>failed actions</th><th>device restarts</th></tr>\n",
    );
    for run in runs {
        let seed = run.seed().map_or(String::new(), |s| s.to_string());
        let coverage = run.coverage().map_or("n/a".to_owned(), |c| {
            format!(
                "{} / {} ({:.1}%)",
                c.functions_covered,
                c.functions_total,
                100.0 * c.function_ratio()
            )
        });
        let (stopped, occurrences, failed, restarts) = match &run.summary {
            Some(s) => (
                escape(&json_name(&s.stopped_because)),
                s.signal_counts.values().sum::<u64>().to_string(),
                s.failed_actions.to_string(),
                s.device_restarts.to_string(),
            ),
            None => (
                r#"<span class="fail">killed (no summary.json)</span>"#.to_owned(),
                String::new(),
                String::new(),
                String::new(),
            ),
        };
        let pages = run.pages().map_or(String::new(), |p| p.to_string());
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"n\">{seed}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td>{stopped}</td><td class=\"n\">{coverage}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{occurrences}</td><td class=\"n\">{pages}</td>\
             <td class=\"n\">{failed}</td><td class=\"n\">{restarts}</td></tr>",
            escape(&run.dir.display().to_string()),
            escape(run.strategy()),
            run.step_count(),
            duration(run.duration_ms()),
            run.signals.len(),
        );
    }
    h.push_str("</table>\n</section>\n");
}

fn bugs_section(h: &mut String, thumbs: &mut Thumbnails, r: usize, run: &RunFolder) {
    let _ = writeln!(h, "<h3>{}</h3>", escape(&run.name()));
    if run.signals.is_empty() {
        h.push_str("<p class=\"ok\">No bugs found.</p>\n");
        return;
    }
    for (i, bug) in run.signals.iter().enumerate() {
        let first_line = bug.message.lines().next().unwrap_or("");
        let _ = writeln!(
            h,
            "<article class=\"bug\" id=\"bug-{r}-{i}\">\n<h4 title=\"{}\"><span class=\"kind\">{}</span>{}</h4>",
            escape(&bug.key),
            kind_label(bug.kind),
            escape(first_line)
        );
        let occurrences = run.occurrences(&bug.key).map_or(String::new(), |n| {
            format!(", seen {n} {}", plural(n, "time", "times"))
        });
        let _ = writeln!(
            h,
            "<p>First seen at step {}{occurrences}.</p>\n<pre class=\"message\">{}</pre>",
            bug.first_step,
            escape(&bug.message)
        );
        if bug.stack.is_empty() {
            h.push_str("<p>No stack.</p>\n");
        } else {
            h.push_str("<ol class=\"stack\">\n");
            for frame in &bug.stack {
                let _ = writeln!(h, "<li><code>{}</code></li>", escape(&frame.to_string()));
            }
            h.push_str("</ol>\n");
        }
        h.push_str("<div class=\"shots\">\n");
        let before = bug.first_step.saturating_sub(1);
        if bug.first_step > 0 {
            let img = match run.screenshot_after(before) {
                Some(rel) => {
                    thumbs.img(run, &rel, &format!("screen before step {}", bug.first_step))
                }
                None => "<span class=\"missing\">no screenshot</span>".to_owned(),
            };
            let _ = writeln!(
                h,
                "<figure>{img}<figcaption>before: after step {before}</figcaption></figure>"
            );
        }
        let after = thumbs.img(
            run,
            &bug.screenshot,
            &format!("screen after step {}", bug.first_step),
        );
        let _ = writeln!(
            h,
            "<figure>{after}<figcaption>after step {}</figcaption></figure>\n</div>",
            bug.first_step
        );
        let _ = writeln!(
            h,
            "<p>Replay: <code>{}</code></p>\n</article>",
            escape(&replay_command(run, bug))
        );
    }
}

/// The command that replays the run's recorded actions up to the step that showed `bug`.
pub(crate) fn replay_command(run: &RunFolder, bug: &SignalRecord) -> String {
    format!(
        "replay {} --until-step {}",
        shell_quote(&run.dir.display().to_string()),
        bug.first_step
    )
}

fn steps_section(
    h: &mut String,
    thumbs: &mut Thumbnails,
    r: usize,
    run: &RunFolder,
    options: &HtmlOptions,
) {
    let _ = writeln!(
        h,
        "<details{}>\n<summary>{}: {} {}</summary>",
        if r == 0 { " open" } else { "" },
        escape(&run.name()),
        run.steps.len(),
        plural(run.steps.len() as u64, "step", "steps")
    );
    h.push_str(
        "<table>\n<tr><th>step</th><th>action</th><th>target</th><th>param</th>\
         <th>new signals</th><th>error</th><th>screen after</th></tr>\n",
    );
    let thumb = |thumbs: &mut Thumbnails, step: u64, rel: &str| {
        if step <= options.thumbnail_steps {
            thumbs.img(run, rel, &format!("screen after step {step}"))
        } else {
            String::new()
        }
    };
    let start = thumb(thumbs, 0, "screenshots/step-000000.png");
    let _ = writeln!(
        h,
        "<tr><td class=\"n\">0</td><td colspan=\"5\">start screen</td><td>{start}</td></tr>"
    );
    let bug_index: HashMap<&str, usize> = run
        .signals
        .iter()
        .enumerate()
        .map(|(i, s)| (s.key.as_str(), i))
        .collect();
    for step in &run.steps {
        let class = if !step.new_signals.is_empty() {
            " class=\"bad\""
        } else if step.error.is_some() {
            " class=\"failed\""
        } else {
            ""
        };
        let signals: Vec<String> = step
            .new_signals
            .iter()
            .map(|key| match bug_index.get(key.as_str()) {
                Some(i) => format!(
                    "<a href=\"#bug-{r}-{i}\" title=\"{}\">{}</a>",
                    escape(key),
                    kind_label(run.signals[*i].kind)
                ),
                None => escape(key),
            })
            .collect();
        let img = thumb(thumbs, step.step, &step.screenshot);
        let _ = writeln!(
            h,
            "<tr{class}><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{img}</td></tr>",
            step.step,
            step.action.kind.name(),
            escape(&target_text(step)),
            param_cell(step),
            signals.join("<br>"),
            escape(step.error.as_deref().unwrap_or("")),
        );
    }
    h.push_str("</table>\n</details>\n");
}

fn target_text(step: &StepRecord) -> String {
    match &step.action.target {
        None => String::new(),
        Some(Target::Point(p)) => format!("({}, {})", p.x, p.y),
        Some(Target::Widget(w)) => format!(
            "{} at ({}, {}) {}x{}",
            json_name(&w.kind),
            w.rect.x,
            w.rect.y,
            w.rect.width,
            w.rect.height
        ),
    }
}

/// Typed texts can be long: the cell shows the start, the tooltip all of it.
fn param_cell(step: &StepRecord) -> String {
    const SHOWN: usize = 40;
    match &step.action.param {
        None => String::new(),
        Some(ActionParam::Text(t)) => {
            let short: String = t.chars().take(SHOWN).collect();
            let more = if t.chars().count() > SHOWN { "…" } else { "" };
            format!(
                "<code title=\"{}\">&quot;{}{more}&quot;</code>",
                escape(t),
                escape(&short)
            )
        }
        Some(ActionParam::Direction(SwipeDirection::Up)) => "up".to_owned(),
        Some(ActionParam::Direction(SwipeDirection::Down)) => "down".to_owned(),
        Some(ActionParam::Ratio(x)) => format!("ratio {x:.2}"),
        Some(ActionParam::Offset { dx, dy }) => format!("dx {dx}, dy {dy}"),
    }
}

pub(crate) fn kind_label(kind: SignalKind) -> &'static str {
    match kind {
        SignalKind::UncaughtException => "uncaught exception",
        SignalKind::ConsoleError => "console error",
        SignalKind::Crash => "crash",
        SignalKind::FunctionalBug => "functional bug",
    }
}

/// The snake_case name a value serialises to (enums of gui-core and gui-explore).
pub(crate) fn json_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

pub(crate) fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

pub(crate) fn duration(ms: u64) -> String {
    if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} min {:02} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}
