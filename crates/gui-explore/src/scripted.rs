use gui_core::{Action, ActionKind};

use crate::{Observation, Strategy};

/// Plays a fixed list of actions in order (recorded runs, hand-written scenarios); once the
/// list is used up it keeps pressing `return`.
#[derive(Debug, Clone)]
pub struct Scripted {
    actions: Vec<Action>,
    next: usize,
}

impl Scripted {
    pub fn new(actions: Vec<Action>) -> Self {
        Self { actions, next: 0 }
    }

    pub fn len(&self) -> usize {
        self.actions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
}

impl Strategy for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn choose(&mut self, _observation: &Observation<'_>) -> Action {
        let a = self
            .actions
            .get(self.next)
            .cloned()
            .unwrap_or(Action::new(ActionKind::Return));
        self.next += 1;
        a
    }
}
