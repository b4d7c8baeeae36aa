//! The runtime model (Section V): a stack of screens and the lifecycle state of each,
//! which decide the lifecycle methods that run when a screen is launched, finished or
//! comes back to the top. The control-flow graph has no edges into lifecycle methods;
//! the search asks this model instead.
//!
//! The rules are Android's, as the paper uses them:
//!
//! * Launching B over A: `A.onPause`, then B is created (`onCreate`, `onStart`,
//!   `onResume`), then `A.onStop`. A dialog covers only part of the screen, so A is
//!   paused and not stopped.
//! * `onCreate` runs only when no instance of B is on the stack ([`Reuse::BringToFront`],
//!   the paper's rule); an existing instance is moved to the top and restarted
//!   (`onRestart` when it was stopped, `onStart`, `onResume`). With [`Reuse::NewInstance`]
//!   (a browser's history: every navigation is a new entry) B is always created anew.
//! * Back (or `finish()`) on B over A: `B.onPause`, A comes back (`onRestart` and
//!   `onStart` when it was stopped, then `onResume`), then `B.onStop` and `B.onDestroy`.
//!   Finishing the last screen ends the app.
//! * Launching the screen that is already on top does nothing.

use serde::{Deserialize, Serialize};

use crate::{Hook, ScreenKind};

/// Where a screen is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LifeState {
    Created,
    Started,
    Resumed,
    Paused,
    Stopped,
    Destroyed,
}

/// What launching a screen that is already on the stack does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reuse {
    /// Move the existing instance to the top (Android as the paper models it).
    #[default]
    BringToFront,
    /// Push a new instance (browser history).
    NewInstance,
}

/// One lifecycle callback the framework runs, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Transition<S> {
    pub screen: S,
    pub hook: Hook,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Entry<S> {
    screen: S,
    kind: ScreenKind,
    state: LifeState,
}

/// The screen (activity, page, dialog) stack. `S` names a screen: a `String`, or an index
/// into a model's screens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScreenStack<S> {
    entries: Vec<Entry<S>>,
    reuse: Reuse,
}

impl<S: Clone + PartialEq> ScreenStack<S> {
    pub fn new(reuse: Reuse) -> ScreenStack<S> {
        ScreenStack {
            entries: Vec::new(),
            reuse,
        }
    }

    /// The screen on top, which has the user's attention.
    pub fn top(&self) -> Option<&S> {
        self.entries.last().map(|e| &e.screen)
    }

    pub fn depth(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Screens from the bottom of the stack to its top.
    pub fn screens(&self) -> impl Iterator<Item = &S> {
        self.entries.iter().map(|e| &e.screen)
    }

    /// The state of the topmost instance of `screen`, or `None` when it is not on the
    /// stack (never launched, or destroyed).
    pub fn state_of(&self, screen: &S) -> Option<LifeState> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.screen == *screen)
            .map(|e| e.state)
    }

    /// Launches `screen`; returns the callbacks that run, in order.
    pub fn launch(&mut self, screen: S, kind: ScreenKind) -> Vec<Transition<S>> {
        let mut out = Vec::new();
        if self.top() == Some(&screen) {
            return out;
        }
        let below = self.entries.len().checked_sub(1);
        if let Some(b) = below {
            let e = &mut self.entries[b];
            e.state = LifeState::Paused;
            out.push(Transition {
                screen: e.screen.clone(),
                hook: Hook::Pause,
            });
        }
        let existing = match self.reuse {
            Reuse::BringToFront => self.entries.iter().position(|e| e.screen == screen),
            Reuse::NewInstance => None,
        };
        match existing {
            Some(i) => {
                let mut e = self.entries.remove(i);
                if e.state == LifeState::Stopped {
                    out.push(Transition {
                        screen: screen.clone(),
                        hook: Hook::Restart,
                    });
                }
                for hook in [Hook::Start, Hook::Resume] {
                    out.push(Transition {
                        screen: screen.clone(),
                        hook,
                    });
                }
                e.state = LifeState::Resumed;
                e.kind = kind;
                self.entries.push(e);
            }
            None => {
                for hook in [Hook::Create, Hook::Start, Hook::Resume] {
                    out.push(Transition {
                        screen: screen.clone(),
                        hook,
                    });
                }
                self.entries.push(Entry {
                    screen,
                    kind,
                    state: LifeState::Resumed,
                });
            }
        }
        // The screen that was on top is stopped once the new one covers it. After a
        // bring-to-front it may have moved; it is the entry just below the top.
        if kind == ScreenKind::Page && self.entries.len() >= 2 {
            let n = self.entries.len() - 2;
            let e = &mut self.entries[n];
            if e.state == LifeState::Paused {
                e.state = LifeState::Stopped;
                out.push(Transition {
                    screen: e.screen.clone(),
                    hook: Hook::Stop,
                });
            }
        }
        out
    }

    /// Back, or the top screen finishing itself; returns the callbacks that run.
    pub fn back(&mut self) -> Vec<Transition<S>> {
        let mut out = Vec::new();
        let Some(top) = self.entries.pop() else {
            return out;
        };
        out.push(Transition {
            screen: top.screen.clone(),
            hook: Hook::Pause,
        });
        if let Some(e) = self.entries.last_mut() {
            if e.state == LifeState::Stopped {
                out.push(Transition {
                    screen: e.screen.clone(),
                    hook: Hook::Restart,
                });
                out.push(Transition {
                    screen: e.screen.clone(),
                    hook: Hook::Start,
                });
            }
            out.push(Transition {
                screen: e.screen.clone(),
                hook: Hook::Resume,
            });
            e.state = LifeState::Resumed;
        }
        for hook in [Hook::Stop, Hook::Destroy] {
            out.push(Transition {
                screen: top.screen.clone(),
                hook,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(t: &[Transition<&'static str>]) -> Vec<String> {
        t.iter()
            .map(|t| format!("{}.{:?}", t.screen, t.hook))
            .collect()
    }

    #[test]
    fn launch_and_back_follow_android() {
        let mut s = ScreenStack::new(Reuse::BringToFront);
        assert_eq!(
            hooks(&s.launch("A", ScreenKind::Page)),
            ["A.Create", "A.Start", "A.Resume"]
        );
        assert_eq!(
            hooks(&s.launch("B", ScreenKind::Page)),
            ["A.Pause", "B.Create", "B.Start", "B.Resume", "A.Stop"]
        );
        assert_eq!(s.state_of(&"A"), Some(LifeState::Stopped));
        assert_eq!(
            hooks(&s.back()),
            [
                "B.Pause",
                "A.Restart",
                "A.Start",
                "A.Resume",
                "B.Stop",
                "B.Destroy"
            ]
        );
        assert_eq!(s.state_of(&"B"), None);
        assert_eq!(s.top(), Some(&"A"));
    }

    #[test]
    fn a_dialog_only_pauses_the_screen_below() {
        let mut s = ScreenStack::new(Reuse::BringToFront);
        s.launch("A", ScreenKind::Page);
        assert_eq!(
            hooks(&s.launch("D", ScreenKind::Dialog)),
            ["A.Pause", "D.Create", "D.Start", "D.Resume"]
        );
        assert_eq!(s.state_of(&"A"), Some(LifeState::Paused));
        assert_eq!(
            hooks(&s.back()),
            ["D.Pause", "A.Resume", "D.Stop", "D.Destroy"]
        );
    }

    #[test]
    fn an_existing_instance_is_not_created_again() {
        let mut s = ScreenStack::new(Reuse::BringToFront);
        s.launch("A", ScreenKind::Page);
        s.launch("B", ScreenKind::Page);
        assert_eq!(
            hooks(&s.launch("A", ScreenKind::Page)),
            ["B.Pause", "A.Restart", "A.Start", "A.Resume", "B.Stop"]
        );
        assert_eq!(s.screens().copied().collect::<Vec<_>>(), ["B", "A"]);
        // Browser history pushes a new entry instead.
        let mut w = ScreenStack::new(Reuse::NewInstance);
        w.launch("A", ScreenKind::Page);
        w.launch("B", ScreenKind::Page);
        assert_eq!(
            hooks(&w.launch("A", ScreenKind::Page)),
            ["B.Pause", "A.Create", "A.Start", "A.Resume", "B.Stop"]
        );
        assert_eq!(w.depth(), 3);
    }

    #[test]
    fn relaunching_the_top_does_nothing_and_the_last_back_ends_the_app() {
        let mut s = ScreenStack::new(Reuse::BringToFront);
        s.launch("A", ScreenKind::Page);
        assert!(s.launch("A", ScreenKind::Page).is_empty());
        assert_eq!(hooks(&s.back()), ["A.Pause", "A.Stop", "A.Destroy"]);
        assert!(s.is_empty());
        assert!(s.back().is_empty());
    }
}
