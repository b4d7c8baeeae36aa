//! The Boltzmann exploration policy of PIRLTest (Sections 3.4 and 3.4.3): Q-values are
//! weighted by action group (system actions 0.5, widget and page actions 1) and turned
//! into execution probabilities by a softmax with a temperature.

use gui_core::{ActionGroup, ActionKind};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Softmax over group-weighted Q-values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BoltzmannPolicy {
    temperature: f64,
    system_weight: f64,
    /// Whether the weighted Q-values are divided by their spread over the screen's
    /// candidates before the softmax ([`Self::with_spread_scale`]).
    #[serde(default)]
    spread_scale: bool,
}

impl Default for BoltzmannPolicy {
    /// Temperature 1 (the plain softmax of Section 3.4) and system weight 0.5.
    fn default() -> Self {
        Self {
            temperature: 1.0,
            system_weight: 0.5,
            spread_scale: false,
        }
    }
}

impl BoltzmannPolicy {
    /// A policy with the paper's system weight 0.5. `temperature` must be finite and
    /// `>= 0`; 0 is the greedy limit (the best weighted Q-values share all probability).
    pub fn new(temperature: f64) -> Result<Self> {
        if !(temperature.is_finite() && temperature >= 0.0) {
            return Err(Error::Config {
                field: "temperature",
                message: format!("must be finite and >= 0, got {temperature}"),
            });
        }
        Ok(Self {
            temperature,
            ..Self::default()
        })
    }

    /// Replaces the weight of system actions; it must be in `(0, 1]` (the paper tried
    /// 0.1 to 0.9 and kept 0.5).
    pub fn with_system_weight(mut self, weight: f64) -> Result<Self> {
        if !(weight > 0.0 && weight <= 1.0) {
            return Err(Error::Config {
                field: "system_weight",
                message: format!("must be in (0, 1], got {weight}"),
            });
        }
        self.system_weight = weight;
        Ok(self)
    }

    /// With `on`, the weighted Q-values of one choice are divided by their standard
    /// deviation over the candidates before the softmax, so the temperature is in units
    /// of the screen's own spread: `p_i ∝ exp((w_i·Q_i − max) / (σ · T))`. Candidates
    /// whose values are all equal are then equally likely (before the prior).
    ///
    /// A DQN's values change scale as it learns: they start near 0 and grow toward the
    /// discounted sum of rewards, while their spread over one screen's candidates stays
    /// small and is mostly the network's error. At a fixed temperature the same policy is
    /// then nearly uniform at first and nearly greedy later.
    pub fn with_spread_scale(mut self, on: bool) -> Self {
        self.spread_scale = on;
        self
    }

    pub fn spread_scale(&self) -> bool {
        self.spread_scale
    }

    pub fn temperature(&self) -> f64 {
        self.temperature
    }

    pub fn system_weight(&self) -> f64 {
        self.system_weight
    }

    /// The group weight applied to one Q-value.
    ///
    /// The paper multiplies Q by the weight, which lowers a system action's preference
    /// only while Q is positive (rewards of Eq. 1 are in `[0, 1]`, so targets are
    /// non-negative, but an untrained network may output negative values). For a
    /// negative Q we divide by the weight instead, so the weight always makes a system
    /// action less likely, which is the intent stated in Section 3.4.
    pub fn weighted(&self, q: f32, kind: ActionKind) -> f64 {
        let q = f64::from(q);
        match kind.group() {
            ActionGroup::System if q >= 0.0 => q * self.system_weight,
            ActionGroup::System => q / self.system_weight,
            ActionGroup::Widget | ActionGroup::Page => q,
        }
    }

    /// Execution probability of each action: `softmax(w_i · Q_i / T)`, computed after
    /// subtracting the maximum so large Q-values cannot overflow (and divided by their
    /// spread first with [`Self::with_spread_scale`]). `q_values[i]` is the
    /// Q-value of an action of kind `kinds[i]`. The result sums to 1 unless empty.
    ///
    /// Fails when the two slices differ in length or a Q-value is not finite.
    pub fn probabilities(&self, q_values: &[f32], kinds: &[ActionKind]) -> Result<Vec<f64>> {
        self.probabilities_with(q_values, kinds, None)
    }

    /// [`Self::probabilities`] with each action's softmax term multiplied by
    /// `prior[i]` (finite, `> 0`), then normalised: `p_i ∝ prior_i · exp(w_i · Q_i / T)`.
    /// `None` is a prior of 1 for every action. The agent passes the chance that an
    /// action changes the screen ([`EffectPrior`](crate::EffectPrior)).
    pub fn probabilities_with(
        &self,
        q_values: &[f32],
        kinds: &[ActionKind],
        prior: Option<&[f64]>,
    ) -> Result<Vec<f64>> {
        let input = |what, message| Err(Error::Input { what, message });
        if let Some(prior) = prior {
            if prior.len() != q_values.len() {
                let (p, q) = (prior.len(), q_values.len());
                return input("prior", format!("{p} prior weights for {q} Q-values"));
            }
            if let Some(i) = prior.iter().position(|w| !(w.is_finite() && *w > 0.0)) {
                let w = prior[i];
                return input(
                    "prior",
                    format!("weight {i} is {w}, not a finite number above 0"),
                );
            }
        }
        if q_values.len() != kinds.len() {
            let (q, k) = (q_values.len(), kinds.len());
            return input("q_values", format!("{q} Q-values for {k} action kinds"));
        }
        if let Some(i) = q_values.iter().position(|q| !q.is_finite()) {
            return Err(Error::Input {
                what: "q_values",
                message: format!("Q-value {i} is {}", q_values[i]),
            });
        }
        if q_values.is_empty() {
            return Ok(Vec::new());
        }
        let weighted: Vec<f64> = q_values
            .iter()
            .zip(kinds)
            .map(|(&q, &k)| self.weighted(q, k))
            .collect();
        let max = weighted.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let scale = if self.spread_scale {
            let n = weighted.len() as f64;
            let mean = weighted.iter().sum::<f64>() / n;
            let var = weighted.iter().map(|w| (w - mean).powi(2)).sum::<f64>() / n;
            // Equal values (σ = 0) stay equal whatever the divisor.
            if var > 0.0 { var.sqrt() } else { 1.0 }
        } else {
            1.0
        };
        let exps: Vec<f64> = if self.temperature == 0.0 {
            weighted
                .iter()
                .map(|&w| if w == max { 1.0 } else { 0.0 })
                .collect()
        } else {
            weighted
                .iter()
                .map(|&w| ((w - max) / (scale * self.temperature)).exp())
                .collect()
        };
        let exps: Vec<f64> = match prior {
            Some(prior) => exps.iter().zip(prior).map(|(e, w)| e * w).collect(),
            None => exps,
        };
        // The maximum contributes exp(0) times a weight above 0, so the sum is above 0.
        let sum: f64 = exps.iter().sum();
        Ok(exps.into_iter().map(|e| e / sum).collect())
    }

    /// Draws the index of the action to execute from [`Self::probabilities`].
    ///
    /// Fails on the errors of [`Self::probabilities`] and when there is no action.
    pub fn choose<R: Rng + ?Sized>(
        &self,
        q_values: &[f32],
        kinds: &[ActionKind],
        rng: &mut R,
    ) -> Result<usize> {
        self.choose_with(q_values, kinds, None, rng)
    }

    /// Draws the index of the action to execute from [`Self::probabilities_with`].
    pub fn choose_with<R: Rng + ?Sized>(
        &self,
        q_values: &[f32],
        kinds: &[ActionKind],
        prior: Option<&[f64]>,
        rng: &mut R,
    ) -> Result<usize> {
        let probabilities = self.probabilities_with(q_values, kinds, prior)?;
        Self::draw(&probabilities, rng)
    }

    /// Draws an index with the given probabilities (as [`Self::probabilities_with`]
    /// returns them), using one number from `rng`. Fails when there is none.
    pub fn draw<R: Rng + ?Sized>(probabilities: &[f64], rng: &mut R) -> Result<usize> {
        if probabilities.is_empty() {
            return Err(Error::Input {
                what: "q_values",
                message: "no action to choose from".to_owned(),
            });
        }
        let mut u: f64 = rng.random();
        for (i, p) in probabilities.iter().enumerate() {
            if u < *p {
                return Ok(i);
            }
            u -= p;
        }
        // Rounding left `u` just above the last bucket: take the last action with mass.
        Ok(probabilities.iter().rposition(|&p| p > 0.0).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    const CLICK: ActionKind = ActionKind::Click;
    const SWIPE: ActionKind = ActionKind::Swipe;
    const BACK: ActionKind = ActionKind::Return;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn probabilities_sum_to_one() {
        let p = BoltzmannPolicy::default();
        let probs = p
            .probabilities(&[0.1, 3.0, -2.0, 0.7], &[CLICK, SWIPE, BACK, CLICK])
            .unwrap();
        assert!(close(probs.iter().sum::<f64>(), 1.0));
        assert!(probs.iter().all(|&x| (0.0..=1.0).contains(&x)));
    }

    #[test]
    fn a_prior_scales_the_softmax_terms() {
        let p = BoltzmannPolicy::default();
        // Equal Q: the probabilities follow the prior, 1 : 3.
        let probs = p
            .probabilities_with(&[1.0, 1.0], &[CLICK, CLICK], Some(&[0.25, 0.75]))
            .unwrap();
        assert!(close(probs[0], 0.25) && close(probs[1], 0.75), "{probs:?}");
        // A prior of 1 everywhere is no prior.
        let q = [0.3, 2.0, -1.0];
        let kinds = [CLICK, SWIPE, BACK];
        let with = p.probabilities_with(&q, &kinds, Some(&[1.0; 3])).unwrap();
        let without = p.probabilities(&q, &kinds).unwrap();
        assert!(with.iter().zip(&without).all(|(a, b)| close(*a, *b)));
        // Bad priors are refused, naming the weight.
        for bad in [[1.0, 0.0], [1.0, f64::NAN]] {
            let e = p
                .probabilities_with(&[1.0, 1.0], &[CLICK, CLICK], Some(&bad))
                .unwrap_err();
            assert!(e.to_string().contains("weight 1"), "{e}");
        }
        assert!(
            p.probabilities_with(&[1.0], &[CLICK], Some(&[1.0, 1.0]))
                .is_err()
        );
    }

    #[test]
    fn system_weight_halves_system_q_values() {
        // Q = 2 for a click and for a return. Weighted: 2 and 1, so with T = 1
        // p(click) = e^2 / (e^2 + e^1) = 1 / (1 + e^-1).
        let p = BoltzmannPolicy::default();
        let probs = p.probabilities(&[2.0, 2.0], &[CLICK, BACK]).unwrap();
        let expected = 1.0 / (1.0 + (-1.0f64).exp());
        assert!(close(probs[0], expected), "{probs:?}");
        assert!(close(probs[1], 1.0 - expected), "{probs:?}");
        // Page actions have weight 1: equal Q, equal probability.
        let probs = p.probabilities(&[2.0, 2.0], &[CLICK, SWIPE]).unwrap();
        assert!(close(probs[0], 0.5) && close(probs[1], 0.5));
        // Weight 1 removes the bias.
        let unbiased = p.with_system_weight(1.0).unwrap();
        let probs = unbiased.probabilities(&[2.0, 2.0], &[CLICK, BACK]).unwrap();
        assert!(close(probs[0], 0.5));
    }

    #[test]
    fn negative_system_q_is_also_made_less_likely() {
        // Weighted: -1 for the click, -2 for the return (divided by 0.5).
        let p = BoltzmannPolicy::default();
        let probs = p.probabilities(&[-1.0, -1.0], &[CLICK, BACK]).unwrap();
        assert!(close(probs[0], 1.0 / (1.0 + (-1.0f64).exp())), "{probs:?}");
    }

    #[test]
    fn with_the_spread_scale_only_the_shape_of_the_q_values_counts() {
        let policy = BoltzmannPolicy::new(1.0).unwrap().with_spread_scale(true);
        let kinds = [CLICK; 3];
        let small = policy.probabilities(&[0.1, 0.2, 0.4], &kinds).unwrap();
        // The same values stretched and shifted, as a network's later in a run.
        let large = policy.probabilities(&[6.2, 6.4, 6.8], &kinds).unwrap();
        // Equal up to the rounding of the values as f32.
        for (a, b) in small.iter().zip(&large) {
            assert!((a - b).abs() < 1e-6, "{small:?} vs {large:?}");
        }
        // σ of (0.1, 0.2, 0.4) is 0.1247: the best is e^(0.2 / 0.1247) ≈ 4.97 times the
        // middle one.
        assert!((small[2] / small[1] - (0.2f64 / 0.124_721_9).exp()).abs() < 1e-4);
        // Without it, the plain softmax of the larger values is much sharper.
        let plain = BoltzmannPolicy::new(0.1).unwrap();
        let sharp = plain.probabilities(&[6.2, 6.4, 6.8], &kinds).unwrap();
        assert!(sharp[2] > 0.95 && large[2] < 0.8, "{sharp:?} {large:?}");
        // Equal values are equally likely.
        let equal = policy.probabilities(&[3.0, 3.0, 3.0], &kinds).unwrap();
        assert!(equal.iter().all(|p| close(*p, 1.0 / 3.0)));
    }

    #[test]
    fn temperature_scales_the_softmax() {
        // T = 2 on Q = (2, 0): p0 = e^1 / (e^1 + 1).
        let p = BoltzmannPolicy::new(2.0).unwrap();
        let probs = p.probabilities(&[2.0, 0.0], &[CLICK, CLICK]).unwrap();
        assert!(close(probs[0], 1.0f64.exp() / (1.0f64.exp() + 1.0)));
    }

    #[test]
    fn low_temperature_picks_the_maximum() {
        let q = [0.5, 0.9, 0.8];
        let kinds = [CLICK, CLICK, SWIPE];
        let p = BoltzmannPolicy::new(1e-4).unwrap();
        let probs = p.probabilities(&q, &kinds).unwrap();
        assert!(probs[1] > 1.0 - 1e-9, "{probs:?}");
        let greedy = BoltzmannPolicy::new(0.0).unwrap();
        assert_eq!(
            greedy.probabilities(&q, &kinds).unwrap(),
            vec![0.0, 1.0, 0.0]
        );
        // Ties at the maximum share it.
        let tied = greedy.probabilities(&[1.0, 1.0, 0.0], &kinds).unwrap();
        assert_eq!(tied, vec![0.5, 0.5, 0.0]);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        for _ in 0..50 {
            assert_eq!(greedy.choose(&q, &kinds, &mut rng).unwrap(), 1);
        }
    }

    #[test]
    fn large_q_values_do_not_overflow() {
        let p = BoltzmannPolicy::new(0.01).unwrap();
        let probs = p
            .probabilities(&[1e30, 1e30 - 1e24], &[CLICK, CLICK])
            .unwrap();
        assert!(probs.iter().all(|x| x.is_finite()));
        assert!(close(probs.iter().sum::<f64>(), 1.0));
    }

    #[test]
    fn choose_follows_the_probabilities() {
        let p = BoltzmannPolicy::default();
        let q = [1.0, 0.0, 1.0];
        let kinds = [CLICK, CLICK, BACK];
        let probs = p.probabilities(&q, &kinds).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let draws = 20_000;
        let mut counts = [0usize; 3];
        for _ in 0..draws {
            counts[p.choose(&q, &kinds, &mut rng).unwrap()] += 1;
        }
        for i in 0..3 {
            let freq = counts[i] as f64 / draws as f64;
            assert!(
                (freq - probs[i]).abs() < 0.02,
                "{i}: {freq} vs {}",
                probs[i]
            );
        }
        let mut again = ChaCha8Rng::seed_from_u64(5);
        let first: Vec<_> = (0..20)
            .map(|_| p.choose(&q, &kinds, &mut again).unwrap())
            .collect();
        let mut third = ChaCha8Rng::seed_from_u64(5);
        let second: Vec<_> = (0..20)
            .map(|_| p.choose(&q, &kinds, &mut third).unwrap())
            .collect();
        assert_eq!(first, second);
    }

    #[test]
    fn bad_input_is_an_error() {
        let p = BoltzmannPolicy::default();
        assert!(p.probabilities(&[1.0], &[CLICK, BACK]).is_err());
        let err = p
            .probabilities(&[1.0, f32::NAN], &[CLICK, BACK])
            .unwrap_err();
        assert!(err.to_string().contains("Q-value 1"), "{err}");
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(p.choose(&[], &[], &mut rng).is_err());
        assert!(BoltzmannPolicy::new(-1.0).is_err());
        assert!(BoltzmannPolicy::new(f64::NAN).is_err());
        assert!(p.with_system_weight(0.0).is_err());
        assert!(p.with_system_weight(1.5).is_err());
    }
}
