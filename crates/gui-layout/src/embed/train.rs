//! Training and evaluation of the layout embedder with the paper's protocol (Section
//! 3.1.2): N = 100 random layout strings, all N² = 10,000 ordered pairs labelled with
//! their tree edit distance, split 7:1:2 into training, validation and test pairs.
//!
//! The model is fitted with mean squared error between `‖e(A) − e(B)‖₂` and
//! `TED(A, B) / distance_scale`, raw edit distances (not normalised by tree size) because
//! the paper's target is the tree edit distance itself. An epoch embeds every string of
//! the data set once in a batch and takes one Adam step on all training pairs among them
//! (with `batch_strings` below N, one step per group of strings on the training pairs
//! inside the group). The validation pairs choose the epoch whose weights are kept.

use std::time::Instant;

use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{LayoutEmbedder, LayoutEmbedderConfig, LstmWeights, Matrix, Weights};
use crate::{Error, LayoutTree, Result, random_layout, tree_edit_distance};

fn tensor_err(e: candle_core::Error) -> Error {
    Error::Embedder {
        message: e.to_string(),
    }
}

/// Which widget labels the random layouts carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WidgetLabels {
    /// Every widget is `w`.
    Plain,
    /// Every widget is `w:<kind>`.
    Kinds,
    /// Each string is plain or with kinds at random, so that one model serves both of
    /// [`crate::TreeLabels`]' forms.
    Mixed,
}

/// How the random layout strings of [`LayoutPairs`] are drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutPairConfig {
    /// Distinct layout strings; 100 in the paper, giving 10,000 ordered pairs.
    pub strings: usize,
    /// Bounds passed to [`random_layout`].
    pub max_groups: usize,
    pub max_lines: usize,
    pub max_columns: usize,
    pub widget_labels: WidgetLabels,
    /// Training, validation and test shares of the pairs; 7:1:2 in the paper.
    pub split: [f64; 3],
    pub seed: u64,
}

impl Default for LayoutPairConfig {
    /// Up to 4 groups of up to 3 lines of up to 4 widgets: 4 to 65 nodes, about 21 on
    /// average, the size of the screens the characterisation produces for app pages.
    fn default() -> Self {
        Self {
            strings: 100,
            max_groups: 4,
            max_lines: 3,
            max_columns: 4,
            widget_labels: WidgetLabels::Mixed,
            split: [0.7, 0.1, 0.2],
            seed: 0,
        }
    }
}

/// An ordered pair of strings of a [`LayoutPairs`], by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutPair {
    pub a: u32,
    pub b: u32,
}

/// The labelled pair data set: the strings, the full matrix of their tree edit distances
/// and the shuffled split of the ordered pairs.
#[derive(Debug, Clone)]
pub struct LayoutPairs {
    pub trees: Vec<LayoutTree>,
    /// Row-major `strings × strings` tree edit distances.
    pub distances: Vec<f32>,
    pub train: Vec<LayoutPair>,
    pub validation: Vec<LayoutPair>,
    pub test: Vec<LayoutPair>,
}

impl LayoutPairs {
    /// Draws `config.strings` distinct random layouts, labels every ordered pair (self
    /// pairs included, as in the paper's 100 × 100) and splits them.
    pub fn generate(config: &LayoutPairConfig) -> Result<Self> {
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let n = config.strings;
        if n < 2 {
            return Err(Error::Embedder {
                message: format!("a pair data set needs at least 2 strings, not {n}"),
            });
        }
        let mut seen = std::collections::HashSet::new();
        let mut trees = Vec::with_capacity(n);
        let mut draws = 0;
        while trees.len() < n {
            draws += 1;
            if draws > 100 * n {
                return Err(Error::Embedder {
                    message: format!(
                        "only {} distinct layouts in {draws} draws; raise the size bounds",
                        trees.len()
                    ),
                });
            }
            let kinds = match config.widget_labels {
                WidgetLabels::Plain => false,
                WidgetLabels::Kinds => true,
                WidgetLabels::Mixed => rng.random_bool(0.5),
            };
            let t = random_layout(
                &mut rng,
                config.max_groups,
                config.max_lines,
                config.max_columns,
                kinds,
            );
            if seen.insert(t.to_bracket()) {
                trees.push(t);
            }
        }
        Self::from_trees(trees, config.split, &mut rng)
    }

    /// Labels and splits the ordered pairs of given trees.
    pub fn from_trees(trees: Vec<LayoutTree>, split: [f64; 3], rng: &mut impl Rng) -> Result<Self> {
        let n = trees.len();
        let total: f64 = split.iter().sum();
        if split.iter().any(|s| *s < 0.0) || total <= 0.0 {
            return Err(Error::Embedder {
                message: format!("split shares must be non-negative, got {split:?}"),
            });
        }
        let mut distances = vec![0.0f32; n * n];
        for i in 0..n {
            for j in i + 1..n {
                let d = tree_edit_distance(&trees[i], &trees[j]) as f32;
                distances[i * n + j] = d;
                distances[j * n + i] = d;
            }
        }
        let mut pairs: Vec<LayoutPair> = (0..n as u32)
            .flat_map(|a| (0..n as u32).map(move |b| LayoutPair { a, b }))
            .collect();
        pairs.shuffle(rng);
        let len = pairs.len() as f64;
        let n_train = (len * split[0] / total).round() as usize;
        let n_val = ((len * split[1] / total).round() as usize).min(pairs.len() - n_train);
        let test = pairs.split_off(n_train + n_val);
        let validation = pairs.split_off(n_train);
        Ok(Self {
            trees,
            distances,
            train: pairs,
            validation,
            test,
        })
    }

    /// The labelled tree edit distance of a pair.
    pub fn distance(&self, p: LayoutPair) -> f32 {
        self.distances[p.a as usize * self.trees.len() + p.b as usize]
    }

    /// Every ordered pair, for evaluating on strings a model never saw.
    pub fn all_pairs(&self) -> Vec<LayoutPair> {
        let n = self.trees.len() as u32;
        (0..n)
            .flat_map(|a| (0..n).map(move |b| LayoutPair { a, b }))
            .collect()
    }
}

/// Optimisation settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    pub epochs: usize,
    /// Adam step size at the start; it decays along a cosine to `final_lr_fraction` of
    /// itself by the last epoch.
    pub learning_rate: f64,
    pub final_lr_fraction: f64,
    /// Strings embedded per optimisation step; the data set size makes an epoch one step.
    pub batch_strings: usize,
    /// Global gradient norm above which a step is scaled down (LSTM gradients can spike).
    pub clip_grad_norm: f64,
    /// Validation MAE is measured every this many epochs (and at the last one); the best
    /// measured weights are returned.
    pub eval_every: usize,
    /// Prints one line per evaluation to stderr.
    pub verbose: bool,
}

impl Default for TrainConfig {
    fn default() -> Self {
        Self {
            epochs: 600,
            learning_rate: 3e-3,
            final_lr_fraction: 0.05,
            batch_strings: 100,
            clip_grad_norm: 5.0,
            eval_every: 10,
            verbose: false,
        }
    }
}

/// Quality of predicted distances against tree edit distances on a set of pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairMetrics {
    pub pairs: usize,
    /// Mean |predicted − true| in edit operations.
    pub mae: f64,
    /// Σ |predicted − true|, the statistic the paper's 30-repetition check compares.
    pub sum_abs_error: f64,
    /// Spearman rank correlation between predicted and true distances (ties share ranks).
    pub spearman: f64,
    /// MAE of always predicting the mean training distance, for scale.
    pub constant_mae: f64,
}

/// What a training run did and reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainReport {
    pub epochs: usize,
    /// The epoch whose weights were kept (lowest validation MAE).
    pub best_epoch: usize,
    pub final_train_loss: f64,
    pub validation: PairMetrics,
    pub test: PairMetrics,
    pub seconds: f64,
}

/// Trains a fresh embedder initialised from `config.seed` on `data.train`, keeps the
/// weights with the lowest validation MAE and measures them on `data.test`.
pub fn train_embedder(
    config: &LayoutEmbedderConfig,
    data: &LayoutPairs,
    train: &TrainConfig,
) -> Result<(LayoutEmbedder, TrainReport)> {
    let start = Instant::now();
    let initial = LayoutEmbedder::new(config.clone())?;
    if data.train.is_empty() {
        return Err(Error::Embedder {
            message: "no training pairs".to_owned(),
        });
    }
    let n = data.trees.len();
    let tokens: Vec<Vec<u32>> = data
        .trees
        .iter()
        .map(|t| initial.vocab.tokenize(t))
        .collect();
    let mean_train = mean(data.train.iter().map(|p| f64::from(data.distance(*p))));
    let model = TrainableLstm::new(&initial.weights).map_err(tensor_err)?;
    let mut opt = AdamW::new(
        model.vars(),
        ParamsAdamW {
            lr: train.learning_rate,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )
    .map_err(tensor_err)?;
    // Training pairs grouped by first string, so a batch finds its pairs quickly.
    let mut by_first: Vec<Vec<LayoutPair>> = vec![Vec::new(); n];
    for p in &data.train {
        by_first[p.a as usize].push(*p);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x6c73_746d_5f62_6174);
    let batch = train.batch_strings.clamp(1, n);
    let eval_every = train.eval_every.max(1);
    let mut order: Vec<usize> = (0..n).collect();
    let mut best: Option<(f64, usize, Weights)> = None;
    let mut last_loss = f64::NAN;
    for epoch in 1..=train.epochs {
        let progress = (epoch - 1) as f64 / train.epochs.max(2).saturating_sub(1) as f64;
        let cosine = 0.5 * (1.0 + (std::f64::consts::PI * progress).cos());
        let floor = train.final_lr_fraction;
        opt.set_learning_rate(train.learning_rate * (floor + (1.0 - floor) * cosine));
        if batch < n {
            order.shuffle(&mut rng);
        }
        let (mut loss_sum, mut loss_pairs) = (0.0, 0usize);
        for group in order.chunks(batch) {
            let mut local = vec![u32::MAX; n];
            for (k, &s) in group.iter().enumerate() {
                local[s] = k as u32;
            }
            let (mut ia, mut ib, mut target) = (Vec::new(), Vec::new(), Vec::new());
            for &s in group {
                for p in &by_first[s] {
                    let lb = local[p.b as usize];
                    if lb != u32::MAX {
                        ia.push(local[s]);
                        ib.push(lb);
                        target.push(data.distance(*p) / config.distance_scale);
                    }
                }
            }
            if ia.is_empty() {
                continue;
            }
            let seqs: Vec<&[u32]> = group.iter().map(|&s| &tokens[s][..]).collect();
            let loss = model
                .pair_loss(&seqs, &ia, &ib, &target)
                .map_err(tensor_err)?;
            let grads = loss.backward().map_err(tensor_err)?;
            let grads = model
                .clip(grads, train.clip_grad_norm)
                .map_err(tensor_err)?;
            opt.step(&grads).map_err(tensor_err)?;
            let l = f64::from(loss.to_scalar::<f32>().map_err(tensor_err)?);
            loss_sum += l * ia.len() as f64;
            loss_pairs += ia.len();
        }
        last_loss = loss_sum / loss_pairs.max(1) as f64;
        if !last_loss.is_finite() {
            return Err(Error::Embedder {
                message: format!("training diverged at epoch {epoch} (loss {last_loss})"),
            });
        }
        if epoch % eval_every == 0 || epoch == train.epochs {
            let weights = model.weights().map_err(tensor_err)?;
            let current =
                LayoutEmbedder::from_parts(config.clone(), initial.vocab.clone(), weights);
            let val = evaluate_pairs(&current, data, &data.validation, mean_train)?;
            if train.verbose {
                eprintln!(
                    "epoch {epoch:>4}  train loss {last_loss:.4}  val MAE {:.3}  val ρ {:.4}  ({:.0} s)",
                    val.mae,
                    val.spearman,
                    start.elapsed().as_secs_f64()
                );
            }
            if best
                .as_ref()
                .is_none_or(|(mae, _, _)| val.mae < *mae || mae.is_nan())
            {
                best = Some((val.mae, epoch, current.weights));
            }
        }
    }
    let (best_epoch, weights) = match best {
        Some((_, epoch, w)) => (epoch, w),
        None => (0, initial.weights.clone()),
    };
    let embedder = LayoutEmbedder::from_parts(config.clone(), initial.vocab, weights);
    let report = TrainReport {
        epochs: train.epochs,
        best_epoch,
        final_train_loss: last_loss,
        validation: evaluate_pairs(&embedder, data, &data.validation, mean_train)?,
        test: evaluate_pairs(&embedder, data, &data.test, mean_train)?,
        seconds: start.elapsed().as_secs_f64(),
    };
    Ok((embedder, report))
}

/// Predicted against labelled distances on `pairs` of `data`; `constant` is the
/// prediction of the constant baseline (the mean training distance).
pub fn evaluate_pairs(
    embedder: &LayoutEmbedder,
    data: &LayoutPairs,
    pairs: &[LayoutPair],
    constant: f64,
) -> Result<PairMetrics> {
    let embeddings = embedder.embed_many(&data.trees)?;
    let (mut predicted, mut truth) = (Vec::new(), Vec::new());
    for p in pairs {
        predicted.push(
            embedder.predicted_distance(&embeddings[p.a as usize], &embeddings[p.b as usize]),
        );
        truth.push(f64::from(data.distance(*p)));
    }
    let sum_abs_error: f64 = predicted
        .iter()
        .zip(&truth)
        .map(|(p, t)| (p - t).abs())
        .sum();
    let count = pairs.len().max(1) as f64;
    Ok(PairMetrics {
        pairs: pairs.len(),
        mae: sum_abs_error / count,
        sum_abs_error,
        spearman: spearman(&predicted, &truth),
        constant_mae: truth.iter().map(|t| (t - constant).abs()).sum::<f64>() / count,
    })
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    sum / n.max(1) as f64
}

/// Spearman's ρ: Pearson correlation of the ranks, tied values sharing their mean rank.
/// NaN when either side is constant or the lengths differ.
pub fn spearman(x: &[f64], y: &[f64]) -> f64 {
    if x.len() != y.len() || x.len() < 2 {
        return f64::NAN;
    }
    pearson(&ranks(x), &ranks(y))
}

fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        // Ranks i+1 ..= j+1 are tied; each gets their mean.
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            out[k] = r;
        }
        i = j + 1;
    }
    out
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x.iter().copied()), mean(y.iter().copied()));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    sxy / (sxx * syy).sqrt()
}

/// The embedder as candle variables, with a batched forward pass over packed sequences.
struct TrainableLstm {
    token_embedding: Var,
    /// Per layer: `weight_ih [4H, in]`, `weight_hh [4H, H]`, `bias [4H]`.
    lstm: Vec<[Var; 3]>,
    projection: Var,
    projection_bias: Var,
    hidden: usize,
}

impl TrainableLstm {
    fn new(w: &Weights) -> candle_core::Result<Self> {
        let dev = Device::Cpu;
        let matrix = |m: &Matrix| {
            Var::from_tensor(&Tensor::from_vec(m.data.clone(), (m.rows, m.cols), &dev)?)
        };
        let vector = |v: &[f32]| Var::from_tensor(&Tensor::from_vec(v.to_vec(), v.len(), &dev)?);
        Ok(Self {
            token_embedding: matrix(&w.token_embedding)?,
            lstm: w
                .lstm
                .iter()
                .map(|l| {
                    Ok([
                        matrix(&l.weight_ih)?,
                        matrix(&l.weight_hh)?,
                        vector(&l.bias)?,
                    ])
                })
                .collect::<candle_core::Result<_>>()?,
            projection: matrix(&w.projection)?,
            projection_bias: vector(&w.projection_bias)?,
            hidden: w.lstm[0].weight_hh.cols,
        })
    }

    fn vars(&self) -> Vec<Var> {
        let mut v = vec![self.token_embedding.clone()];
        v.extend(self.lstm.iter().flatten().cloned());
        v.push(self.projection.clone());
        v.push(self.projection_bias.clone());
        v
    }

    fn weights(&self) -> candle_core::Result<Weights> {
        let matrix = |v: &Var| -> candle_core::Result<Matrix> {
            let (rows, cols) = v.dims2()?;
            Ok(Matrix {
                rows,
                cols,
                data: v.flatten_all()?.to_vec1()?,
            })
        };
        Ok(Weights {
            token_embedding: matrix(&self.token_embedding)?,
            lstm: self
                .lstm
                .iter()
                .map(|[ih, hh, b]| {
                    Ok(LstmWeights {
                        weight_ih: matrix(ih)?,
                        weight_hh: matrix(hh)?,
                        bias: b.to_vec1()?,
                    })
                })
                .collect::<candle_core::Result<_>>()?,
            projection: matrix(&self.projection)?,
            projection_bias: self.projection_bias.to_vec1()?,
        })
    }

    /// Embeddings `[sequences, out_dim]` in input order.
    ///
    /// The sequences are packed time-major by decreasing length (as PyTorch's
    /// `pack_padded_sequence` does): at step t only the k_t sequences still running take
    /// part, so the work follows the total length rather than batch × longest, and a
    /// sequence's last hidden state is the row that drops out when it ends.
    fn forward(&self, seqs: &[&[u32]]) -> candle_core::Result<Tensor> {
        let dev = Device::Cpu;
        let h = self.hidden;
        let mut by_len: Vec<usize> = (0..seqs.len()).collect();
        by_len.sort_by_key(|&i| std::cmp::Reverse(seqs[i].len()));
        let longest = seqs[by_len[0]].len();
        // active[t] = sequences running at step t; they are a prefix of `by_len`.
        let active: Vec<usize> = (0..longest)
            .map(|t| by_len.iter().take_while(|&&i| seqs[i].len() > t).count())
            .collect();
        let mut packed = Vec::with_capacity(active.iter().sum());
        for (t, &k) in active.iter().enumerate() {
            packed.extend(by_len[..k].iter().map(|&i| seqs[i][t]));
        }
        let packed = Tensor::from_vec(packed, active.iter().sum::<usize>(), &dev)?;
        let mut input = self.token_embedding.as_tensor().index_select(&packed, 0)?;
        let mut last = None;
        for [w_ih, w_hh, bias] in &self.lstm {
            // The input projection of every step at once; only h·W_hhᵀ is sequential.
            let xproj = input
                .matmul(&w_ih.as_tensor().t()?)?
                .broadcast_add(bias.as_tensor())?;
            let w_hh_t = w_hh.as_tensor().t()?;
            let (mut hs, mut c) = (Tensor::zeros((active[0], h), DType::F32, &dev)?, None);
            let mut outputs = Vec::with_capacity(longest);
            // Final states, in chunks of sequences that end together (longest first).
            let mut finished: Vec<Tensor> = Vec::new();
            let mut offset = 0;
            for &k in &active {
                let rows = hs.dim(0)?;
                if k < rows {
                    finished.push(hs.narrow(0, k, rows - k)?);
                    hs = hs.narrow(0, 0, k)?;
                }
                let gates = xproj.narrow(0, offset, k)?.add(&hs.matmul(&w_hh_t)?)?;
                offset += k;
                let ifo = candle_nn::ops::sigmoid(&gates.narrow(1, 0, 3 * h)?)?;
                let g = gates.narrow(1, 3 * h, h)?.tanh()?;
                let (i, f, o) = (
                    ifo.narrow(1, 0, h)?,
                    ifo.narrow(1, h, h)?,
                    ifo.narrow(1, 2 * h, h)?,
                );
                let ig = i.mul(&g)?;
                let c_new = match c {
                    Some(c_prev) => f.mul(&Tensor::narrow(&c_prev, 0, 0, k)?)?.add(&ig)?,
                    None => ig,
                };
                hs = o.mul(&c_new.tanh()?)?;
                c = Some(c_new);
                outputs.push(hs.clone());
            }
            finished.push(hs);
            finished.reverse();
            last = Some(Tensor::cat(&finished, 0)?);
            input = Tensor::cat(&outputs, 0)?;
        }
        let last = last.expect("at least one layer");
        // Back from length order to input order.
        let mut inverse = vec![0u32; seqs.len()];
        for (pos, &i) in by_len.iter().enumerate() {
            inverse[i] = pos as u32;
        }
        let last = last.index_select(&Tensor::from_vec(inverse, seqs.len(), &dev)?, 0)?;
        last.matmul(&self.projection.as_tensor().t()?)?
            .broadcast_add(self.projection_bias.as_tensor())
    }

    /// Mean squared error between `‖e(a) − e(b)‖₂` and `target` over the listed pairs
    /// (indices into `seqs`).
    fn pair_loss(
        &self,
        seqs: &[&[u32]],
        a: &[u32],
        b: &[u32],
        target: &[f32],
    ) -> candle_core::Result<Tensor> {
        let dev = Device::Cpu;
        let e = self.forward(seqs)?;
        let ea = e.index_select(&Tensor::from_slice(a, a.len(), &dev)?, 0)?;
        let eb = e.index_select(&Tensor::from_slice(b, b.len(), &dev)?, 0)?;
        // The small constant keeps the gradient of the norm finite on identical pairs.
        let dist = (ea.sub(&eb)?.sqr()?.sum(D::Minus1)? + 1e-6)?.sqrt()?;
        let target = Tensor::from_slice(target, target.len(), &dev)?;
        dist.sub(&target)?.sqr()?.mean_all()
    }

    /// Scales every gradient down when their global norm exceeds `max_norm`.
    fn clip(
        &self,
        mut grads: candle_core::backprop::GradStore,
        max_norm: f64,
    ) -> candle_core::Result<candle_core::backprop::GradStore> {
        let vars = self.vars();
        let mut sq = 0.0f64;
        for v in &vars {
            if let Some(g) = grads.get(v) {
                sq += f64::from(g.sqr()?.sum_all()?.to_scalar::<f32>()?);
            }
        }
        let norm = sq.sqrt();
        if norm > max_norm && max_norm > 0.0 {
            let scale = max_norm / norm;
            for v in &vars {
                if let Some(g) = grads.remove(v) {
                    grads.insert(v, (g * scale)?);
                }
            }
        }
        Ok(grads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_config() -> LayoutEmbedderConfig {
        LayoutEmbedderConfig {
            embed_dim: 8,
            hidden: 12,
            layers: 2,
            out_dim: 16,
            distance_scale: 4.0,
            seed: 3,
        }
    }

    #[test]
    fn batched_candle_forward_matches_single_sequence_forward() {
        let embedder = LayoutEmbedder::new(small_config()).unwrap();
        let trees: Vec<LayoutTree> = [
            "{screen{group{line{w}{w:button}}}}",
            "{screen{group{line{w}}{line{w}{w}{w}}}{group{line{w:tab}}}}",
            "{screen}",
            "{odd{line{w}}}",
        ]
        .iter()
        .map(|s| LayoutTree::parse(s).unwrap())
        .collect();
        let tokens: Vec<Vec<u32>> = trees.iter().map(|t| embedder.vocab.tokenize(t)).collect();
        let seqs: Vec<&[u32]> = tokens.iter().map(|t| &t[..]).collect();
        let model = TrainableLstm::new(&embedder.weights).unwrap();
        let batched = model.forward(&seqs).unwrap().to_vec2::<f32>().unwrap();
        for (tree, row) in trees.iter().zip(&batched) {
            let single = embedder.embed(tree).unwrap();
            for (x, y) in single.iter().zip(row) {
                assert!((x - y).abs() < 1e-5, "{x} vs {y} for {tree}");
            }
        }
        assert_eq!(model.weights().unwrap(), embedder.weights);
    }

    #[test]
    fn spearman_handles_ties_and_order() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // Ties: ranks [1.5, 1.5, 3] against [1, 2, 3] → ρ = √3/2.
        let r = spearman(&[5.0, 5.0, 7.0], &[1.0, 2.0, 3.0]);
        assert!((r - 3f64.sqrt() / 2.0).abs() < 1e-12, "{r}");
        assert!(spearman(&[1.0, 1.0], &[1.0, 2.0]).is_nan());
    }

    #[test]
    fn pair_data_set_follows_the_protocol() {
        let config = LayoutPairConfig {
            strings: 10,
            ..LayoutPairConfig::default()
        };
        let data = LayoutPairs::generate(&config).unwrap();
        assert_eq!(data.trees.len(), 10);
        assert_eq!(
            (data.train.len(), data.validation.len(), data.test.len()),
            (70, 10, 20)
        );
        let mut all: Vec<_> = [&data.train, &data.validation, &data.test]
            .into_iter()
            .flatten()
            .map(|p| (p.a, p.b))
            .collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 100, "every ordered pair exactly once");
        for p in data.all_pairs() {
            let d = data.distance(p);
            assert_eq!(
                d,
                tree_edit_distance(&data.trees[p.a as usize], &data.trees[p.b as usize]) as f32
            );
            assert_eq!(d == 0.0, p.a == p.b, "strings are distinct");
        }
        let again = LayoutPairs::generate(&config).unwrap();
        assert_eq!(again.test, data.test);
        assert_eq!(again.trees, data.trees);
    }

    #[test]
    fn a_short_training_lowers_the_error_and_is_deterministic() {
        let data = LayoutPairs::generate(&LayoutPairConfig {
            strings: 12,
            max_groups: 2,
            max_lines: 2,
            max_columns: 3,
            ..LayoutPairConfig::default()
        })
        .unwrap();
        let train = TrainConfig {
            epochs: 40,
            learning_rate: 1e-2,
            eval_every: 40,
            ..TrainConfig::default()
        };
        let untrained = LayoutEmbedder::new(small_config()).unwrap();
        let before = evaluate_pairs(&untrained, &data, &data.train, 0.0).unwrap();
        let (model, report) = train_embedder(&small_config(), &data, &train).unwrap();
        let after = evaluate_pairs(&model, &data, &data.train, 0.0).unwrap();
        assert!(
            after.mae < 0.5 * before.mae,
            "{} → {}",
            before.mae,
            after.mae
        );
        assert_eq!(report.best_epoch, 40);
        let (again, _) = train_embedder(&small_config(), &data, &train).unwrap();
        assert_eq!(again.weights, model.weights);
    }
}
