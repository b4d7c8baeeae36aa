//! The step bar of an exploration. (Tools whose phases are not steps use
//! [`crate::progress`].)

use std::collections::BTreeSet;

use gui_core::{Action, Transition};
use gui_explore::{Insight, Observation, Strategy};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A strategy behind a progress bar on stderr: steps done, pages seen (for strategies
/// that report pages) and bugs found. The bar only draws on a terminal.
pub struct WithProgress<'a> {
    inner: &'a mut dyn Strategy,
    bar: ProgressBar,
    pages: BTreeSet<u64>,
    bugs: usize,
}

impl std::fmt::Debug for WithProgress<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithProgress")
            .field("strategy", &self.inner.name())
            .field("pages", &self.pages.len())
            .field("bugs", &self.bugs)
            .finish()
    }
}

impl<'a> WithProgress<'a> {
    /// A bar for `steps` steps (a spinner when the budget is time), hidden when `hidden`
    /// (logging to stderr with `-v`).
    pub fn new(inner: &'a mut dyn Strategy, steps: Option<u64>, hidden: bool) -> Self {
        let target = if hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = ProgressBar::with_draw_target(steps, target);
        let template = if steps.is_some() {
            "{elapsed_precise} [{wide_bar}] {pos}/{len} steps, {msg} (eta {eta})"
        } else {
            "{elapsed_precise} {spinner} {pos} steps, {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self {
            inner,
            bar,
            pages: BTreeSet::new(),
            bugs: 0,
        }
    }

    /// Clears the bar (before the closing lines are printed).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Strategy for WithProgress<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn choose(&mut self, observation: &Observation<'_>) -> Action {
        self.inner.choose(observation)
    }

    fn learn(&mut self, transition: &Transition) {
        self.inner.learn(transition);
        if let Some(page) = self.inner.insight().and_then(|i| i.page) {
            self.pages.insert(page);
        }
        self.bugs += transition.new_signals.len();
        let pages = if self.pages.is_empty() {
            String::new()
        } else {
            format!("{} pages, ", self.pages.len())
        };
        self.bar.set_message(format!("{pages}{} bugs", self.bugs));
        self.bar.inc(1);
    }

    fn on_restart(&mut self) {
        self.inner.on_restart();
    }

    fn insight(&self) -> Option<Insight> {
        self.inner.insight()
    }

    fn wants_ui(&self) -> bool {
        self.inner.wants_ui()
    }

    fn stop_request(&self) -> Option<String> {
        self.inner.stop_request()
    }
}
