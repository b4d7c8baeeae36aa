//! Crashes and ANRs of one package, read from `logcat -v threadtime`.
//!
//! Android prints an uncaught exception through `AndroidRuntime` at level E:
//!
//! ```text
//! 11-30 12:00:00.003  4001  4001 E AndroidRuntime: FATAL EXCEPTION: main
//! 11-30 12:00:00.003  4001  4001 E AndroidRuntime: Process: com.example.fake, PID: 4001
//! 11-30 12:00:00.003  4001  4001 E AndroidRuntime: java.lang.IllegalStateException: ...
//! 11-30 12:00:00.003  4001  4001 E AndroidRuntime:     at android.view.View.performClick(View.java:7448)
//! 11-30 12:00:00.003  4001  4001 E AndroidRuntime: Caused by: java.lang.NullPointerException: ...
//! 11-30 12:00:00.003  4001  4001 E AndroidRuntime:     at com.example.fake.MainActivity.f(MainActivity.java:58)
//! ```
//!
//! (with a tab before each `at`), and an app that stopped answering through
//! `ActivityManager` ("ANR in PROCESS (COMPONENT)", then "PID:", "Reason:" lines).
//! Everything else is filtered out on the phone by the tag specs of
//! [`LogcatReader::command`].

use crate::traces::java_frame;
use std::collections::{BTreeMap, HashSet};

use gui_core::{Signal, SignalKind, StackFrame};

/// Frames of these packages belong to the platform and libraries, not to the app; they
/// are skipped when the crash key looks for the app's own frames.
const FRAMEWORK_PREFIXES: [&str; 11] = [
    "android.",
    "androidx.",
    "com.android.",
    "com.google.android.",
    "dalvik.",
    "java.",
    "javax.",
    "kotlin.",
    "kotlinx.",
    "libcore.",
    "sun.",
];

/// One line of `logcat -v threadtime`: `MM-DD HH:MM:SS.mmm PID TID L TAG: MESSAGE`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LogLine<'a> {
    pub timestamp: &'a str,
    pub pid: u32,
    pub level: char,
    pub tag: &'a str,
    pub message: &'a str,
}

pub(crate) fn parse_line(line: &str) -> Option<LogLine<'_>> {
    let mut rest = line;
    let mut field = || {
        let r = rest.trim_start();
        let end = r.find(char::is_whitespace).unwrap_or(r.len());
        let (word, after) = r.split_at(end);
        rest = after;
        word
    };
    let date = field();
    let time = field();
    let pid = field().parse().ok()?;
    let _tid = field();
    let level = field();
    if date.len() != 5 || time.len() < 8 || level.len() != 1 {
        return None;
    }
    let start = line.find(date)?;
    let timestamp = line.get(start..start + date.len() + 1 + time.len())?;
    // The tag is padded to eight characters before its colon; the message keeps its own
    // leading whitespace (the tab before "at").
    let rest = rest.trim_start();
    let (tag, message) = match rest.split_once(": ") {
        Some((tag, message)) => (tag, message),
        None => (rest.strip_suffix(':')?, ""),
    };
    Some(LogLine {
        timestamp,
        pid,
        level: level.chars().next()?,
        tag: tag.trim(),
        message,
    })
}

/// Reads new logcat lines on each drain and turns the package's crashes into signals.
#[derive(Debug, Clone)]
pub(crate) struct LogcatReader {
    package: String,
    /// Timestamp of the newest line read; `logcat -T` repeats lines of that very
    /// millisecond, which `seen` filters out.
    since: Option<String>,
    seen: HashSet<String>,
}

impl LogcatReader {
    pub fn new(package: &str) -> Self {
        Self {
            package: package.to_owned(),
            since: None,
            seen: HashSet::new(),
        }
    }

    /// The phone-side command printing what is new: crash reports and ActivityManager
    /// errors only, everything else silenced.
    pub fn command(&self) -> String {
        let mut cmd = "logcat -d -v threadtime".to_owned();
        if let Some(since) = &self.since {
            cmd.push_str(&format!(" -T {}", super::adb::sh_quote(since)));
        }
        cmd.push_str(" AndroidRuntime:E ActivityManager:E '*:S'");
        cmd
    }

    /// Signals in the output of [`LogcatReader::command`], skipping lines read before.
    pub fn read(&mut self, output: &str) -> Vec<Signal> {
        let mut fresh = Vec::new();
        for raw in output.lines() {
            let Some(line) = parse_line(raw) else {
                continue;
            };
            if let Some(since) = &self.since {
                if line.timestamp < since.as_str()
                    || (line.timestamp == since && self.seen.contains(raw))
                {
                    continue;
                }
                if line.timestamp > since.as_str() {
                    self.seen.clear();
                }
            }
            self.since = Some(line.timestamp.to_owned());
            self.seen.insert(raw.to_owned());
            fresh.push(line);
        }
        signals(&fresh, &self.package)
    }
}

/// Whether a process name belongs to the package (its main process or a `pkg:name` one).
fn is_package(process: &str, package: &str) -> bool {
    process == package
        || process
            .strip_prefix(package)
            .is_some_and(|r| r.starts_with(':'))
}

/// The package's crashes and ANRs among `lines`, in order. A report still being written
/// when the log was read ends where the read ended.
pub(crate) fn signals(lines: &[LogLine<'_>], package: &str) -> Vec<Signal> {
    // Reports by pid: lines of different processes may interleave.
    let mut open: BTreeMap<(u32, &str), (usize, Vec<&str>)> = BTreeMap::new();
    let mut done: Vec<(usize, &str, Vec<&str>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let key = (line.pid, line.tag);
        let starts = match line.tag {
            "AndroidRuntime" => line.message.starts_with("FATAL EXCEPTION"),
            "ActivityManager" => line.message.starts_with("ANR in "),
            _ => continue,
        };
        if starts {
            if let Some((at, body)) = open.remove(&key) {
                done.push((at, key.1, body));
            }
            open.insert(key, (i, vec![line.message]));
        } else if let Some((_, body)) = open.get_mut(&key) {
            body.push(line.message);
        }
    }
    done.extend(
        open.into_iter()
            .map(|((_, tag), (at, body))| (at, tag, body)),
    );
    done.sort_by_key(|(at, _, _)| *at);
    done.into_iter()
        .filter_map(|(_, tag, body)| match tag {
            "AndroidRuntime" => fatal_exception(&body, package),
            _ => anr(&body, package),
        })
        .collect()
}

/// One exception of a report: the top one or a "Caused by:".
#[derive(Debug, Default)]
struct Section {
    header: String,
    frames: Vec<StackFrame>,
}

impl Section {
    /// `java.lang.NullPointerException` of `java.lang.NullPointerException: message`.
    fn exception_type(&self) -> &str {
        self.header
            .split_once(": ")
            .map_or(self.header.as_str(), |(t, _)| t)
            .trim()
    }
}

fn fatal_exception(body: &[&str], package: &str) -> Option<Signal> {
    let thread = body.first()?.split_once(": ").map_or("", |(_, t)| t.trim());
    let process = body
        .iter()
        .find_map(|l| l.strip_prefix("Process: "))
        .map(|p| p.split(',').next().unwrap_or("").trim())?;
    if !is_package(process, package) {
        return None;
    }
    let mut sections: Vec<Section> = Vec::new();
    for line in body.iter().skip(1) {
        if line.starts_with("Process: ") {
            continue;
        }
        if let Some(frame) = java_frame(line) {
            if let Some(s) = sections.last_mut() {
                s.frames.push(frame);
            }
        } else if line.trim_start().starts_with("...") {
            // "... 11 more": frames shared with the enclosing exception.
        } else if let Some(cause) = line.strip_prefix("Caused by: ") {
            sections.push(Section {
                header: cause.trim().to_owned(),
                frames: Vec::new(),
            });
        } else if sections.is_empty() {
            sections.push(Section {
                header: line.trim().to_owned(),
                frames: Vec::new(),
            });
        } else if let Some(s) = sections.last_mut()
            && s.frames.is_empty()
        {
            // A message spanning several lines.
            s.header.push('\n');
            s.header.push_str(line.trim_end());
        }
    }
    let top = sections.first()?;
    let root = sections.last()?;
    let mut message = top.header.clone();
    for s in &sections[1..] {
        message.push_str("\nCaused by: ");
        message.push_str(&s.header);
    }
    message.push_str(&format!("\n(thread {thread}, process {process})"));
    let stack: Vec<StackFrame> = sections.iter().flat_map(|s| s.frames.clone()).collect();

    // Where the bug is: the app's own frames, deepest cause first (its frames are the
    // ones nearest to the throw; the outer traces add the callers it shares with them).
    let by_cause = || sections.iter().rev().flat_map(|s| s.frames.iter());
    let ours: Vec<&StackFrame> = by_cause()
        .filter(|f| f.function.starts_with(&format!("{package}.")))
        .collect();
    let ours = if ours.is_empty() {
        by_cause()
            .filter(|f| !FRAMEWORK_PREFIXES.iter().any(|p| f.function.starts_with(p)))
            .collect()
    } else {
        ours
    };
    let ours = if ours.is_empty() {
        by_cause().collect()
    } else {
        ours
    };
    let mut signal = Signal::new(SignalKind::Crash, message, stack);
    // Neither the pid, the thread nor the message text (which may quote values) is part
    // of the key: the same exception types thrown at the same app frames are one bug.
    signal.key = format!(
        "{:?}|android|{}|{}",
        SignalKind::Crash,
        top.exception_type(),
        root.exception_type()
    );
    for f in ours.iter().take(Signal::KEY_FRAMES) {
        signal
            .key
            .push_str(&format!("|{}@{}:{}", f.function, f.url, f.line));
    }
    Some(signal)
}

fn anr(body: &[&str], package: &str) -> Option<Signal> {
    let first = body.first()?.trim();
    let process = first.strip_prefix("ANR in ")?.split_whitespace().next()?;
    if !is_package(process, package) {
        return None;
    }
    // The first line names process and component, both stable; the reason quotes times
    // and window ids, so it goes on later lines, which the key ignores.
    let mut message = format!("Application Not Responding: {first}");
    for line in &body[1..] {
        if line.starts_with("Reason: ") || line.starts_with("Parent: ") {
            message.push('\n');
            message.push_str(line.trim());
        }
    }
    Some(Signal::new(SignalKind::Crash, message, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threadtime_lines_are_split_into_their_fields() {
        let l = parse_line("11-30 12:00:00.003  4001  4002 E AndroidRuntime: \tat a.B.c(B.java:3)")
            .unwrap();
        assert_eq!(l.timestamp, "11-30 12:00:00.003");
        assert_eq!((l.pid, l.level, l.tag), (4001, 'E', "AndroidRuntime"));
        assert_eq!(l.message, "\tat a.B.c(B.java:3)");
        let l = parse_line("11-30 12:00:00.003   532   600 I am      : x: y").unwrap();
        assert_eq!((l.tag, l.message), ("am", "x: y"));
        assert!(parse_line("--------- beginning of crash").is_none());
    }

    #[test]
    fn frames_without_line_numbers_are_kept() {
        let f = java_frame("\tat java.lang.reflect.Method.invoke(Native Method)").unwrap();
        assert_eq!(
            (f.function.as_str(), f.url.as_str(), f.line),
            ("java.lang.reflect.Method.invoke", "Native Method", 0)
        );
        assert!(java_frame("at not.Indented(X.java:1)").is_none());
    }

    #[test]
    fn lines_repeated_by_logcat_since_are_read_once() {
        let a = "11-30 12:00:00.001   532   532 E ActivityManager: ANR in com.x (com.x/.A)";
        let b = "11-30 12:00:00.002   532   532 E ActivityManager: ANR in com.x (com.x/.B)";
        let mut r = LogcatReader::new("com.x");
        assert_eq!(r.read(a).len(), 1);
        assert!(
            r.command().contains("-T '11-30 12:00:00.001'"),
            "{}",
            r.command()
        );
        // `-T` is inclusive: the line at the boundary comes again.
        let again = r.read(&format!("{a}\n{b}\n"));
        assert_eq!(again.len(), 1);
        assert!(again[0].message.contains("com.x/.B"));
    }
}
