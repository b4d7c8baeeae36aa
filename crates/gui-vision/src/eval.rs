//! Detection quality as the paper measures it (Section 3.1.1): a detected box is a true
//! positive when it matches a ground-truth box with IoU above a threshold (0.8), each box
//! matched at most once.

use gui_core::Rect;
use serde::{Deserialize, Serialize};

/// The paper's IoU threshold for a true positive (after Chen et al. 2020c and Yu et al.).
pub const PAPER_IOU: f64 = 0.8;

/// A one-to-one matching of detected boxes to ground-truth boxes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Matching {
    /// `(detected index, truth index, IoU)` of every matched pair.
    pub pairs: Vec<(usize, usize, f64)>,
    pub true_positives: usize,
    pub false_positives: usize,
    pub false_negatives: usize,
}

/// Matches boxes greedily by decreasing IoU, keeping pairs with IoU ≥ `min_iou`.
///
/// Greedy matching by IoU is the usual protocol of object-detection benchmarks; with a
/// threshold of at least 0.5 it equals the optimal assignment, because a box can then
/// overlap that much with at most one disjoint partner in practice.
pub fn match_boxes(detected: &[Rect], truth: &[Rect], min_iou: f64) -> Matching {
    let mut candidates: Vec<(usize, usize, f64)> = Vec::new();
    for (i, d) in detected.iter().enumerate() {
        for (j, t) in truth.iter().enumerate() {
            let iou = d.iou(t);
            if iou >= min_iou && iou > 0.0 {
                candidates.push((i, j, iou));
            }
        }
    }
    candidates.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
    let mut used_d = vec![false; detected.len()];
    let mut used_t = vec![false; truth.len()];
    let mut pairs = Vec::new();
    for (i, j, iou) in candidates {
        if !used_d[i] && !used_t[j] {
            used_d[i] = true;
            used_t[j] = true;
            pairs.push((i, j, iou));
        }
    }
    Matching {
        true_positives: pairs.len(),
        false_positives: detected.len() - pairs.len(),
        false_negatives: truth.len() - pairs.len(),
        pairs,
    }
}

/// Precision, recall and F-measure summed over any number of screens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DetectionScore {
    pub true_positives: usize,
    pub false_positives: usize,
    pub false_negatives: usize,
}

impl DetectionScore {
    pub fn add(&mut self, m: &Matching) {
        self.true_positives += m.true_positives;
        self.false_positives += m.false_positives;
        self.false_negatives += m.false_negatives;
    }

    /// TP / (TP + FP); 1 when nothing was detected.
    pub fn precision(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_positives,
        )
    }

    /// TP / (TP + FN); 1 when there was nothing to find.
    pub fn recall(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_negatives,
        )
    }

    /// Harmonic mean of precision and recall.
    pub fn f_measure(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_box_matches_once_and_the_best_pair_wins() {
        let truth = [Rect::new(0, 0, 100, 40), Rect::new(0, 100, 50, 50)];
        let detected = [
            Rect::new(2, 0, 100, 40),  // IoU 0.96 with truth 0
            Rect::new(0, 0, 100, 40),  // IoU 1.0 with truth 0: wins
            Rect::new(0, 100, 50, 30), // IoU 0.6: below 0.8
        ];
        let m = match_boxes(&detected, &truth, PAPER_IOU);
        assert_eq!(m.pairs, vec![(1, 0, 1.0)]);
        assert_eq!(
            (m.true_positives, m.false_positives, m.false_negatives),
            (1, 2, 1)
        );
        let mut s = DetectionScore::default();
        s.add(&m);
        assert!((s.precision() - 1.0 / 3.0).abs() < 1e-12);
        assert!((s.recall() - 0.5).abs() < 1e-12);
        assert!((s.f_measure() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn iou_and_matching_laws_on_random_boxes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let random_box = |rng: &mut rand_chacha::ChaCha8Rng| {
            Rect::new(
                rng.random_range(-20..200),
                rng.random_range(-20..200),
                rng.random_range(0..80),
                rng.random_range(0..80),
            )
        };
        for _ in 0..300 {
            let (a, b) = (random_box(&mut rng), random_box(&mut rng));
            let iou = a.iou(&b);
            assert!((0.0..=1.0).contains(&iou), "{a:?} {b:?} {iou}");
            assert_eq!(iou, b.iou(&a));
            if a.area() > 0 {
                assert_eq!(a.iou(&a), 1.0);
            }
        }
        for _ in 0..50 {
            let d: Vec<Rect> = (0..rng.random_range(0..12))
                .map(|_| random_box(&mut rng))
                .collect();
            let t: Vec<Rect> = (0..rng.random_range(0..12))
                .map(|_| random_box(&mut rng))
                .collect();
            for min_iou in [0.3, PAPER_IOU] {
                let m = match_boxes(&d, &t, min_iou);
                let mut seen_d = std::collections::HashSet::new();
                let mut seen_t = std::collections::HashSet::new();
                for &(i, j, iou) in &m.pairs {
                    assert!(seen_d.insert(i) && seen_t.insert(j), "a box matched twice");
                    assert!(iou >= min_iou);
                }
                assert_eq!(m.true_positives + m.false_positives, d.len());
                assert_eq!(m.true_positives + m.false_negatives, t.len());
            }
        }
    }

    #[test]
    fn empty_inputs() {
        let m = match_boxes(&[], &[], PAPER_IOU);
        let mut s = DetectionScore::default();
        s.add(&m);
        assert_eq!((s.precision(), s.recall()), (1.0, 1.0));
        let m = match_boxes(&[Rect::new(0, 0, 5, 5)], &[], PAPER_IOU);
        s.add(&m);
        assert_eq!(s.precision(), 0.0);
    }
}
