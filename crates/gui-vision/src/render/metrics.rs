//! RQ1's scores: precision, recall and F1 with "fully rendered" as the positive class.

use serde::{Deserialize, Serialize};

use super::RenderLabel;

/// A confusion matrix and the paper's scores derived from it.
///
/// Precision is the share of screens predicted fully rendered that are; recall the share
/// of fully rendered screens predicted so; F1 their harmonic mean (AdaT Section IV, RQ1).
/// A ratio with an empty denominator is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RenderMetrics {
    /// `confusion[truth][predicted]`, indexed by [`RenderLabel::index`].
    pub confusion: [[usize; 2]; 2],
}

impl RenderMetrics {
    /// Counts `(truth, predicted)` pairs.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (RenderLabel, RenderLabel)>) -> Self {
        let mut m = Self::default();
        for (truth, predicted) in pairs {
            m.add(truth, predicted);
        }
        m
    }

    pub fn add(&mut self, truth: RenderLabel, predicted: RenderLabel) {
        self.confusion[truth.index()][predicted.index()] += 1;
    }

    /// Adds another matrix's counts.
    pub fn merge(&mut self, other: &RenderMetrics) {
        for t in 0..2 {
            for p in 0..2 {
                self.confusion[t][p] += other.confusion[t][p];
            }
        }
    }

    pub fn total(&self) -> usize {
        self.confusion.iter().flatten().sum()
    }

    fn tp(&self) -> usize {
        self.confusion[1][1]
    }

    pub fn precision(&self) -> f64 {
        ratio(self.tp(), self.confusion[0][1] + self.tp())
    }

    pub fn recall(&self) -> f64 {
        ratio(self.tp(), self.confusion[1][0] + self.tp())
    }

    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    pub fn accuracy(&self) -> f64 {
        ratio(self.confusion[0][0] + self.tp(), self.total())
    }
}

impl std::fmt::Display for RenderMetrics {
    /// `P 0.912 R 0.880 F1 0.896 acc 0.901 (n 120; full->partial 12, partial->full 8)`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "P {:.3} R {:.3} F1 {:.3} acc {:.3} (n {}; full->partial {}, partial->full {})",
            self.precision(),
            self.recall(),
            self.f1(),
            self.accuracy(),
            self.total(),
            self.confusion[1][0],
            self.confusion[0][1],
        )
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RenderLabel::{Full, Partial};

    #[test]
    fn scores_match_a_hand_count() {
        // 6 full screens: 4 called full, 2 partial; 4 partial screens: 1 called full.
        let pairs = [
            (Full, Full),
            (Full, Full),
            (Full, Full),
            (Full, Full),
            (Full, Partial),
            (Full, Partial),
            (Partial, Full),
            (Partial, Partial),
            (Partial, Partial),
            (Partial, Partial),
        ];
        let m = RenderMetrics::from_pairs(pairs);
        assert_eq!(m.confusion, [[3, 1], [2, 4]]);
        assert!((m.precision() - 4.0 / 5.0).abs() < 1e-12);
        assert!((m.recall() - 4.0 / 6.0).abs() < 1e-12);
        let f1 = 2.0 * 0.8 * (4.0 / 6.0) / (0.8 + 4.0 / 6.0);
        assert!((m.f1() - f1).abs() < 1e-12);
        assert!((m.accuracy() - 0.7).abs() < 1e-12);
        let mut twice = m;
        twice.merge(&m);
        assert_eq!(twice.total(), 20);
        assert_eq!(twice.f1(), m.f1());
        // Nothing predicted full: precision and F1 are 0, not NaN.
        let none = RenderMetrics::from_pairs([(Full, Partial), (Partial, Partial)]);
        assert_eq!(
            (none.precision(), none.recall(), none.f1()),
            (0.0, 0.0, 0.0)
        );
        assert_eq!(RenderMetrics::default().accuracy(), 0.0);
    }
}
