//! Progress of a long phase of a tool (ripping, surveying, replaying): a bar on a terminal,
//! otherwise a plain line every few seconds, so that a run that takes minutes shows that
//! it works and how far it has got.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the plain progress line is printed when there is no bar.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// The progress of one phase: `done` of `known` items (events ripped of events found,
/// controls surveyed of controls found, test cases of test cases), a free-form detail,
/// and the time left of the phase's budget.
///
/// The bar draws on stderr when it is a terminal and the tool does not log (`-v`);
/// otherwise a plain line (`greybox: ripping: 12/40 events, 3 states, 4:10 left`) goes to
/// stderr every [`PLAIN_EVERY`] and when the phase ends.
pub struct PhaseProgress {
    tool: &'static str,
    phase: String,
    unit: &'static str,
    bar: Option<ProgressBar>,
    deadline: Option<Instant>,
    last_plain: Instant,
    started: Instant,
    line: String,
    /// The last plain line printed.
    printed: String,
}

impl std::fmt::Debug for PhaseProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhaseProgress")
            .field("tool", &self.tool)
            .field("phase", &self.phase)
            .field("line", &self.line)
            .finish()
    }
}

impl PhaseProgress {
    /// Starts showing the progress of `phase` (`ripping`), counted in `unit` (`events`),
    /// which must end by `deadline` if it has one. `verbose`: the tool logs to stderr, so
    /// no bar.
    pub fn start(
        tool: &'static str,
        phase: &str,
        unit: &'static str,
        verbose: bool,
        deadline: Option<Instant>,
    ) -> PhaseProgress {
        let bar = (!verbose && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr());
            // A bar of fixed width and a message cut to the terminal's: a line that wraps
            // is drawn again below itself at every tick.
            let template =
                format!("{tool}: {phase} [{{bar:24}}] {{pos}}/{{len}} {unit}, {{wide_msg}}");
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message("starting");
            bar.enable_steady_tick(Duration::from_millis(500));
            bar
        });
        let now = Instant::now();
        PhaseProgress {
            tool,
            phase: phase.to_owned(),
            unit,
            bar,
            deadline,
            last_plain: now,
            started: now,
            line: String::new(),
            printed: String::new(),
        }
    }

    /// Reports `done` of `known`, with `detail` (`3 states, 1 broken path`).
    pub fn update(&mut self, done: u64, known: u64, detail: &str) {
        let join = |time: String| {
            if detail.is_empty() {
                time
            } else {
                format!("{detail}, {time}")
            }
        };
        self.line = format!(
            "{}: {}: {done}/{known} {}, {}",
            self.tool,
            self.phase,
            self.unit,
            join(self.time_text())
        );
        match &self.bar {
            Some(bar) => {
                bar.set_length(known.max(done).max(1));
                bar.set_position(done);
                // The time left first: a narrow terminal cuts the end of the line.
                let left = self.time_left_text();
                bar.set_message(if detail.is_empty() {
                    left
                } else {
                    format!("{left}, {detail}")
                });
            }
            None => {
                if self.last_plain.elapsed() >= PLAIN_EVERY {
                    self.last_plain = Instant::now();
                    eprintln!("{}", self.line);
                    self.printed.clone_from(&self.line);
                }
            }
        }
    }

    /// Ends the phase: clears the bar, or prints the last plain line when plain lines were
    /// printed before and it is not the last one of them (a phase that took less than
    /// [`PLAIN_EVERY`] has the tool's closing line only).
    pub fn finish(&mut self) {
        match self.bar.take() {
            Some(bar) => bar.finish_and_clear(),
            None => {
                if !self.printed.is_empty() && self.printed != self.line {
                    eprintln!("{}", self.line);
                }
            }
        }
    }

    /// Prints a line above the bar (or as a plain line).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// The time left, or the time so far when there is no limit: short, for the bar.
    fn time_left_text(&self) -> String {
        match self.deadline {
            Some(d) => format!(
                "{} left",
                format_duration(d.saturating_duration_since(Instant::now()))
            ),
            None => format!("{} elapsed", format_duration(self.started.elapsed())),
        }
    }

    fn time_text(&self) -> String {
        let elapsed = format_duration(self.started.elapsed());
        match self.deadline {
            Some(d) => format!(
                "{elapsed} elapsed, {} left",
                format_duration(d.saturating_duration_since(Instant::now()))
            ),
            None => format!("{elapsed} elapsed, no time limit"),
        }
    }
}

impl Drop for PhaseProgress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// `m:ss` (or `h:mm:ss`), for progress lines.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A budget in minutes as people say it: `90 s`, `2.5 min`, `no time limit`.
pub fn budget_text(budget: Option<Duration>) -> String {
    match budget {
        None => "no time limit".into(),
        Some(d) if d < Duration::from_secs(120) => format!("{:.0} s", d.as_secs_f64()),
        Some(d) => format!("{:.1} min", d.as_secs_f64() / 60.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_clock_times_and_budgets_in_people_units() {
        assert_eq!(format_duration(Duration::from_secs(75)), "1:15");
        assert_eq!(format_duration(Duration::from_secs(3725)), "1:02:05");
        assert_eq!(budget_text(None), "no time limit");
        assert_eq!(budget_text(Some(Duration::from_secs(30))), "30 s");
        assert_eq!(budget_text(Some(Duration::from_secs(150))), "2.5 min");
    }
}
