//! The PIRLTest agent of gui-rl behind the exploration loop's [`Strategy`] interface.

use std::sync::{Arc, Mutex};

use gui_core::{Action, ActionKind, Transition};
use gui_explore::{Insight, Observation, Strategy};
use gui_rl::{PirlAgent, ScreenReader};

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

    /// The agent, once the run is over.
    pub fn into_agent(self) -> PirlAgent {
        self.agent
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

    fn learn(&mut self, transition: &Transition) {
        // The web device measures the app's code coverage after every step; plug-in
        // `code-novelty` judges the step by it.
        if let Some(coverage) = &transition.coverage {
            self.agent.observe_coverage(0, coverage);
        }
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

/// One worker of a parallel PIRLTest run: it reads its screens (widgets, embeddings,
/// layout: the costly part) on its own thread, then decides with the agent that all
/// workers share, so every worker's transitions feed one page store, memory and
/// Q-network, which retrains while the workers' devices act.
#[derive(Debug)]
pub struct PirlWorker {
    agent: Arc<Mutex<PirlAgent>>,
    reader: ScreenReader,
    worker: usize,
    errors: Arc<Mutex<Vec<(u64, String)>>>,
}

impl PirlWorker {
    /// Worker `worker` of `agent`; the steps on which the agent fails go to `errors`.
    pub fn new(
        agent: Arc<Mutex<PirlAgent>>,
        worker: usize,
        errors: Arc<Mutex<Vec<(u64, String)>>>,
    ) -> Self {
        let reader = lock(&agent).reader();
        Self {
            agent,
            reader,
            worker,
            errors,
        }
    }

    fn failed(&self, step: u64, e: &gui_rl::Error) -> Action {
        lock(&self.errors).push((step, e.to_string()));
        lock(&self.agent).reset_episode_of(self.worker);
        Action::new(ActionKind::Return)
    }
}

/// The lock, also after a worker panicked while holding it: the agent's state is whole
/// between its calls.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Strategy for PirlWorker {
    fn name(&self) -> &str {
        "pirltest"
    }

    fn choose(&mut self, observation: &Observation<'_>) -> Action {
        let read = match self.reader.read(observation.screenshot) {
            Ok(read) => read,
            Err(e) => return self.failed(observation.step, &e),
        };
        let decided = lock(&self.agent).decide_read(
            self.worker,
            read,
            observation.platform,
            observation.actions,
        );
        decided.unwrap_or_else(|e| self.failed(observation.step, &e))
    }

    fn learn(&mut self, transition: &Transition) {
        if let Some(coverage) = &transition.coverage {
            lock(&self.agent).observe_coverage(self.worker, coverage);
        }
    }

    fn insight(&self) -> Option<Insight> {
        let agent = lock(&self.agent);
        let (page, widgets) = agent.last_seen_of(self.worker)?;
        Some(Insight {
            page: Some(page.0 as u64),
            widgets: widgets.to_vec(),
        })
    }

    fn on_restart(&mut self) {
        lock(&self.agent).reset_episode_of(self.worker);
    }
}
