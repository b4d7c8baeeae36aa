//! The PIRLTest agent of gui-rl behind the exploration loop's [`Strategy`] interface.

use gui_core::{Action, ActionKind};
use gui_explore::{Insight, Observation, Strategy};
use gui_rl::PirlAgent;

/// Runs a [`PirlAgent`] as a [`Strategy`].
///
/// A strategy must always answer, so when the agent fails on a screen (which would be a
/// bug in the vision or learning code, not in the app), the step goes back with `return`
/// and the error is kept: [`errors`](Self::errors) lists them and the binary reports them.
#[derive(Debug)]
pub struct PirlStrategy {
    agent: PirlAgent,
    errors: Vec<(u64, String)>,
    progress_every: Option<u64>,
}

impl PirlStrategy {
    pub fn new(agent: PirlAgent) -> Self {
        Self {
            agent,
            errors: Vec::new(),
            progress_every: None,
        }
    }

    /// Logs a progress line (at info level, shown with `-v`) every `steps` decisions.
    pub fn with_progress(mut self, steps: u64) -> Self {
        self.progress_every = Some(steps.max(1));
        self
    }

    pub fn agent(&self) -> &PirlAgent {
        &self.agent
    }

    pub fn agent_mut(&mut self) -> &mut PirlAgent {
        &mut self.agent
    }

    /// Steps on which the agent failed, with its error.
    pub fn errors(&self) -> &[(u64, String)] {
        &self.errors
    }
}

impl Strategy for PirlStrategy {
    fn name(&self) -> &str {
        "pirltest"
    }

    fn choose(&mut self, observation: &Observation<'_>) -> Action {
        let decided = self.agent.decide(
            observation.screenshot,
            observation.platform,
            observation.actions,
        );
        if self
            .progress_every
            .is_some_and(|n| observation.step.is_multiple_of(n))
        {
            let s = self.agent.stats();
            tracing::info!(
                "step {}: {} pages, {} in memory, loss {:.4}, agent {:.0} ms/step",
                observation.step,
                s.pages,
                s.memory,
                s.last_loss,
                s.timings.total_ms() / s.decisions.max(1) as f64
            );
        }
        decided.unwrap_or_else(|e| {
            self.errors.push((observation.step, e.to_string()));
            self.agent.reset_episode();
            Action::new(ActionKind::Return)
        })
    }

    fn insight(&self) -> Option<Insight> {
        let (page, widgets) = self.agent.last_seen()?;
        Some(Insight {
            page: Some(page.0 as u64),
            widgets: widgets.to_vec(),
        })
    }

    fn on_restart(&mut self) {
        // The app is back at its start: the next screen is not the outcome of the last
        // action, so that transition is not learnt from.
        self.agent.reset_episode();
    }
}
