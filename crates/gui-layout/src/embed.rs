//! The LSTM layout embedder of PIRLTest Section 3.1.2: a layout tree in bracket notation
//! goes in, a 512-dimension vector comes out, trained so that the Euclidean distance
//! between two embeddings fits the tree edit distance of the two trees.
//!
//! Architecture: token embedding → `layers` stacked LSTM layers → last hidden state of the
//! top layer → fully connected layer → `out_dim` (512) vector. The predicted tree edit
//! distance of two trees is `distance_scale · ‖e(A) − e(B)‖₂`.
//!
//! Two forward passes compute the same function: a batched, packed one on candle tensors
//! that training differentiates (`train.rs`), and a plain `f32` one here that [`embed`]
//! uses. One embedding runs a few dozen LSTM steps of one row each, where candle's
//! per-operation overhead would cost more than the arithmetic; the plain loops keep one
//! embedding well under a millisecond. A test checks that both passes agree.
//!
//! [`embed`]: LayoutEmbedder::embed

mod train;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gui_core::WidgetKind;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::generate::serde_kind;
use crate::{Error, LayoutTree, NodeId, Result};

pub use train::{
    LayoutPair, LayoutPairConfig, LayoutPairs, PairMetrics, TrainConfig, TrainReport, WidgetLabels,
    evaluate_pairs, spearman, train_embedder,
};

/// Where the weights trained by `cargo xtask layout-embedder train` live in this checkout.
pub fn shipped_model_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/layout_lstm.safetensors")
}

/// Identifies the file layout written by [`LayoutEmbedder::save`].
const FORMAT: &str = "gui-layout/layout-lstm/1";
/// The safetensors metadata key that holds the [`Header`].
const HEADER_KEY: &str = "gui_layout.layout_lstm";

/// What a weights file says about itself, besides its tensors.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: String,
    config: LayoutEmbedderConfig,
    /// The known labels in token order (see [`LayoutVocabulary`]).
    vocabulary: Vec<String>,
}

/// Sizes and seed of a [`LayoutEmbedder`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutEmbedderConfig {
    /// Width of the token embedding that feeds the first LSTM layer.
    pub embed_dim: usize,
    /// Hidden (and cell) state width of every LSTM layer.
    pub hidden: usize,
    /// Number of stacked LSTM layers.
    pub layers: usize,
    /// Width of the output vector; 512 in the paper.
    pub out_dim: usize,
    /// Predicted tree edit distance per unit of embedding distance. Training fits
    /// `‖e(A) − e(B)‖₂` to `TED / distance_scale`, which keeps the regression targets near
    /// 1 while the reported distances stay in edit operations.
    pub distance_scale: f32,
    /// Seeds the weight initialisation (and, in training, the order of the batches).
    pub seed: u64,
}

impl Default for LayoutEmbedderConfig {
    /// One LSTM layer of 128. A second layer fits the training protocol's test split
    /// hardly better, generalises worse to fresh layouts and costs three times the
    /// arithmetic per token (`docs/measured.md`, "Layout").
    fn default() -> Self {
        Self {
            embed_dim: 32,
            hidden: 128,
            layers: 1,
            out_dim: 512,
            distance_scale: 10.0,
            seed: 0,
        }
    }
}

impl LayoutEmbedderConfig {
    fn check(&self) -> Result<()> {
        let bad = |what: &str| {
            Err(Error::Embedder {
                message: format!("invalid config: {what} ({self:?})"),
            })
        };
        if self.embed_dim == 0 || self.hidden == 0 || self.layers == 0 || self.out_dim == 0 {
            return bad("every size must be at least 1");
        }
        if !(self.distance_scale.is_finite() && self.distance_scale > 0.0) {
            return bad("distance_scale must be positive");
        }
        Ok(())
    }
}

/// Token `0`: closes the current node.
const CLOSE: u32 = 0;
/// Tokens 1 and 2: a label outside the vocabulary, opening a node with children or a leaf.
const UNKNOWN_OPEN: u32 = 1;
const UNKNOWN_LEAF: u32 = 2;

/// Tokens of bracket notation. A node with children becomes `{label` … `}` and a leaf
/// becomes the single token `{label}`: the string is recovered exactly (for known labels),
/// and merging the braces into the label token makes the sequence 2n − leaves tokens long
/// instead of the 3n of separate `{`, label and `}` tokens; the LSTM's running time follows
/// the sequence length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutVocabulary {
    labels: Vec<String>,
    index: HashMap<String, u32>,
}

impl Default for LayoutVocabulary {
    /// The labels [`crate::random_layout`] writes: `screen`, `group`, `line`, `w` and
    /// `w:<kind>` for every widget kind.
    fn default() -> Self {
        let mut labels: Vec<String> = ["screen", "group", "line", "w"].map(String::from).into();
        labels.extend(
            WidgetKind::ALL
                .iter()
                .map(|k| format!("w:{}", serde_kind(*k))),
        );
        Self::from_labels(labels)
    }
}

impl LayoutVocabulary {
    pub fn from_labels(labels: Vec<String>) -> Self {
        let index = labels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.clone(), i as u32))
            .collect();
        Self { labels, index }
    }

    /// The known labels, in token order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// Number of distinct tokens: close, two unknown tokens, two per label.
    pub fn len(&self) -> usize {
        3 + 2 * self.labels.len()
    }

    /// Never true: the close and unknown tokens are always there.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The token of a node opening `label`, as a leaf or with children to follow.
    pub fn label_token(&self, label: &str, leaf: bool) -> u32 {
        match self.index.get(label) {
            Some(i) => 3 + 2 * i + u32::from(leaf),
            None if leaf => UNKNOWN_LEAF,
            None => UNKNOWN_OPEN,
        }
    }

    /// The token sequence of a tree, in the order its bracket string is written.
    pub fn tokenize(&self, tree: &LayoutTree) -> Vec<u32> {
        let mut out = Vec::with_capacity(2 * tree.len());
        // (node, closing?) pairs: an iterative preorder that also emits the closing braces.
        let mut stack: Vec<(NodeId, bool)> = vec![(tree.root(), false)];
        while let Some((n, close)) = stack.pop() {
            if close {
                out.push(CLOSE);
                continue;
            }
            let children = tree.children(n);
            out.push(self.label_token(tree.label(n), children.is_empty()));
            if !children.is_empty() {
                stack.push((n, true));
                stack.extend(children.iter().rev().map(|c| (*c, false)));
            }
        }
        out
    }
}

/// A row-major matrix of `f32`.
#[derive(Debug, Clone, PartialEq)]
struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f32>,
}

impl Matrix {
    fn uniform(rng: &mut impl Rng, rows: usize, cols: usize, bound: f32) -> Self {
        let data = (0..rows * cols)
            .map(|_| rng.random_range(-bound..=bound))
            .collect();
        Self { rows, cols, data }
    }

    fn row(&self, r: usize) -> &[f32] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    fn transposed(&self) -> Matrix {
        let mut data = vec![0.0; self.data.len()];
        for r in 0..self.rows {
            for c in 0..self.cols {
                data[c * self.rows + r] = self.data[r * self.cols + c];
            }
        }
        Matrix {
            rows: self.cols,
            cols: self.rows,
            data,
        }
    }
}

/// One LSTM layer in the stored layout. Gate blocks of `4·hidden` rows are ordered input,
/// forget, output, cell candidate (the three sigmoid gates first, so one sigmoid covers
/// them); `bias` is the sum of PyTorch's two biases.
#[derive(Debug, Clone, PartialEq)]
struct LstmWeights {
    weight_ih: Matrix,
    weight_hh: Matrix,
    bias: Vec<f32>,
}

/// All parameters, in the layout they are saved in.
#[derive(Debug, Clone, PartialEq)]
struct Weights {
    token_embedding: Matrix,
    lstm: Vec<LstmWeights>,
    projection: Matrix,
    projection_bias: Vec<f32>,
}

impl Weights {
    /// Uniform initialisation in `±1/√hidden` (PyTorch's LSTM and Linear rule) from a
    /// ChaCha8 stream seeded by `config.seed`, so that a seed fixes the initial model on
    /// every machine (candle's CPU random generator cannot be seeded). Forget-gate biases
    /// start at 1, which keeps early gradients flowing through long sequences.
    fn init(config: &LayoutEmbedderConfig, vocab_len: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let h = config.hidden;
        let bound = 1.0 / (h as f32).sqrt();
        let token_embedding = Matrix::uniform(&mut rng, vocab_len, config.embed_dim, 1.0);
        let lstm = (0..config.layers)
            .map(|l| {
                let input = if l == 0 { config.embed_dim } else { h };
                let mut bias = vec![0.0; 4 * h];
                bias[h..2 * h].fill(1.0);
                LstmWeights {
                    weight_ih: Matrix::uniform(&mut rng, 4 * h, input, bound),
                    weight_hh: Matrix::uniform(&mut rng, 4 * h, h, bound),
                    bias,
                }
            })
            .collect();
        Self {
            token_embedding,
            lstm,
            projection: Matrix::uniform(&mut rng, config.out_dim, h, bound),
            projection_bias: vec![0.0; config.out_dim],
        }
    }

    /// Named tensors for safetensors: `(name, shape, values)`.
    fn named(&self) -> Vec<(String, Vec<usize>, &[f32])> {
        let mut out = vec![(
            "token_embedding".to_owned(),
            vec![self.token_embedding.rows, self.token_embedding.cols],
            &self.token_embedding.data[..],
        )];
        for (l, w) in self.lstm.iter().enumerate() {
            for (what, m) in [("weight_ih", &w.weight_ih), ("weight_hh", &w.weight_hh)] {
                out.push((
                    format!("lstm.{l}.{what}"),
                    vec![m.rows, m.cols],
                    &m.data[..],
                ));
            }
            out.push((format!("lstm.{l}.bias"), vec![w.bias.len()], &w.bias[..]));
        }
        out.push((
            "projection.weight".to_owned(),
            vec![self.projection.rows, self.projection.cols],
            &self.projection.data[..],
        ));
        out.push((
            "projection.bias".to_owned(),
            vec![self.projection_bias.len()],
            &self.projection_bias[..],
        ));
        out
    }
}

/// The weights rearranged for the single-sequence forward pass: every matrix-vector
/// product becomes a sum of scaled contiguous rows (`y += x[j] · Wᵀ[j]`), which the
/// compiler vectorises, and the first layer's input projection is a table lookup per
/// token.
#[derive(Debug, Clone)]
struct Inference {
    hidden: usize,
    /// `[vocab][4·hidden]`: `W_ih · embedding(token) + bias` of the first layer.
    token_gates: Vec<f32>,
    /// Per layer: `W_hhᵀ` as `[hidden][4·hidden]`; for layers above the first also
    /// `W_ihᵀ` and the bias.
    recurrent_t: Vec<Vec<f32>>,
    input_t: Vec<Vec<f32>>,
    bias: Vec<Vec<f32>>,
    /// `[hidden][out_dim]`.
    projection_t: Vec<f32>,
    projection_bias: Vec<f32>,
}

impl Inference {
    fn new(w: &Weights) -> Self {
        let first = &w.lstm[0];
        let four_h = first.weight_hh.rows;
        let vocab = w.token_embedding.rows;
        let mut token_gates = Vec::with_capacity(vocab * four_h);
        for t in 0..vocab {
            let e = w.token_embedding.row(t);
            for (g, b) in first.bias.iter().enumerate() {
                let dot: f32 = first
                    .weight_ih
                    .row(g)
                    .iter()
                    .zip(e)
                    .map(|(a, b)| a * b)
                    .sum();
                token_gates.push(dot + b);
            }
        }
        Self {
            hidden: four_h / 4,
            token_gates,
            recurrent_t: w
                .lstm
                .iter()
                .map(|l| l.weight_hh.transposed().data)
                .collect(),
            // The first layer's input product is folded into `token_gates`.
            input_t: w
                .lstm
                .iter()
                .enumerate()
                .map(|(i, l)| match i {
                    0 => Vec::new(),
                    _ => l.weight_ih.transposed().data,
                })
                .collect(),
            bias: w.lstm.iter().map(|l| l.bias.clone()).collect(),
            projection_t: w.projection.transposed().data,
            projection_bias: w.projection_bias.clone(),
        }
    }

    fn forward(&self, tokens: &[u32]) -> Vec<f32> {
        let h = self.hidden;
        let layers = self.recurrent_t.len();
        let mut hs = vec![vec![0.0f32; h]; layers];
        let mut cs = vec![vec![0.0f32; h]; layers];
        let mut gates = vec![0.0f32; 4 * h];
        for &tok in tokens {
            for l in 0..layers {
                if l == 0 {
                    let t = tok as usize;
                    gates.copy_from_slice(&self.token_gates[t * 4 * h..(t + 1) * 4 * h]);
                } else {
                    gates.copy_from_slice(&self.bias[l]);
                    let (below, _) = hs.split_at(l);
                    add_transposed_product(&mut gates, &self.input_t[l], &below[l - 1]);
                }
                add_transposed_product(&mut gates, &self.recurrent_t[l], &hs[l]);
                lstm_cell(&mut gates, &mut hs[l], &mut cs[l]);
            }
        }
        let mut out = self.projection_bias.clone();
        add_transposed_product(&mut out, &self.projection_t, &hs[layers - 1]);
        out
    }
}

/// `y += W x` with `W` given transposed (`wt` is `[x.len()][y.len()]`).
///
/// The output is walked in blocks of [`BLOCK`] values held in an array the compiler keeps
/// in vector registers across the whole sum over `x`; a plain `y += x[j]·Wᵀ[j]` per `j`
/// would load and store all of `y` once per input and be bound by that traffic.
fn add_transposed_product(y: &mut [f32], wt: &[f32], x: &[f32]) {
    let n = y.len();
    debug_assert_eq!(wt.len(), n * x.len());
    for (b, block) in y.chunks_mut(BLOCK).enumerate() {
        let from = b * BLOCK;
        if let Ok(block) = <&mut [f32; BLOCK]>::try_from(&mut *block) {
            let mut acc = *block;
            for (&xj, row) in x.iter().zip(wt.chunks_exact(n)) {
                let w: &[f32; BLOCK] = row[from..from + BLOCK].try_into().expect("whole block");
                for (a, wk) in acc.iter_mut().zip(w) {
                    *a += xj * wk;
                }
            }
            *block = acc;
        } else {
            for (&xj, row) in x.iter().zip(wt.chunks_exact(n)) {
                for (a, wk) in block.iter_mut().zip(&row[from..]) {
                    *a += xj * wk;
                }
            }
        }
    }
}

/// Output values accumulated together in [`add_transposed_product`]: 8 SSE registers.
const BLOCK: usize = 32;

/// `e^x`, accurate to a few ulp, written without branches or calls so that loops over
/// slices vectorise (libm's `expf`/`tanhf` calls were 40% of an embedding's time).
/// `x = n·ln 2 + r` with |r| ≤ ln 2 / 2, `e^r` by its degree-6 Taylor polynomial (error
/// below 2e-8 on that interval), and `2^n` assembled in the exponent bits.
#[inline(always)]
fn fast_exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split in two so that n·LN2_HI is exact for the |n| ≤ 127 used here.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Adding and subtracting 1.5·2²³ rounds to the nearest integer in plain SSE2.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let n = (x * LOG2_E + ROUND) - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + fast_exp(-x))
}

/// `tanh x = 1 − 2 / (e^{2x} + 1)`; absolute error about 1e-7, which is what matters
/// inside the cell.
fn tanh(x: f32) -> f32 {
    1.0 - 2.0 / (fast_exp(2.0 * x) + 1.0)
}

/// One LSTM update from the pre-activations `gates` = [i, f, o, g]:
/// `c ← σ(f)·c + σ(i)·tanh(g)`, `h ← σ(o)·tanh(c)`.
fn lstm_cell(gates: &mut [f32], h: &mut [f32], c: &mut [f32]) {
    let n = h.len();
    let (ifo, g) = gates.split_at_mut(3 * n);
    for v in ifo.iter_mut() {
        *v = sigmoid(*v);
    }
    for v in g.iter_mut() {
        *v = tanh(*v);
    }
    let (i, fo) = ifo.split_at(n);
    let (f, o) = fo.split_at(n);
    for k in 0..n {
        c[k] = f[k] * c[k] + i[k] * g[k];
    }
    for k in 0..n {
        h[k] = o[k] * tanh(c[k]);
    }
}

/// Embeds layout trees into vectors whose distances fit the tree edit distance.
///
/// ```
/// use gui_layout::{LayoutEmbedder, LayoutTree};
///
/// let embedder = LayoutEmbedder::shipped()?;
/// let a = LayoutTree::parse("{screen{group{line{w:button}{w:text_view}}}}")?;
/// let b = LayoutTree::parse("{screen{group{line{w:button}}}}")?;
/// assert_eq!(embedder.embed(&a)?.len(), 512);
/// // About 1 (the tree edit distance): one widget removed.
/// let d = embedder.distance(&a, &b)?;
/// assert!(d > 0.0 && d < 5.0, "{d}");
/// # Ok::<(), gui_layout::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LayoutEmbedder {
    config: LayoutEmbedderConfig,
    vocab: LayoutVocabulary,
    weights: Weights,
    inference: Inference,
}

impl LayoutEmbedder {
    /// An untrained embedder, initialised from `config.seed`, over the default vocabulary.
    pub fn new(config: LayoutEmbedderConfig) -> Result<Self> {
        config.check()?;
        let vocab = LayoutVocabulary::default();
        let weights = Weights::init(&config, vocab.len());
        Ok(Self::from_parts(config, vocab, weights))
    }

    fn from_parts(config: LayoutEmbedderConfig, vocab: LayoutVocabulary, weights: Weights) -> Self {
        let inference = Inference::new(&weights);
        Self {
            config,
            vocab,
            weights,
            inference,
        }
    }

    /// The weights shipped in `models/` (see [`shipped_model_path`]).
    pub fn shipped() -> Result<Self> {
        Self::load(shipped_model_path())
    }

    pub fn config(&self) -> &LayoutEmbedderConfig {
        &self.config
    }

    pub fn vocabulary(&self) -> &LayoutVocabulary {
        &self.vocab
    }

    /// Number of trainable parameters.
    pub fn parameter_count(&self) -> usize {
        self.weights.named().iter().map(|(_, _, v)| v.len()).sum()
    }

    /// The `out_dim` vector of one tree.
    pub fn embed(&self, tree: &LayoutTree) -> Result<Vec<f32>> {
        Ok(self.inference.forward(&self.vocab.tokenize(tree)))
    }

    /// Parses bracket notation, then embeds.
    pub fn embed_bracket(&self, bracket: &str) -> Result<Vec<f32>> {
        self.embed(&LayoutTree::parse(bracket)?)
    }

    /// One vector per tree, in order.
    pub fn embed_many(&self, trees: &[LayoutTree]) -> Result<Vec<Vec<f32>>> {
        trees.iter().map(|t| self.embed(t)).collect()
    }

    /// The tree edit distance the model predicts from two embeddings.
    pub fn predicted_distance(&self, a: &[f32], b: &[f32]) -> f64 {
        let sq: f64 = a.iter().zip(b).map(|(x, y)| f64::from(x - y).powi(2)).sum();
        f64::from(self.config.distance_scale) * sq.sqrt()
    }

    /// The tree edit distance the model predicts for two trees.
    pub fn distance(&self, a: &LayoutTree, b: &LayoutTree) -> Result<f64> {
        Ok(self.predicted_distance(&self.embed(a)?, &self.embed(b)?))
    }

    /// Writes the weights as safetensors (f32, little endian) with a [`Header`] (format
    /// tag, config, vocabulary) as JSON under the metadata key `gui_layout.layout_lstm`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let model_err = |message: String| Error::Model {
            path: path.to_path_buf(),
            message,
        };
        let named = self.weights.named();
        let tensors: Vec<_> = named
            .iter()
            .map(|(name, shape, v)| (name.as_str(), shape.as_slice(), *v))
            .collect();
        let header = Header {
            format: FORMAT.to_owned(),
            config: self.config.clone(),
            vocabulary: self.vocab.labels.clone(),
        };
        let header = serde_json::to_string(&header).map_err(|e| model_err(e.to_string()))?;
        gui_core::checkpoint::write_checkpoint(path, HEADER_KEY, &header, &tensors)
            .map_err(model_err)
    }

    /// Reads a file written by [`save`](Self::save). Every failure names the path.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::Model {
            path: path.to_path_buf(),
            message: format!("reading: {e}"),
        })?;
        Self::from_safetensors(&bytes).map_err(|message| Error::Model {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Reads the bytes of a file written by [`save`](Self::save); `origin` names them in
    /// errors.
    pub fn load_bytes(bytes: &[u8], origin: impl Into<PathBuf>) -> Result<Self> {
        Self::from_safetensors(bytes).map_err(|message| Error::Model {
            path: origin.into(),
            message,
        })
    }

    fn from_safetensors(bytes: &[u8]) -> std::result::Result<Self, String> {
        let reader = gui_core::checkpoint::CheckpointReader::parse(bytes, HEADER_KEY)?;
        let header: Header =
            serde_json::from_str(reader.header()).map_err(|e| format!("{HEADER_KEY}: {e}"))?;
        if header.format != FORMAT {
            return Err(format!(
                "format is `{}`, expected `{FORMAT}`",
                header.format
            ));
        }
        let config = header.config;
        config.check().map_err(|e| e.to_string())?;
        let vocab = LayoutVocabulary::from_labels(header.vocabulary);
        let values = |name: &str, shape: &[usize]| reader.f32(name, shape);
        let matrix = |name: &str, rows: usize, cols: usize| {
            let data = values(name, &[rows, cols])?;
            Ok::<_, String>(Matrix { rows, cols, data })
        };
        let (e, h, o) = (config.embed_dim, config.hidden, config.out_dim);
        let lstm = (0..config.layers)
            .map(|l| {
                let input = if l == 0 { e } else { h };
                Ok(LstmWeights {
                    weight_ih: matrix(&format!("lstm.{l}.weight_ih"), 4 * h, input)?,
                    weight_hh: matrix(&format!("lstm.{l}.weight_hh"), 4 * h, h)?,
                    bias: values(&format!("lstm.{l}.bias"), &[4 * h])?,
                })
            })
            .collect::<std::result::Result<_, String>>()?;
        let weights = Weights {
            token_embedding: matrix("token_embedding", vocab.len(), e)?,
            lstm,
            projection: matrix("projection.weight", o, h)?,
            projection_bias: values("projection.bias", &[o])?,
        };
        Ok(Self::from_parts(config, vocab, weights))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_merge_leaves_and_name_unknown_labels() {
        let v = LayoutVocabulary::default();
        let t = LayoutTree::parse("{screen{group{line{w:button}{w}}}{odd}}").unwrap();
        let tokens = v.tokenize(&t);
        let open = |l| v.label_token(l, false);
        let leaf = |l| v.label_token(l, true);
        assert_eq!(
            tokens,
            [
                open("screen"),
                open("group"),
                open("line"),
                leaf("w:button"),
                leaf("w"),
                CLOSE,
                CLOSE,
                UNKNOWN_LEAF,
                CLOSE
            ]
        );
        // 2n − leaves tokens.
        assert_eq!(tokens.len(), 2 * t.len() - 3);
        assert!(tokens.iter().all(|&t| (t as usize) < v.len()));
        assert_ne!(leaf("w"), open("w"));
    }

    #[test]
    fn config_is_checked() {
        let bad = LayoutEmbedderConfig {
            hidden: 0,
            ..LayoutEmbedderConfig::default()
        };
        assert!(matches!(
            LayoutEmbedder::new(bad),
            Err(Error::Embedder { .. })
        ));
    }

    #[test]
    fn stacked_layers_run_and_differ_by_seed() {
        let config = LayoutEmbedderConfig {
            embed_dim: 8,
            hidden: 16,
            layers: 3,
            out_dim: 24,
            ..LayoutEmbedderConfig::default()
        };
        let a = LayoutEmbedder::new(config.clone()).unwrap();
        let b = LayoutEmbedder::new(LayoutEmbedderConfig { seed: 1, ..config }).unwrap();
        let t = LayoutTree::parse("{screen{group{line{w}{w}}}}").unwrap();
        let (ea, eb) = (a.embed(&t).unwrap(), b.embed(&t).unwrap());
        assert_eq!(ea.len(), 24);
        assert!(ea.iter().all(|x| x.is_finite()));
        assert_ne!(ea, eb);
        assert_eq!(ea, a.embed(&t).unwrap());
    }
}
