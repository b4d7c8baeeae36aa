//! Replaying a run: matching the bugs of a run with those of its replay, and quoting run
//! folders in the command lines that replay them.

use crate::SignalRecord;

/// A signal key without URL origins (`http://127.0.0.1:41234/app.js:10:5` becomes
/// `/app.js:10:5`): the same bug found while the app was served on one port matches it on
/// another.
pub fn portable_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut rest = key;
    while let Some(i) = ["http://", "https://", "file://"]
        .iter()
        .filter_map(|scheme| rest.find(scheme).map(|i| (i, scheme.len())))
        .min()
        .map(|(i, len)| (i, i + len))
    {
        let (start, host) = i;
        out.push_str(&rest[..start]);
        let after = &rest[host..];
        // The origin ends at the path's first '/', or where the URL ends.
        let end = after.find(['/', '|', ' ']).unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Quotes a path for a POSIX shell when it holds anything but plain path characters, so a
/// printed `replay` command line can be pasted as it is.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// One bug of the original run and whether the replay showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reproduction {
    pub key: String,
    /// The step at which the original run first showed it.
    pub original_step: u64,
    /// The step at which the replay first showed it; `None` if it did not.
    pub replayed_step: Option<u64>,
}

/// The original run's signals first seen at or before `until`, each with the replay's
/// first step of the same (portable) key.
pub fn reproductions(
    original: &[SignalRecord],
    until: u64,
    replayed: &[SignalRecord],
) -> Vec<Reproduction> {
    original
        .iter()
        .filter(|s| s.first_step <= until)
        .map(|s| {
            let key = portable_key(&s.key);
            let replayed_step = replayed
                .iter()
                .filter(|r| portable_key(&r.key) == key)
                .map(|r| r.first_step)
                .min();
            Reproduction {
                key,
                original_step: s.first_step,
                replayed_step,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use gui_core::SignalKind;

    use super::*;

    fn signal(key: &str, step: u64) -> SignalRecord {
        SignalRecord {
            key: key.to_owned(),
            kind: SignalKind::UncaughtException,
            message: String::new(),
            stack: Vec::new(),
            first_step: step,
            screenshot: String::new(),
        }
    }

    #[test]
    fn origins_are_dropped_from_keys() {
        assert_eq!(
            portable_key(
                "UncaughtException|TypeError: x|undoArchive@http://127.0.0.1:41234/app.js:380:3|f@https://a.example/b.js:1:2"
            ),
            "UncaughtException|TypeError: x|undoArchive@/app.js:380:3|f@/b.js:1:2"
        );
        assert_eq!(portable_key("Crash|renderer gone"), "Crash|renderer gone");
        assert_eq!(portable_key("x@http://host"), "x@");
    }

    #[test]
    fn bugs_are_matched_across_ports_and_cut_at_the_step() {
        let original = [
            signal("E|a@http://127.0.0.1:1000/app.js:1:1", 3),
            signal("E|b@http://127.0.0.1:1000/app.js:2:1", 9),
        ];
        let replayed = [signal("E|a@http://127.0.0.1:2000/app.js:1:1", 4)];
        let r = reproductions(&original, 5, &replayed);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].replayed_step, Some(4));
        let r = reproductions(&original, 10, &[]);
        assert_eq!(r.iter().filter(|x| x.replayed_step.is_none()).count(), 2);
    }

    #[test]
    fn shell_quoting_only_when_needed() {
        assert_eq!(shell_quote("runs/monkey-seed1-17"), "runs/monkey-seed1-17");
        assert_eq!(shell_quote("my runs/it's"), r"'my runs/it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
