use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use gui_core::{Action, ActionParam, SignalKind, SwipeDirection, Target, WidgetKind};
use gui_explore::{EventRecord, SignalRecord, StepRecord, shell_quote};
use serde_json::Value;

use crate::escape::escape;
use crate::events::count_label;
use crate::graph::PageGraph;
use crate::plot::{coverage_svg, coverage_time_svg};
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
    /// Rows of a run's table of device events, and of its table of restarts; the rest
    /// are counted, and all are in the run's `events.jsonl`. A page that opens a dialog
    /// in a loop would otherwise fill the report.
    pub event_rows: usize,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        Self {
            title: "gui-testing report".to_owned(),
            thumbnail_steps: 200,
            thumbnail_width: 320,
            event_rows: 200,
        }
    }
}

/// The screenshots of a run shown small, each PNG decoded and scaled once even when both
/// a bug and the step table show it.
#[derive(Debug, Default)]
struct Thumbnails {
    width: u32,
    /// A data URI and the screenshot's own size, or why it cannot be shown.
    cache: HashMap<std::path::PathBuf, std::result::Result<Thumb, String>>,
}

/// A scaled screenshot as a data URI, with the size of the original.
#[derive(Debug, Clone)]
struct Thumb {
    uri: String,
    width: u32,
    height: u32,
}

impl Thumbnails {
    /// An `<img>` of the screenshot, or a note naming the file when it cannot be shown: a
    /// damaged screenshot should not hide the rest of the report.
    fn img(&mut self, run: &RunFolder, rel: &str, alt: &str) -> String {
        match self.get(run, rel) {
            Ok(t) => format!(
                r#"<img src="{}" alt="{}" decoding="async">"#,
                t.uri,
                escape(alt)
            ),
            Err(problem) => missing(problem),
        }
    }

    /// The cached thumbnail of a screenshot (made on first use), or why it cannot be shown.
    fn get(&mut self, run: &RunFolder, rel: &str) -> std::result::Result<&Thumb, &str> {
        let path = run.dir.join(rel);
        let width = self.width;
        self.cache
            .entry(path.clone())
            .or_insert_with(|| {
                thumbnail_png(&path, width)
                    .map(|(png, width, height)| Thumb {
                        uri: format!(
                            "data:image/png;base64,{}",
                            base64::engine::general_purpose::STANDARD.encode(png)
                        ),
                        width,
                        height,
                    })
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The screenshot as an SVG, `shown_width` pixels wide, with `overlay` (SVG elements
    /// in the screenshot's own pixels) drawn over it.
    fn annotated(
        &mut self,
        run: &RunFolder,
        rel: &str,
        alt: &str,
        shown_width: u32,
        overlay: impl FnOnce(&Thumb) -> String,
    ) -> String {
        match self.get(run, rel) {
            Ok(t) => {
                let shown_height = (u64::from(t.height) * u64::from(shown_width)
                    / u64::from(t.width.max(1)))
                .max(1);
                format!(
                    r#"<svg class="shot" viewBox="0 0 {w} {h}" width="{shown_width}" height="{shown_height}" role="img"><title>{}</title><image href="{}" width="{w}" height="{h}"/>{}</svg>"#,
                    escape(alt),
                    t.uri,
                    overlay(t),
                    w = t.width,
                    h = t.height,
                )
            }
            Err(problem) => missing(problem),
        }
    }
}

fn missing(problem: &str) -> String {
    format!(r#"<span class="missing">{}</span>"#, escape(problem))
}

/// The PNG scaled down to `width` (if wider), with the original's width and height.
fn thumbnail_png(path: &Path, width: u32) -> Result<(Vec<u8>, u32, u32)> {
    let bad = |message: String| Error::io(path, std::io::Error::other(message));
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut img = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png)
        .map_err(|e| bad(e.to_string()))?;
    let (original_width, original_height) = (img.width(), img.height());
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
    Ok((png, original_width, original_height))
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
svg.shot { border: 1px solid #ccc; display: block; }
svg.shot rect, svg.shot circle { fill: none; }
svg.shot text { font-family: sans-serif; stroke: #fff; stroke-width: 0.3; paint-order: stroke; }
svg.shot .act { stroke: #e00; fill: rgba(255, 0, 0, 0.15); }
.legend span { padding: 0 4px; border: 2px solid; border-radius: 3px; font-size: 0.85em; }
.k0 { color: #1f77b4; stroke: #1f77b4; fill: #1f77b4; } .k1 { color: #7f7f7f; stroke: #7f7f7f; fill: #7f7f7f; }
.k2 { color: #2ca02c; stroke: #2ca02c; fill: #2ca02c; } .k3 { color: #d62728; stroke: #d62728; fill: #d62728; }
.k4 { color: #9467bd; stroke: #9467bd; fill: #9467bd; } .k5 { color: #8c564b; stroke: #8c564b; fill: #8c564b; }
.k6 { color: #e377c2; stroke: #e377c2; fill: #e377c2; } .k7 { color: #bcbd22; stroke: #bcbd22; fill: #bcbd22; }
.k8 { color: #17becf; stroke: #17becf; fill: #17becf; } .k9 { color: #ff7f0e; stroke: #ff7f0e; fill: #ff7f0e; }
.k10 { color: #393b79; stroke: #393b79; fill: #393b79; } .k11 { color: #637939; stroke: #637939; fill: #637939; }
.k12 { color: #8c6d31; stroke: #8c6d31; fill: #8c6d31; } .k13 { color: #843c39; stroke: #843c39; fill: #843c39; }
.legend span { fill: none; }
svg.graph { border: 1px solid #ccc; background: #fcfcfc; cursor: grab; max-width: 100%; touch-action: none; }
svg.graph .edge { stroke: #888; fill: none; }
svg.graph .back { stroke: #c88; stroke-dasharray: 4 3; }
svg.graph .node rect { fill: #fff; stroke: #555; }
svg.graph a:hover rect, svg.graph a:focus rect { stroke: #e00; stroke-width: 3; }
.pages { display: flex; flex-wrap: wrap; gap: 1em; }
.page { border: 1px solid #ddd; border-radius: 4px; padding: 0 0.5em 0.5em; }
.page img { max-width: 240px; height: auto; }
.page:target { border-color: #e00; box-shadow: 0 0 0 2px #fcc; }
tr:target td { background: #fff8d0; }
"#;

/// The page's only script: pan (drag) and zoom (wheel; double click resets) on the page
/// graphs. It touches nothing but their `viewBox`; the content security policy admits it by
/// its hash and no other script.
pub(crate) const SCRIPT: &str = r#"
for (const svg of document.querySelectorAll('svg.graph')) {
  const home = svg.viewBox.baseVal;
  const start = [home.x, home.y, home.width, home.height];
  let box = start.slice(), drag = null, moved = false;
  const show = () => svg.setAttribute('viewBox', box.join(' '));
  const at = (e) => { const r = svg.getBoundingClientRect();
    return [box[0] + (e.clientX - r.left) / r.width * box[2], box[1] + (e.clientY - r.top) / r.height * box[3]]; };
  svg.addEventListener('wheel', (e) => { e.preventDefault();
    const [x, y] = at(e), k = e.deltaY > 0 ? 1.15 : 1 / 1.15;
    box = [x - (x - box[0]) * k, y - (y - box[1]) * k, box[2] * k, box[3] * k]; show(); }, { passive: false });
  svg.addEventListener('pointerdown', (e) => { drag = [e.clientX, e.clientY, box[0], box[1]]; moved = false; });
  svg.addEventListener('pointermove', (e) => { if (!drag) return;
    const r = svg.getBoundingClientRect(), dx = e.clientX - drag[0], dy = e.clientY - drag[1];
    if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
    box[0] = drag[2] - dx / r.width * box[2]; box[1] = drag[3] - dy / r.height * box[3]; show(); });
  svg.addEventListener('pointerup', () => { drag = null; });
  svg.addEventListener('click', (e) => { if (moved) { e.preventDefault(); moved = false; } }, true);
  svg.addEventListener('dblclick', () => { box = start.slice(); show(); });
}
"#;

/// `'sha256-…'` of [`SCRIPT`], the content security policy's only admitted script.
pub(crate) fn script_hash() -> String {
    use sha2::Digest as _;
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SCRIPT.as_bytes()))
    )
}

/// Renders one self-contained HTML page for `runs`: inline CSS and SVG, screenshots as
/// embedded PNG thumbnails, no external resource, and one script of ours that pans and
/// zooms the page graphs. The page's content security policy admits that script by its
/// hash and nothing else, a second guard behind [`escape`].
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
    let hash = script_hash();
    // `write!` into a String cannot fail.
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {hash}">
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
        h.push_str("<section id=\"coverage\">\n<h2>Coverage over steps and over time</h2>\n<div class=\"shots\">\n");
        h.push_str(&plot);
        h.push_str(&coverage_time_svg(runs));
        h.push_str("</div>\n</section>\n");
    }
    let graphs: Vec<PageGraph> = runs.iter().map(PageGraph::of).collect();
    if graphs.iter().any(|g| !g.is_empty()) {
        h.push_str("<section id=\"pages\">\n<h2>Pages and transitions</h2>\n");
        for (r, (run, graph)) in runs.iter().zip(&graphs).enumerate() {
            graph_section(&mut h, &mut thumbs, r, run, graph);
        }
        h.push_str("</section>\n");
        thumbs.cache.clear();
    }
    if runs.iter().any(|r| r.greybox.is_some()) {
        h.push_str("<section id=\"greybox\">\n<h2>Grey-box test cases</h2>\n");
        for run in runs {
            greybox_section(&mut h, run);
        }
        h.push_str("</section>\n");
    }
    if runs.iter().any(|r| r.monkeypp.is_some()) {
        h.push_str("<section id=\"monkeypp\">\n<h2>Monkey++ interface coverage</h2>\n");
        for run in runs {
            monkeypp_section(&mut h, run);
        }
        h.push_str("</section>\n");
    }
    if runs.iter().any(|r| r.visiondroid.is_some()) {
        h.push_str(
            "<section id=\"visiondroid\">\n<h2>VisionDroid: suspected non-crash bugs</h2>\n",
        );
        for run in runs {
            visiondroid_section(&mut h, &mut thumbs, run);
        }
        h.push_str("</section>\n");
    }
    h.push_str("<section id=\"bugs\">\n<h2>Bugs</h2>\n");
    for (r, run) in runs.iter().enumerate() {
        bugs_section(&mut h, &mut thumbs, r, run);
    }
    h.push_str("</section>\n");
    if runs.iter().any(|r| !r.minimised.is_empty()) {
        h.push_str("<section id=\"minimised\">\n<h2>Minimised reproductions</h2>\n");
        for run in runs {
            minimised_section(&mut h, run);
        }
        h.push_str("</section>\n");
    }
    if runs.iter().any(|r| r.device_events().next().is_some()) {
        h.push_str("<section id=\"device-events\">\n<h2>What the device handled</h2>\n");
        h.push_str(
            "<p>What the device did for the app as a person's browser would; none of it is \
             a bug.</p>\n",
        );
        for (r, run) in runs.iter().enumerate() {
            device_events_section(&mut h, r, run, options.event_rows);
        }
        h.push_str("</section>\n");
    }
    if runs.iter().any(|r| r.loop_events().next().is_some()) {
        h.push_str("<section id=\"restarts\">\n<h2>Device restarts</h2>\n");
        for (r, run) in runs.iter().enumerate() {
            restarts_section(&mut h, r, run, options.event_rows);
        }
        h.push_str("</section>\n");
    }
    h.push_str("<section id=\"steps\">\n<h2>Steps</h2>\n");
    for (r, run) in runs.iter().enumerate() {
        steps_section(&mut h, &mut thumbs, r, run, options);
        // Each run's screenshots are its own; keep memory to one run's thumbnails.
        thumbs.cache.clear();
    }
    let _ = write!(
        h,
        "</section>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    );
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
        let mut scale = String::new();
        if let Some(s) = &run.summary {
            if s.workers > 1 {
                let _ = write!(
                    scale,
                    " by {} workers ({} steps each)",
                    s.workers,
                    s.steps_by_worker
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(" / ")
                );
            }
            if !s.resumed_at.is_empty() {
                let at: Vec<String> = s.resumed_at.iter().map(u64::to_string).collect();
                let _ = write!(scale, ", resumed after step {}", at.join(", "));
            }
        }
        let _ = writeln!(
            h,
            "<li><b>{}</b>: {} steps{scale} in {}{coverage}, {verdict}{}</li>",
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
                match &s.stop_note {
                    Some(note) => format!(
                        "{} ({})",
                        escape(&json_name(&s.stopped_because)),
                        escape(note)
                    ),
                    None => escape(&json_name(&s.stopped_because)),
                },
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
    h.push_str("</table>\n");
    let warnings: Vec<&String> = runs.iter().flat_map(|r| &r.warnings).collect();
    if !warnings.is_empty() {
        h.push_str("<p class=\"fail\">Left out of this report:</p>\n<ul>\n");
        for w in warnings {
            let _ = writeln!(h, "<li class=\"fail\">{}</li>", escape(w));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
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

/// Width of a page's thumbnail in the graph, and the space around it.
const NODE_WIDTH: u32 = 140;
const COLUMN_GAP: u32 = 90;
const ROW_GAP: u32 = 40;

/// The page graph of one run as an SVG (nodes are thumbnails linking to the page's entry
/// below), then one entry per page with its screen and the actions taken on it.
fn graph_section(
    h: &mut String,
    thumbs: &mut Thumbnails,
    r: usize,
    run: &RunFolder,
    graph: &PageGraph,
) {
    let _ = writeln!(h, "<h3>{}</h3>", escape(&run.name()));
    if graph.is_empty() {
        h.push_str("<p>This strategy records no pages.</p>\n");
        return;
    }
    // Every node gets the height of the tallest screen, so rows line up.
    let screen_of = |node: &crate::graph::PageNode| {
        run.screenshot_after(node.first_step().saturating_sub(1))
            .unwrap_or_default()
    };
    let aspect = graph
        .nodes
        .iter()
        .filter_map(|n| {
            let t = thumbs.get(run, &screen_of(n)).ok()?;
            Some(f64::from(t.height) / f64::from(t.width.max(1)))
        })
        .fold(0.5_f64, f64::max)
        .min(2.5);
    let node_height = (f64::from(NODE_WIDTH) * aspect).round() as u32 + 16;
    let position = |n: &crate::graph::PageNode| {
        (
            20 + n.column as u32 * (NODE_WIDTH + COLUMN_GAP),
            20 + n.row as u32 * (node_height + ROW_GAP),
        )
    };
    let at: HashMap<u64, (u32, u32)> = graph.nodes.iter().map(|n| (n.page, position(n))).collect();
    let width = at.values().map(|p| p.0).max().unwrap_or(0) + NODE_WIDTH + 20;
    let height = at.values().map(|p| p.1).max().unwrap_or(0) + node_height + 20;
    let _ = writeln!(
        h,
        "<p>{} pages, {} transitions between pages. Drag to pan, scroll to zoom, double click \
         to reset; click a page to see the actions taken on it.</p>\n<svg class=\"graph\" \
         id=\"graph-{r}\" viewBox=\"0 0 {width} {height}\" width=\"{}\" height=\"{}\">\n\
         <defs><marker id=\"arrow-{r}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#888\"/></marker></defs>",
        graph.nodes.len(),
        graph.edges.iter().filter(|e| e.from != e.to).count(),
        width.min(1200),
        (u64::from(height) * u64::from(width.min(1200)) / u64::from(width.max(1))).max(1),
    );
    for e in graph.edges.iter().filter(|e| e.from != e.to) {
        let (fx, fy) = at[&e.from];
        let (tx, ty) = at[&e.to];
        let (x1, y1) = (fx + NODE_WIDTH, fy + node_height / 2);
        let (x2, y2) = (tx, ty + node_height / 2);
        let forward = tx > fx;
        let path = if forward {
            format!(
                "M{x1},{y1} C{},{y1} {},{y2} {x2},{y2}",
                x1 + COLUMN_GAP / 2,
                x2 - COLUMN_GAP / 2
            )
        } else {
            // Back or sideways: leave from the top, arc over, and enter from the top.
            let (sx, ex) = (fx + NODE_WIDTH / 2, tx + NODE_WIDTH / 2);
            let lift = fy.min(ty).saturating_sub(15);
            format!("M{sx},{fy} C{sx},{lift} {ex},{lift} {ex},{ty}")
        };
        let _ = writeln!(
            h,
            "<path class=\"edge{}\" d=\"{path}\" stroke-width=\"{:.1}\" marker-end=\"url(#arrow-{r})\"><title>page {} → page {}: {} {} (steps {})</title></path>",
            if forward { "" } else { " back" },
            1.0 + (e.steps.len() as f64).ln(),
            e.from,
            e.to,
            e.steps.len(),
            plural(e.steps.len() as u64, "time", "times"),
            step_list(&e.steps),
        );
    }
    for n in &graph.nodes {
        let (x, y) = at[&n.page];
        let image = match thumbs.get(run, &screen_of(n)) {
            Ok(t) => format!(
                r#"<image href="{}" x="{x}" y="{}" width="{NODE_WIDTH}" height="{}" preserveAspectRatio="xMidYMin meet"/>"#,
                t.uri,
                y + 16,
                node_height - 16
            ),
            Err(_) => String::new(),
        };
        let _ = writeln!(
            h,
            "<a class=\"node\" href=\"#page-{r}-{p}\" data-page=\"{p}\"><rect x=\"{x}\" y=\"{y}\" width=\"{NODE_WIDTH}\" height=\"{node_height}\"/>\
             <text x=\"{}\" y=\"{}\">page {p} · {} {}</text>{image}<title>page {p}: first seen before step {}</title></a>",
            x + 4,
            y + 12,
            n.steps.len(),
            plural(n.steps.len() as u64, "step", "steps"),
            n.first_step(),
            p = n.page,
        );
    }
    h.push_str("</svg>\n<div class=\"pages\">\n");
    let records: HashMap<u64, &StepRecord> = run.steps.iter().map(|s| (s.step, s)).collect();
    for n in &graph.nodes {
        let img = thumbs.img(run, &screen_of(n), &format!("page {}", n.page));
        let _ = writeln!(
            h,
            "<div class=\"page\" id=\"page-{r}-{p}\">\n<h4>page {p}</h4>{img}\n<table>\n\
             <tr><th>step</th><th>action</th><th>target</th><th>to page</th></tr>",
            p = n.page
        );
        for step in &n.steps {
            let Some(record) = records.get(step) else {
                continue;
            };
            let to = match graph.moves.get(step).and_then(|m| m.1) {
                Some(q) => format!("<a href=\"#page-{r}-{q}\">{q}</a>"),
                None => String::new(),
            };
            let _ = writeln!(
                h,
                "<tr><td class=\"n\"><a href=\"#step-{r}-{step}\">{step}</a></td><td>{}</td><td>{}</td><td class=\"n\">{to}</td></tr>",
                record.action.kind.name(),
                escape(&target_text(&record.action)),
            );
        }
        h.push_str("</table>\n</div>\n");
    }
    h.push_str("</div>\n");
}

/// `1, 4, 9` — at most ten, then how many more.
fn step_list(steps: &[u64]) -> String {
    let mut out: Vec<String> = steps.iter().take(10).map(u64::to_string).collect();
    if steps.len() > 10 {
        out.push(format!("and {} more", steps.len() - 10));
    }
    out.join(", ")
}

/// The figures of a `greybox` run (its `greybox.json`) and the test case behind each bug.
fn greybox_section(h: &mut String, run: &RunFolder) {
    let Some(g) = &run.greybox else { return };
    let num = |k: &str| g[k].as_f64().unwrap_or(0.0);
    let mode = &g["mode"];
    let config = match (mode["mode"].as_str(), g["configuration"].as_str()) {
        (Some(m), Some(c)) => format!("{m}, configuration {c}"),
        (Some(m), None) => m.to_owned(),
        _ => "unknown".to_owned(),
    };
    let _ = writeln!(
        h,
        "<p><code>{}</code>: {}, len {}, top {}.</p>
<table>
         <tr><th>events</th><th>EFG edges</th><th>EDG edges</th><th>test cases</th><th>replayed</th>         <th>broken</th><th>generation (ms)</th><th>per test case (ms)</th><th>execution (s)</th>         <th>per test case (s)</th></tr>
         <tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>         <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.4}</td>         <td class=\"n\">{:.1}</td><td class=\"n\">{:.2}</td></tr>
</table>",
        escape(&run.dir.display().to_string()),
        escape(&config),
        mode["len"].as_u64().unwrap_or(0),
        mode["top"].as_u64().map_or("∞".to_owned(), |t| t.to_string()),
        num("events"),
        num("efg_edges"),
        num("edg_edges"),
        num("sequences"),
        num("replayed"),
        num("broken"),
        num("generation_ms"),
        num("generation_ms_per_sequence"),
        num("execution_s"),
        num("execution_s_per_case"),
    );
    let bugs = g["bugs"].as_array().map_or(&[][..], Vec::as_slice);
    if bugs.is_empty() {
        return;
    }
    h.push_str("<table>\n<tr><th>bug</th><th>first found by the test case</th></tr>\n");
    for b in bugs {
        let seq: Vec<&str> = b["sequence"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(|e| e.as_str())
            .collect();
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td></tr>",
            escape(b["key"].as_str().unwrap_or("")),
            escape(&seq.join(" → "))
        );
    }
    h.push_str("</table>\n");
}

/// The figures of a `monkeypp` run (its `monkeypp.json`): the model, the plan against the
/// breadth-first bound, and the controls covered.
fn monkeypp_section(h: &mut String, run: &RunFolder) {
    let Some(m) = &run.monkeypp else { return };
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let bound = match (
        m["bound"]["exact"].as_u64(),
        m["bound"]["at_least"].as_u64(),
    ) {
        (Some(n), _) => n.to_string(),
        (_, Some(n)) => format!("≥ {n}"),
        _ => "?".to_owned(),
    };
    let model = &m["model"];
    let _ = writeln!(
        h,
        "<p><code>{}</code>: a model of {} screens, {} controls, {} methods and {} statements.</p>
<table>
<tr><th>planned interactions</th><th>interactions</th><th>breadth-first bound</th><th>ratio</th>\
<th>interface coverage</th><th>restarts</th><th>controls missing</th></tr>
<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}</td>\
<td class=\"n\">{:.1}% ({}/{})</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>
</table>",
        escape(&run.dir.display().to_string()),
        num(&model["screens"]),
        num(&model["ui"]),
        num(&model["methods"]),
        num(&model["statements"]),
        num(&m["planned_interactions"]),
        num(&m["interactions"]),
        escape(&bound),
        num(&m["ratio_to_bound"]),
        100.0 * num(&m["interface_coverage"]),
        num(&m["covered_ui"]),
        num(&m["ui_total"]),
        num(&m["recoveries"]),
        m["missing"].as_array().map_or(0, Vec::len),
    );
    for (key, what) in [
        ("unreached", "Not reached by the plan"),
        ("missing", "Not offered when planned"),
    ] {
        let ids: Vec<&str> = m[key]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if !ids.is_empty() {
            let _ = writeln!(h, "<p>{what}: <code>{}</code></p>", escape(&ids.join(", ")));
        }
    }
}

/// A `visiondroid` run (its `visiondroid.json`): functions tested, how the history was
/// cut, and every suspected bug with its screens and the model's reasoning.
fn visiondroid_section(h: &mut String, thumbs: &mut Thumbnails, run: &RunFolder) {
    let Some(v) = &run.visiondroid else { return };
    let list = |key: &str| v[key].as_array().map_or(&[][..], Vec::as_slice);
    let acc = &v["accounting"];
    let segments = list("segments");
    let _ = writeln!(
        h,
        "<p><code>{}</code> with <code>{}</code>: {} functions tested, history cut into {} \
         parts (modularity {:.2}), {} model calls, {} prompt and {} completion tokens, {} steps \
         chosen without the model.</p>",
        escape(&run.dir.display().to_string()),
        escape(v["llm"].as_str().unwrap_or("?")),
        list("functions").len(),
        segments.len(),
        v["modularity"].as_f64().unwrap_or(0.0),
        acc["calls"].as_u64().unwrap_or(0),
        acc["prompt_tokens"].as_u64().unwrap_or(0),
        acc["completion_tokens"].as_u64().unwrap_or(0),
        list("failures").len(),
    );
    let functions: Vec<String> = list("functions")
        .iter()
        .filter_map(|f| Some(format!("{} ×{}", f[0].as_str()?, f[1].as_u64()?)))
        .collect();
    if !functions.is_empty() {
        let _ = writeln!(h, "<p>Functions: {}</p>", escape(&functions.join(", ")));
    }
    let bugs = list("bugs");
    if bugs.is_empty() {
        h.push_str("<p class=\"ok\">No non-crash bug suspected.</p>\n");
        return;
    }
    for bug in bugs {
        let steps: Vec<u64> = bug["steps"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        let scope = if bug["scope"] == "intra_page" {
            "one screen"
        } else {
            "across screens"
        };
        let _ = writeln!(
            h,
            "<article class=\"bug\">\n<h4><span class=\"kind\">{}</span>{}</h4>\n<p>Steps {} ({}){}.</p>",
            escape(bug["category"].as_str().unwrap_or("suspected")),
            escape(bug["description"].as_str().unwrap_or("")),
            escape(
                &steps
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            scope,
            bug["screens"].as_array().map_or(String::new(), |s| {
                let names: Vec<&str> = s.iter().filter_map(Value::as_str).collect();
                format!(" on <code>{}</code>", escape(&names.join(", ")))
            }),
        );
        if let Some(r) = bug["reasoning"].as_str().filter(|r| !r.is_empty()) {
            let _ = writeln!(h, "<pre class=\"message\">{}</pre>", escape(r));
        }
        // A history step is the screen its action was taken on: the one after the step
        // before.
        h.push_str("<div class=\"shots\">\n");
        for s in steps.iter().take(6) {
            let img = match run.screenshot_after(s.saturating_sub(1)) {
                Some(rel) => thumbs.img(run, &rel, &format!("screen of step {s}")),
                None => missing("no screenshot"),
            };
            let _ = writeln!(h, "<figure>{img}<figcaption>step {s}</figcaption></figure>");
        }
        h.push_str("</div>\n</article>\n");
    }
}

/// Each minimised bug: its key, how far it shrank, the kept steps and the command that
/// replays only them.
fn minimised_section(h: &mut String, run: &RunFolder) {
    for m in &run.minimised {
        let _ = writeln!(
            h,
            "<article class=\"bug\">\n<h4><code>{}</code></h4>\n<p>{} of {} steps of <code>{}</code> \
             are needed ({} replays){}.</p>",
            escape(&m.key),
            m.steps.len(),
            m.original_steps,
            escape(&m.run),
            m.tests,
            if m.confirmed {
                ", confirmed by a replay of only these"
            } else {
                r#", <span class="fail">not confirmed by a last replay</span>"#
            }
        );
        h.push_str("<table>\n<tr><th>step</th><th>action</th><th>target</th><th>param</th></tr>\n");
        for (step, action) in m.steps.iter().zip(&m.actions) {
            let _ = writeln!(
                h,
                "<tr><td class=\"n\">{step}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                action.kind.name(),
                escape(&target_text(action)),
                param_cell(action),
            );
        }
        let _ = writeln!(
            h,
            "</table>\n<p>Replay: <code>{}</code></p>\n</article>",
            escape(&m.replay_command())
        );
    }
}

/// One run's device events: a count per kind, then the events one per row.
fn device_events_section(h: &mut String, r: usize, run: &RunFolder, rows: usize) {
    let _ = writeln!(h, "<h3>{}</h3>", escape(&run.name()));
    let counts = run.device_event_counts();
    if counts.values().all(|&n| n == 0) {
        h.push_str("<p>The device handled nothing for the app.</p>\n");
        return;
    }
    h.push_str("<table>\n<tr>");
    for kind in counts.keys() {
        let _ = write!(h, "<th>{}</th>", count_label(*kind));
    }
    h.push_str("</tr>\n<tr>");
    for (kind, n) in &counts {
        let _ = write!(h, "<td class=\"n\" data-kind=\"{}\">{n}</td>", kind.name());
    }
    h.push_str("</tr>\n</table>\n<p>Each event, in the order recorded:</p>\n");
    let events: Vec<&EventRecord> = run.device_events().map(|(_, e)| e).collect();
    events_table(h, r, run, &events, rows, |_| "");
}

/// One run's device lost, restarted and resumed events.
fn restarts_section(h: &mut String, r: usize, run: &RunFolder, rows: usize) {
    let _ = writeln!(h, "<h3>{}</h3>", escape(&run.name()));
    let events: Vec<&EventRecord> = run.loop_events().collect();
    if events.is_empty() {
        h.push_str("<p class=\"ok\">The device was never lost and the run never resumed.</p>\n");
        return;
    }
    // Losing the device costs steps and state, and a failed restart ends the run, but
    // neither is a bug of the app: shown like a failed action, not like a signal.
    events_table(h, r, run, &events, rows, |e| match e.event.as_str() {
        "device_lost" | "restart_failed" => " class=\"failed\"",
        _ => "",
    });
}

/// A table of events (step, worker in a parallel run, event, detail), at most `rows`
/// rows, then how many more the run recorded. A step links to its row in the step table.
fn events_table(
    h: &mut String,
    r: usize,
    run: &RunFolder,
    events: &[&EventRecord],
    rows: usize,
    class: impl Fn(&EventRecord) -> &'static str,
) {
    let workers = events.iter().any(|e| e.worker.is_some());
    let recorded: std::collections::HashSet<u64> = run.steps.iter().map(|s| s.step).collect();
    let _ = writeln!(
        h,
        "<table>\n<tr><th>step</th>{}<th>event</th><th>detail</th></tr>",
        if workers { "<th>worker</th>" } else { "" }
    );
    for e in events.iter().take(rows) {
        let step = if recorded.contains(&e.after_step) {
            format!("<a href=\"#step-{r}-{s}\">{s}</a>", s = e.after_step)
        } else {
            e.after_step.to_string()
        };
        let worker = match (workers, e.worker) {
            (false, _) => String::new(),
            (true, w) => format!(
                "<td class=\"n\">{}</td>",
                w.map_or(String::new(), |w| w.to_string())
            ),
        };
        let _ = writeln!(
            h,
            "<tr{}><td class=\"n\">{step}</td>{worker}<td>{}</td><td>{}</td></tr>",
            class(e),
            escape(&e.event),
            escape(&e.detail),
        );
    }
    h.push_str("</table>\n");
    if events.len() > rows {
        let _ = writeln!(
            h,
            "<p>And {} more, not shown; all are in <code>{}</code>.</p>",
            events.len() - rows,
            escape(&run.dir.join("events.jsonl").display().to_string())
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
    if run.steps.iter().any(|s| s.seen.is_some()) {
        h.push_str("<p class=\"legend\">Boxes: the widgets the strategy detected, by kind: ");
        for kind in WidgetKind::ALL {
            let _ = write!(
                h,
                "<span class=\"k{}\">{}</span> ",
                kind.index(),
                json_name(&kind)
            );
        }
        h.push_str("</p>\n");
    }
    h.push_str(
        "<table>\n<tr><th>step</th><th>action</th><th>target</th><th>param</th><th>page</th>\
         <th>new signals</th><th>error</th><th>screen the action was chosen on</th></tr>\n",
    );
    let bug_index: HashMap<&str, usize> = run
        .signals
        .iter()
        .enumerate()
        .map(|(i, s)| (s.key.as_str(), i))
        .collect();
    let mut before = "screenshots/step-000000.png".to_owned();
    let mut viewport = run.steps.first().map(|s| s.viewport);
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
        let page = step
            .seen
            .as_ref()
            .and_then(|s| s.page)
            .map_or(String::new(), |p| {
                format!("<a href=\"#page-{r}-{p}\">{p}</a>")
            });
        let img = if step.step <= options.thumbnail_steps {
            let scale = viewport.map_or(1.0, |v| 1.0 / f64::from(v.width.max(1)));
            thumbs.annotated(
                run,
                &before,
                &format!("screen before step {}", step.step),
                options.thumbnail_width,
                |t| overlay(step, f64::from(t.width) * scale, t.width),
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            h,
            "<tr{class} id=\"step-{r}-{}\"><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{page}</td><td>{}</td><td>{}</td><td>{img}</td></tr>",
            step.step,
            step.step,
            step.action.kind.name(),
            escape(&target_text(&step.action)),
            param_cell(&step.action),
            signals.join("<br>"),
            escape(step.error.as_deref().unwrap_or("")),
        );
        before.clone_from(&step.screenshot);
        viewport = Some(step.viewport);
    }
    let last = run.steps.last().map_or(0, |s| s.step);
    let end = if last <= options.thumbnail_steps {
        thumbs.img(run, &before, &format!("screen after step {last}"))
    } else {
        String::new()
    };
    let _ = writeln!(
        h,
        "<tr><td></td><td colspan=\"6\">screen after the last step</td><td>{end}</td></tr>"
    );
    h.push_str("</table>\n</details>\n");
}

/// SVG over a screenshot `width` pixels wide: the widgets the strategy saw, labelled by
/// kind, and the action (a ring on its point, a thick box on its target widget).
/// `scale` converts the action's viewport coordinates to screenshot pixels.
fn overlay(step: &StepRecord, scale: f64, width: u32) -> String {
    let mut o = String::new();
    let stroke = (f64::from(width) / 320.0).max(1.0);
    let font = (f64::from(width) / 40.0).max(8.0);
    if let Some(seen) = &step.seen {
        for w in &seen.widgets {
            let _ = write!(
                o,
                r#"<g class="k{}"><rect x="{}" y="{}" width="{}" height="{}" stroke-width="{stroke:.1}"/><text x="{}" y="{:.0}" font-size="{font:.0}">{}</text><title>{} ({:.2})</title></g>"#,
                w.kind.index(),
                w.rect.x,
                w.rect.y,
                w.rect.width,
                w.rect.height,
                w.rect.x,
                f64::from(w.rect.y) - stroke,
                json_name(&w.kind),
                json_name(&w.kind),
                w.confidence
            );
        }
    }
    let name = step.action.kind.name();
    match &step.action.target {
        Some(Target::Point(p)) => {
            let _ = write!(
                o,
                r#"<circle class="act" cx="{:.0}" cy="{:.0}" r="{:.0}" stroke-width="{:.1}"><title>{name}</title></circle>"#,
                f64::from(p.x) * scale,
                f64::from(p.y) * scale,
                6.0 * stroke,
                2.0 * stroke
            );
        }
        Some(Target::Widget(w)) => {
            let _ = write!(
                o,
                r#"<rect class="act" x="{:.0}" y="{:.0}" width="{:.0}" height="{:.0}" stroke-width="{:.1}"><title>{name}</title></rect>"#,
                f64::from(w.rect.x) * scale,
                f64::from(w.rect.y) * scale,
                f64::from(w.rect.width) * scale,
                f64::from(w.rect.height) * scale,
                2.0 * stroke
            );
        }
        None => {}
    }
    o
}

fn target_text(action: &Action) -> String {
    match &action.target {
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
fn param_cell(action: &Action) -> String {
    const SHOWN: usize = 40;
    match &action.param {
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
