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
    /// Equal keys mean the same bug: kind, the message's first line and the top frames.
    /// The message part leaves out what changes from one occurrence to the next: numbers,
    /// hex ids (`0x7f3a`, uuids, hashes) and ISO dates and times each read `#`, so
    /// `retry 3` and `retry 4` are one bug; digits inside a name (`page1`) stay. Frames
    /// keep their line and column, which say where the code is.
    pub key: String,
}

impl Signal {
    /// How many top frames identify a bug. Three frames tell apart the same exception thrown
    /// from different callers without splitting one bug over deep, varying stacks.
    pub const KEY_FRAMES: usize = 3;
    /// The longest message a signal keeps, in bytes. An app can log megabytes in one
    /// `console.error`; every signal is written to the run folder and into reports.
    pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
    /// The longest message part of a key, in characters: enough to tell messages apart,
    /// short enough for a report heading.
    pub const KEY_MESSAGE_CHARS: usize = 200;

    /// A signal with its key. A message longer than [`MAX_MESSAGE_BYTES`] is cut (on a
    /// character boundary) and ends with a note of how much was cut.
    ///
    /// [`MAX_MESSAGE_BYTES`]: Self::MAX_MESSAGE_BYTES
    pub fn new(kind: SignalKind, message: impl Into<String>, stack: Vec<StackFrame>) -> Self {
        let message = capped_message(message.into());
        let mut key = format!("{kind:?}|{}", key_message(first_line(&message)));
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

/// `message`, or its first [`Signal::MAX_MESSAGE_BYTES`] bytes ending in a note of the
/// bytes cut.
fn capped_message(mut message: String) -> String {
    if message.len() <= Signal::MAX_MESSAGE_BYTES {
        return message;
    }
    let total = message.len();
    // The note is at most 40 bytes; cut below the cap by that much so the result fits.
    let mut end = Signal::MAX_MESSAGE_BYTES - 40;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    message.push_str(&format!("\n[{} more bytes cut]", total - end));
    message
}

/// The message part of a key: `line` with numbers, hex ids and ISO timestamps replaced by
/// `#`, at most [`Signal::KEY_MESSAGE_CHARS`] characters.
///
/// Only tokens that start a word are replaced: `5001ms` and `retry 3` vary, `page1` and
/// `utf8` name something. A timestamp, a `0x` number or a run of at least 8 hex digits
/// with a decimal digit among them (hashes, uuids with their dashes) becomes one `#`.
fn key_message(line: &str) -> String {
    // Tokens shrink to one `#`, so more input than output is read, but not without bound:
    // a line can be 64 KiB, and the token scans below restart at every word.
    let chars: Vec<char> = line.chars().take(8 * Signal::KEY_MESSAGE_CHARS).collect();
    let mut out = String::with_capacity(line.len().min(4 * Signal::KEY_MESSAGE_CHARS));
    let mut written = 0;
    let mut i = 0;
    while i < chars.len() && written < Signal::KEY_MESSAGE_CHARS {
        let starts_word = i == 0 || !is_word_char(chars[i - 1]);
        let rest = &chars[i..];
        let varying = if starts_word {
            timestamp_len(rest)
                .or_else(|| hex_id_len(rest))
                .or_else(|| rest[0].is_ascii_digit().then(|| digits(rest)))
        } else {
            None
        };
        match varying {
            Some(len) => {
                out.push('#');
                i += len;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
        written += 1;
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// How many ASCII digits `s` starts with.
fn digits(s: &[char]) -> usize {
    s.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// Whether `s[..len]` is a whole token: nothing that could continue a name follows it.
fn ends_word(s: &[char], len: usize) -> bool {
    s.get(len).is_none_or(|&c| !is_word_char(c))
}

/// The length of an ISO 8601 date (`2026-12-07`), date and time (`2026-12-07T14:38:02.5Z`,
/// also with a space or a `+01:00` offset) or time of day (`14:38`, `14:38:02.125`) at the
/// start of `s`.
fn timestamp_len(s: &[char]) -> Option<usize> {
    let fixed = |at: usize, n: usize| -> bool {
        s.len() >= at + n && s[at..at + n].iter().all(char::is_ascii_digit)
    };
    let dash = |at: usize| s.get(at) == Some(&'-');
    let date = fixed(0, 4) && dash(4) && fixed(5, 2) && dash(7) && fixed(8, 2);
    let time_at = if date {
        match s.get(10) {
            Some('T' | ' ') if fixed(11, 2) && s.get(13) == Some(&':') => 11,
            _ => return ends_word(s, 10).then_some(10),
        }
    } else {
        0
    };
    // hh:mm, then :ss and a fraction.
    if !(fixed(time_at, 2) && s.get(time_at + 2) == Some(&':') && fixed(time_at + 3, 2)) {
        return None;
    }
    let mut end = time_at + 5;
    if s.get(end) == Some(&':') && fixed(end + 1, 2) {
        end += 3;
        if matches!(s.get(end), Some('.' | ',')) && fixed(end + 1, 1) {
            end += 1 + digits(&s[end + 1..]);
        }
    }
    // The zone: Z, or an offset ±hh:mm / ±hhmm, only after a date (a bare `10:20-05`
    // is more likely a range).
    if date {
        if s.get(end) == Some(&'Z') {
            end += 1;
        } else if matches!(s.get(end), Some('+' | '-')) && fixed(end + 1, 2) {
            let colon = usize::from(s.get(end + 3) == Some(&':'));
            if fixed(end + 3 + colon, 2) {
                end += 5 + colon;
            }
        }
    }
    ends_word(s, end).then_some(end)
}

/// The length of a hex id at the start of `s`: `0x` and hex digits, or at least 8 hex
/// digits, possibly in dash-separated groups (a uuid), with a decimal digit among them so
/// that words such as `deadbeef` or `defaced` stay.
fn hex_id_len(s: &[char]) -> Option<usize> {
    if s.len() > 2 && s[0] == '0' && matches!(s[1], 'x' | 'X') {
        let n = s[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        return (n > 0 && ends_word(s, 2 + n)).then_some(2 + n);
    }
    let mut end = 0;
    let mut hex_digits = 0;
    let mut decimal = false;
    while let Some(&c) = s.get(end) {
        if c.is_ascii_hexdigit() {
            hex_digits += 1;
            decimal |= c.is_ascii_digit();
        } else if !(c == '-' && s.get(end + 1).is_some_and(char::is_ascii_hexdigit) && end > 0) {
            break;
        }
        end += 1;
    }
    (hex_digits >= 8 && decimal && ends_word(s, end)).then_some(end)
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
    /// What the device handled for the app during the step (dialogs answered, tabs
    /// closed, the app brought back after it left), in order.
    pub device_events: Vec<crate::DeviceEvent>,
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

    fn key(message: &str) -> String {
        Signal::new(SignalKind::ConsoleError, message, vec![frame("f", 7)]).key
    }

    #[test]
    fn numbers_hex_ids_and_timestamps_do_not_split_a_bug() {
        for (a, b) in [
            ("retry 3", "retry 17"),
            ("took 5001ms", "took 12ms"),
            ("object 0x7f3a2c at 0X10", "object 0xdeadbeef at 0x2"),
            (
                "no session 550e8400-e29b-41d4-a716-446655440000",
                "no session 9b2f1c3e-0000-4a1b-8c9d-0123456789ab",
            ),
            (
                "bad chunk d41d8cd98f00b204e9800998ecf8427e",
                "bad chunk 0cc175b9c0f1b6a831c399e269772661",
            ),
            (
                "2026-12-07T14:38:02.125Z request failed",
                "2027-01-01T00:00:00Z request failed",
            ),
            (
                "at 2026-12-07 14:38:02+01:00",
                "at 2025-01-31 09:01:59-0500",
            ),
            (
                "since 2026-12-07, at 14:38",
                "since 2025-01-31, at 09:01:59.5",
            ),
            ("item 3 of 12 (42%)", "item 11 of 12 (91%)"),
        ] {
            assert_eq!(key(a), key(b), "{a:?} and {b:?}");
        }
        assert_eq!(key("retry 3"), "ConsoleError|retry #|f@app.js:7:1");
        assert_eq!(
            key("2026-12-07T14:38:02Z object 0x7f at 550e8400-e29b-41d4-a716-446655440000"),
            "ConsoleError|# object # at #|f@app.js:7:1"
        );
    }

    #[test]
    fn names_and_words_keep_their_digits_and_letters() {
        assert_ne!(key("x1 is not defined"), key("x2 is not defined"));
        assert_ne!(key("deadbeef failed"), key("cafebabe failed"));
        assert!(key("page1_widget5 threw in utf8 mode").contains("page1_widget5 threw in utf8"));
        // The message itself is kept as it came.
        let s = Signal::new(SignalKind::ConsoleError, "retry 3 at 0x7f", vec![]);
        assert_eq!(s.message, "retry 3 at 0x7f");
        assert_eq!(s.key, "ConsoleError|retry # at #");
    }

    #[test]
    fn frame_lines_and_columns_stay_in_the_key() {
        let at = |line| {
            Signal::new(
                SignalKind::UncaughtException,
                "boom 1",
                vec![frame("f", line)],
            )
        };
        assert_ne!(at(12).key, at(13).key);
        assert_eq!(at(12).key, "UncaughtException|boom #|f@app.js:12:1");
    }

    #[test]
    fn crash_and_hang_signals_have_fixed_keys() {
        let crash = Signal::new(
            SignalKind::Crash,
            "the page's renderer process crashed",
            vec![],
        );
        assert_eq!(crash.key, "Crash|the page's renderer process crashed");
        let hang = Signal::new(
            SignalKind::Crash,
            "the page stopped answering (hang)\ntimed out after 30000 ms",
            vec![],
        );
        assert_eq!(hang.key, "Crash|the page stopped answering (hang)");
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary_and_keys_stay_short() {
        // Two-byte characters, so a cut at an even byte count would split one if the cap
        // were not walked back to a boundary.
        let long = format!("x{}", "é".repeat(Signal::MAX_MESSAGE_BYTES));
        let s = Signal::new(SignalKind::ConsoleError, long.clone(), vec![frame("f", 1)]);
        assert!(
            s.message.len() <= Signal::MAX_MESSAGE_BYTES,
            "{}",
            s.message.len()
        );
        assert!(
            s.message.ends_with(" more bytes cut]"),
            "{}",
            &s.message[s.message.len() - 40..]
        );
        let kept = s.message.split('\n').next().unwrap();
        assert!(long.starts_with(kept) && kept.len() > Signal::MAX_MESSAGE_BYTES - 64);
        let message_part = s.key.strip_prefix("ConsoleError|").unwrap();
        let message_part = message_part.strip_suffix("|f@app.js:1:1").unwrap();
        assert_eq!(message_part.chars().count(), Signal::KEY_MESSAGE_CHARS);
        // A message under the cap is kept whole.
        let short = "é".repeat(1000);
        assert_eq!(
            Signal::new(SignalKind::ConsoleError, short.clone(), vec![]).message,
            short
        );
    }
}
