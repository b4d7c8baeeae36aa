use serde::{Deserialize, Serialize};

use crate::{Action, Screenshot};

/// What kind of trouble a device observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// An exception nobody caught (JS `Runtime.exceptionThrown`, a Java stack on stderr).
    UncaughtException,
    /// The app logged an error (JS `console.error`).
    ConsoleError,
    /// The app's process or renderer died.
    Crash,
    /// An app-level check failed: wrong behaviour without a crash.
    FunctionalBug,
}

/// One frame of a stack trace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StackFrame {
    pub function: String,
    pub url: String,
    /// 1-based line and column.
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for StackFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.function.is_empty() {
            "<anonymous>"
        } else {
            &self.function
        };
        write!(f, "at {name} ({}:{}:{})", self.url, self.line, self.column)
    }
}

/// Something a device reported: an exception, an error log, a crash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    pub kind: SignalKind,
    pub message: String,
    pub stack: Vec<StackFrame>,
    /// Equal keys mean the same bug: kind, message and the top frames, without anything
    /// that changes from one occurrence to the next (timestamps, object ids).
    pub key: String,
}

impl Signal {
    /// How many top frames identify a bug. Three frames tell apart the same exception thrown
    /// from different callers without splitting one bug over deep, varying stacks.
    pub const KEY_FRAMES: usize = 3;

    pub fn new(kind: SignalKind, message: impl Into<String>, stack: Vec<StackFrame>) -> Self {
        let message = message.into();
        let mut key = format!("{kind:?}|{}", first_line(&message));
        for fr in stack.iter().take(Self::KEY_FRAMES) {
            key.push_str(&format!(
                "|{}@{}:{}:{}",
                fr.function, fr.url, fr.line, fr.column
            ));
        }
        Self {
            kind,
            message,
            stack,
            key,
        }
    }

    /// The stack as text, one frame a line.
    pub fn stack_text(&self) -> String {
        self.stack.iter().map(|f| format!("    {f}\n")).collect()
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Code coverage of the app's own code, cumulative since the run began.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageSnapshot {
    /// Functions that ran at least once.
    pub functions_covered: u64,
    /// Functions known so far (from every script parsed).
    pub functions_total: u64,
    /// Bytes of source inside blocks that ran at least once.
    pub bytes_covered: u64,
    pub bytes_total: u64,
    pub scripts: u32,
}

impl CoverageSnapshot {
    pub fn function_ratio(&self) -> f64 {
        ratio(self.functions_covered, self.functions_total)
    }

    pub fn byte_ratio(&self) -> f64 {
        ratio(self.bytes_covered, self.bytes_total)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// ⟨s_t, a_t, s_{t+1}⟩ with what the device reported in between.
#[derive(Debug, Clone)]
pub struct Transition {
    pub step: u64,
    pub before: Screenshot,
    pub action: crate::Action,
    pub after: Screenshot,
    /// Signals first seen in this step.
    pub new_signals: Vec<Signal>,
    pub coverage: Option<CoverageSnapshot>,
}

impl Transition {
    pub fn action(&self) -> &Action {
        &self.action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(f: &str, line: u32) -> StackFrame {
        StackFrame {
            function: f.into(),
            url: "app.js".into(),
            line,
            column: 1,
        }
    }

    #[test]
    fn key_ignores_deep_frames_and_later_message_lines() {
        let a = Signal::new(
            SignalKind::UncaughtException,
            "TypeError: x is undefined\nmore",
            vec![frame("a", 1), frame("b", 2), frame("c", 3), frame("d", 4)],
        );
        let b = Signal::new(
            SignalKind::UncaughtException,
            "TypeError: x is undefined",
            vec![
                frame("a", 1),
                frame("b", 2),
                frame("c", 3),
                frame("other", 9),
            ],
        );
        assert_eq!(a.key, b.key);
        let c = Signal::new(
            SignalKind::UncaughtException,
            "TypeError: x is undefined",
            vec![frame("z", 1)],
        );
        assert_ne!(a.key, c.key);
        assert!(a.stack_text().contains("at a (app.js:1:1)"));
    }
}
