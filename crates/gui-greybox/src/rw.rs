//! What an event handler reads and writes: the input of Algorithm 1.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The fields (Java) or access paths (JavaScript) an event handler reads and writes,
/// including everything reached through the calls it makes inside the application's own
/// code (Section 4.3: "we recursively follow potential method calls").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadWrite {
    pub reads: BTreeSet<String>,
    pub writes: BTreeSet<String>,
}

impl ReadWrite {
    /// Adds everything `other` reads and writes.
    pub fn merge(&mut self, other: &ReadWrite) {
        self.reads.extend(other.reads.iter().cloned());
        self.writes.extend(other.writes.iter().cloned());
    }

    /// Adds one read (or, with `write`, one write) of `path`.
    pub fn record(&mut self, path: &str, write: bool) {
        let set = if write {
            &mut self.writes
        } else {
            &mut self.reads
        };
        set.insert(path.to_owned());
    }

    /// Algorithm 1's edge weight from `self` (the earlier event) to `later`:
    /// `|R(later) ∩ W(self)|`.
    pub fn flows_into(&self, later: &ReadWrite) -> usize {
        self.writes.intersection(&later.reads).count()
    }

    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }
}

/// A `ReadWrite` from lists of names, for unit tests.
#[cfg(test)]
pub(crate) fn rw(reads: &[&str], writes: &[&str]) -> ReadWrite {
    ReadWrite {
        reads: reads.iter().map(|s| s.to_string()).collect(),
        writes: writes.iter().map(|s| s.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_counts_written_fields_the_later_handler_reads() {
        let e4 = rw(&["Dialog.mainWindow"], &["MainWindow.text"]);
        let e2 = rw(&["MainWindow.text"], &["MainWindow.text"]);
        assert_eq!(e4.flows_into(&e2), 1);
        assert_eq!(e2.flows_into(&e4), 0);
    }
}
