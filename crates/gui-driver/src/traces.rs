//! Exceptions an app prints on stderr: JVM stack traces and Python tracebacks.
//!
//! The parser is fed line by line as output arrives, so one trace may span two feeds; it
//! stays open until a line that cannot continue it, or until [`TraceParser::finish`].

use gui_core::{Signal, SignalKind, StackFrame};

/// Turns stderr lines into signals.
///
/// - `Exception in thread "T" pkg.Ex: msg` with its `\tat` frames: an uncaught Java
///   exception (the JVM's default handler printed it, the thread died or the event
///   dispatch thread dropped the event).
/// - Any other line directly followed by `\tat` frames: a stack trace the app caught and
///   logged itself (`printStackTrace`), a console error.
/// - `Traceback (most recent call last):` … `ValueError: msg`: an uncaught Python
///   exception. Chained tracebacks ("During handling of the above exception…") are one
///   signal, the one that escaped last.
#[derive(Debug, Default)]
pub(crate) struct TraceParser {
    open: Option<Open>,
    /// The line before the current one: the header of a logged Java trace, if `\tat`
    /// follows.
    previous: Option<String>,
    /// A chaining line was seen: the next Python traceback continues the last one.
    chained: Option<String>,
    out: Vec<Signal>,
}

#[derive(Debug)]
enum Open {
    Java {
        kind: SignalKind,
        message: String,
        frames: Vec<StackFrame>,
        /// Inside a `Caused by:` or `Suppressed:` section, whose frames are not the top.
        in_cause: bool,
    },
    Python {
        frames: Vec<StackFrame>,
        /// The exception line of the traceback this one happened while handling.
        during: Option<String>,
    },
}

impl TraceParser {
    pub(crate) fn feed(&mut self, line: &str) {
        let line = line.trim_end_matches(['\r', '\n']);
        match self.open.take() {
            Some(Open::Java {
                kind,
                mut message,
                mut frames,
                mut in_cause,
            }) => {
                let t = line.trim_start();
                let indented = t.len() < line.len();
                if let Some(frame) = java_frame(line) {
                    if !in_cause {
                        frames.push(frame);
                    }
                } else if indented && t.starts_with("...") && t.ends_with("more") {
                    // "... 12 more": frames shared with the enclosing trace.
                } else if t.starts_with("Caused by:") || t.starts_with("Suppressed:") {
                    in_cause = true;
                    message.push('\n');
                    message.push_str(t);
                } else {
                    self.out.push(Signal::new(kind, message, frames));
                    self.fresh(line);
                    return;
                }
                self.open = Some(Open::Java {
                    kind,
                    message,
                    frames,
                    in_cause,
                });
            }
            Some(Open::Python { mut frames, during }) => {
                if let Some(frame) = python_frame(line) {
                    frames.push(frame);
                    self.open = Some(Open::Python { frames, during });
                } else if line.starts_with(' ') || line.is_empty() {
                    // Source lines and `^^^^` markers under a frame.
                    self.open = Some(Open::Python { frames, during });
                } else {
                    // Python lists the outermost call first; signals put the innermost
                    // first, as JS and Java stacks do.
                    frames.reverse();
                    let mut message = line.to_owned();
                    if let Some(d) = during {
                        message.push_str("\nwhile handling: ");
                        message.push_str(&d);
                    }
                    self.out
                        .push(Signal::new(SignalKind::UncaughtException, message, frames));
                    self.previous = Some(line.to_owned());
                }
            }
            None => self.fresh(line),
        }
    }

    /// A line outside any open trace.
    fn fresh(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("Exception in thread \"") {
            let message = rest
                .find("\" ")
                .map_or(rest, |i| &rest[i + 2..])
                .trim()
                .to_owned();
            self.open = Some(Open::Java {
                kind: SignalKind::UncaughtException,
                message,
                frames: Vec::new(),
                in_cause: false,
            });
        } else if line.starts_with("Traceback (most recent call last)") {
            let during = self.chained.take();
            // This traceback replaces the one it was raised while handling, unless that
            // one has been handed out already.
            if let Some(d) = &during
                && self
                    .out
                    .last()
                    .is_some_and(|s| s.message.lines().next() == Some(d.as_str()))
            {
                self.out.pop();
            }
            self.open = Some(Open::Python {
                frames: Vec::new(),
                during,
            });
        } else if line.starts_with("During handling of the above exception")
            || line.starts_with("The above exception was the direct cause")
        {
            self.chained = self
                .out
                .last()
                .filter(|s| s.kind == SignalKind::UncaughtException)
                .map(|s| s.message.lines().next().unwrap_or("").to_owned());
        } else if let Some(frame) = java_frame(line)
            && let Some(header) = self.previous.take().filter(|h| looks_like_java_header(h))
        {
            self.open = Some(Open::Java {
                kind: SignalKind::ConsoleError,
                message: header,
                frames: vec![frame],
                in_cause: false,
            });
            return;
        }
        if !line.trim().is_empty() {
            self.previous = Some(line.to_owned());
        }
    }

    /// Whether a trace is still open (more of its lines may come).
    pub(crate) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Closes an open trace: its output has ended.
    pub(crate) fn finish(&mut self) {
        match self.open.take() {
            Some(Open::Java {
                kind,
                message,
                frames,
                ..
            }) => self.out.push(Signal::new(kind, message, frames)),
            Some(Open::Python { mut frames, .. }) => {
                // The exception line never came (the process was killed mid-print).
                frames.reverse();
                self.out.push(Signal::new(
                    SignalKind::UncaughtException,
                    "Python traceback without its exception line",
                    frames,
                ));
            }
            None => {}
        }
    }

    /// Signals completed so far, oldest first.
    pub(crate) fn take(&mut self) -> Vec<Signal> {
        std::mem::take(&mut self.out)
    }
}

/// `\tat pkg.Class.method(File.java:12)`, also with a module or loader prefix
/// (`java.base/java.lang.Thread.run`, `app//Foo.bar`) and without a line
/// (`Native Method`, `Unknown Source`). Android's logcat prints its frames the same way.
pub(crate) fn java_frame(line: &str) -> Option<StackFrame> {
    let rest = line.trim_start();
    if rest.len() == line.len() {
        return None;
    }
    let rest = rest.strip_prefix("at ")?;
    let open = rest.find('(')?;
    let close = open + rest[open..].find(')')?;
    let function = rest[..open].rsplit('/').next().unwrap_or("").trim();
    if function.is_empty() || function.contains(' ') {
        return None;
    }
    let location = &rest[open + 1..close];
    let (file, line_no) = match location.rsplit_once(':') {
        Some((file, n)) if n.parse::<u32>().is_ok() => (file, n.parse().unwrap_or(0)),
        _ => (location, 0),
    };
    Some(StackFrame {
        function: function.to_owned(),
        url: file.to_owned(),
        line: line_no,
        // The JVM prints no columns.
        column: 0,
    })
}

/// `  File "/app/main.py", line 12, in on_click`
fn python_frame(line: &str) -> Option<StackFrame> {
    let rest = line.strip_prefix("  File \"")?;
    let (file, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(", line ")?;
    let (number, function) = match rest.split_once(", in ") {
        Some((n, f)) => (n, f),
        None => (rest, ""),
    };
    Some(StackFrame {
        function: function.trim().to_owned(),
        url: file.to_owned(),
        line: number.trim().parse().unwrap_or(0),
        column: 0,
    })
}

/// A thrown object's first line: `pkg.SomeException` or `pkg.SomeError: message`.
fn looks_like_java_header(line: &str) -> bool {
    let name = line.split(": ").next().unwrap_or("").trim();
    let simple = name.rsplit('.').next().unwrap_or("");
    !name.is_empty()
        && !name.contains(char::is_whitespace)
        && (simple.ends_with("Exception") || simple.ends_with("Error") || simple == "Throwable")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Signal> {
        let mut p = TraceParser::default();
        for line in text.lines() {
            p.feed(line);
        }
        p.finish();
        p.take()
    }

    #[test]
    fn jvm_uncaught_exceptions_become_one_signal_each() {
        let text = include_str!("../tests/data/desktop/java_uncaught.stderr");
        let signals = parse(text);
        assert_eq!(signals.len(), 3, "{signals:#?}");

        let npe = &signals[0];
        assert_eq!(npe.kind, SignalKind::UncaughtException);
        assert_eq!(
            npe.message.lines().next().unwrap(),
            "java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"this.text\" is null"
        );
        assert_eq!(
            npe.stack[0],
            StackFrame {
                function: "demo.EchoField.explode".into(),
                url: "EchoField.java".into(),
                line: 41,
                column: 0,
            }
        );
        // Module prefixes are dropped; native frames have no line.
        assert!(npe.stack.iter().any(|f| f.function
            == "java.awt.EventDispatchThread.pumpOneEventForFilters"
            && f.line == 203));
        assert!(
            npe.stack
                .iter()
                .any(|f| f.url == "Native Method" && f.line == 0)
        );

        // A cause's frames stay out of the stack, its line goes into the message.
        let wrapped = &signals[1];
        assert_eq!(wrapped.kind, SignalKind::UncaughtException);
        assert!(
            wrapped
                .message
                .starts_with("java.lang.IllegalStateException: wrapped")
        );
        assert!(
            wrapped
                .message
                .contains("Caused by: java.io.IOException: disk")
        );
        assert_eq!(wrapped.stack.len(), 2);
        assert_eq!(wrapped.stack[0].function, "demo.Main.main");

        // printStackTrace of a caught exception: a logged error, not an uncaught one.
        let logged = &signals[2];
        assert_eq!(logged.kind, SignalKind::ConsoleError);
        assert_eq!(logged.message, "java.lang.ArithmeticException: / by zero");
        assert_eq!(logged.stack[0].function, "demo.Calc.divide");
        assert_eq!(logged.stack[0].line, 7);
    }

    #[test]
    fn python_tracebacks_list_the_innermost_frame_first() {
        let text = include_str!("../tests/data/desktop/python_uncaught.stderr");
        let signals = parse(text);
        assert_eq!(signals.len(), 2, "{signals:#?}");

        let value = &signals[0];
        assert_eq!(value.kind, SignalKind::UncaughtException);
        assert_eq!(
            value.message,
            "ValueError: invalid literal for int() with base 10: 'x'"
        );
        assert_eq!(value.stack.len(), 3);
        assert_eq!(value.stack[0].function, "parse");
        assert_eq!(value.stack[0].url, "/srv/app/calc.py");
        assert_eq!(value.stack[0].line, 8);
        assert_eq!(value.stack[2].function, "__call__");

        // A chained traceback is reported once, as the exception that escaped.
        let chained = &signals[1];
        assert!(chained.message.starts_with("RuntimeError: could not save"));
        assert!(chained.message.contains("while handling: KeyError: 'name'"));
        assert_eq!(chained.stack[0].function, "save");
    }

    #[test]
    fn a_trace_split_across_feeds_stays_open_until_it_ends() {
        let mut p = TraceParser::default();
        p.feed("Exception in thread \"main\" java.lang.Error: x");
        p.feed("\tat A.b(A.java:1)");
        assert!(p.is_open());
        assert!(p.take().is_empty());
        p.feed("\tat A.main(A.java:5)");
        p.feed("done");
        assert!(!p.is_open());
        let s = p.take();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].stack.len(), 2);
        assert_eq!(s[0].message, "java.lang.Error: x");
    }

    #[test]
    fn ordinary_lines_make_no_signals() {
        let signals = parse(
            "Warning: Could not find font\nat the moment nothing happens\n\tat-home people\nError: none\n",
        );
        assert!(signals.is_empty(), "{signals:#?}");
    }
}
