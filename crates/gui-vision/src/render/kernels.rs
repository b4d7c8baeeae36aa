//! Fused inference kernels for the folded networks: convolution, bias and activation in
//! one pass over the output, as candle `CustomOp1`s (no backward; training uses candle's
//! own convolutions).
//!
//! Why: on one core candle's general 3×3 convolution (im2col, then a matrix product) took
//! 2–3 ms for the stem alone, a grouped convolution runs one convolution per channel, and
//! bias, ReLU and the clamp of ReLU6 are three more passes over each feature map. These
//! kernels brought the default MobileNet under the 5 ms target (docs/adat.md).

use candle_core::{CpuStorage, CustomOp1, Layout, Shape, bail};

/// The activation after a fused layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Act {
    Identity,
    Relu,
    Relu6,
}

impl Act {
    #[inline]
    fn apply(self, v: f32) -> f32 {
        match self {
            Act::Identity => v,
            Act::Relu => v.max(0.0),
            Act::Relu6 => v.clamp(0.0, 6.0),
        }
    }
}

/// `(batch, channels, height, width)`.
type Dims4 = (usize, usize, usize, usize);

fn contiguous_f32<'a>(
    name: &str,
    storage: &'a CpuStorage,
    layout: &Layout,
) -> candle_core::Result<(&'a [f32], Dims4)> {
    let CpuStorage::F32(data) = storage else {
        bail!("{name} takes f32");
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        bail!("{name} takes a contiguous input");
    };
    Ok((&data[start..end], layout.shape().dims4()?))
}

/// Output side of a 3×3 convolution with padding 1.
fn out_side(side: usize, stride: usize) -> usize {
    (side - 1) / stride + 1
}

/// Dense 3×3 convolution, padding 1, with bias and activation.
#[derive(Debug, Clone)]
pub(super) struct Conv3x3 {
    /// `[(ci * 9 + tap) * c_out + co]`: the output channels innermost, so the inner loop
    /// is a contiguous multiply-add the compiler vectorises.
    weights: Vec<f32>,
    bias: Vec<f32>,
    c_in: usize,
    stride: usize,
    act: Act,
}

impl Conv3x3 {
    /// From a `(c_out, c_in, 3, 3)` kernel in candle's layout.
    pub(super) fn new(
        kernel: &[f32],
        bias: Vec<f32>,
        c_in: usize,
        stride: usize,
        act: Act,
    ) -> Self {
        let c_out = bias.len();
        let mut weights = vec![0f32; kernel.len()];
        for co in 0..c_out {
            for ci in 0..c_in {
                for tap in 0..9 {
                    weights[(ci * 9 + tap) * c_out + co] = kernel[(co * c_in + ci) * 9 + tap];
                }
            }
        }
        Self {
            weights,
            bias,
            c_in,
            stride,
            act,
        }
    }

    fn run(&self, x: &[f32], (n, c, h, w): Dims4) -> (Vec<f32>, usize, usize) {
        let (s, c_out) = (self.stride, self.bias.len());
        let (oh, ow) = (out_side(h, s), out_side(w, s));
        let plane = oh * ow;
        let mut out = vec![0f32; n * c_out * plane];
        let mut acc = vec![0f32; c_out];
        for b in 0..n {
            let src = &x[b * c * h * w..(b + 1) * c * h * w];
            let dst = &mut out[b * c_out * plane..(b + 1) * c_out * plane];
            for oy in 0..oh {
                for ox in 0..ow {
                    acc.copy_from_slice(&self.bias);
                    for ky in 0..3 {
                        let Some(iy) = (oy * s + ky).checked_sub(1).filter(|&y| y < h) else {
                            continue;
                        };
                        for kx in 0..3 {
                            let Some(ix) = (ox * s + kx).checked_sub(1).filter(|&x| x < w) else {
                                continue;
                            };
                            for ci in 0..c {
                                let v = src[(ci * h + iy) * w + ix];
                                let base = (ci * 9 + ky * 3 + kx) * c_out;
                                let wrow = &self.weights[base..base + c_out];
                                for (a, &k) in acc.iter_mut().zip(wrow) {
                                    *a += v * k;
                                }
                            }
                        }
                    }
                    let pos = oy * ow + ox;
                    for (co, &a) in acc.iter().enumerate() {
                        dst[co * plane + pos] = self.act.apply(a);
                    }
                }
            }
        }
        (out, oh, ow)
    }
}

impl CustomOp1 for Conv3x3 {
    fn name(&self) -> &'static str {
        "conv3x3"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, dims) = contiguous_f32(self.name(), storage, layout)?;
        if dims.1 != self.c_in {
            bail!(
                "conv3x3: {} input channels, the kernel takes {}",
                dims.1,
                self.c_in
            );
        }
        let (out, oh, ow) = self.run(x, dims);
        Ok((
            CpuStorage::F32(out),
            (dims.0, self.bias.len(), oh, ow).into(),
        ))
    }
}

/// Depthwise 3×3 convolution, padding 1, with bias and activation. candle runs a grouped
/// convolution as one convolution per channel (a chunk, a convolution and a
/// concatenation each); this does the 9 taps per output directly.
#[derive(Debug, Clone)]
pub(super) struct Depthwise3x3 {
    /// `channels × 9` taps, row-major per channel (candle's `(c, 1, 3, 3)` layout).
    taps: Vec<f32>,
    bias: Vec<f32>,
    stride: usize,
    act: Act,
}

impl Depthwise3x3 {
    pub(super) fn new(taps: Vec<f32>, bias: Vec<f32>, stride: usize, act: Act) -> Self {
        Self {
            taps,
            bias,
            stride,
            act,
        }
    }

    fn run(&self, x: &[f32], (n, c, h, w): Dims4) -> (Vec<f32>, usize, usize) {
        let s = self.stride;
        let (oh, ow) = (out_side(h, s), out_side(w, s));
        let mut out = vec![0f32; n * c * oh * ow];
        for (plane, dst) in out.chunks_exact_mut(oh * ow).enumerate() {
            let ch = plane % c;
            let k = &self.taps[ch * 9..ch * 9 + 9];
            let src = &x[plane * h * w..(plane + 1) * h * w];
            for oy in 0..oh {
                let rows: [Option<&[f32]>; 3] = std::array::from_fn(|ky| {
                    (oy * s + ky)
                        .checked_sub(1)
                        .filter(|&y| y < h)
                        .map(|y| &src[y * w..(y + 1) * w])
                });
                for ox in 0..ow {
                    let cx = ox * s;
                    let mut acc = self.bias[ch];
                    for (ky, row) in rows.iter().enumerate() {
                        let Some(row) = row else { continue };
                        if cx >= 1 && cx + 1 < w {
                            // Interior: no bounds to check.
                            let r = &row[cx - 1..cx + 2];
                            acc += k[ky * 3] * r[0] + k[ky * 3 + 1] * r[1] + k[ky * 3 + 2] * r[2];
                        } else {
                            for kx in 0..3 {
                                if let Some(ix) = (cx + kx).checked_sub(1).filter(|&x| x < w) {
                                    acc += k[ky * 3 + kx] * row[ix];
                                }
                            }
                        }
                    }
                    dst[oy * ow + ox] = self.act.apply(acc);
                }
            }
        }
        (out, oh, ow)
    }
}

impl CustomOp1 for Depthwise3x3 {
    fn name(&self) -> &'static str {
        "depthwise3x3"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, dims) = contiguous_f32(self.name(), storage, layout)?;
        if dims.1 * 9 != self.taps.len() {
            bail!(
                "depthwise3x3: {} channels, {} taps",
                dims.1,
                self.taps.len()
            );
        }
        let (out, oh, ow) = self.run(x, dims);
        Ok((CpuStorage::F32(out), (dims.0, dims.1, oh, ow).into()))
    }
}

/// Per-channel bias and activation in one pass (after candle's 1×1 convolution, which is
/// a matrix product).
#[derive(Debug, Clone)]
pub(super) struct BiasAct {
    bias: Vec<f32>,
    act: Act,
}

impl BiasAct {
    pub(super) fn new(bias: Vec<f32>, act: Act) -> Self {
        Self { bias, act }
    }
}

impl CustomOp1 for BiasAct {
    fn name(&self) -> &'static str {
        "bias_act"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, (n, c, h, w)) = contiguous_f32(self.name(), storage, layout)?;
        if c != self.bias.len() {
            bail!("bias_act: {c} channels, {} biases", self.bias.len());
        }
        let mut out = x.to_vec();
        for (plane, vals) in out.chunks_exact_mut(h * w).enumerate() {
            let b = self.bias[plane % c];
            for v in vals {
                *v = self.act.apply(*v + b);
            }
        }
        Ok((CpuStorage::F32(out), (n, c, h, w).into()))
    }
}
