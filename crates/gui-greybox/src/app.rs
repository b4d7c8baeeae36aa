//! What the ripper and the replayer need from a running application.

use std::time::Duration;

use gui_core::{Action, ActionKind, ActionParam, Point, Target};
use gui_driver::Device;

use crate::{Event, EventKind, ReadWrite, Result};

/// An event the GUI offers at this moment, and where to fire it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveEvent {
    pub event: Event,
    /// Where a click lands, in viewport coordinates.
    pub at: Point,
}

impl LiveEvent {
    /// The device action that fires this event; `input` is typed into fields.
    pub fn action(&self, input: &str) -> Action {
        let target = Some(Target::Point(self.at));
        match self.event.kind {
            EventKind::Click => Action {
                kind: ActionKind::Click,
                target,
                param: None,
            },
            EventKind::Input => Action {
                kind: ActionKind::Input,
                target,
                param: Some(ActionParam::Text(format!("{input}\n"))),
            },
        }
    }
}

/// An application under test as the grey-box tools see it: a device plus a way to list
/// the events that are enabled and visible right now (the grey box looks inside: the DOM
/// on the web, the vision pipeline and the class files on the desktop).
pub trait GreyboxApp {
    fn device(&mut self) -> &mut dyn Device;

    /// The test case's precondition: the app restarted with fresh state.
    fn reset(&mut self) -> Result<()> {
        self.device().restart()?;
        self.settle()
    }

    /// Events that can be fired now, in a stable order (reading order on screen).
    fn available(&mut self) -> Result<Vec<LiveEvent>>;

    /// Fires one event offered by [`available`](Self::available).
    fn fire(&mut self, live: &LiveEvent, input: &str) -> Result<()> {
        let action = live.action(input);
        self.device().perform(&action)?;
        self.settle()
    }

    /// Starts watching what the app runs, so that [`observed_effects`](Self::observed_effects)
    /// can tell what the next event set off. By default there is nothing to watch.
    fn start_observing(&mut self) -> Result<()> {
        Ok(())
    }

    /// What the app ran since [`start_observing`](Self::start_observing) that the static
    /// analysis of the event's own handlers cannot see, as reads and writes; `None` when
    /// nothing of the kind ran (or the app cannot watch itself, the default). The ripper
    /// calls this around each event it fires and keeps the answer in
    /// [`Efg::effects`](crate::Efg::effects).
    fn observed_effects(&mut self) -> Result<Option<ReadWrite>> {
        Ok(None)
    }

    /// Waits until the GUI has handled the last event and redrawn.
    fn settle(&mut self) -> Result<()>;

    /// Waits at the end of a test case for the work its last event started (timers,
    /// loads), so that their effects are covered and their errors seen before the app
    /// restarts. By default one more [`settle`](Self::settle).
    fn finish(&mut self) -> Result<()> {
        self.settle()
    }

    /// A fingerprint of what the GUI holds now beyond its enabled events (the page's
    /// document and URL, its text, the values of its fields), or `None` when the app cannot
    /// take one (the default). Two equal fingerprints and equal listings are what the
    /// ripper takes as "the same state"; without fingerprints it never trusts a cheap way
    /// back and restarts before every event.
    fn fingerprint(&mut self) -> Result<Option<String>> {
        Ok(None)
    }

    /// Tries a cheap way back to the state the GUI was in at the last
    /// [`fingerprint`](Self::fingerprint), which offered `before`: close what the last
    /// event opened, or step back in history. Returns whether it tried something; the
    /// caller checks whether it worked. By default there is no cheap way.
    fn step_back(&mut self, before: &[LiveEvent]) -> Result<bool> {
        let _ = before;
        Ok(false)
    }

    /// What the handlers of `event` read and write as Algorithm 1 sees them, or `None`
    /// when the app cannot say (the default). The ripper fires the next event in place
    /// only when the last one wrote nothing the state's other events read.
    fn handler_read_write(&self, event: &Event) -> Option<ReadWrite> {
        let _ = event;
        None
    }

    /// Time spent waiting for the GUI to settle since the app was made (zero when the app
    /// does not count it).
    fn time_waited(&self) -> Duration {
        Duration::ZERO
    }

    /// One line naming the app, for run folders.
    fn describe(&mut self) -> String {
        self.device().describe()
    }
}
