//! `RenderNet`: a small MobileNetV2-style binary classifier of one screenshot (AdaT Section
//! III-B), and the plain 3-layer CNN the paper compares it with.
//!
//! MobileNet: a 3×3 stride-2 stem (conv, batch norm, ReLU6); inverted residual blocks,
//! each a 1×1 expansion (BN, ReLU6), a 3×3 depthwise convolution (stride 2 where it
//! downsamples; BN, ReLU6) and a linear 1×1 projection (BN, no activation: the linear
//! bottleneck), with a residual add when the stride is 1 and the widths match; a 1×1 head
//! convolution (BN, ReLU6); global average pooling; a linear layer to 2 logits
//! (partial, full). Batch norm uses batch statistics and updates its running statistics
//! (momentum 0.1, the paper's) in training; inference folds the running statistics into
//! the convolutions.
//!
//! CNN3: three 3×3 convolutions with ReLU and 2×2 max pooling, flattened, a linear layer
//! to 2 logits.

use std::path::Path;
use std::sync::OnceLock;

use candle_core::{D, Device, Tensor, Var};
use gui_core::Screenshot;
use image::RgbImage;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::kernels::{Act, BiasAct, Conv3x3, Depthwise3x3};
use super::{RenderJudge, RenderLabel};
use crate::{Error, Result};

const HEADER_KEY: &str = "gui_vision.render_net";
const FORMAT: &str = "gui-vision-render-net";
const BACKEND: &str = "render net";
const BN_EPS: f64 = 1e-5;

pub(super) fn tensor_err(e: candle_core::Error) -> Error {
    Error::Backend {
        backend: BACKEND,
        message: e.to_string(),
    }
}

/// Which network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RenderArch {
    /// The paper's model: MobileNetV2-style inverted residual blocks.
    #[serde(rename = "mobilenet")]
    MobileNet,
    /// The paper's deep-learning baseline: conv-ReLU-pool three times and a linear layer.
    #[serde(rename = "cnn3")]
    Cnn3,
}

impl RenderArch {
    pub fn as_str(self) -> &'static str {
        match self {
            RenderArch::MobileNet => "mobilenet",
            RenderArch::Cnn3 => "cnn3",
        }
    }
}

impl std::str::FromStr for RenderArch {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "mobilenet" => Ok(RenderArch::MobileNet),
            "cnn3" => Ok(RenderArch::Cnn3),
            _ => Err(Error::Config {
                field: "arch",
                message: format!("`{s}` is not `mobilenet` or `cnn3`"),
            }),
        }
    }
}

/// The pixels the network sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputColor {
    /// BT.601 luma, one channel.
    Gray,
    /// Three channels.
    Rgb,
}

impl InputColor {
    pub fn channels(self) -> usize {
        match self {
            InputColor::Gray => 1,
            InputColor::Rgb => 3,
        }
    }
}

/// One inverted residual block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvertedResidualSpec {
    /// Expansion factor `t`: the hidden width is `t ×` the input width (1: no expansion
    /// convolution).
    pub expand: usize,
    /// Output channels.
    pub out: usize,
    /// Stride of the depthwise convolution: 1 or 2.
    pub stride: usize,
}

impl InvertedResidualSpec {
    pub const fn new(expand: usize, out: usize, stride: usize) -> Self {
        Self {
            expand,
            out,
            stride,
        }
    }
}

/// A tensor by name: name, shape, row-major values.
pub type NamedValues = (String, Vec<usize>, Vec<f32>);

/// Shape of the network and the seed of its initial weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenderNetConfig {
    pub arch: RenderArch,
    /// Input width in pixels; the screenshot is squashed (box-filtered) to
    /// `width × height`. A multiple of 8.
    pub width: usize,
    /// Input height in pixels; a multiple of 8.
    pub height: usize,
    pub color: InputColor,
    /// MobileNet: output channels of the stem convolution.
    pub stem: usize,
    /// MobileNet: the inverted residual blocks, in order.
    pub blocks: Vec<InvertedResidualSpec>,
    /// MobileNet: channels of the 1×1 head convolution before pooling (0: none).
    pub head: usize,
    /// CNN3: output channels of the three convolutions.
    pub cnn3_channels: [usize; 3],
    /// Weight of the new batch statistics in the running statistics (PyTorch's
    /// convention; the paper sets 0.1).
    pub bn_momentum: f64,
    /// Seed of the initial weights.
    pub seed: u64,
}

impl Default for RenderNetConfig {
    /// 192×112 RGB: the paper's 768×448 input at a quarter of each side, the same aspect,
    /// laid landscape because the default device is the 1280×800 desktop browser
    /// (aspect 1.6 against 1.71). A quarter keeps one screen at a few milliseconds on one
    /// core (docs/adat.md has the measurements) while a spinner of 40 px on a 1280-px
    /// screen still covers 6×6 input pixels.
    fn default() -> Self {
        Self {
            arch: RenderArch::MobileNet,
            width: 192,
            height: 112,
            color: InputColor::Rgb,
            stem: 16,
            // MobileNetV2's pattern at a fraction of its width and depth: a first block
            // without expansion (as MobileNetV2's, since expanding at the highest
            // resolution is the most expensive layer), expansion 4 instead of 6, four
            // downsamplings in all (stem and three blocks) to 12×7.
            blocks: vec![
                InvertedResidualSpec::new(1, 16, 2),
                InvertedResidualSpec::new(4, 24, 2),
                InvertedResidualSpec::new(4, 24, 1),
                InvertedResidualSpec::new(4, 48, 2),
                InvertedResidualSpec::new(4, 48, 1),
            ],
            head: 128,
            cnn3_channels: [16, 32, 64],
            bn_momentum: 0.1,
            seed: 1,
        }
    }
}

impl RenderNetConfig {
    /// The 3-layer CNN baseline with the same input.
    pub fn cnn3() -> Self {
        Self {
            arch: RenderArch::Cnn3,
            ..Self::default()
        }
    }

    pub(super) fn check(&self) -> Result<()> {
        let bad = |field: &'static str, message: String| Err(Error::Config { field, message });
        if self.width < 8 || !self.width.is_multiple_of(8) {
            return bad(
                "width",
                format!("{} is not a positive multiple of 8", self.width),
            );
        }
        if self.height < 8 || !self.height.is_multiple_of(8) {
            return bad(
                "height",
                format!("{} is not a positive multiple of 8", self.height),
            );
        }
        if !(0.0..=1.0).contains(&self.bn_momentum) {
            return bad(
                "bn_momentum",
                format!("{} is not in [0, 1]", self.bn_momentum),
            );
        }
        match self.arch {
            RenderArch::MobileNet => {
                if self.stem == 0 {
                    return bad("stem", "must be positive".into());
                }
                for (i, b) in self.blocks.iter().enumerate() {
                    if b.expand == 0 || b.out == 0 || !(b.stride == 1 || b.stride == 2) {
                        return bad(
                            "blocks",
                            format!(
                                "block {i} {b:?}: expansion and width must be positive, stride 1 or 2"
                            ),
                        );
                    }
                }
            }
            RenderArch::Cnn3 => {
                if self.cnn3_channels.contains(&0) {
                    return bad("cnn3_channels", "must be positive".into());
                }
            }
        }
        Ok(())
    }

    /// Values per prepared input (`channels × height × width`).
    pub fn input_len(&self) -> usize {
        self.color.channels() * self.width * self.height
    }
}

/// A 3×3 or 1×1 convolution without bias, then batch norm, then ReLU6 or nothing. The
/// fields are indices into the network's parameter list.
#[derive(Debug, Clone)]
struct ConvBn {
    /// Position among the network's ConvBn layers (the folded weights' index).
    id: usize,
    w: usize,
    gamma: usize,
    beta: usize,
    mean: usize,
    var: usize,
    stride: usize,
    pad: usize,
    groups: usize,
    relu6: bool,
}

#[derive(Debug, Clone)]
struct Block {
    expand: Option<ConvBn>,
    depthwise: ConvBn,
    project: ConvBn,
    residual: bool,
}

#[derive(Debug, Clone)]
enum Body {
    MobileNet {
        stem: ConvBn,
        blocks: Vec<Block>,
        head: Option<ConvBn>,
    },
    /// (weight, bias) of each convolution.
    Cnn3 { convs: Vec<(usize, usize)> },
}

/// Batch-norm-folded weights, one entry per ConvBn layer.
#[derive(Debug)]
pub(super) struct Folded {
    convs: Vec<FoldedConv>,
}

#[derive(Debug)]
enum FoldedConv {
    /// A dense 3×3 convolution with bias and activation fused.
    Conv3x3(Conv3x3),
    /// A depthwise 3×3 convolution with bias and activation fused.
    Depthwise(Depthwise3x3),
    /// A 1×1 convolution (candle's, a matrix product) and fused bias and activation.
    Pointwise(Tensor, BiasAct),
}

impl FoldedConv {
    /// From a folded `(c_out, c_in / groups, k, k)` kernel and its bias.
    fn new(
        w: &Tensor,
        b: &Tensor,
        stride: usize,
        groups: usize,
        act: Act,
    ) -> candle_core::Result<Self> {
        let (c_out, c_in_group, k, _) = w.dims4()?;
        let bias: Vec<f32> = b.to_vec1()?;
        Ok(match (k, groups) {
            (3, 1) => FoldedConv::Conv3x3(Conv3x3::new(
                &w.flatten_all()?.to_vec1()?,
                bias,
                c_in_group,
                stride,
                act,
            )),
            (3, g) if g == c_out && c_in_group == 1 => FoldedConv::Depthwise(Depthwise3x3::new(
                w.flatten_all()?.to_vec1()?,
                bias,
                stride,
                act,
            )),
            (1, 1) if stride == 1 => FoldedConv::Pointwise(w.clone(), BiasAct::new(bias, act)),
            _ => candle_core::bail!("no folded kernel for {k}x{k} groups {groups} stride {stride}"),
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let x = x.contiguous()?;
        match self {
            FoldedConv::Conv3x3(op) => x.apply_op1_no_bwd(op),
            FoldedConv::Depthwise(op) => x.apply_op1_no_bwd(op),
            FoldedConv::Pointwise(w, op) => x.conv2d(w, 0, 1, 1, 1)?.apply_op1_no_bwd(op),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Mode<'a> {
    /// Batch statistics; running statistics updated with this momentum.
    Train(f64),
    /// Running statistics, unfolded.
    Eval,
    Folded(&'a Folded),
}

/// The rendering-state classifier with its weights. See the module docs for the layers.
#[derive(Debug)]
pub struct RenderNet {
    config: RenderNetConfig,
    pub(super) names: Vec<String>,
    pub(super) vars: Vec<Var>,
    /// False for running statistics, which the optimiser never touches.
    pub(super) trainable: Vec<bool>,
    body: Body,
    linear: (usize, usize),
    notes: String,
    /// The apps the weights were trained on or picked on (validation): `evaluate` holds
    /// out every other app.
    pub(super) train_apps: Vec<String>,
    folded: OnceLock<Folded>,
}

/// Registers parameters in order with their initial values.
struct Builder {
    rng: ChaCha8Rng,
    names: Vec<String>,
    vars: Vec<Var>,
    trainable: Vec<bool>,
    conv_bns: usize,
}

impl Builder {
    fn push(
        &mut self,
        name: String,
        shape: Vec<usize>,
        data: Vec<f32>,
        trainable: bool,
    ) -> Result<usize> {
        let t = Tensor::from_vec(data, shape, &Device::Cpu).map_err(tensor_err)?;
        self.names.push(name);
        self.vars.push(Var::from_tensor(&t).map_err(tensor_err)?);
        self.trainable.push(trainable);
        Ok(self.vars.len() - 1)
    }

    /// He-uniform for ReLU layers.
    fn kaiming(&mut self, name: String, shape: Vec<usize>) -> Result<usize> {
        let fan_in: usize = shape[1..].iter().product();
        let bound = (6.0 / fan_in as f32).sqrt();
        let n = shape.iter().product();
        let data = (0..n)
            .map(|_| self.rng.random_range(-bound..bound))
            .collect();
        self.push(name, shape, data, true)
    }

    fn constant(&mut self, name: String, n: usize, value: f32, trainable: bool) -> Result<usize> {
        self.push(name, vec![n], vec![value; n], trainable)
    }

    #[allow(clippy::too_many_arguments)]
    fn conv_bn(
        &mut self,
        name: &str,
        c_in: usize,
        c_out: usize,
        kernel: usize,
        stride: usize,
        groups: usize,
        relu6: bool,
    ) -> Result<ConvBn> {
        let id = self.conv_bns;
        self.conv_bns += 1;
        Ok(ConvBn {
            id,
            w: self.kaiming(
                format!("{name}.weight"),
                vec![c_out, c_in / groups, kernel, kernel],
            )?,
            gamma: self.constant(format!("{name}.bn.weight"), c_out, 1.0, true)?,
            beta: self.constant(format!("{name}.bn.bias"), c_out, 0.0, true)?,
            mean: self.constant(format!("{name}.bn.running_mean"), c_out, 0.0, false)?,
            var: self.constant(format!("{name}.bn.running_var"), c_out, 1.0, false)?,
            stride,
            pad: kernel / 2,
            groups,
            relu6,
        })
    }
}

fn relu6(x: &Tensor) -> candle_core::Result<Tensor> {
    x.relu()?.minimum(6.0)
}

impl RenderNet {
    /// A fresh network with weights drawn from `config.seed`.
    pub fn new(config: RenderNetConfig) -> Result<Self> {
        config.check()?;
        let mut b = Builder {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            names: Vec::new(),
            vars: Vec::new(),
            trainable: Vec::new(),
            conv_bns: 0,
        };
        let c_in = config.color.channels();
        let (body, features) = match config.arch {
            RenderArch::MobileNet => {
                let stem = b.conv_bn("stem", c_in, config.stem, 3, 2, 1, true)?;
                let mut width = config.stem;
                let mut blocks = Vec::new();
                for (i, spec) in config.blocks.iter().enumerate() {
                    let hidden = width * spec.expand;
                    let expand = if spec.expand == 1 {
                        None
                    } else {
                        Some(b.conv_bn(
                            &format!("block{i}.expand"),
                            width,
                            hidden,
                            1,
                            1,
                            1,
                            true,
                        )?)
                    };
                    let depthwise = b.conv_bn(
                        &format!("block{i}.depthwise"),
                        hidden,
                        hidden,
                        3,
                        spec.stride,
                        hidden,
                        true,
                    )?;
                    let project = b.conv_bn(
                        &format!("block{i}.project"),
                        hidden,
                        spec.out,
                        1,
                        1,
                        1,
                        false,
                    )?;
                    blocks.push(Block {
                        expand,
                        depthwise,
                        project,
                        residual: spec.stride == 1 && spec.out == width,
                    });
                    width = spec.out;
                }
                let head = if config.head > 0 {
                    let h = b.conv_bn("head", width, config.head, 1, 1, 1, true)?;
                    width = config.head;
                    Some(h)
                } else {
                    None
                };
                (Body::MobileNet { stem, blocks, head }, width)
            }
            RenderArch::Cnn3 => {
                let mut convs = Vec::new();
                let mut width = c_in;
                for (i, &c) in config.cnn3_channels.iter().enumerate() {
                    let w = b.kaiming(format!("conv{}.weight", i + 1), vec![c, width, 3, 3])?;
                    let bias = b.constant(format!("conv{}.bias", i + 1), c, 0.0, true)?;
                    convs.push((w, bias));
                    width = c;
                }
                let flat = width * (config.height / 8) * (config.width / 8);
                (Body::Cnn3 { convs }, flat)
            }
        };
        // Glorot-uniform for the linear classifier.
        let bound = (6.0 / (features + 2) as f32).sqrt();
        let data = (0..2 * features)
            .map(|_| b.rng.random_range(-bound..bound))
            .collect();
        let lw = b.push("classifier.weight".into(), vec![2, features], data, true)?;
        let lb = b.constant("classifier.bias".into(), 2, 0.0, true)?;
        Ok(Self {
            config,
            names: b.names,
            vars: b.vars,
            trainable: b.trainable,
            body,
            linear: (lw, lb),
            notes: String::new(),
            train_apps: Vec::new(),
            folded: OnceLock::new(),
        })
    }

    pub fn config(&self) -> &RenderNetConfig {
        &self.config
    }

    /// Provenance recorded at training time (data set, seed, scores).
    pub fn notes(&self) -> &str {
        &self.notes
    }

    pub fn set_notes(&mut self, notes: impl Into<String>) {
        self.notes = notes.into();
    }

    /// The apps the network was trained on, and those whose scores picked its epoch
    /// (empty for an untrained network).
    pub fn train_apps(&self) -> &[String] {
        &self.train_apps
    }

    /// Trainable parameters (running statistics excluded).
    pub fn parameter_count(&self) -> usize {
        self.vars
            .iter()
            .zip(&self.trainable)
            .filter(|(_, t)| **t)
            .map(|(v, _)| v.elem_count())
            .sum()
    }

    /// Every tensor by name, in file order: weights and running statistics.
    pub fn named_tensors(&self) -> Result<Vec<NamedValues>> {
        self.names
            .iter()
            .zip(&self.vars)
            .map(|(n, v)| {
                Ok((
                    n.clone(),
                    v.dims().to_vec(),
                    v.as_tensor().flatten_all()?.to_vec1::<f32>()?,
                ))
            })
            .collect::<candle_core::Result<_>>()
            .map_err(tensor_err)
    }

    /// Squashes a screenshot to the input size (box filter), CHW, values in [-0.5, 0.5].
    pub fn prepare(&self, screen: &RgbImage) -> Vec<f32> {
        prepare_input(screen, &self.config)
    }

    /// Stacks prepared inputs into a batch tensor.
    pub(super) fn batch(&self, inputs: &[&[f32]]) -> Result<Tensor> {
        let c = &self.config;
        let mut data = Vec::with_capacity(inputs.len() * c.input_len());
        for i in inputs {
            if i.len() != c.input_len() {
                return Err(Error::Config {
                    field: "input",
                    message: format!(
                        "a prepared input has {} values, the network takes {}x{}x{}",
                        i.len(),
                        c.color.channels(),
                        c.height,
                        c.width
                    ),
                });
            }
            data.extend_from_slice(i);
        }
        Tensor::from_vec(
            data,
            (inputs.len(), c.color.channels(), c.height, c.width),
            &Device::Cpu,
        )
        .map_err(tensor_err)
    }

    fn var(&self, i: usize) -> &Tensor {
        self.vars[i].as_tensor()
    }

    fn conv_bn(&self, l: &ConvBn, x: &Tensor, mode: Mode<'_>) -> candle_core::Result<Tensor> {
        let per_channel = |t: &Tensor| t.reshape((1, (), 1, 1));
        let y = match mode {
            // Bias and activation are fused.
            Mode::Folded(f) => return f.convs[l.id].forward(x),
            Mode::Eval => {
                let y = x.conv2d(self.var(l.w), l.pad, l.stride, 1, l.groups)?;
                let scale = (self.var(l.gamma) / (self.var(l.var) + BN_EPS)?.sqrt()?)?;
                let shift = (self.var(l.beta) - (self.var(l.mean) * &scale)?)?;
                y.broadcast_mul(&per_channel(&scale)?)?
                    .broadcast_add(&per_channel(&shift)?)?
            }
            Mode::Train(m) => {
                let y = x.conv2d(self.var(l.w), l.pad, l.stride, 1, l.groups)?;
                let (n, _, h, w) = y.dims4()?;
                // Per-channel means, reducing the contiguous spatial axis first: candle's
                // reduction over (0, 2, 3) at once is a slow strided loop.
                let channel_mean = |t: &Tensor| -> candle_core::Result<Tensor> {
                    t.flatten_from(2)?
                        .mean_keepdim(2)?
                        .mean_keepdim(0)?
                        .unsqueeze(3)
                };
                let mean = channel_mean(&y)?;
                let centred = y.broadcast_sub(&mean)?;
                let var = channel_mean(&centred.sqr()?)?;
                let norm = centred.broadcast_div(&(&var + BN_EPS)?.sqrt()?)?;
                // Running statistics: unbiased variance, as PyTorch keeps them.
                let count = (n * h * w) as f64;
                let unbiased = (var.detach().flatten_all()? * (count / (count - 1.0).max(1.0)))?;
                let run_mean =
                    ((self.var(l.mean) * (1.0 - m))? + (mean.detach().flatten_all()? * m)?)?;
                let run_var = ((self.var(l.var) * (1.0 - m))? + (unbiased * m)?)?;
                self.vars[l.mean].set(&run_mean)?;
                self.vars[l.var].set(&run_var)?;
                norm.broadcast_mul(&per_channel(self.var(l.gamma))?)?
                    .broadcast_add(&per_channel(self.var(l.beta))?)?
            }
        };
        if l.relu6 { relu6(&y) } else { Ok(y) }
    }

    /// Logits `(batch, 2)`: partial, full.
    pub(super) fn logits(&self, x: &Tensor, mode: Mode<'_>) -> candle_core::Result<Tensor> {
        let features = match &self.body {
            Body::MobileNet { stem, blocks, head } => {
                let mut x = self.conv_bn(stem, x, mode)?;
                for b in blocks {
                    let h = match &b.expand {
                        Some(e) => self.conv_bn(e, &x, mode)?,
                        None => x.clone(),
                    };
                    let h = self.conv_bn(&b.depthwise, &h, mode)?;
                    let h = self.conv_bn(&b.project, &h, mode)?;
                    x = if b.residual { (x + h)? } else { h };
                }
                if let Some(head) = head {
                    x = self.conv_bn(head, &x, mode)?;
                }
                // Global average pooling.
                x.mean((2, 3))?
            }
            Body::Cnn3 { convs } => {
                let mut x = x.clone();
                for (i, &(w, b)) in convs.iter().enumerate() {
                    x = match mode {
                        Mode::Folded(f) => f.convs[i].forward(&x)?,
                        Mode::Train(_) | Mode::Eval => x
                            .conv2d(self.var(w), 1, 1, 1, 1)?
                            .broadcast_add(&self.var(b).reshape((1, (), 1, 1))?)?
                            .relu()?,
                    }
                    .max_pool2d(2)?;
                }
                x.flatten_from(1)?
            }
        };
        let (w, b) = self.linear;
        features
            .matmul(&self.var(w).t()?)?
            .broadcast_add(self.var(b))
    }

    /// Folds each batch norm's running statistics into its convolution:
    /// `w' = w·γ/√(σ²+ε)`, `b' = β − μ·γ/√(σ²+ε)`.
    fn fold(&self) -> candle_core::Result<Folded> {
        let mut convs = Vec::new();
        match &self.body {
            Body::MobileNet { stem, blocks, head } => {
                let mut layers: Vec<&ConvBn> = vec![stem];
                for b in blocks {
                    layers.extend(b.expand.as_ref());
                    layers.push(&b.depthwise);
                    layers.push(&b.project);
                }
                layers.extend(head.as_ref());
                for l in layers {
                    let scale = (self.var(l.gamma) / (self.var(l.var) + BN_EPS)?.sqrt()?)?;
                    let w = self
                        .var(l.w)
                        .broadcast_mul(&scale.reshape(((), 1, 1, 1))?)?;
                    let b = (self.var(l.beta) - (self.var(l.mean) * &scale)?)?;
                    let act = if l.relu6 { Act::Relu6 } else { Act::Identity };
                    convs.push(FoldedConv::new(&w, &b, l.stride, l.groups, act)?);
                }
            }
            // No batch norm: the same kernels, for a like-for-like speed comparison.
            Body::Cnn3 { convs: layers } => {
                for &(w, b) in layers {
                    convs.push(FoldedConv::new(self.var(w), self.var(b), 1, 1, Act::Relu)?);
                }
            }
        }
        Ok(Folded { convs })
    }

    fn folded(&self) -> Result<&Folded> {
        if let Some(f) = self.folded.get() {
            return Ok(f);
        }
        let f = self.fold().map_err(tensor_err)?;
        Ok(self.folded.get_or_init(|| f))
    }

    /// Whether the network has batch norm layers.
    pub(super) fn has_batch_norm(&self) -> bool {
        matches!(self.body, Body::MobileNet { .. })
    }

    /// Drops the folded weights after the weights changed (training).
    pub(super) fn invalidate_folded(&mut self) {
        self.folded = OnceLock::new();
    }

    /// P(fully rendered) for each prepared input, batch norm folded.
    pub fn prob_full_batch(&self, inputs: &[&[f32]]) -> Result<Vec<f32>> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let x = self.batch(inputs)?;
        let folded = self.folded()?;
        self.probs(&x, Mode::Folded(folded))
    }

    /// P(fully rendered) without folding (running statistics applied after each
    /// convolution): the reference the folded path must equal.
    pub fn prob_full_batch_unfolded(&self, inputs: &[&[f32]]) -> Result<Vec<f32>> {
        if inputs.is_empty() {
            return Ok(Vec::new());
        }
        let x = self.batch(inputs)?;
        self.probs(&x, Mode::Eval)
    }

    fn probs(&self, x: &Tensor, mode: Mode<'_>) -> Result<Vec<f32>> {
        let logits = self.logits(x, mode).map_err(tensor_err)?;
        let p = candle_nn::ops::softmax(&logits, D::Minus1)
            .and_then(|p| p.narrow(1, 1, 1)?.flatten_all()?.to_vec1::<f32>())
            .map_err(tensor_err)?;
        Ok(p)
    }

    /// The rendering state of a screenshot and P(fully rendered), resize included.
    pub fn classify(&self, shot: &Screenshot) -> Result<(RenderLabel, f32)> {
        let input = self.prepare(shot.pixels());
        let p = self.prob_full_batch(&[&input])?[0];
        Ok((RenderLabel::from_prob_full(p), p))
    }

    /// Writes weights and running statistics with the config (and the training apps)
    /// under the metadata key `gui_vision.render_net`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let model_err = |message: String| Error::Model {
            path: path.to_path_buf(),
            message,
        };
        let tensors = self.named_tensors()?;
        let named: Vec<_> = tensors
            .iter()
            .map(|(n, s, v)| (n.as_str(), s.as_slice(), v.as_slice()))
            .collect();
        let header = serde_json::to_string(&Header {
            format: FORMAT.into(),
            version: 1,
            config: self.config.clone(),
            train_apps: self.train_apps.clone(),
            notes: self.notes.clone(),
        })
        .expect("header serialises");
        gui_core::checkpoint::write_checkpoint(path, HEADER_KEY, &header, &named).map_err(model_err)
    }

    /// The network committed with the crate ([`shipped_render_net_path`]), trained by
    /// `cargo xtask adat-train` on `cargo xtask adat-data` frames (docs/adat.md).
    pub fn shipped() -> Result<Self> {
        Self::load(shipped_render_net_path())
    }

    /// Reads a network written by [`RenderNet::save`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let model_err = |message: String| Error::Model {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(path)
            .map_err(|e| model_err(format!("{e} (train one with `adat train`)")))?;
        let reader =
            gui_core::checkpoint::CheckpointReader::parse(&bytes, HEADER_KEY).map_err(model_err)?;
        let header: Header = serde_json::from_str(reader.header())
            .map_err(|e| model_err(format!("bad `{HEADER_KEY}` entry: {e}")))?;
        if header.format != FORMAT || header.version != 1 {
            return Err(model_err(format!(
                "format {} v{}, expected {FORMAT} v1",
                header.format, header.version
            )));
        }
        header
            .config
            .check()
            .map_err(|e| model_err(e.to_string()))?;
        let mut net = Self::new(header.config)?;
        for (name, var) in net.names.iter().zip(&net.vars) {
            let data = reader.f32(name, var.dims()).map_err(model_err)?;
            let t = Tensor::from_vec(data, var.dims(), &Device::Cpu).map_err(tensor_err)?;
            var.set(&t).map_err(tensor_err)?;
        }
        net.notes = header.notes;
        net.train_apps = header.train_apps;
        Ok(net)
    }
}

/// What is stored beside the weights.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    format: String,
    version: u32,
    config: RenderNetConfig,
    #[serde(default)]
    train_apps: Vec<String>,
    #[serde(default)]
    notes: String,
}

/// The input of a network with `config`: the screen squashed to `width × height` with a
/// box filter (each input pixel the mean of the screen pixels it covers, which keeps a thin
/// progress bar visible where point sampling could skip it), CHW, values in [-0.5, 0.5].
pub(super) fn prepare_input(screen: &RgbImage, config: &RenderNetConfig) -> Vec<f32> {
    let (ow, oh) = (config.width, config.height);
    let (w, h) = (screen.width() as usize, screen.height() as usize);
    let span = |o: usize, out: usize, len: usize| {
        let a = o * len / out;
        (a, ((o + 1) * len / out).max(a + 1).min(len))
    };
    let xs: Vec<(usize, usize)> = (0..ow).map(|o| span(o, ow, w)).collect();
    let raw = screen.as_raw();
    let plane = ow * oh;
    let mut out = vec![0f32; config.color.channels() * plane];
    // Column sums over the band of rows first (a contiguous add the compiler vectorises),
    // then each output pixel sums its columns: about twice as fast as summing each box.
    let mut columns = vec![0u32; 3 * w];
    let mut acc = vec![0u32; 3 * ow];
    for oy in 0..oh {
        let (y0, y1) = span(oy, oh, h);
        columns.fill(0);
        for y in y0..y1 {
            let row = &raw[y * w * 3..(y + 1) * w * 3];
            for (c, &v) in columns.iter_mut().zip(row) {
                // Cannot overflow (255 × rows); wrapping keeps the loop vectorised in
                // builds with overflow checks.
                *c = c.wrapping_add(u32::from(v));
            }
        }
        for (a, &(x0, x1)) in acc.chunks_exact_mut(3).zip(&xs) {
            let mut sum = [0u32; 3];
            for p in columns[x0 * 3..x1 * 3].chunks_exact(3) {
                sum[0] = sum[0].wrapping_add(p[0]);
                sum[1] = sum[1].wrapping_add(p[1]);
                sum[2] = sum[2].wrapping_add(p[2]);
            }
            a.copy_from_slice(&sum);
        }
        for (ox, (a, &(x0, x1))) in acc.chunks_exact(3).zip(&xs).enumerate() {
            let n = ((y1 - y0) * (x1 - x0)) as f32 * 255.0;
            let i = oy * ow + ox;
            match config.color {
                InputColor::Rgb => {
                    for c in 0..3 {
                        out[c * plane + i] = a[c] as f32 / n - 0.5;
                    }
                }
                // BT.601 luma, as `to_gray`.
                InputColor::Gray => {
                    out[i] =
                        (0.299 * a[0] as f32 + 0.587 * a[1] as f32 + 0.114 * a[2] as f32) / n - 0.5;
                }
            }
        }
    }
    out
}

/// Where the committed rendering-state network lives.
pub fn shipped_render_net_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/render_net.safetensors")
}

impl RenderJudge for RenderNet {
    fn name(&self) -> &str {
        self.config.arch.as_str()
    }

    fn prob_full(&mut self, shot: &Screenshot) -> Result<f32> {
        Ok(self.classify(shot)?.1)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use image::Rgb;

    /// A net small enough for debug-build tests.
    pub(crate) fn tiny(arch: RenderArch, seed: u64) -> RenderNetConfig {
        RenderNetConfig {
            arch,
            width: 48,
            height: 32,
            stem: 8,
            blocks: vec![
                InvertedResidualSpec::new(2, 12, 2),
                InvertedResidualSpec::new(2, 12, 1),
                InvertedResidualSpec::new(1, 16, 2),
            ],
            head: 24,
            cnn3_channels: [4, 8, 8],
            seed,
            ..RenderNetConfig::default()
        }
    }

    fn screen(seed: u32) -> Screenshot {
        let img = RgbImage::from_fn(320, 200, |x, y| {
            Rgb([(x * 7 + seed) as u8, (y * 3) as u8, ((x + y) * seed) as u8])
        });
        Screenshot::new(img, 1.0, 0).unwrap()
    }

    #[test]
    fn logits_have_one_row_of_two_per_input() {
        for arch in [RenderArch::MobileNet, RenderArch::Cnn3] {
            for color in [InputColor::Rgb, InputColor::Gray] {
                let net = RenderNet::new(RenderNetConfig {
                    color,
                    ..tiny(arch, 1)
                })
                .unwrap();
                let inputs: Vec<Vec<f32>> =
                    (1..4).map(|s| net.prepare(screen(s).pixels())).collect();
                assert_eq!(inputs[0].len(), color.channels() * 48 * 32);
                let refs: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
                let x = net.batch(&refs).unwrap();
                let logits = net.logits(&x, Mode::Eval).unwrap();
                assert_eq!(logits.dims(), [3, 2], "{arch:?} {color:?}");
                let p = net.prob_full_batch(&refs).unwrap();
                assert!(p.iter().all(|p| (0.0..=1.0).contains(p)));
            }
        }
        // The default nets build and take the default input.
        for config in [RenderNetConfig::default(), RenderNetConfig::cnn3()] {
            let net = RenderNet::new(config).unwrap();
            assert!(net.classify(&screen(1)).is_ok());
        }
    }

    #[test]
    fn input_is_the_box_mean_of_the_screen() {
        // 32x16 screen to 16x8: each input pixel averages 2x2 screen pixels. The left half
        // is black, the right half white, and a 1-pixel red line runs along row 5.
        let mut img = RgbImage::from_fn(32, 16, |x, _| {
            if x < 16 {
                Rgb([0, 0, 0])
            } else {
                Rgb([255, 255, 255])
            }
        });
        for x in 0..32 {
            img.put_pixel(x, 5, Rgb([255, 0, 0]));
        }
        let config = RenderNetConfig {
            width: 16,
            height: 8,
            ..RenderNetConfig::default()
        };
        let x = prepare_input(&img, &config);
        let plane = 16 * 8;
        assert_eq!(x.len(), 3 * plane);
        let at = |c: usize, y: usize, xx: usize| x[c * plane + y * 16 + xx];
        assert_eq!(at(0, 0, 0), -0.5);
        assert_eq!(at(2, 0, 15), 0.5);
        // Row 2 of the input covers screen rows 4 and 5: the thin line shows at half.
        assert_eq!(at(0, 2, 0), 0.0);
        assert_eq!(at(1, 2, 15), 0.0);
        let gray = prepare_input(
            &img,
            &RenderNetConfig {
                color: InputColor::Gray,
                ..config
            },
        );
        assert_eq!(gray.len(), plane);
        assert!((gray[15] - 0.5).abs() < 1e-5);
    }

    #[test]
    fn residual_adds_only_where_stride_is_one_and_widths_match() {
        let net = RenderNet::new(tiny(RenderArch::MobileNet, 1)).unwrap();
        let Body::MobileNet { blocks, head, .. } = &net.body else {
            unreachable!()
        };
        // stem 8 -> (2, 12, s2): no; (2, 12, s1): yes; (1, 16, s2): no.
        let residual: Vec<bool> = blocks.iter().map(|b| b.residual).collect();
        assert_eq!(residual, [false, true, false]);
        assert!(
            blocks[2].expand.is_none(),
            "expansion 1 has no expansion conv"
        );
        assert_eq!(
            blocks[0].depthwise.groups, 16,
            "depthwise over 8 x 2 channels"
        );
        assert_eq!(net.vars[blocks[0].depthwise.w].dims(), [16, 1, 3, 3]);
        assert!(head.is_some());
        // Spatial sizes: 32x48 -> stem 16x24 -> 8x12 -> 8x12 -> 4x6; the head sees 4x6.
        let x = Tensor::zeros((2, 3, 32, 48), candle_core::DType::F32, &Device::Cpu).unwrap();
        let stem = net
            .conv_bn(
                match &net.body {
                    Body::MobileNet { stem, .. } => stem,
                    Body::Cnn3 { .. } => unreachable!(),
                },
                &x,
                Mode::Eval,
            )
            .unwrap();
        assert_eq!(stem.dims(), [2, 8, 16, 24]);
        let b0 = &blocks[0];
        let h = net
            .conv_bn(b0.expand.as_ref().unwrap(), &stem, Mode::Eval)
            .unwrap();
        let h = net.conv_bn(&b0.depthwise, &h, Mode::Eval).unwrap();
        assert_eq!(h.dims(), [2, 16, 8, 12]);
        assert_eq!(
            net.conv_bn(&b0.project, &h, Mode::Eval).unwrap().dims(),
            [2, 12, 8, 12]
        );
        // A bad stride is refused.
        let mut bad = tiny(RenderArch::MobileNet, 1);
        bad.blocks[0].stride = 3;
        assert!(RenderNet::new(bad).is_err());
    }

    #[test]
    fn same_seed_same_weights_and_predictions() {
        let a = RenderNet::new(tiny(RenderArch::MobileNet, 5)).unwrap();
        let b = RenderNet::new(tiny(RenderArch::MobileNet, 5)).unwrap();
        let c = RenderNet::new(tiny(RenderArch::MobileNet, 6)).unwrap();
        assert_eq!(a.named_tensors().unwrap(), b.named_tensors().unwrap());
        assert_ne!(a.named_tensors().unwrap(), c.named_tensors().unwrap());
        let s = screen(3);
        assert_eq!(a.classify(&s).unwrap(), b.classify(&s).unwrap());
    }

    #[test]
    fn folded_batch_norm_equals_unfolded_eval() {
        let net = RenderNet::new(tiny(RenderArch::MobileNet, 2)).unwrap();
        // Give every batch norm non-trivial statistics and affine parameters.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for (name, var) in net.names.iter().zip(&net.vars) {
            if name.contains(".bn.") {
                let n = var.elem_count();
                let data: Vec<f32> = (0..n)
                    .map(|_| {
                        if name.ends_with("running_var") {
                            rng.random_range(0.2..3.0)
                        } else {
                            rng.random_range(-1.0..1.0)
                        }
                    })
                    .collect();
                var.set(&Tensor::from_vec(data, n, &Device::Cpu).unwrap())
                    .unwrap();
            }
        }
        let inputs: Vec<Vec<f32>> = (1..5).map(|s| net.prepare(screen(s).pixels())).collect();
        let refs: Vec<&[f32]> = inputs.iter().map(Vec::as_slice).collect();
        let x = net.batch(&refs).unwrap();
        let folded = net.fold().unwrap();
        let a: Vec<Vec<f32>> = net.logits(&x, Mode::Eval).unwrap().to_vec2().unwrap();
        let b: Vec<Vec<f32>> = net
            .logits(&x, Mode::Folded(&folded))
            .unwrap()
            .to_vec2()
            .unwrap();
        for (ra, rb) in a.iter().zip(&b) {
            for (va, vb) in ra.iter().zip(rb) {
                assert!((va - vb).abs() <= 1e-4 * (1.0 + va.abs()), "{a:?} vs {b:?}");
            }
        }
        // The 3-layer CNN's fused kernels (no batch norm) equal candle's convolutions.
        let cnn = RenderNet::new(tiny(RenderArch::Cnn3, 2)).unwrap();
        let folded = cnn.fold().unwrap();
        let ca: Vec<Vec<f32>> = cnn.logits(&x, Mode::Eval).unwrap().to_vec2().unwrap();
        let cb: Vec<Vec<f32>> = cnn
            .logits(&x, Mode::Folded(&folded))
            .unwrap()
            .to_vec2()
            .unwrap();
        for (ra, rb) in ca.iter().zip(&cb) {
            for (va, vb) in ra.iter().zip(rb) {
                assert!(
                    (va - vb).abs() <= 1e-4 * (1.0 + va.abs()),
                    "{ca:?} vs {cb:?}"
                );
            }
        }
        // Training mode differs (batch statistics) and moves the running statistics.
        let before = net.named_tensors().unwrap();
        let t: Vec<Vec<f32>> = net.logits(&x, Mode::Train(0.1)).unwrap().to_vec2().unwrap();
        assert_ne!(t, a);
        assert_ne!(net.named_tensors().unwrap(), before);
    }

    #[test]
    fn save_load_round_trip_and_bad_files() {
        let mut net = RenderNet::new(tiny(RenderArch::MobileNet, 4)).unwrap();
        net.train_apps = vec!["demo".into()];
        net.set_notes("test");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("render.safetensors");
        net.save(&path).unwrap();
        let back = RenderNet::load(&path).unwrap();
        assert_eq!(back.config(), net.config());
        assert_eq!(back.train_apps(), ["demo"]);
        assert_eq!(back.notes(), "test");
        let s = screen(2);
        assert_eq!(back.classify(&s).unwrap(), net.classify(&s).unwrap());
        let cnn = RenderNet::new(tiny(RenderArch::Cnn3, 4)).unwrap();
        cnn.save(&path).unwrap();
        assert_eq!(
            RenderNet::load(&path).unwrap().config().arch,
            RenderArch::Cnn3
        );
        std::fs::write(&path, b"junk").unwrap();
        let err = RenderNet::load(&path).unwrap_err().to_string();
        assert!(err.contains("render.safetensors"), "{err}");
        let err = RenderNet::load(dir.path().join("missing.safetensors"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing.safetensors"), "{err}");
    }
}
