//! Console errors and uncaught exceptions as [`Signal`]s, from the browser log (the legacy
//! logging API) or from the collector script injected where that API is missing.
//!
//! Messages are made the way [`crate::ChromiumDevice`] makes them (an exception's first
//! description line, `console.error` arguments joined by spaces), so the same bug found
//! through either device reads the same. Stacks differ: the log gives only the position
//! of the first frame, without a function name.

use gui_core::{Signal, SignalKind, StackFrame};
use serde_json::Value;

/// Installs the collector once per document and hands over (and forgets) what it caught.
/// Wrapped in a function body: WebDriver executes scripts as function bodies.
pub(super) const COLLECTOR: &str = r#"
const w = window;
if (!w.__guiTestingErrors) {
  const errors = w.__guiTestingErrors = [];
  const keep = e => { if (errors.length < 200) errors.push(e); };
  const text = a => typeof a === 'string' ? a
    : a instanceof Error ? String(a.stack || a)
    : (a !== null && typeof a === 'object') ? Object.prototype.toString.call(a).slice(8, -1)
    : String(a);
  w.addEventListener('error', ev => {
    const err = ev.error;
    keep({ kind: 'exception', message: err instanceof Error ? String(err) : String(ev.message),
           stack: err && err.stack ? String(err.stack) : '' });
  });
  w.addEventListener('unhandledrejection', ev => {
    const r = ev.reason;
    keep({ kind: 'exception', message: r instanceof Error ? String(r) : 'Uncaught (in promise) ' + text(r),
           stack: r && r.stack ? String(r.stack) : '' });
  });
  const original = console.error;
  console.error = function (...args) {
    // Drop the first two lines: "Error" and this wrapper.
    const stack = (new Error().stack || '').split('\n').slice(2).join('\n');
    keep({ kind: 'console', message: args.map(text).join(' '), stack });
    return original.apply(this, args);
  };
}
return w.__guiTestingErrors.splice(0);
"#;

/// A signal from one `POST /se/log` entry of the browser log, if it is an error of the
/// page's scripts (network failures and warnings are not).
///
/// chromedriver writes `URL LINE:COLUMN TEXT`, with 0-based positions; an uncaught
/// exception's text starts with `Uncaught `, and `console.error` arguments appear as JSON
/// values (strings quoted).
pub(super) fn signal_of_log_entry(entry: &Value) -> Option<Signal> {
    let source = entry["source"].as_str().unwrap_or("");
    let severe = entry["level"].as_str() == Some("SEVERE");
    let kind = match source {
        "javascript" => SignalKind::UncaughtException,
        "console-api" if severe => SignalKind::ConsoleError,
        _ => return None,
    };
    let raw = entry["message"].as_str().unwrap_or("");
    let (frame, text) = split_position(raw);
    let message = match kind {
        SignalKind::UncaughtException => text.strip_prefix("Uncaught ").unwrap_or(text).to_owned(),
        _ => console_arguments(text),
    };
    Some(Signal::new(kind, message, frame.into_iter().collect()))
}

/// Splits `URL LINE:COLUMN TEXT` into a frame (1-based positions) and the text.
fn split_position(raw: &str) -> (Option<StackFrame>, &str) {
    let mut parts = raw.splitn(3, ' ');
    let (Some(url), Some(pos)) = (parts.next(), parts.next()) else {
        return (None, raw);
    };
    let Some((line, column)) = pos.split_once(':') else {
        return (None, raw);
    };
    let (Ok(line), Ok(column)) = (line.parse::<u32>(), column.parse::<u32>()) else {
        return (None, raw);
    };
    let frame = StackFrame {
        function: String::new(),
        // Code the tool itself evaluated has no URL; the log calls it `javascript`.
        url: if url == "javascript" { "" } else { url }.to_owned(),
        line: line + 1,
        column: column + 1,
    };
    (Some(frame), parts.next().unwrap_or(""))
}

/// `console.error` arguments as the log shows them (`"invalid email: " 3`), joined as
/// Chromium's device joins them (`invalid email:  3`); text that is not a sequence of
/// JSON values (objects appear as `{a: 1}`) stays as it is.
fn console_arguments(text: &str) -> String {
    let values: Result<Vec<Value>, _> = serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .collect();
    match values {
        Ok(values) if !values.is_empty() => values
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => text.to_owned(),
    }
}

/// A signal from one record of [`COLLECTOR`]: `{kind, message, stack}`.
pub(super) fn signal_of_record(record: &Value) -> Option<Signal> {
    let kind = match record["kind"].as_str()? {
        "exception" => SignalKind::UncaughtException,
        "console" => SignalKind::ConsoleError,
        _ => return None,
    };
    let message = record["message"].as_str().unwrap_or("").to_owned();
    let stack = parse_v8_stack(record["stack"].as_str().unwrap_or(""));
    Some(Signal::new(kind, message, stack))
}

/// The frames of a V8 `Error.stack` (`    at fn (url:line:col)` or `    at url:line:col`);
/// V8 counts lines and columns from 1, as [`StackFrame`] does.
pub(super) fn parse_v8_stack(stack: &str) -> Vec<StackFrame> {
    stack
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("at ")?;
            let (function, location) = match rest.strip_suffix(')') {
                Some(r) => {
                    let (f, l) = r.split_once(" (")?;
                    (function_name(f), l)
                }
                None => ("", rest),
            };
            let (rest, column) = location.rsplit_once(':')?;
            let (url, line) = rest.rsplit_once(':')?;
            Some(StackFrame {
                function: function.to_owned(),
                url: url.to_owned(),
                line: line.parse().ok()?,
                column: column.parse().ok()?,
            })
        })
        .collect()
}

/// The function's own name, as DevTools reports it in call frames: V8's stack text adds
/// the receiver's type (`HTMLButtonElement.checkout`), `async `, `new ` and `[as alias]`.
fn function_name(text: &str) -> &str {
    let text = text.strip_prefix("async ").unwrap_or(text);
    let text = text.strip_prefix("new ").unwrap_or(text);
    let text = text.split(" [as ").next().unwrap_or(text);
    let name = text.rsplit('.').next().unwrap_or(text);
    if name == "<anonymous>" { "" } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn log_entries_become_signals_like_chromiums() {
        let e = json!({ "level": "SEVERE", "source": "javascript",
            "message": "http://127.0.0.1:8765/app.js 41:17 Uncaught TypeError: Cannot read properties of undefined (reading 'percent')" });
        let s = signal_of_log_entry(&e).unwrap();
        assert_eq!(s.kind, SignalKind::UncaughtException);
        assert_eq!(
            s.message,
            "TypeError: Cannot read properties of undefined (reading 'percent')"
        );
        assert_eq!(
            s.stack,
            vec![StackFrame {
                function: String::new(),
                url: "http://127.0.0.1:8765/app.js".into(),
                line: 42,
                column: 18,
            }]
        );

        let c = json!({ "level": "SEVERE", "source": "console-api",
            "message": "http://h/app.js 0:25 \"invalid email: \" 3" });
        let s = signal_of_log_entry(&c).unwrap();
        assert_eq!(
            (s.kind, s.message.as_str()),
            (SignalKind::ConsoleError, "invalid email:  3")
        );

        let net = json!({ "level": "SEVERE", "source": "network",
            "message": "http://h/favicon.ico - Failed to load resource: 404" });
        assert!(signal_of_log_entry(&net).is_none());
        let warn = json!({ "level": "WARNING", "source": "console-api", "message": "x 1:1 \"w\"" });
        assert!(signal_of_log_entry(&warn).is_none());
        // No position: the whole text is the message.
        let odd = json!({ "level": "SEVERE", "source": "console-api", "message": "{a: 1}" });
        assert_eq!(signal_of_log_entry(&odd).unwrap().message, "{a: 1}");
    }

    #[test]
    fn v8_stacks_parse_into_frames() {
        let stack = "TypeError: boom\n    at checkout (http://h/app.js:42:18)\n    at HTMLButtonElement.<anonymous> (http://h/app.js:7:3)\n    at http://h/app.js:1:1\n    at async load (http://h/a.js:2:2)";
        let frames = parse_v8_stack(stack);
        assert_eq!(frames.len(), 4);
        assert_eq!(
            frames[0],
            StackFrame {
                function: "checkout".into(),
                url: "http://h/app.js".into(),
                line: 42,
                column: 18,
            }
        );
        assert_eq!(frames[1].function, "");
        assert_eq!(frames[2].function, "");
        assert_eq!(frames[3].function, "load");
        let frames = parse_v8_stack(
            "    at HTMLButtonElement.checkout (http://h/app.js:505:51)\n    at new Cart [as make] (http://h/app.js:1:2)",
        );
        assert_eq!(
            (frames[0].function.as_str(), frames[1].function.as_str()),
            ("checkout", "Cart")
        );
        let s = signal_of_record(
            &json!({ "kind": "exception", "message": "TypeError: boom", "stack": stack }),
        )
        .unwrap();
        assert_eq!(s.kind, SignalKind::UncaughtException);
        assert_eq!(s.stack.len(), 4);
    }
}
