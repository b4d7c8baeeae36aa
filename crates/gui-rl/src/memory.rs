//! The exploration memory of PIRLTest (Section 3.4.2): every transition
//! `⟨s_t, a_t, s_{t+1}⟩` with its reward `r_t` and the executable actions `A_{t+1}`, and
//! the training batch of the most recent half plus a random half of the rest.

use std::collections::VecDeque;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// One recorded step. `S` is the state embedding, `A` the action embedding; both are
/// `Vec<f32>` by default, the vectors the Q-network reads (Section 3.4.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry<S = Vec<f32>, A = Vec<f32>> {
    /// `s_t`.
    pub state: S,
    /// `a_t`.
    pub action: A,
    /// `r_t` (Eq. 1).
    pub reward: f64,
    /// `s_{t+1}`.
    pub next_state: S,
    /// `A_{t+1}`, the executable actions of `s_{t+1}`, for the maximum of Eq. 3.
    pub next_actions: Vec<A>,
}

/// An entry whose vectors are shared allocations: an agent that keeps one vector per page
/// and per candidate action stores each once, and [`QNetwork::fit`](crate::QNetwork::fit)
/// recognises the sharing and evaluates each once.
pub type SharedEntry = MemoryEntry<std::sync::Arc<[f32]>, std::sync::Arc<[f32]>>;

/// Configuration of an [`ExplorationMemory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryConfig {
    /// Most entries kept; when full, the oldest entry is dropped. The paper keeps every
    /// transition; a bound keeps long runs (hours, thousands of steps) in memory.
    pub capacity: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self { capacity: 100_000 }
    }
}

/// Transitions in the order they happened, oldest first, bounded by
/// [`MemoryConfig::capacity`].
#[derive(Debug, Clone)]
pub struct ExplorationMemory<S = Vec<f32>, A = Vec<f32>> {
    config: MemoryConfig,
    entries: VecDeque<MemoryEntry<S, A>>,
}

impl<S, A> ExplorationMemory<S, A> {
    /// An empty memory; fails when the capacity is 0.
    pub fn new(config: MemoryConfig) -> Result<Self> {
        if config.capacity == 0 {
            return Err(Error::Config {
                field: "capacity",
                message: "must be at least 1".to_owned(),
            });
        }
        Ok(Self {
            config,
            entries: VecDeque::new(),
        })
    }

    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// Records a transition, dropping the oldest one when full.
    pub fn push(&mut self, entry: MemoryEntry<S, A>) {
        if self.entries.len() == self.config.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &MemoryEntry<S, A>> {
        self.entries.iter()
    }

    /// The training data of one Q-network update (Section 3.4.2): the most recent
    /// `⌈n/2⌉` entries, newest first, then `⌊n/2⌋` entries drawn uniformly without
    /// replacement from the older rest, in the order drawn. When the memory holds at most
    /// `n` entries, all of them are returned, newest first. No entry appears twice, and the
    /// same memory and rng state give the same batch.
    pub fn training_batch<R: Rng + ?Sized>(
        &self,
        n: usize,
        rng: &mut R,
    ) -> Vec<&MemoryEntry<S, A>> {
        let len = self.entries.len();
        if len <= n {
            return self.entries.iter().rev().collect();
        }
        let recent = n.div_ceil(2);
        let rest = len - recent;
        let mut batch: Vec<_> = self.entries.iter().rev().take(recent).collect();
        // `rest >= n - recent` because `len > n`, so the draw never asks for too many.
        let drawn = rand::seq::index::sample(rng, rest, n - recent);
        batch.extend(drawn.iter().map(|i| &self.entries[i]));
        batch
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// A memory whose entry `i` has reward `i`, so rewards identify entries.
    fn memory(len: usize, capacity: usize) -> ExplorationMemory<u32, u32> {
        let mut m = ExplorationMemory::new(MemoryConfig { capacity }).unwrap();
        for i in 0..len {
            m.push(MemoryEntry {
                state: i as u32,
                action: 0,
                reward: i as f64,
                next_state: i as u32 + 1,
                next_actions: vec![0, 1],
            });
        }
        m
    }

    fn ids(batch: &[&MemoryEntry<u32, u32>]) -> Vec<usize> {
        batch.iter().map(|e| e.reward as usize).collect()
    }

    #[test]
    fn zero_capacity_is_a_config_error() {
        let err = ExplorationMemory::<u32, u32>::new(MemoryConfig { capacity: 0 }).unwrap_err();
        assert!(err.to_string().contains("capacity"), "{err}");
    }

    #[test]
    fn capacity_drops_the_oldest() {
        let m = memory(10, 4);
        assert_eq!(m.len(), 4);
        let kept: Vec<_> = m.iter().map(|e| e.reward as usize).collect();
        assert_eq!(kept, vec![6, 7, 8, 9]);
    }

    #[test]
    fn batch_is_recent_half_plus_random_half_of_the_rest() {
        let m = memory(100, 1000);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for n in [1, 2, 9, 10, 31] {
            let batch = ids(&m.training_batch(n, &mut rng));
            assert_eq!(batch.len(), n);
            let recent = n.div_ceil(2);
            let expected: Vec<_> = (100 - recent..100).rev().collect();
            assert_eq!(batch[..recent], expected[..], "n = {n}");
            assert!(batch[recent..].iter().all(|&i| i < 100 - recent), "n = {n}");
            let unique: HashSet<_> = batch.iter().collect();
            assert_eq!(unique.len(), n, "duplicates for n = {n}: {batch:?}");
        }
    }

    #[test]
    fn random_half_covers_the_older_entries() {
        // Over many draws every older entry shows up and none is favoured strongly:
        // each of the 90 older entries has probability 5/90 per batch of n = 10.
        let m = memory(95, 1000);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut counts = [0usize; 95];
        let draws = 3000;
        for _ in 0..draws {
            for &i in &ids(&m.training_batch(10, &mut rng))[5..] {
                counts[i] += 1;
            }
        }
        let expected = draws as f64 * 5.0 / 90.0;
        for (i, &c) in counts[..90].iter().enumerate() {
            assert!(
                (c as f64 - expected).abs() < 0.3 * expected,
                "entry {i} drawn {c} times, expected about {expected}"
            );
        }
        assert!(counts[90..].iter().all(|&c| c == 0));
    }

    #[test]
    fn small_memory_returns_everything() {
        let m = memory(5, 10);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(ids(&m.training_batch(5, &mut rng)), vec![4, 3, 2, 1, 0]);
        assert_eq!(ids(&m.training_batch(64, &mut rng)), vec![4, 3, 2, 1, 0]);
        assert!(m.training_batch(0, &mut rng).is_empty());
    }

    #[test]
    fn same_seed_same_batch() {
        let m = memory(200, 1000);
        let a = ids(&m.training_batch(32, &mut ChaCha8Rng::seed_from_u64(11)));
        let b = ids(&m.training_batch(32, &mut ChaCha8Rng::seed_from_u64(11)));
        let c = ids(&m.training_batch(32, &mut ChaCha8Rng::seed_from_u64(12)));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
