//! Plug-in `command-sequences`, with its refinements `fields-first` and
//! `settings-recheck`: a screen's commands run back to back in orders not yet run.
//!
//! Some faults need commands in one order, back to back: Select all, Archive and Undo.
//! Once each has shown what it shows, nothing new comes from clicking them again, so no
//! novelty record asks for that order. Up to
//! [`sequence_budget`](AgentConfig::sequence_budget) steps per screen go to running its
//! commands (buttons that changed the screen and stayed where they were) back to back in
//! orders not yet run ([`CommandSequences`]). The policy starts such a run by choosing a
//! command; this plug-in carries it on.
//!
//! `fields-first`: while a run is under way, a text field nothing was typed into yet is
//! typed into before the next command, once per field, since what a command does often
//! depends on what the fields hold. `settings-recheck`: after a setting changed (a box
//! ticked, a switch turned, a choice made, not text typed), the lone command of each other
//! screen is clicked once more when that screen is next shown, since a setting may change
//! what other screens do.

use gui_core::{Action, ActionKind, Rect, WidgetKind};

use super::{FinishedStep, Plugin, Weighing, slot};
use crate::effect::clicks_a_button;
use crate::{
    AgentConfig, CommandSequences, Control, Result, StepOutcome, same_control, sets_a_value,
};

#[derive(Debug)]
pub(crate) struct CommandOrders {
    /// The commands seen (by place and kind) and which orders of them have run.
    sequences: CommandSequences,
    /// Each worker's unbroken run of commands, most recent last.
    runs: Vec<Option<Vec<usize>>>,
    fields_first: bool,
    settings_recheck: bool,
}

impl CommandOrders {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            sequences: CommandSequences::new(config.sequence_budget),
            runs: Vec::new(),
            fields_first: config.fields_first,
            settings_recheck: config.settings_recheck,
        }
    }
}

/// The button each action clicks, if it clicks a button or an image button.
fn clicked_buttons(actions: &[Action]) -> Vec<Option<Control>> {
    actions
        .iter()
        .map(|a| {
            let w = a.widget()?;
            clicks_a_button(a.kind, Some(w.kind)).then_some((w.rect, w.kind))
        })
        .collect()
}

/// The text field an action of `kind` on `target` types into, if it types into one.
fn typed_field(kind: ActionKind, target: Option<(Rect, WidgetKind)>) -> Option<Rect> {
    target
        .filter(|&(_, k)| kind == ActionKind::Input && k == WidgetKind::EditText)
        .map(|(r, _)| r)
}

impl Plugin for CommandOrders {
    fn name(&self) -> &'static str {
        "command-sequences"
    }

    fn observe(&mut self, step: &mut FinishedStep<'_>) -> Result<()> {
        if step.resize {
            return Ok(());
        }
        let prev = step.prev;
        let controls = clicked_buttons(&step.now.actions);
        let clicked = prev
            .target
            .filter(|(_, k)| clicks_a_button(prev.kind, Some(*k)));
        let still_there =
            clicked.is_some_and(|c| controls.iter().flatten().any(|n| same_control(n, &c)));
        let outcome = StepOutcome {
            clicked,
            changed: step.changed,
            still_there,
        };
        let run = slot(&mut self.runs, step.worker).get_or_insert_with(Vec::new);
        self.sequences.record(run, outcome);
        let typed = typed_field(prev.kind, prev.target);
        let on = self.sequences.commands_on(&controls);
        if step.changed && sets_a_value(prev.kind, prev.target.map(|(_, k)| k)) {
            self.sequences.values_set(&on);
            let recheck = self.settings_recheck && typed.is_none();
            if let Some((setting, _)) = prev.target.filter(|_| recheck) {
                self.sequences.setting_changed(&on, setting);
            }
        }
        if let Some(field) = typed {
            self.sequences.field_typed(&on, field);
        }
        if self.settings_recheck {
            self.sequences.observe(&on);
        }
        Ok(())
    }

    fn weigh(&mut self, w: &mut Weighing<'_>) -> Result<()> {
        let controls = clicked_buttons(&w.candidates.actions);
        let run = slot(&mut self.runs, w.worker)
            .as_deref()
            .unwrap_or_default();
        // Only a run under way types first; most decisions have none.
        let fields: Vec<Option<Rect>> = if self.fields_first && !run.is_empty() {
            w.candidates
                .actions
                .iter()
                .map(|a| typed_field(a.kind, a.widget().map(|w| (w.rect, w.kind))))
                .collect()
        } else {
            Vec::new()
        };
        let due = self
            .settings_recheck
            .then(|| self.sequences.recheck(&controls));
        let pick = due
            .flatten()
            .or_else(|| self.sequences.next(run, &controls, &fields, w.rng));
        if pick.is_some() {
            w.pick = pick;
            w.stats.sequence_steps += 1;
        }
        Ok(())
    }

    fn restart(&mut self, worker: usize) {
        if let Some(r) = self.runs.get_mut(worker) {
            *r = None;
        }
    }
}
