//! The curiosity reward of PIRLTest (Section 3.3, Eq. 1) and the Q-learning target
//! (Section 3.4.2, Eq. 3).

/// Reward of a transition `⟨s_t, a_t, s_{t+1}⟩`, Eq. 1:
/// `r_t = (1 − n_{t+1} / m_{t+1}) / sqrt(N_t)`.
///
/// - `executed_after`: `n_{t+1}`, the distinct actions already executed on `s_{t+1}`;
/// - `executable_after`: `m_{t+1}`, the executable actions of `s_{t+1}`;
/// - `transitions_before`: `N_t`, how many times the exploration reached `s_t`.
///
/// Edge cases the paper leaves open:
/// - `m = 0`: a page offering no action is treated as fully explored (`e = 1`, reward 0).
///   Nothing can be learned by coming back to it, and rewarding it fully would draw the
///   agent to dead ends such as blank or crashed screens.
/// - `n > m` (the action set shrank since actions were executed): `e` is capped at 1, so
///   the reward never turns negative.
/// - `N = 0` (the first time, before any visit was counted): treated as `N = 1`, the
///   largest factor Eq. 1 can give, instead of dividing by zero.
///
/// The result is in `[0, 1]`.
pub fn curiosity_reward(
    executed_after: usize,
    executable_after: usize,
    transitions_before: usize,
) -> f64 {
    let rate = if executable_after == 0 {
        1.0
    } else {
        (executed_after as f64 / executable_after as f64).min(1.0)
    };
    let visits = transitions_before.max(1) as f64;
    (1.0 - rate) / visits.sqrt()
}

/// The expected Q-value of a memory entry, Eq. 3:
/// `Q_target = r_t + γ · max_{a ∈ A_{t+1}} Q(s_{t+1}, a)`.
///
/// `next_q_values` holds `Q(s_{t+1}, a)` for every `a` in `A_{t+1}`. With no next action
/// (an empty `A_{t+1}`, e.g. the app closed) the future term is 0 and the target is the
/// reward alone, as for a terminal state. NaN values are ignored by the maximum (the
/// maximum of NaN and x is x); when every value is NaN the target is the reward alone.
pub fn q_target(reward: f64, gamma: f64, next_q_values: &[f32]) -> f64 {
    let best = next_q_values
        .iter()
        .copied()
        .filter(|q| !q.is_nan())
        .fold(None, |acc: Option<f32>, q| {
            Some(acc.map_or(q, |a| a.max(q)))
        });
    match best {
        Some(q) => reward + gamma * f64::from(q),
        None => reward,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn reward_follows_eq1_on_hand_computed_transitions() {
        // s_{t+1} has 4 executable actions, 1 executed; s_t reached 4 times:
        // (1 - 1/4) / sqrt(4) = 0.375.
        assert!(close(curiosity_reward(1, 4, 4), 0.375));
        // A fresh page reached from a page seen once: (1 - 0) / 1 = 1.
        assert!(close(curiosity_reward(0, 10, 1), 1.0));
        // Fully explored: 0 whatever N is.
        assert!(close(curiosity_reward(5, 5, 3), 0.0));
        // 2 of 8 executed, N = 9: 0.75 / 3 = 0.25.
        assert!(close(curiosity_reward(2, 8, 9), 0.25));
    }

    #[test]
    fn reward_edge_cases() {
        // m = 0 counts as fully explored.
        assert!(close(curiosity_reward(0, 0, 1), 0.0));
        // N = 0 counts as 1.
        assert!(close(curiosity_reward(1, 2, 0), 0.5));
        assert!(close(curiosity_reward(1, 2, 0), curiosity_reward(1, 2, 1)));
        // n > m is capped, never negative.
        assert!(close(curiosity_reward(7, 3, 2), 0.0));
    }

    #[test]
    fn reward_decreases_with_visits_and_exploration() {
        assert!(curiosity_reward(1, 4, 2) < curiosity_reward(1, 4, 1));
        assert!(curiosity_reward(2, 4, 1) < curiosity_reward(1, 4, 1));
    }

    #[test]
    fn q_target_follows_eq3() {
        // 0.375 + 0.9 * max(0.5, 2.0, -1.0) = 0.375 + 1.8.
        assert!(close(q_target(0.375, 0.9, &[0.5, 2.0, -1.0]), 2.175));
        // All negative: the maximum is still taken, not 0.
        assert!(close(q_target(1.0, 0.5, &[-4.0, -2.0]), 0.0));
        // γ = 0 is the reward alone.
        assert!(close(q_target(0.25, 0.0, &[10.0]), 0.25));
    }

    #[test]
    fn q_target_without_next_actions_is_the_reward() {
        assert!(close(q_target(0.7, 0.99, &[]), 0.7));
        assert!(close(q_target(0.7, 0.99, &[f32::NAN]), 0.7));
        assert!(close(q_target(0.5, 0.5, &[f32::NAN, 1.0]), 1.0));
    }
}
