//! Training and scoring of [`RenderNet`]: Adam on class-weighted cross-entropy, the
//! learning rate halved every few epochs (AdaT Section III-B), the split by app.

use std::collections::BTreeMap;

use candle_core::{D, DType, Device, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use image::RgbImage;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::augment::{Degradation, degrade, dialog_over_dimmed, larger_window};
use super::net::{Mode, tensor_err};
use super::{
    AppSplit, RenderDataset, RenderLabel, RenderMetrics, RenderNet, RenderNetConfig, split_apps,
};
use crate::{Error, Result};

/// One prepared, labelled frame.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderSample {
    /// The network input ([`RenderNet::prepare`]).
    pub input: Vec<f32>,
    pub label: RenderLabel,
    pub app: String,
}

/// Training settings. Where they follow the paper (AdaT Section III-B): Adam, an initial
/// learning rate of 0.01 halved every 10 epochs, 20 epochs, batch norm momentum 0.1 (in
/// [`RenderNetConfig`]), an 8:1:1 split by app. The batch and the class weights are ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenderTrainConfig {
    /// The network to train; its `seed` draws the initial weights.
    pub net: RenderNetConfig,
    pub epochs: usize,
    /// Frames per step. A last batch of one frame is dropped (batch norm needs two).
    pub batch: usize,
    pub learning_rate: f64,
    /// The learning rate halves every this many epochs (0: never).
    pub halve_every: usize,
    pub weight_decay: f64,
    /// Classes are weighted by `count^-balance` in the loss: 0 is plain cross-entropy, 1
    /// weighs partial and full frames equally however many there are of each.
    pub balance: f64,
    /// Count the classes of `balance` per app rather than over all frames, so partial and
    /// full frames weigh the same within every app (an app with mostly partial frames
    /// would otherwise teach that its look means partial).
    #[serde(default)]
    pub balance_per_app: bool,
    /// Train only on the partial frames that differ from their settled screen in at
    /// least this share of pixels (the `change` the collector records; 0 keeps them all).
    /// The frames below it look finished; labelled partial, they teach that a finished
    /// screen may be unfinished. Validation and test frames are all kept.
    #[serde(default)]
    pub min_partial_change: f64,
    /// Change each training input's look in every batch (see `jitter`): mirrored,
    /// colour channels reordered, brightness and contrast moved.
    #[serde(default)]
    pub jitter: bool,
    /// Share of the apps held out for the test (at least one app).
    pub test_fraction: f64,
    /// Share of the remaining apps that pick the kept epoch (none: the last is kept).
    pub validation_fraction: f64,
    /// After each epoch, recompute the batch norm statistics with the epoch's final
    /// weights (see `recalibrate_bn`), instead of keeping the running averages.
    pub recalibrate_bn: bool,
    /// Held-out apps by name, instead of a seeded draw.
    #[serde(default)]
    pub test_apps: Vec<String>,
    /// Synthetic partial frames drawn from each full training frame (see
    /// [`super::augment`]): skeletons, spinners, progress bars, cross-fades and slides on
    /// the training apps' own screens. Never added to the validation or test frames.
    #[serde(default)]
    pub synthetic_per_full: usize,
    /// Also one synthetic full frame per full training frame, in turn a dialog over the
    /// dimmed page and the page in a larger window: finished screens that look faded or
    /// mostly empty (see [`super::augment`]).
    #[serde(default)]
    pub synthetic_finished: bool,
    /// Seed of the split and of the batch order.
    pub seed: u64,
}

impl Default for RenderTrainConfig {
    fn default() -> Self {
        Self {
            net: RenderNetConfig::default(),
            epochs: 20,
            batch: 32,
            learning_rate: 0.01,
            halve_every: 10,
            weight_decay: 0.0,
            balance: 1.0,
            balance_per_app: true,
            jitter: true,
            min_partial_change: 0.0,
            test_fraction: 0.1,
            validation_fraction: 0.1,
            recalibrate_bn: true,
            test_apps: Vec::new(),
            synthetic_per_full: 1,
            synthetic_finished: true,
            seed: 1,
        }
    }
}

/// What a training did and how the held-out apps score.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RenderTrainReport {
    pub split: AppSplit,
    /// Frames per part: train, validation, test.
    pub frames: [usize; 3],
    pub epoch_loss: Vec<f64>,
    /// F1 on the validation apps after each epoch (empty without validation apps).
    pub validation_f1: Vec<f64>,
    /// The epoch whose weights the network ends with: the best on validation, or the last.
    pub kept_epoch: usize,
    /// Scores on the held-out apps, all together.
    pub test: RenderMetrics,
    /// Scores per held-out app.
    pub test_by_app: BTreeMap<String, RenderMetrics>,
}

/// Decodes and prepares the frames of `apps` (in parallel; order kept).
pub fn prepare_samples(
    dataset: &RenderDataset,
    apps: &[String],
    config: &RenderNetConfig,
) -> Result<Vec<RenderSample>> {
    let frames: Vec<_> = dataset.frames_of(apps).collect();
    frames
        .par_iter()
        .map(|f| {
            let img = dataset.image(f)?;
            Ok(RenderSample {
                input: super::net::prepare_input(&img, config),
                label: f.record.label,
                app: f.record.app.clone(),
            })
        })
        .collect()
}

/// `per_full` synthetic partial frames for every full frame of `apps`, each a
/// [`Degradation`] of the frame (kinds in turn, so they come in equal numbers), blended or
/// slid with another full frame of the same app for the transitions; with `finished`,
/// also one full frame, in turn a dialog over the dimmed page ([`dialog_over_dimmed`]) and
/// the page in a larger window ([`larger_window`]). Seeded per
/// frame, so the result does not depend on the thread count.
pub fn synthetic_samples(
    dataset: &RenderDataset,
    apps: &[String],
    per_full: usize,
    finished: bool,
    config: &RenderNetConfig,
    seed: u64,
) -> Result<Vec<RenderSample>> {
    if per_full == 0 && !finished {
        return Ok(Vec::new());
    }
    let full: Vec<_> = dataset
        .frames_of(apps)
        .filter(|f| f.record.label == RenderLabel::Full)
        .collect();
    let images: Vec<RgbImage> = full
        .par_iter()
        .map(|f| dataset.image(f))
        .collect::<Result<_>>()?;
    // Each app's full frames, in file order: the partners of its transitions.
    let mut by_app: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (j, f) in full.iter().enumerate() {
        by_app.entry(f.record.app.as_str()).or_default().push(j);
    }
    let made: Vec<Vec<RenderSample>> = (0..full.len())
        .into_par_iter()
        .map(|i| {
            let app = &full[i].record.app;
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_0000_0000 ^ i as u64);
            let same_app: Vec<usize> = by_app[app.as_str()]
                .iter()
                .copied()
                .filter(|&j| j != i)
                .collect();
            let mut made: Vec<RenderSample> = (0..per_full)
                .map(|k| {
                    let kind = Degradation::ALL[(i * per_full + k) % Degradation::ALL.len()];
                    let other = same_app.choose(&mut rng).map(|&j| &images[j]);
                    let img = degrade(&images[i], other, kind, &mut rng);
                    RenderSample {
                        input: super::net::prepare_input(&img, config),
                        label: RenderLabel::Partial,
                        app: app.clone(),
                    }
                })
                .collect();
            if finished {
                let img = if i % 2 == 0 {
                    let other = same_app.choose(&mut rng).map(|&j| &images[j]);
                    dialog_over_dimmed(&images[i], other, &mut rng)
                } else {
                    larger_window(&images[i], &mut rng)
                };
                made.push(RenderSample {
                    input: super::net::prepare_input(&img, config),
                    label: RenderLabel::Full,
                    app: app.clone(),
                });
            }
            made
        })
        .collect();
    Ok(made.into_iter().flatten().collect())
}

/// Splits `dataset` by app, trains on the training apps, keeps the epoch best on the
/// validation apps, and scores the held-out apps. `on_epoch(epoch, loss, validation F1)`
/// is called after each epoch. Deterministic for given seeds (and thread count).
pub fn train(
    dataset: &RenderDataset,
    config: &RenderTrainConfig,
    on_epoch: impl FnMut(usize, f64, Option<f64>),
) -> Result<(RenderNet, RenderTrainReport)> {
    let split = split_apps(
        &dataset.apps(),
        config.test_fraction,
        config.validation_fraction,
        config.seed,
        &config.test_apps,
    )?;
    // Ambiguous partial frames are left out of training only: the scores below are on
    // every held-out frame.
    let mut train_set = if config.min_partial_change > 0.0 {
        let mut clear = dataset.clone();
        clear.drop_small_changes(config.min_partial_change);
        prepare_samples(&clear, &split.train, &config.net)?
    } else {
        prepare_samples(dataset, &split.train, &config.net)?
    };
    train_set.extend(synthetic_samples(
        dataset,
        &split.train,
        config.synthetic_per_full,
        config.synthetic_finished,
        &config.net,
        config.seed,
    )?);
    let validation = prepare_samples(dataset, &split.validation, &config.net)?;
    let test = prepare_samples(dataset, &split.test, &config.net)?;
    let (mut net, mut report) = train_samples(&train_set, &validation, config, on_epoch)?;
    // The validation apps chose the epoch, so they do not count as held out either.
    net.train_apps = [split.train.clone(), split.validation.clone()].concat();
    let (by_app, overall) = evaluate_by_app(&net, &test)?;
    report.frames = [train_set.len(), validation.len(), test.len()];
    report.split = split;
    report.test = overall;
    report.test_by_app = by_app;
    Ok((net, report))
}

/// Trains a fresh `config.net` on `samples`. With `validation` samples (never the test
/// set), the network ends with the weights of the epoch with the best validation F1.
pub fn train_samples(
    samples: &[RenderSample],
    validation: &[RenderSample],
    config: &RenderTrainConfig,
    mut on_epoch: impl FnMut(usize, f64, Option<f64>),
) -> Result<(RenderNet, RenderTrainReport)> {
    if samples.len() < 2 {
        return Err(Error::Config {
            field: "samples",
            message: format!(
                "{} training frame(s); training needs at least two",
                samples.len()
            ),
        });
    }
    let mut net = RenderNet::new(config.net.clone())?;
    let weights = sample_weights(samples, config.balance, config.balance_per_app);
    let trainable: Vec<_> = net
        .vars
        .iter()
        .zip(&net.trainable)
        .filter(|(_, t)| **t)
        .map(|(v, _)| v.clone())
        .collect();
    let mut opt = AdamW::new(
        trainable,
        ParamsAdamW {
            lr: config.learning_rate,
            weight_decay: config.weight_decay,
            ..ParamsAdamW::default()
        },
    )
    .map_err(tensor_err)?;
    let dev = Device::Cpu;
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let mut order: Vec<usize> = (0..samples.len()).collect();
    let mut report = RenderTrainReport::default();
    let mut best: Option<Vec<Tensor>> = None;
    for epoch in 0..config.epochs {
        if let Some(halvings) = epoch.checked_div(config.halve_every) {
            opt.set_learning_rate(config.learning_rate * 0.5f64.powi(halvings as i32));
        }
        order.shuffle(&mut rng);
        let (mut total, mut batches) = (0.0, 0);
        for chunk in order.chunks(config.batch.max(2)) {
            if chunk.len() < 2 {
                continue;
            }
            let jittered: Vec<Vec<f32>> = if config.jitter {
                chunk
                    .iter()
                    .map(|&i| jitter(&samples[i].input, &config.net, &mut rng))
                    .collect()
            } else {
                Vec::new()
            };
            let inputs: Vec<&[f32]> = if config.jitter {
                jittered.iter().map(Vec::as_slice).collect()
            } else {
                chunk.iter().map(|&i| samples[i].input.as_slice()).collect()
            };
            let x = net.batch(&inputs)?;
            let labels: Vec<u32> = chunk
                .iter()
                .map(|&i| samples[i].label.index() as u32)
                .collect();
            let w: Vec<f32> = chunk.iter().map(|&i| weights[i]).collect();
            let n = chunk.len();
            let mut step = || -> candle_core::Result<f64> {
                let logits = net.logits(&x, Mode::Train(config.net.bn_momentum))?;
                let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
                let labels = Tensor::from_vec(labels.clone(), (n, 1), &dev)?;
                let picked = logp.gather(&labels, 1)?.squeeze(1)?;
                let w = Tensor::from_vec(w.clone(), n, &dev)?;
                let loss = (picked * w)?.mean_all()?.neg()?;
                opt.backward_step(&loss)?;
                loss.to_dtype(DType::F64)?.to_scalar::<f64>()
            };
            total += step().map_err(tensor_err)?;
            batches += 1;
        }
        if config.recalibrate_bn {
            recalibrate_bn(&net, samples, config.batch)?;
        }
        net.invalidate_folded();
        let loss = total / batches.max(1) as f64;
        report.epoch_loss.push(loss);
        let mut val = None;
        if validation.is_empty() {
            report.kept_epoch = epoch;
        } else {
            let f1 = evaluate(&net, validation)?.f1();
            val = Some(f1);
            if report.validation_f1.iter().all(|&b| f1 > b) {
                best = Some(
                    net.vars
                        .iter()
                        .map(|v| v.as_tensor().copy())
                        .collect::<candle_core::Result<_>>()
                        .map_err(tensor_err)?,
                );
                report.kept_epoch = epoch;
            }
            report.validation_f1.push(f1);
        }
        on_epoch(epoch, loss, val);
    }
    if let Some(best) = best {
        for (v, t) in net.vars.iter().zip(best) {
            v.set(&t).map_err(tensor_err)?;
        }
        net.invalidate_folded();
    }
    Ok((net, report))
}

/// A training copy of a prepared input with its look changed and its rendering state
/// kept: mirrored left to right half of the time, colour channels in a random order, and
/// brightness and contrast moved a little. Apps differ in colours and layout, not in
/// what an unfinished screen looks like.
fn jitter(input: &[f32], config: &RenderNetConfig, rng: &mut ChaCha8Rng) -> Vec<f32> {
    let (w, h) = (config.width, config.height);
    let channels = config.color.channels();
    let plane = w * h;
    let flip = rng.random_bool(0.5);
    let mut order: Vec<usize> = (0..channels).collect();
    order.shuffle(rng);
    let contrast = rng.random_range(0.8..1.2f32);
    let shift = rng.random_range(-0.1..0.1f32);
    let mut out = vec![0f32; input.len()];
    for (c, &from) in order.iter().enumerate() {
        let src = &input[from * plane..(from + 1) * plane];
        let dst = &mut out[c * plane..(c + 1) * plane];
        for y in 0..h {
            for x in 0..w {
                let sx = if flip { w - 1 - x } else { x };
                let v = src[y * w + sx] * contrast + shift;
                dst[y * w + x] = v.clamp(-0.5, 0.5);
            }
        }
    }
    out
}

/// The loss weight of each sample: classes weighed by `count^-balance`, counted per app
/// when `per_app` (so that within every app the two labels weigh the same and an app's
/// look says nothing about the label), normalised to a mean of 1 so the loss keeps its
/// scale.
fn sample_weights(samples: &[RenderSample], balance: f64, per_app: bool) -> Vec<f32> {
    fn group(s: &RenderSample, per_app: bool) -> &str {
        if per_app { &s.app } else { "" }
    }
    let mut counts: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    for s in samples {
        counts.entry(group(s, per_app)).or_default()[s.label.index()] += 1;
    }
    let per_group: BTreeMap<&str, Vec<f32>> = counts
        .iter()
        .map(|(g, c)| (*g, crate::cnn::class_weights(c, balance)))
        .collect();
    let mut weights: Vec<f32> = samples
        .iter()
        .map(|s| per_group[group(s, per_app)][s.label.index()])
        .collect();
    let mean = weights.iter().sum::<f32>() / weights.len().max(1) as f32;
    for w in &mut weights {
        *w /= mean;
    }
    weights
}

/// Recomputes every batch norm's running statistics with the current weights: the mean
/// of the batch statistics over `samples` in file order (PyTorch's `update_bn`). With
/// few steps per epoch and a learning rate of 0.01, running averages lag behind the
/// weights and the inference network disagrees with the trained one.
fn recalibrate_bn(net: &RenderNet, samples: &[RenderSample], batch: usize) -> Result<()> {
    if !net.has_batch_norm() {
        return Ok(());
    }
    let chunks = samples.chunks(batch.max(2)).filter(|c| c.len() >= 2);
    for (k, chunk) in chunks.enumerate() {
        let inputs: Vec<&[f32]> = chunk.iter().map(|s| s.input.as_slice()).collect();
        let x = net.batch(&inputs)?;
        // Momentum 1/(k+1): a running mean of the batch statistics.
        net.logits(&x, Mode::Train(1.0 / (k + 1) as f64))
            .map_err(tensor_err)?;
    }
    Ok(())
}

/// Scores `net` on `samples` (batch norm folded).
pub fn evaluate(net: &RenderNet, samples: &[RenderSample]) -> Result<RenderMetrics> {
    let mut m = RenderMetrics::default();
    for chunk in samples.chunks(64) {
        let inputs: Vec<&[f32]> = chunk.iter().map(|s| s.input.as_slice()).collect();
        for (s, p) in chunk.iter().zip(net.prob_full_batch(&inputs)?) {
            m.add(s.label, RenderLabel::from_prob_full(p));
        }
    }
    Ok(m)
}

/// Scores per app and over all samples.
pub fn evaluate_by_app(
    net: &RenderNet,
    samples: &[RenderSample],
) -> Result<(BTreeMap<String, RenderMetrics>, RenderMetrics)> {
    let mut by_app: BTreeMap<String, Vec<RenderSample>> = BTreeMap::new();
    for s in samples {
        by_app.entry(s.app.clone()).or_default().push(s.clone());
    }
    let mut overall = RenderMetrics::default();
    let mut out = BTreeMap::new();
    for (app, s) in by_app {
        let m = evaluate(net, &s)?;
        overall.merge(&m);
        out.insert(app, m);
    }
    Ok((out, overall))
}

#[cfg(test)]
mod tests {
    use super::super::net::tests::tiny;
    use super::super::{LABELS_FILE, RenderArch};
    use super::*;
    use image::{Rgb, RgbImage};
    use rand::Rng;

    /// A screen of cards with text-like lines; a partial one has grey placeholder blocks
    /// where some cards' content would be, or a spinner ring, or is half faded (a
    /// transition).
    fn frame(rng: &mut ChaCha8Rng, full: bool) -> RgbImage {
        let (w, h) = (192u32, 128u32);
        let bg = rng.random_range(235..=255u8);
        let mut img = RgbImage::from_pixel(w, h, Rgb([bg, bg, bg]));
        let accent = Rgb([
            rng.random_range(0..120),
            rng.random_range(40..160),
            rng.random_range(120..255),
        ]);
        for x in 0..w {
            for y in 0..16 {
                img.put_pixel(x, y, accent);
            }
        }
        let kind = rng.random_range(0..3);
        for card in 0..3u32 {
            let y0 = 24 + card * 34;
            let placeholder = !full && (kind == 0) && (card == 1 || rng.random_bool(0.5));
            for y in y0..y0 + 28 {
                for x in 8..w - 8 {
                    img.put_pixel(x, y, Rgb([255, 255, 255]));
                }
            }
            for line in 0..3u32 {
                let y = y0 + 4 + line * 8;
                let len = rng.random_range(60..170u32);
                for yy in y..y + 4 {
                    for x in 14..14 + len {
                        let c = if placeholder {
                            Rgb([205, 205, 205])
                        } else if (x / 5) % 3 == 2 {
                            Rgb([255, 255, 255])
                        } else {
                            Rgb([40, 40, 40])
                        };
                        img.put_pixel(x, yy, c);
                    }
                }
            }
        }
        if !full && kind == 1 {
            // A spinner ring.
            let (cx, cy, r) = (
                rng.random_range(60..130) as f32,
                rng.random_range(50..90) as f32,
                12.0,
            );
            for y in 0..h {
                for x in 0..w {
                    let d = ((x as f32 - cx).powi(2) + (y as f32 - cy).powi(2)).sqrt();
                    if (d - r).abs() < 3.0 {
                        img.put_pixel(x, y, accent);
                    }
                }
            }
        }
        if !full && kind == 2 {
            // Mid-transition: the page faded towards white.
            for p in img.pixels_mut() {
                for c in 0..3 {
                    p.0[c] = ((u16::from(p.0[c]) + 255) / 2) as u8;
                }
            }
        }
        img
    }

    fn samples(n: usize, seed: u64, config: &RenderNetConfig) -> Vec<RenderSample> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let full = i % 3 != 0; // imbalanced: two full for one partial
                RenderSample {
                    input: super::super::net::prepare_input(&frame(&mut rng, full), config),
                    label: if full {
                        RenderLabel::Full
                    } else {
                        RenderLabel::Partial
                    },
                    app: format!("app{}", i % 4),
                }
            })
            .collect()
    }

    fn quick(arch: RenderArch) -> RenderTrainConfig {
        RenderTrainConfig {
            net: tiny(arch, 1),
            epochs: 8,
            batch: 16,
            learning_rate: 0.01,
            halve_every: 4,
            ..RenderTrainConfig::default()
        }
    }

    #[test]
    fn learns_placeholders_spinners_and_fades() {
        let config = quick(RenderArch::MobileNet);
        let train_set = samples(64, 1, &config.net);
        let test = samples(48, 2, &config.net);
        let (net, report) = train_samples(&train_set, &test[..12], &config, |_, _, _| {}).unwrap();
        let m = evaluate(&net, &test[12..]).unwrap();
        let tm = evaluate(&net, &train_set).unwrap();
        assert!(
            m.f1() >= 0.9 && m.accuracy() >= 0.85,
            "{m} train {tm} val {:?} losses {:?}",
            report.validation_f1,
            report.epoch_loss
        );
        assert!(report.epoch_loss.last() < report.epoch_loss.first());
        assert_eq!(report.validation_f1.len(), config.epochs);
    }

    #[test]
    fn same_seed_same_training() {
        let config = RenderTrainConfig {
            epochs: 2,
            ..quick(RenderArch::MobileNet)
        };
        let train_set = samples(32, 1, &config.net);
        let (a, ra) = train_samples(&train_set, &[], &config, |_, _, _| {}).unwrap();
        let (b, rb) = train_samples(&train_set, &[], &config, |_, _, _| {}).unwrap();
        assert_eq!(ra.epoch_loss, rb.epoch_loss);
        assert_eq!(a.named_tensors().unwrap(), b.named_tensors().unwrap());
        let inputs: Vec<&[f32]> = train_set.iter().map(|s| s.input.as_slice()).collect();
        assert_eq!(
            a.prob_full_batch(&inputs).unwrap(),
            b.prob_full_batch(&inputs).unwrap()
        );
        let other = RenderTrainConfig { seed: 2, ..config };
        let (_, rc) = train_samples(&train_set, &[], &other, |_, _, _| {}).unwrap();
        assert_ne!(
            ra.epoch_loss, rc.epoch_loss,
            "the batch order follows the seed"
        );
    }

    #[test]
    fn cnn3_baseline_trains_the_same_way() {
        let config = quick(RenderArch::Cnn3);
        let train_set = samples(64, 3, &config.net);
        let test = samples(36, 4, &config.net);
        let (net, report) = train_samples(&train_set, &[], &config, |_, _, _| {}).unwrap();
        assert_eq!(report.kept_epoch, config.epochs - 1);
        let m = evaluate(&net, &test).unwrap();
        assert!(m.accuracy() >= 0.7, "{m} losses {:?}", report.epoch_loss);
    }

    /// A data set folder of `n` drawn frames: frame `i` is full when `full(i)` and belongs
    /// to app `app{i % apps}`.
    fn folder_of_frames(
        n: usize,
        seed: u64,
        apps: usize,
        full: impl Fn(usize) -> bool,
    ) -> (tempfile::TempDir, RenderDataset) {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut lines = String::new();
        for i in 0..n {
            let full = full(i);
            let file = format!("f{i}.png");
            frame(&mut rng, full).save(dir.path().join(&file)).unwrap();
            lines += &format!(
                "{{\"file\":\"{file}\",\"app\":\"app{}\",\"label\":\"{}\"}}\n",
                i % apps,
                if full { "full" } else { "partial" }
            );
        }
        std::fs::write(dir.path().join(LABELS_FILE), lines).unwrap();
        let set = RenderDataset::load(dir.path()).unwrap();
        (dir, set)
    }

    #[test]
    fn synthetic_frames_come_from_full_frames_and_follow_the_seed() {
        let (_dir, set) = folder_of_frames(9, 6, 2, |i| i % 3 != 0);
        let net = tiny(RenderArch::MobileNet, 1);
        let apps = vec!["app0".to_owned()];
        // app0 has frames 0, 2, 4, 6, 8, of which 2, 4 and 8 are full.
        let made = synthetic_samples(&set, &apps, 2, false, &net, 1).unwrap();
        assert_eq!(made.len(), 6);
        assert!(
            made.iter()
                .all(|s| s.label == RenderLabel::Partial && s.app == "app0")
        );
        assert_eq!(
            made,
            synthetic_samples(&set, &apps, 2, false, &net, 1).unwrap()
        );
        assert_ne!(
            made,
            synthetic_samples(&set, &apps, 2, false, &net, 2).unwrap()
        );
        assert!(
            synthetic_samples(&set, &apps, 0, false, &net, 1)
                .unwrap()
                .is_empty()
        );
        // With finished screens, each full frame also gives one full frame.
        let with = synthetic_samples(&set, &apps, 2, true, &net, 1).unwrap();
        assert_eq!(with.len(), 9);
        let finished = with.iter().filter(|s| s.label == RenderLabel::Full).count();
        assert_eq!(finished, 3);
        // None of them is a plain copy of a recorded frame.
        let recorded = prepare_samples(&set, &apps, &net).unwrap();
        assert!(
            made.iter()
                .all(|m| recorded.iter().all(|r| r.input != m.input))
        );
    }

    #[test]
    fn train_on_a_folder_holds_out_whole_apps() {
        let (_dir, set) = folder_of_frames(24, 5, 3, |i| i % 2 == 0);
        let config = RenderTrainConfig {
            epochs: 2,
            test_apps: vec!["app1".into()],
            validation_fraction: 0.5,
            ..quick(RenderArch::MobileNet)
        };
        let (net, report) = train(&set, &config, |_, _, _| {}).unwrap();
        assert_eq!(report.split.test, ["app1"]);
        assert_eq!(report.split.validation, ["app2"]);
        assert_eq!(
            net.train_apps(),
            ["app0", "app2"],
            "trained on app0, picked on app2"
        );
        // The training app's 8 frames, plus per full one a synthetic partial frame and a
        // synthetic finished one.
        assert_eq!(report.frames, [16, 8, 8]);
        assert_eq!(report.test.total(), 8);
        assert_eq!(report.test_by_app.keys().collect::<Vec<_>>(), ["app1"]);
    }
}
