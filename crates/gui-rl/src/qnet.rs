//! The Q-network of PIRLTest (Section 3.4.1): `⟨state ‖ action⟩` through four fully
//! connected hidden layers of 512 with ReLU to one Q-value, trained by mean squared error
//! against `Q_target` of Eq. 3 with Adam (batch 64, 5 epochs, learning rate 0.01, the
//! paper's settings after Q-testing).
//!
//! The first layer is linear in the concatenation, `W·[s ‖ a] = W_s·s + W_a·a`, so the
//! state's share is computed once per distinct state and added to the share of each of
//! its candidate actions: choosing among 50 actions costs one state product, not 50, and
//! a training batch pays for each distinct state once, forward and backward. Gradients
//! are written out by hand (no gradient is formed for the inputs, which are not
//! learnt), and Adam updates every weight in one in-place pass.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use candle_core::{CpuStorage, DType, Device, InplaceOp2, Layout, Tensor};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Error, MemoryEntry, Result, q_target};

/// Sizes and training settings of a [`QNetwork`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QNetworkConfig {
    /// Length of a state embedding (8718 with the paper's sizes).
    pub state_dim: usize,
    /// Length of an action embedding (8224 with the paper's sizes).
    pub action_dim: usize,
    /// Widths of the hidden layers: four of 512 in the paper.
    pub hidden: Vec<usize>,
    /// Adam step size: 0.01 in the paper.
    pub learning_rate: f64,
    /// Samples per gradient step: 64 in the paper.
    pub batch_size: usize,
    /// Passes over the training samples per [`QNetwork::fit`]: 5 in the paper.
    pub epochs: usize,
    /// Seed of the initial weights and of the batch order.
    pub seed: u64,
    /// Smallest and largest reward; Eq. 1 gives rewards in `[0, 1]`. [`QNetwork::fit`]
    /// keeps each target within what a discounted sum of such rewards can reach,
    /// `[lo, hi] / (1 − γ)`: the estimate of the next state's value is clamped to that
    /// range before Eq. 3 discounts it and adds the reward. Without the bound, targets computed by the network it trains
    /// feed back on themselves, and with the paper's learning rate of 0.01 the Q-values
    /// run away (`docs/pirltest.md`, "Choices the paper leaves open").
    pub reward_range: (f64, f64),
    /// Where Eq. 3's `max Q(s_{t+1}, a)` comes from. 0, the paper's way: the network as
    /// it is when a retraining starts. `k ≥ 1`: a frozen copy of the network, taken at
    /// the first retraining and again after every `k` more (a target network, as DQN
    /// has; not in the paper). With targets from the network it trains, the error of
    /// its largest output over the candidates feeds back into the next targets.
    #[serde(default)]
    pub target_every: usize,
}

impl QNetworkConfig {
    /// The paper's network and training settings for the given input sizes.
    pub fn new(state_dim: usize, action_dim: usize) -> Self {
        Self {
            state_dim,
            action_dim,
            hidden: vec![512; 4],
            learning_rate: 0.01,
            batch_size: 64,
            epochs: 5,
            seed: 0,
            reward_range: (0.0, 1.0),
            target_every: 0,
        }
    }

    fn validate(&self) -> Result<()> {
        let positive = |field, value: usize| {
            if value == 0 {
                Err(Error::Config {
                    field,
                    message: "must be at least 1".to_owned(),
                })
            } else {
                Ok(())
            }
        };
        positive("state_dim", self.state_dim)?;
        positive("action_dim", self.action_dim)?;
        positive("batch_size", self.batch_size)?;
        positive("epochs", self.epochs)?;
        if self.hidden.is_empty() || self.hidden.contains(&0) {
            return Err(Error::Config {
                field: "hidden",
                message: format!(
                    "needs at least one layer, all wider than 0: {:?}",
                    self.hidden
                ),
            });
        }
        let (lo, hi) = self.reward_range;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(Error::Config {
                field: "reward_range",
                message: format!("must be finite with lo <= hi, got ({lo}, {hi})"),
            });
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(Error::Config {
                field: "learning_rate",
                message: format!("must be positive, got {}", self.learning_rate),
            });
        }
        Ok(())
    }
}

/// Training samples with their states stored once: sample `i` is
/// `⟨states[state_of[i]], actions[i]⟩ → targets[i]`.
#[derive(Debug, Clone, Copy)]
pub struct QBatch<'a> {
    pub states: &'a [&'a [f32]],
    pub state_of: &'a [usize],
    pub actions: &'a [&'a [f32]],
    pub targets: &'a [f32],
}

/// What one [`QNetwork::fit`] did.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FitReport {
    pub samples: usize,
    pub gradient_steps: usize,
    /// Mean squared error of the first and of the last gradient step.
    pub first_loss: f32,
    pub last_loss: f32,
    /// Mean reward of the samples, mean of the discounted part of their targets
    /// (`γ·max Q(s_{t+1}, a)` after the bound), and how many of those maxima the bound
    /// cut down: an estimate far above what the rewards can sustain is the network's own
    /// error feeding back.
    pub mean_reward: f32,
    pub mean_future: f32,
    pub bounded: usize,
    /// Next-state values Eq. 3 needed, and how many of them the network evaluated: the
    /// rest were shared with another entry or kept from the frozen copy.
    pub next_values: usize,
    pub evaluated: usize,
}

/// One learnt tensor with its Adam moments.
struct Param {
    name: String,
    value: Tensor,
    m: Vec<f32>,
    v: Vec<f32>,
}

/// The state-action value network. Parameters in order: `w1_state`, `w1_action`, `b1`,
/// then `w{k}`, `b{k}` for the other hidden layers and the output.
pub struct QNetwork {
    config: QNetworkConfig,
    params: Vec<Param>,
    adam_steps: u64,
    rng: ChaCha8Rng,
    /// The frozen copy Eq. 3's targets come from, and the retrainings since it was taken
    /// ([`QNetworkConfig::target_every`]).
    target: Option<Vec<Tensor>>,
    fits_since_copy: usize,
    /// Values the frozen copy gave, kept until it is refreshed.
    cache: TargetCache,
}

/// `Q(s, a)` of the frozen target network by the addresses of the state and action
/// vectors, valid until the copy is refreshed. An agent's memory shares one vector per
/// page and per known candidate, and one retraining's batch overlaps the last one's by
/// its newest half, so most next-state values of Eq. 3 were computed before.
#[derive(Default)]
struct TargetCache {
    values: HashMap<(Slot, Slot), f32>,
    /// A clone of every vector whose address keys `values`: while it is kept, no other
    /// vector can take that address.
    kept: HashMap<Slot, Box<dyn std::any::Any + Send>>,
}

/// A vector's address and length.
type Slot = (usize, usize);

fn slot_of(v: &[f32]) -> Slot {
    (v.as_ptr() as usize, v.len())
}

impl TargetCache {
    fn clear(&mut self) {
        self.values.clear();
        self.kept.clear();
    }

    fn keep<T: Clone + Send + 'static>(&mut self, at: Slot, v: &T) {
        self.kept.entry(at).or_insert_with(|| Box::new(v.clone()));
    }
}

impl std::fmt::Debug for QNetwork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QNetwork")
            .field("config", &self.config)
            .field("parameters", &self.parameter_count())
            .field("adam_steps", &self.adam_steps)
            .finish()
    }
}

const CHECKPOINT_KEY: &str = "gui_rl.q_network";
const FORMAT: &str = "gui-rl q-network v1";

#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    config: QNetworkConfig,
    adam_steps: u64,
}

fn candle(what: &'static str) -> impl Fn(candle_core::Error) -> Error {
    move |e| Error::Input {
        what,
        message: e.to_string(),
    }
}

impl QNetwork {
    /// A network with weights drawn from `U(−1/√fan_in, 1/√fan_in)` with the config's seed
    /// (the usual initialisation of fully connected layers).
    pub fn new(config: QNetworkConfig) -> Result<Self> {
        config.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let shapes = Self::shapes(&config);
        let fan_in = config.state_dim + config.action_dim;
        let mut values = Vec::with_capacity(shapes.len());
        for (i, (_, shape)) in shapes.iter().enumerate() {
            // w1_state, w1_action and b1 share the first layer's fan-in.
            let fan = match i {
                0..3 => fan_in,
                // Each later layer's weight (odd index) and bias (even) share its fan-in.
                _ => shapes[if i % 2 == 1 { i } else { i - 1 }].1[1],
            };
            let bound = 1.0 / (fan as f32).sqrt();
            let n: usize = shape.iter().product();
            values.push((0..n).map(|_| rng.random_range(-bound..bound)).collect());
        }
        Self::from_values(config, values, 0, rng)
    }

    fn shapes(config: &QNetworkConfig) -> Vec<(String, Vec<usize>)> {
        let h = &config.hidden;
        let mut shapes = vec![
            ("w1_state".to_owned(), vec![h[0], config.state_dim]),
            ("w1_action".to_owned(), vec![h[0], config.action_dim]),
            ("b1".to_owned(), vec![h[0]]),
        ];
        let widths: Vec<usize> = h.iter().copied().chain([1]).collect();
        for k in 1..widths.len() {
            shapes.push((format!("w{}", k + 1), vec![widths[k], widths[k - 1]]));
            shapes.push((format!("b{}", k + 1), vec![widths[k]]));
        }
        shapes
    }

    fn from_values(
        config: QNetworkConfig,
        values: Vec<Vec<f32>>,
        adam_steps: u64,
        rng: ChaCha8Rng,
    ) -> Result<Self> {
        let params = Self::shapes(&config)
            .into_iter()
            .zip(values)
            .map(|((name, shape), data)| {
                let n = data.len();
                let value =
                    Tensor::from_vec(data, shape, &Device::Cpu).map_err(candle("weights"))?;
                Ok(Param {
                    name,
                    value,
                    m: vec![0.0; n],
                    v: vec![0.0; n],
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            config,
            params,
            adam_steps,
            rng,
            target: None,
            fits_since_copy: 0,
            cache: TargetCache::default(),
        })
    }

    pub fn config(&self) -> &QNetworkConfig {
        &self.config
    }

    /// Number of learnt values.
    pub fn parameter_count(&self) -> usize {
        self.params.iter().map(|p| p.value.elem_count()).sum()
    }

    /// A copy of the learnt weights, to choose actions with while this network retrains
    /// on another thread. Adam's moments are not copied: training the copy starts them
    /// afresh, as after [`load`](Self::load). Nor is the frozen target network.
    pub fn weights_copy(&self) -> Result<QNetwork> {
        let params = self
            .params
            .iter()
            .map(|p| {
                Ok(Param {
                    name: p.name.clone(),
                    value: p.value.copy()?,
                    m: Vec::new(),
                    v: Vec::new(),
                })
            })
            .collect::<candle_core::Result<_>>()
            .map_err(candle("weights copy"))?;
        Ok(QNetwork {
            config: self.config.clone(),
            params,
            adam_steps: self.adam_steps,
            rng: self.rng.clone(),
            target: None,
            fits_since_copy: 0,
            cache: TargetCache::default(),
        })
    }

    /// Adam steps taken so far (kept across save and load).
    pub fn adam_steps(&self) -> u64 {
        self.adam_steps
    }

    /// `Q(state, a)` for each candidate action `a` of one state.
    pub fn q_values(&self, state: &[f32], actions: &[&[f32]]) -> Result<Vec<f32>> {
        self.q_values_grouped(&[state], &vec![0; actions.len()], actions)
    }

    /// `Q(states[state_of[i]], actions[i])` for every `i`, each distinct state's share of
    /// the first layer computed once.
    pub fn q_values_grouped(
        &self,
        states: &[&[f32]],
        state_of: &[usize],
        actions: &[&[f32]],
    ) -> Result<Vec<f32>> {
        self.q_values_with(self.values(), states, state_of, actions)
    }

    /// The learnt tensors in parameter order.
    fn values(&self) -> Vec<&Tensor> {
        self.params.iter().map(|p| &p.value).collect()
    }

    fn q_values_with(
        &self,
        values: Vec<&Tensor>,
        states: &[&[f32]],
        state_of: &[usize],
        actions: &[&[f32]],
    ) -> Result<Vec<f32>> {
        if actions.is_empty() {
            return Ok(Vec::new());
        }
        let inputs = self.inputs(states, state_of, actions)?;
        let forward = self
            .forward_inner(&values, &inputs)
            .map_err(candle("forward"))?;
        forward
            .q
            .flatten_all()
            .and_then(|q| q.to_vec1())
            .map_err(candle("forward"))
    }

    /// One Adam step on the mean squared error of `batch`; returns that error before the
    /// step.
    pub fn train_step(&mut self, batch: &QBatch<'_>) -> Result<f32> {
        if batch.targets.len() != batch.actions.len() {
            return Err(Error::Input {
                what: "targets",
                message: format!(
                    "{} targets for {} actions",
                    batch.targets.len(),
                    batch.actions.len()
                ),
            });
        }
        if batch.actions.is_empty() {
            return Err(Error::Input {
                what: "batch",
                message: "no samples".to_owned(),
            });
        }
        let inputs = self.inputs(batch.states, batch.state_of, batch.actions)?;
        let rows = batch.actions.len();
        let targets = Tensor::from_slice(batch.targets, (rows, 1), &Device::Cpu)
            .map_err(candle("targets"))?;
        let forward = self.forward(&inputs)?;
        let (loss, grads) = self
            .backward(&inputs, &forward, &targets)
            .map_err(candle("backward"))?;
        self.adam(&grads)?;
        Ok(loss)
    }

    /// Retrains on memory entries (Section 3.4.2): computes every entry's `Q_target`
    /// (Eq. 3, discount `gamma`) with the network as it is, or with its frozen copy
    /// ([`QNetworkConfig::target_every`]), then runs
    /// [`QNetworkConfig::epochs`] passes of shuffled mini-batches.
    ///
    /// States and candidate actions are recognised as shared when they are the same
    /// allocation (`Arc<[f32]>` clones), so an agent that keeps one state vector per page
    /// pays for each page once. With a frozen target network, the next-state values are
    /// kept by allocation until the copy is refreshed, with a clone of each vector
    /// (cheap for `Arc`s) so that its address stays its own.
    pub fn fit<S, A>(&mut self, entries: &[&MemoryEntry<S, A>], gamma: f64) -> Result<FitReport>
    where
        S: AsRef<[f32]> + Clone + Send + 'static,
        A: AsRef<[f32]> + Clone + Send + 'static,
    {
        if entries.is_empty() {
            return Ok(FitReport::default());
        }
        let every = self.config.target_every;
        if every > 0 && (self.target.is_none() || self.fits_since_copy >= every) {
            let copy = self
                .params
                .iter()
                .map(|p| p.value.copy())
                .collect::<candle_core::Result<Vec<_>>>()
                .map_err(candle("target network"))?;
            self.target = Some(copy);
            self.fits_since_copy = 0;
            self.cache.clear();
        }
        self.fits_since_copy += 1;
        let (targets, bounded, evaluated) = self.targets(entries, gamma)?;
        let mut states = Interner::default();
        let state_of: Vec<usize> = entries
            .iter()
            .map(|e| states.id(e.state.as_ref()))
            .collect();
        let actions: Vec<&[f32]> = entries.iter().map(|e| e.action.as_ref()).collect();
        let mut order: Vec<usize> = (0..entries.len()).collect();
        let n = entries.len() as f64;
        let mean_reward = entries.iter().map(|e| e.reward).sum::<f64>() / n;
        let mean_target = targets.iter().map(|&t| f64::from(t)).sum::<f64>() / n;
        let mut report = FitReport {
            samples: entries.len(),
            mean_reward: mean_reward as f32,
            mean_future: (mean_target - mean_reward) as f32,
            bounded,
            next_values: entries.iter().map(|e| e.next_actions.len()).sum(),
            evaluated,
            ..FitReport::default()
        };
        for _ in 0..self.config.epochs {
            order.shuffle(&mut self.rng);
            for chunk in order.chunks(self.config.batch_size) {
                let mut batch_states = Interner::default();
                let b_state_of: Vec<usize> = chunk
                    .iter()
                    .map(|&i| batch_states.id(states.items[state_of[i]]))
                    .collect();
                let b_actions: Vec<&[f32]> = chunk.iter().map(|&i| actions[i]).collect();
                let b_targets: Vec<f32> = chunk.iter().map(|&i| targets[i]).collect();
                let loss = self.train_step(&QBatch {
                    states: &batch_states.items,
                    state_of: &b_state_of,
                    actions: &b_actions,
                    targets: &b_targets,
                })?;
                if report.gradient_steps == 0 {
                    report.first_loss = loss;
                }
                report.last_loss = loss;
                report.gradient_steps += 1;
            }
        }
        Ok(report)
    }

    /// `Q_target` of each entry, and how many next-state maxima the bound cut. Each
    /// distinct pair of next state and candidate action is evaluated once; with a frozen
    /// target network, a pair evaluated since the copy was taken is not evaluated again.
    fn targets<S, A>(
        &mut self,
        entries: &[&MemoryEntry<S, A>],
        gamma: f64,
    ) -> Result<(Vec<f32>, usize, usize)>
    where
        S: AsRef<[f32]> + Clone + Send + 'static,
        A: AsRef<[f32]> + Clone + Send + 'static,
    {
        /// Where one next-state value comes from.
        enum Value {
            Known(f32),
            Row(usize),
        }
        let frozen = self.target.is_some();
        let mut rows: HashMap<(Slot, Slot), usize> = HashMap::new();
        let mut states = Interner::default();
        let mut state_of = Vec::new();
        let mut actions: Vec<&[f32]> = Vec::new();
        let mut values = Vec::new();
        let mut ranges = Vec::with_capacity(entries.len());
        // The entry and candidate behind each row to evaluate, in row order.
        let mut fresh: Vec<(usize, usize)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let s = e.next_state.as_ref();
            let start = values.len();
            for (j, a) in e.next_actions.iter().enumerate() {
                let a = a.as_ref();
                let key = (slot_of(s), slot_of(a));
                let value = match self.cache.values.get(&key) {
                    Some(&q) if frozen => Value::Known(q),
                    _ => Value::Row(*rows.entry(key).or_insert_with(|| {
                        state_of.push(states.id(s));
                        actions.push(a);
                        fresh.push((i, j));
                        actions.len() - 1
                    })),
                };
                values.push(value);
            }
            ranges.push(start..values.len());
        }
        let weights = match &self.target {
            Some(frozen) => frozen.iter().collect(),
            None => self.values(),
        };
        let q = self.q_values_with(weights, &states.items, &state_of, &actions)?;
        if frozen {
            for (&(i, j), &value) in fresh.iter().zip(&q) {
                let (s, a) = (&entries[i].next_state, &entries[i].next_actions[j]);
                let (at_s, at_a) = (slot_of(s.as_ref()), slot_of(a.as_ref()));
                self.cache.values.insert((at_s, at_a), value);
                self.cache.keep(at_s, s);
                self.cache.keep(at_a, a);
            }
        }
        let (lo, hi) = self.config.reward_range;
        let horizon = if gamma < 1.0 {
            1.0 / (1.0 - gamma)
        } else {
            f64::INFINITY
        };
        let (lo, hi) = (lo.min(lo * horizon), hi.max(hi * horizon));
        let mut bounded = 0;
        let targets = entries
            .iter()
            .zip(ranges)
            .map(|(e, range)| {
                let next: Vec<f32> = values[range]
                    .iter()
                    .map(|v| match v {
                        Value::Known(q) => *q,
                        Value::Row(r) => q[*r],
                    })
                    .collect();
                if next.is_empty() {
                    return e.reward as f32;
                }
                // The best next value as Eq. 3 takes it, bounded before it is discounted.
                let raw = q_target(0.0, 1.0, &next);
                let best = raw.clamp(lo, hi);
                bounded += usize::from(best != raw);
                (e.reward + gamma * best) as f32
            })
            .collect();
        Ok((targets, bounded, actions.len()))
    }

    fn inputs(&self, states: &[&[f32]], state_of: &[usize], actions: &[&[f32]]) -> Result<Inputs> {
        if state_of.len() != actions.len() {
            return Err(Error::Input {
                what: "state_of",
                message: format!(
                    "{} state indices for {} actions",
                    state_of.len(),
                    actions.len()
                ),
            });
        }
        if let Some(&bad) = state_of.iter().find(|&&i| i >= states.len()) {
            return Err(Error::Input {
                what: "state_of",
                message: format!("state {bad} of {} states", states.len()),
            });
        }
        let states = matrix("states", states, self.config.state_dim)?;
        let actions = matrix("actions", actions, self.config.action_dim)?;
        let index: Vec<u32> = state_of.iter().map(|&i| i as u32).collect();
        let n = index.len();
        let index = Tensor::from_vec(index, n, &Device::Cpu).map_err(candle("state_of"))?;
        Ok(Inputs {
            states,
            index,
            actions,
        })
    }

    fn forward(&self, x: &Inputs) -> Result<Forward> {
        self.forward_inner(&self.values(), x)
            .map_err(candle("forward"))
    }

    fn forward_inner(&self, p: &[&Tensor], x: &Inputs) -> candle_core::Result<Forward> {
        let state_share = x.states.matmul(&p[0].t()?)?;
        let action_share = x.actions.matmul(&p[1].t()?)?;
        let z = state_share
            .index_select(&x.index, 0)?
            .add(&action_share)?
            .broadcast_add(p[2])?;
        let mut hidden = vec![z.relu()?];
        let layers = self.config.hidden.len();
        for k in 1..layers {
            let (w, b) = (p[1 + 2 * k], p[2 + 2 * k]);
            let h = hidden[k - 1].matmul(&w.t()?)?.broadcast_add(b)?.relu()?;
            hidden.push(h);
        }
        let (w, b) = (p[1 + 2 * layers], p[2 + 2 * layers]);
        let q = hidden[layers - 1].matmul(&w.t()?)?.broadcast_add(b)?;
        Ok(Forward { hidden, q })
    }

    /// Gradients of the mean squared error, in parameter order, and the error.
    fn backward(
        &self,
        x: &Inputs,
        f: &Forward,
        targets: &Tensor,
    ) -> candle_core::Result<(f32, Vec<Tensor>)> {
        let p = &self.params;
        let rows = targets.dim(0)? as f64;
        let diff = f.q.sub(targets)?;
        let loss = diff.sqr()?.mean_all()?.to_scalar::<f32>()?;
        let mut grads = vec![None; p.len()];
        let layers = self.config.hidden.len();
        // d loss / d q, then down through the layers; ReLU passes where its output is > 0.
        let mut dz = diff.affine(2.0 / rows, 0.0)?;
        for k in (1..=layers).rev() {
            let (wi, bi) = (1 + 2 * k, 2 + 2 * k);
            let below = &f.hidden[k - 1];
            grads[wi] = Some(dz.t()?.matmul(below)?);
            grads[bi] = Some(dz.sum(0)?);
            let dh = dz.matmul(&p[wi].value)?;
            dz = dh.mul(&below.gt(0f32)?.to_dtype(DType::F32)?)?;
        }
        grads[1] = Some(dz.t()?.matmul(&x.actions)?);
        grads[2] = Some(dz.sum(0)?);
        // Each distinct state collects the gradient of every sample that uses it.
        let (states, hidden) = (x.states.dim(0)?, dz.dim(1)?);
        let per_state = Tensor::zeros((states, hidden), DType::F32, &Device::Cpu)?
            .index_add(&x.index, &dz, 0)?;
        grads[0] = Some(per_state.t()?.matmul(&x.states)?);
        let grads = grads
            .into_iter()
            .map(|g| g.expect("every gradient is set"))
            .collect();
        Ok((loss, grads))
    }

    fn adam(&mut self, grads: &[Tensor]) -> Result<()> {
        self.adam_steps += 1;
        let t = self.adam_steps as i32;
        let (b1, b2) = (0.9f32, 0.999f32);
        let lr = self.config.learning_rate as f32;
        for (param, grad) in self.params.iter_mut().zip(grads) {
            let grad = grad.contiguous().map_err(candle("gradient"))?;
            // A weights copy has no moments yet.
            let n = param.value.elem_count();
            if param.m.len() != n {
                param.m = vec![0.0; n];
                param.v = vec![0.0; n];
            }
            let op = AdamUpdate {
                m: Mutex::new(&mut param.m),
                v: Mutex::new(&mut param.v),
                lr,
                b1,
                b2,
                eps: 1e-8,
                c1: 1.0 - b1.powi(t),
                c2: 1.0 - b2.powi(t),
            };
            param
                .value
                .inplace_op2(&grad, &op)
                .map_err(candle("adam"))?;
        }
        Ok(())
    }

    /// Writes the weights and config as safetensors (see `gui_core::checkpoint`); Adam's
    /// moments are not kept, so a loaded network restarts them.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let model_err = |message: String| Error::Model {
            path: path.to_path_buf(),
            message,
        };
        let values: Vec<(Vec<usize>, Vec<f32>)> = self
            .params
            .iter()
            .map(|p| {
                let v = p.value.flatten_all().and_then(|t| t.to_vec1::<f32>());
                Ok((
                    p.value.dims().to_vec(),
                    v.map_err(|e| model_err(e.to_string()))?,
                ))
            })
            .collect::<Result<_>>()?;
        let named: Vec<_> = self
            .params
            .iter()
            .zip(&values)
            .map(|(p, (shape, v))| (p.name.as_str(), shape.as_slice(), v.as_slice()))
            .collect();
        let header = serde_json::to_string(&Header {
            format: FORMAT.to_owned(),
            config: self.config.clone(),
            adam_steps: self.adam_steps,
        })
        .map_err(|e| model_err(e.to_string()))?;
        gui_core::checkpoint::write_checkpoint(path, CHECKPOINT_KEY, &header, &named)
            .map_err(model_err)
    }

    /// Reads a file written by [`save`](Self::save); every failure names the path.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let model_err = |message: String| Error::Model {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| model_err(format!("reading: {e}")))?;
        let reader = gui_core::checkpoint::CheckpointReader::parse(&bytes, CHECKPOINT_KEY)
            .map_err(model_err)?;
        let header: Header =
            serde_json::from_str(reader.header()).map_err(|e| model_err(format!("header: {e}")))?;
        if header.format != FORMAT {
            return Err(model_err(format!(
                "format is `{}`, expected `{FORMAT}`",
                header.format
            )));
        }
        header.config.validate()?;
        let values = Self::shapes(&header.config)
            .iter()
            .map(|(name, shape)| reader.f32(name, shape))
            .collect::<std::result::Result<Vec<_>, String>>()
            .map_err(model_err)?;
        let rng = ChaCha8Rng::seed_from_u64(header.config.seed ^ header.adam_steps);
        Self::from_values(header.config, values, header.adam_steps, rng)
    }
}

struct Inputs {
    states: Tensor,
    index: Tensor,
    actions: Tensor,
}

struct Forward {
    /// Outputs of the hidden layers (after ReLU).
    hidden: Vec<Tensor>,
    q: Tensor,
}

/// Distinct slices by address, in order of first appearance.
#[derive(Default)]
struct Interner<'a> {
    ids: HashMap<(usize, usize), usize>,
    items: Vec<&'a [f32]>,
}

impl<'a> Interner<'a> {
    fn id(&mut self, v: &'a [f32]) -> usize {
        let next = self.items.len();
        let id = *self
            .ids
            .entry((v.as_ptr() as usize, v.len()))
            .or_insert(next);
        if id == next {
            self.items.push(v);
        }
        id
    }
}

fn matrix(what: &'static str, rows: &[&[f32]], dim: usize) -> Result<Tensor> {
    let mut data = Vec::with_capacity(rows.len() * dim);
    for (i, r) in rows.iter().enumerate() {
        if r.len() != dim {
            return Err(Error::Input {
                what,
                message: format!("row {i} has {} values, the network takes {dim}", r.len()),
            });
        }
        data.extend_from_slice(r);
    }
    Tensor::from_vec(data, (rows.len(), dim), &Device::Cpu).map_err(candle(what))
}

/// Adam (Kingma and Ba) on one parameter in place: `m ← β1·m + (1−β1)·g`,
/// `v ← β2·v + (1−β2)·g²`, `w ← w − lr·(m/c1)/(√(v/c2) + ε)`.
struct AdamUpdate<'a> {
    m: Mutex<&'a mut Vec<f32>>,
    v: Mutex<&'a mut Vec<f32>>,
    lr: f32,
    b1: f32,
    b2: f32,
    eps: f32,
    /// Bias corrections `1 − β^t`.
    c1: f32,
    c2: f32,
}

impl InplaceOp2 for AdamUpdate<'_> {
    fn name(&self) -> &'static str {
        "adam-update"
    }

    fn cpu_fwd(
        &self,
        s1: &mut CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<()> {
        let (CpuStorage::F32(w), CpuStorage::F32(g)) = (s1, s2) else {
            candle_core::bail!("adam-update works on f32");
        };
        let (Some((w0, w1)), Some((g0, g1))) = (l1.contiguous_offsets(), l2.contiguous_offsets())
        else {
            candle_core::bail!("adam-update needs contiguous tensors");
        };
        let (w, g) = (&mut w[w0..w1], &g[g0..g1]);
        let mut m = self
            .m
            .lock()
            .map_err(|_| candle_core::Error::Msg("poisoned".into()))?;
        let mut v = self
            .v
            .lock()
            .map_err(|_| candle_core::Error::Msg("poisoned".into()))?;
        if w.len() != g.len() || m.len() != w.len() || v.len() != w.len() {
            candle_core::bail!("adam-update: mismatched lengths");
        }
        const CHUNK: usize = 1 << 14;
        let (b1, b2, lr, eps) = (self.b1, self.b2, self.lr, self.eps);
        let (ic1, ic2) = (1.0 / self.c1, 1.0 / self.c2);
        w.par_chunks_mut(CHUNK)
            .zip(g.par_chunks(CHUNK))
            .zip(m.par_chunks_mut(CHUNK))
            .zip(v.par_chunks_mut(CHUNK))
            .for_each(|(((w, g), m), v)| {
                for (((w, &g), m), v) in w.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
                    *m = b1 * *m + (1.0 - b1) * g;
                    *v = b2 * *v + (1.0 - b2) * g * g;
                    *w -= lr * (*m * ic1) / ((*v * ic2).sqrt() + eps);
                }
            });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::SharedEntry;

    fn small(seed: u64) -> QNetwork {
        let mut c = QNetworkConfig::new(6, 4);
        c.hidden = vec![16, 16];
        c.learning_rate = 0.01;
        c.seed = seed;
        QNetwork::new(c).unwrap()
    }

    fn vector(rng: &mut ChaCha8Rng, n: usize) -> Vec<f32> {
        (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
    }

    type Vectors = Vec<Arc<[f32]>>;

    /// `n` transitions over `states` random states of 6 numbers and `actions` random
    /// actions of 4, each entry `i` going from state `i` to state `i + 1` (both modulo
    /// `states`) with the first 3 actions as the next candidates.
    fn cycle(
        seed: u64,
        states: usize,
        actions: usize,
        n: usize,
        reward: impl Fn(usize) -> f64,
    ) -> (Vectors, Vectors, Vec<SharedEntry>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let s: Vec<Arc<[f32]>> = (0..states).map(|_| vector(&mut rng, 6).into()).collect();
        let a: Vec<Arc<[f32]>> = (0..actions).map(|_| vector(&mut rng, 4).into()).collect();
        let entries = (0..n)
            .map(|i| MemoryEntry {
                state: s[i % states].clone(),
                action: a[i % actions].clone(),
                reward: reward(i),
                next_state: s[(i + 1) % states].clone(),
                next_actions: a[..3].to_vec(),
            })
            .collect();
        (s, a, entries)
    }

    #[test]
    fn shared_state_gives_the_same_values_as_repeated_rows() {
        let net = small(1);
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let s = vector(&mut rng, 6);
        let acts: Vec<Vec<f32>> = (0..5).map(|_| vector(&mut rng, 4)).collect();
        let refs: Vec<&[f32]> = acts.iter().map(Vec::as_slice).collect();
        let shared = net.q_values(&s, &refs).unwrap();
        let repeated: Vec<&[f32]> = vec![&s; 5];
        let rows = net
            .q_values_grouped(&repeated, &[0, 1, 2, 3, 4], &refs)
            .unwrap();
        for (a, b) in shared.iter().zip(&rows) {
            assert!((a - b).abs() < 1e-5, "{a} vs {b}");
        }
    }

    /// The hand-written gradients agree with candle's automatic ones.
    #[test]
    fn gradients_match_autodiff() {
        let net = small(3);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let states: Vec<Vec<f32>> = (0..2).map(|_| vector(&mut rng, 6)).collect();
        let acts: Vec<Vec<f32>> = (0..5).map(|_| vector(&mut rng, 4)).collect();
        let s_refs: Vec<&[f32]> = states.iter().map(Vec::as_slice).collect();
        let a_refs: Vec<&[f32]> = acts.iter().map(Vec::as_slice).collect();
        let state_of = [0, 1, 1, 0, 1];
        let inputs = net.inputs(&s_refs, &state_of, &a_refs).unwrap();
        let targets =
            Tensor::from_slice(&[0.5f32, -0.2, 1.0, 0.0, 0.3], (5, 1), &Device::Cpu).unwrap();
        let f = net.forward(&inputs).unwrap();
        let (_, grads) = net.backward(&inputs, &f, &targets).unwrap();

        let vars: Vec<candle_core::Var> = net
            .params
            .iter()
            .map(|p| candle_core::Var::from_tensor(&p.value).unwrap())
            .collect();
        let copy = QNetwork {
            config: net.config.clone(),
            params: vars
                .iter()
                .map(|v| Param {
                    name: String::new(),
                    value: v.as_tensor().clone(),
                    m: vec![],
                    v: vec![],
                })
                .collect(),
            adam_steps: 0,
            rng: ChaCha8Rng::seed_from_u64(0),
            target: None,
            fits_since_copy: 0,
            cache: TargetCache::default(),
        };
        let q = copy.forward(&inputs).unwrap().q;
        let loss = q.sub(&targets).unwrap().sqr().unwrap().mean_all().unwrap();
        let auto = loss.backward().unwrap();
        for (i, (v, g)) in vars.iter().zip(&grads).enumerate() {
            let a = auto
                .get(v.as_tensor())
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            let h = g.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            assert_eq!(a.len(), h.len(), "param {i}");
            for (x, y) in a.iter().zip(&h) {
                assert!(
                    (x - y).abs() < 1e-5 + 1e-4 * x.abs(),
                    "param {i}: {x} vs {y}"
                );
            }
        }
    }

    #[test]
    fn fitting_lowers_the_error_and_is_deterministic() {
        let (states, acts, entries) = cycle(5, 4, 6, 40, |i| if i % 3 == 0 { 1.0 } else { 0.1 });
        let refs: Vec<_> = entries.iter().collect();
        let run = |seed| {
            let mut net = small(seed);
            let mut reports = Vec::new();
            for _ in 0..6 {
                reports.push(net.fit(&refs, 0.0).unwrap());
            }
            (net.q_values(&states[0], &[&acts[0]]).unwrap(), reports)
        };
        let (q1, r1) = run(9);
        let (q2, r2) = run(9);
        assert_eq!(q1, q2);
        assert_eq!(r1, r2);
        assert_eq!(r1[0].gradient_steps, 5);
        assert!(
            r1.last().unwrap().last_loss < r1[0].first_loss * 0.5,
            "{r1:?}"
        );
    }

    /// Targets stay within what discounted rewards in `[0, 1]` can sum to, however wrong
    /// the network's own estimates are.
    #[test]
    fn targets_are_bounded_by_the_reward_range() {
        let mut net = small(2);
        let last = net.params.len() - 1;
        net.params[last].value = Tensor::new(&[1000f32], &Device::Cpu).unwrap();
        let s: Arc<[f32]> = vec![0.1f32; 6].into();
        let a: Arc<[f32]> = vec![0.2f32; 4].into();
        let entry: SharedEntry = MemoryEntry {
            state: s.clone(),
            action: a.clone(),
            reward: 1.0,
            next_state: s,
            next_actions: vec![a],
        };
        let (t, bounded, _) = net.targets(&[&entry], 0.9).unwrap();
        assert!((t[0] - 10.0).abs() < 1e-4, "{t:?}");
        assert_eq!(bounded, 1);
        net.params[last].value = Tensor::new(&[-1000f32], &Device::Cpu).unwrap();
        assert_eq!(net.targets(&[&entry], 0.9).unwrap(), (vec![1.0], 1, 1));
    }

    /// A weights copy answers as the network does, stays as it was while the network
    /// trains on, and can itself be trained (its Adam moments start at zero).
    #[test]
    fn a_weights_copy_answers_alike_and_stays_apart() {
        let (states, acts, entries) = cycle(3, 4, 5, 24, |i| if i % 2 == 0 { 1.0 } else { 0.0 });
        let refs: Vec<_> = entries.iter().collect();
        let mut net = small(4);
        net.fit(&refs, 0.5).unwrap();
        let ask = |n: &QNetwork| n.q_values(&states[1], &[&acts[0], &acts[2]]).unwrap();
        let mut copy = net.weights_copy().unwrap();
        assert_eq!(ask(&copy), ask(&net));
        assert_eq!(copy.parameter_count(), net.parameter_count());
        let before = ask(&copy);
        net.fit(&refs, 0.5).unwrap();
        assert_eq!(ask(&copy), before);
        assert_ne!(ask(&net), before);
        let report = copy.fit(&refs, 0.5).unwrap();
        assert!(
            report.last_loss.is_finite() && report.gradient_steps > 0,
            "{report:?}"
        );
        assert_ne!(ask(&copy), before);
    }

    /// Next-state values kept from the frozen copy are the values it gives when asked
    /// again, a second retraining on the same entries evaluates none of them, and a
    /// refreshed copy starts with none kept.
    #[test]
    fn kept_target_values_are_the_frozen_copys_own() {
        let (_, _, entries) = cycle(7, 3, 4, 12, |i| if i % 2 == 0 { 0.5 } else { 0.0 });
        let refs: Vec<_> = entries.iter().collect();
        let mut net = small(5);
        net.config.target_every = 2;
        // Each kept value against the frozen copy's own answer for that pair.
        let check = |net: &QNetwork| -> Vec<f32> {
            let frozen: Vec<&Tensor> = net.target.as_ref().unwrap().iter().collect();
            let mut kept = Vec::new();
            for e in &entries {
                for a in &e.next_actions {
                    let key = (slot_of(&e.next_state), slot_of(a));
                    let q = net
                        .q_values_with(frozen.clone(), &[&e.next_state[..]], &[0], &[&a[..]])
                        .unwrap()[0];
                    assert!((net.cache.values[&key] - q).abs() < 1e-6, "{key:?}");
                    kept.push(q);
                }
            }
            kept
        };
        let first = net.fit(&refs, 0.9).unwrap();
        // Three next states, each with the same three candidates.
        assert_eq!((first.next_values, first.evaluated), (36, 9));
        assert_eq!(net.cache.values.len(), 9);
        let before = check(&net);
        let second = net.fit(&refs, 0.9).unwrap();
        assert_eq!((second.next_values, second.evaluated), (36, 0));
        // The third fit takes a new copy: everything is evaluated again, by it.
        let third = net.fit(&refs, 0.9).unwrap();
        assert_eq!(third.evaluated, 9);
        assert_ne!(check(&net), before);
    }

    /// With a target network the targets stay those of the frozen copy until it is
    /// refreshed; without one they move with every retraining.
    #[test]
    fn a_target_network_holds_the_targets_until_it_is_refreshed() {
        let (_, _, entries) = cycle(6, 3, 4, 12, |i| if i % 2 == 0 { 0.5 } else { 0.0 });
        let refs: Vec<_> = entries.iter().collect();
        let futures = |every| {
            let mut net = small(4);
            net.config.target_every = every;
            (0..4)
                .map(|_| net.fit(&refs, 0.9).unwrap())
                .map(|r| {
                    assert!((r.mean_reward - 0.25).abs() < 1e-6, "{r:?}");
                    r.mean_future
                })
                .collect::<Vec<f32>>()
        };
        let frozen = futures(2);
        assert_eq!(frozen[0], frozen[1], "{frozen:?}");
        assert_ne!(frozen[1], frozen[2], "{frozen:?}");
        assert_eq!(frozen[2], frozen[3], "{frozen:?}");
        let live = futures(0);
        assert_eq!(live[0], frozen[0]);
        assert_ne!(live[0], live[1], "{live:?}");
    }

    #[test]
    fn save_load_round_trip_and_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.safetensors");
        let net = small(7);
        net.save(&path).unwrap();
        let back = QNetwork::load(&path).unwrap();
        let s = [0.1f32, 0.2, 0.3, 0.4, 0.5, 0.6];
        let a = [1.0f32, 0.0, 0.0, 1.0];
        assert_eq!(
            net.q_values(&s, &[&a]).unwrap(),
            back.q_values(&s, &[&a]).unwrap()
        );
        std::fs::write(&path, b"not a model").unwrap();
        let e = QNetwork::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("q.safetensors") && e.contains("not safetensors"),
            "{e}"
        );
        let e = net.q_values(&s[..5], &[&a]).unwrap_err().to_string();
        assert!(e.contains("5 values"), "{e}");
    }
}
