use std::fmt::Write as _;

use crate::RunFolder;
use crate::escape::escape;

/// Line colours, distinguishable and print-safe (Okabe–Ito).
const COLOURS: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

const WIDTH: f64 = 760.0;
const PLOT_HEIGHT: f64 = 260.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 36.0;
const LEGEND_LINE: f64 = 18.0;

/// Functions covered over steps, one polyline per run, as an inline `<svg>`; empty when
/// no run has coverage (a device that measures none).
pub fn coverage_svg(runs: &[RunFolder]) -> String {
    let series = runs
        .iter()
        .map(|run| {
            run.steps
                .iter()
                .filter_map(|s| s.coverage.map(|c| (s.step as f64, c.functions_covered)))
                .collect()
        })
        .collect();
    plot(
        &legend(runs),
        series,
        "Functions covered over steps",
        "step",
        "functions covered",
    )
}

/// Functions covered over wall time (seconds since the run started), one polyline per
/// run; empty when no run has coverage.
pub fn coverage_time_svg(runs: &[RunFolder]) -> String {
    let series = runs
        .iter()
        .map(|run| {
            run.steps
                .iter()
                .filter_map(|s| {
                    s.coverage
                        .map(|c| (s.elapsed_ms as f64 / 1000.0, c.functions_covered))
                })
                .collect()
        })
        .collect();
    plot(
        &legend(runs),
        series,
        "Functions covered over time",
        "seconds",
        "functions covered",
    )
}

/// One legend entry per run: its strategy and seed, then its folder's name.
fn legend(runs: &[RunFolder]) -> Vec<String> {
    runs.iter()
        .map(|run| {
            let folder = run
                .dir
                .file_name()
                .map_or(String::new(), |f| f.to_string_lossy().into_owned());
            format!("{} ({folder})", run.name())
        })
        .collect()
}

/// A line plot as an inline `<svg>`, one polyline per series with its legend entry below
/// the axes; empty when every series is.
pub(crate) fn plot(
    legend: &[String],
    series: Vec<Vec<(f64, u64)>>,
    title: &str,
    x_label: &str,
    y_label: &str,
) -> String {
    if series.iter().all(Vec::is_empty) {
        return String::new();
    }
    let max_x = series
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(0.0, f64::max)
        .ceil() as u64;
    let max_y = series.iter().flatten().map(|p| p.1).max().unwrap_or(1);
    let (x_step, x_end) = axis(max_x);
    let (y_step, y_end) = axis(max_y);
    let inner_w = WIDTH - LEFT - RIGHT;
    let inner_h = PLOT_HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + inner_w * x / x_end as f64;
    let py = |y: u64| TOP + inner_h * (1.0 - y as f64 / y_end as f64);
    let height = PLOT_HEIGHT + LEGEND_LINE * legend.len() as f64;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" font-family="sans-serif" font-size="12">
<title>{title}</title>"#
    );
    let mut tick = 0;
    while tick <= y_end {
        let y = py(tick);
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e4e4e4\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{tick}</text>",
            LEFT + inner_w,
            LEFT - 6.0,
            y + 4.0
        );
        tick += y_step;
    }
    let mut tick = 0;
    while tick <= x_end {
        let x = px(tick as f64);
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{tick}</text>",
            TOP + inner_h,
            TOP + inner_h + 4.0,
            TOP + inner_h + 16.0
        );
        tick += x_step;
    }
    let _ = writeln!(
        s,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{inner_w}\" height=\"{inner_h}\" fill=\"none\" stroke=\"#999\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{x_label}</text>\n\
         <text x=\"12\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1})\">{y_label}</text>",
        LEFT + inner_w / 2.0,
        PLOT_HEIGHT - 4.0,
        TOP + inner_h / 2.0,
        TOP + inner_h / 2.0
    );
    for (i, (label, points)) in legend.iter().zip(&series).enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        if !points.is_empty() {
            let coords: Vec<String> = points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.8\" points=\"{}\"/>",
                coords.join(" ")
            );
        }
        let y = PLOT_HEIGHT + LEGEND_LINE * i as f64 + 4.0;
        let note = if points.is_empty() {
            " (no coverage)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\" stroke-width=\"3\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}{note}</text>",
            LEFT + 24.0,
            LEFT + 30.0,
            y + 4.0,
            escape(label)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// A tick spacing of 1, 2 or 5 times a power of ten giving about four intervals, and the
/// axis end: the first tick at or above `max`.
fn axis(max: u64) -> (u64, u64) {
    let max = max.max(1);
    let raw = max.div_ceil(4);
    let mut power = 1;
    loop {
        for m in [1, 2, 5] {
            let step = m * power;
            if step >= raw {
                return (step, max.div_ceil(step) * step);
            }
        }
        power *= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::axis;

    #[test]
    fn axis_ends_on_a_round_tick_at_or_above_the_maximum() {
        assert_eq!(axis(0), (1, 1));
        assert_eq!(axis(7), (2, 8));
        assert_eq!(axis(27), (10, 30));
        assert_eq!(axis(150), (50, 150));
        assert_eq!(axis(1001), (500, 1500));
    }
}
