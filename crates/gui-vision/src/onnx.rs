//! ONNX Runtime loaded by path, and any ONNX image classifier as a [`WidgetClassifier`].
//!
//! The paper classifies widget crops with a VGG-16 (Section 3.1.1); [`OnnxClassifier`] runs
//! such a network, or any other image classifier exported to ONNX, on the CPU.
//!
//! The runtime library is not linked: it is opened at run time from
//! [`onnx_runtime_path`], which `cargo xtask models` fills. A missing library is an
//! [`Error::Model`] naming the path, never a panic.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use gui_core::{Rect, WidgetKind};
use image::RgbImage;
use ort::environment::Environment;
use ort::session::Session;
use ort::value::TensorRef;
use rayon::prelude::*;

use crate::classify::clip_boxes;
use crate::{Error, Result, WidgetClassifier};

/// File name of the runtime library inside `<models>/onnxruntime/` (the `onnxruntime==1.31.1`
/// wheel, whose API version matches ort's `api-31` feature).
pub const ONNX_RUNTIME_FILE: &str = "libonnxruntime.so.1.31.1";

const BACKEND: &str = "onnx runtime";
const INSTALL_HINT: &str = "run `cargo xtask models` (or `cargo xtask setup`) to download it, or point GUI_ORT_DYLIB at a libonnxruntime.so of version 1.31 or later";

/// The model cache `cargo xtask models` fills: `$GUI_MODELS_DIR` when set, else the
/// workspace's `target/models` (found from this crate's source folder at compile time, so
/// it does not depend on `CARGO_TARGET_DIR`).
pub fn models_dir() -> PathBuf {
    if let Some(dir) = non_empty_env("GUI_MODELS_DIR") {
        return dir;
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    // crates/gui-vision -> workspace root.
    crate_dir
        .parent()
        .and_then(Path::parent)
        .unwrap_or(crate_dir)
        .join("target")
        .join("models")
}

/// Where the ONNX Runtime library is loaded from, in order: `$GUI_ORT_DYLIB`,
/// `$ORT_DYLIB_PATH` (ort's own variable), then `<models_dir>/onnxruntime/`
/// [`ONNX_RUNTIME_FILE`].
pub fn onnx_runtime_path() -> PathBuf {
    non_empty_env("GUI_ORT_DYLIB")
        .or_else(|| non_empty_env("ORT_DYLIB_PATH"))
        .unwrap_or_else(|| models_dir().join("onnxruntime").join(ONNX_RUNTIME_FILE))
}

fn non_empty_env(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The process-wide ONNX Runtime environment, created on the first successful load. A
/// failed load is not remembered, so a later call (after `cargo xtask models`) can succeed.
static ENVIRONMENT: Mutex<Option<Environment>> = Mutex::new(None);

/// Loads ONNX Runtime from [`onnx_runtime_path`], once per process.
///
/// # Errors
/// [`Error::Model`] naming the library path when it is missing or cannot be loaded, with
/// the command that installs it.
pub fn init_onnx_runtime() -> Result<()> {
    init_onnx_runtime_from(&onnx_runtime_path())
}

/// Loads ONNX Runtime from `path`, once per process; later calls return at once.
///
/// The path is checked before anything else, so a missing file is always reported, even
/// when a runtime is already loaded (a process can hold only one).
///
/// # Errors
/// [`Error::Model`] naming `path` when the file is missing, is not an ONNX Runtime library,
/// or is older than 1.31.
pub fn init_onnx_runtime_from(path: &Path) -> Result<()> {
    environment_from(path).map(drop)
}

pub(crate) fn environment() -> Result<Environment> {
    environment_from(&onnx_runtime_path())
}

fn environment_from(path: &Path) -> Result<Environment> {
    let missing = |message: String| Error::Model {
        path: path.to_path_buf(),
        message,
    };
    if !path.is_file() {
        return Err(missing(format!(
            "the ONNX Runtime library is not there; {INSTALL_HINT}"
        )));
    }
    // A poisoned lock only means another thread panicked while loading; the slot is
    // still either empty or a complete environment.
    let mut slot = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(env) = slot.as_ref() {
        return Ok(env.clone());
    }
    let env = ort::init_from(path)
        .map_err(|e| missing(format!("cannot load ONNX Runtime ({e}); {INSTALL_HINT}")))?
        .with_name("gui-vision")
        .build()
        .map_err(|e| missing(format!("cannot create the ONNX Runtime environment: {e}")))?;
    *slot = Some(env.clone());
    Ok(env)
}

/// Opens an ONNX model as a session of the process-wide runtime.
pub(crate) fn load_session(model: &Path) -> Result<Session> {
    if !model.is_file() {
        return Err(Error::Model {
            path: model.to_path_buf(),
            message: "no such model file (`cargo xtask models` downloads the PP-OCR models)".into(),
        });
    }
    let env = environment()?;
    let bad = |e: ort::Error| Error::Model {
        path: model.to_path_buf(),
        message: format!("cannot open the model: {e}"),
    };
    Session::builder(&env)
        .map_err(bad)?
        .commit_from_file(model)
        .map_err(bad)
}

pub(crate) fn backend_error(e: impl std::fmt::Display) -> Error {
    Error::Backend {
        backend: BACKEND,
        message: e.to_string(),
    }
}

/// How one colour of a crop becomes one input channel: `value = byte * scale + offset`,
/// taking the source colour `source` (0 = R, 1 = G, 2 = B).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChannelMap {
    pub source: [usize; 3],
    pub scale: [f32; 3],
    pub offset: [f32; 3],
}

impl ChannelMap {
    /// `(byte/255 - mean) / std` per output channel, channels taken from `source`.
    pub fn normalise(source: [usize; 3], mean: [f32; 3], std: [f32; 3]) -> Self {
        let scale = std::array::from_fn(|c| 1.0 / (255.0 * std[c]));
        let offset = std::array::from_fn(|c| -mean[c] / std[c]);
        Self {
            source,
            scale,
            offset,
        }
    }
}

/// Bilinear resize of `crop` (inside `image`) to `out_w`x`out_h`, written channel-first into
/// `dest`: plane `c` starts at `c * plane_len`, rows are `row_stride` apart (so a narrower
/// crop can leave padding on the right). Sample positions use pixel centres, as OpenCV's
/// `INTER_LINEAR` does, which the PP-OCR models were trained with.
pub(crate) fn resize_crop_chw(
    image: &RgbImage,
    crop: Rect,
    (out_w, out_h): (u32, u32),
    row_stride: usize,
    plane_len: usize,
    map: &ChannelMap,
    dest: &mut [f32],
) {
    let (out_w, out_h) = (out_w as usize, out_h as usize);
    debug_assert!(crop.width > 0 && crop.height > 0 && out_w <= row_stride);
    debug_assert!(dest.len() >= 2 * plane_len + (out_h.max(1) - 1) * row_stride + out_w);
    let taps = |out: usize, src_len: u32, src_start: i32| -> Vec<(usize, usize, f32)> {
        let ratio = src_len as f32 / out as f32;
        let last = src_len as f32 - 1.0;
        (0..out)
            .map(|i| {
                let s = ((i as f32 + 0.5) * ratio - 0.5).clamp(0.0, last);
                let lo = s.floor();
                let hi = (lo + 1.0).min(last);
                let base = src_start as usize;
                (base + lo as usize, base + hi as usize, s - lo)
            })
            .collect()
    };
    let xs = taps(out_w, crop.width, crop.x);
    let ys = taps(out_h, crop.height, crop.y);
    let width = image.width() as usize;
    let raw = image.as_raw();
    for (oy, &(y0, y1, wy)) in ys.iter().enumerate() {
        let row0 = &raw[y0 * width * 3..(y0 + 1) * width * 3];
        let row1 = &raw[y1 * width * 3..(y1 + 1) * width * 3];
        for (ox, &(x0, x1, wx)) in xs.iter().enumerate() {
            let at = oy * row_stride + ox;
            for c in 0..3 {
                let s = map.source[c];
                let top =
                    f32::from(row0[x0 * 3 + s]) * (1.0 - wx) + f32::from(row0[x1 * 3 + s]) * wx;
                let bottom =
                    f32::from(row1[x0 * 3 + s]) * (1.0 - wx) + f32::from(row1[x1 * 3 + s]) * wx;
                let v = top * (1.0 - wy) + bottom * wy;
                dest[c * plane_len + at] = v * map.scale[c] + map.offset[c];
            }
        }
    }
}

/// The colour order a classifier expects in its input channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChannelOrder {
    /// Red, green, blue (torchvision and most PyTorch exports).
    #[default]
    Rgb,
    /// Blue, green, red (Caffe and OpenCV-trained models, the PP-OCR models).
    Bgr,
}

impl ChannelOrder {
    fn sources(self) -> [usize; 3] {
        match self {
            ChannelOrder::Rgb => [0, 1, 2],
            ChannelOrder::Bgr => [2, 1, 0],
        }
    }
}

/// How [`OnnxClassifier`] feeds a model and reads its output.
#[derive(Debug, Clone, PartialEq)]
pub struct OnnxClassifierConfig {
    /// Input width and height every crop is resized to (VGG-16: 224x224).
    pub input_size: (u32, u32),
    /// Per-colour mean subtracted from `byte/255`, in R, G, B order whatever
    /// `channel_order` is (ImageNet's by default).
    pub mean: [f32; 3],
    /// Per-colour standard deviation dividing after the mean, in R, G, B order.
    pub std: [f32; 3],
    /// Colour order of the model's input channels.
    pub channel_order: ChannelOrder,
    /// Widget kind of each output index; the output must have exactly this many columns.
    pub classes: Vec<WidgetKind>,
    /// `true` when the model ends in a softmax; otherwise its outputs are logits and the
    /// classifier applies the softmax.
    pub softmax_applied: bool,
}

impl Default for OnnxClassifierConfig {
    fn default() -> Self {
        Self {
            input_size: (224, 224),
            mean: [0.485, 0.456, 0.406],
            std: [0.229, 0.224, 0.225],
            channel_order: ChannelOrder::Rgb,
            classes: WidgetKind::ALL.to_vec(),
            softmax_applied: false,
        }
    }
}

impl OnnxClassifierConfig {
    fn validate(&self) -> Result<()> {
        let (w, h) = self.input_size;
        if w == 0 || h == 0 || w > 4096 || h > 4096 {
            return Err(Error::Config {
                field: "input_size",
                message: format!("{w}x{h} must be between 1x1 and 4096x4096"),
            });
        }
        if let Some(s) = self.std.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(Error::Config {
                field: "std",
                message: format!("{s} must be a positive number"),
            });
        }
        if self.mean.iter().any(|m| !m.is_finite()) {
            return Err(Error::Config {
                field: "mean",
                message: format!("{:?} must be finite", self.mean),
            });
        }
        if self.classes.is_empty() {
            return Err(Error::Config {
                field: "classes",
                message: "at least one class is needed".into(),
            });
        }
        Ok(())
    }
}

/// Any ONNX image classifier as a [`WidgetClassifier`]: crops every box, resizes it to the
/// model's input, runs all boxes of a screen as one batch and returns the most probable
/// kind with its probability.
///
/// The model takes one `[N, 3, H, W]` float input and gives `[N, classes]` scores.
#[derive(Debug)]
pub struct OnnxClassifier {
    model: PathBuf,
    config: OnnxClassifierConfig,
    input_name: String,
    // ort runs a session through `&mut` (ONNX Runtime kernels are not all thread safe);
    // the trait takes `&self` and must be `Sync`, so runs take turns.
    session: Mutex<Session>,
}

impl OnnxClassifier {
    /// Opens the model at `model`, loading ONNX Runtime first if needed.
    ///
    /// # Errors
    /// [`Error::Config`] for an invalid config, [`Error::Model`] naming the model (missing,
    /// unreadable, not one image input) or the runtime library (missing).
    pub fn new(model: &Path, config: OnnxClassifierConfig) -> Result<Self> {
        config.validate()?;
        let session = load_session(model)?;
        let input = match session.inputs() {
            [only] => only,
            inputs => {
                return Err(Error::Model {
                    path: model.to_path_buf(),
                    message: format!(
                        "an image classifier has one input, this model has {}",
                        inputs.len()
                    ),
                });
            }
        };
        let (w, h) = config.input_size;
        if let Some(shape) = input.dtype().tensor_shape()
            && (shape.len() != 4
                || shape[1] > 0 && shape[1] != 3
                || shape[2] > 0 && shape[2] != i64::from(h)
                || shape[3] > 0 && shape[3] != i64::from(w))
        {
            return Err(Error::Model {
                path: model.to_path_buf(),
                message: format!(
                    "input `{}` has shape {:?}; the config asks for [N, 3, {h}, {w}]",
                    input.name(),
                    &shape[..]
                ),
            });
        }
        if session.outputs().is_empty() {
            return Err(Error::Model {
                path: model.to_path_buf(),
                message: "the model has no output".into(),
            });
        }
        Ok(Self {
            model: model.to_path_buf(),
            input_name: input.name().to_owned(),
            config,
            session: Mutex::new(session),
        })
    }

    /// The configuration the classifier was built with.
    pub fn config(&self) -> &OnnxClassifierConfig {
        &self.config
    }

    /// The input tensor `[N, 3, H, W]` for the boxes, each clipped to the screen.
    fn batch(&self, screen: &RgbImage, boxes: &[Rect]) -> Result<Vec<f32>> {
        let crops = clip_boxes(screen, boxes, "box")?;
        let (w, h) = self.config.input_size;
        let plane = (w * h) as usize;
        let map = ChannelMap::normalise(
            self.config.channel_order.sources(),
            self.reorder(self.config.mean),
            self.reorder(self.config.std),
        );
        let mut data = vec![0.0f32; crops.len() * 3 * plane];
        data.par_chunks_mut(3 * plane)
            .zip(&crops)
            .for_each(|(dest, crop)| {
                resize_crop_chw(screen, *crop, (w, h), w as usize, plane, &map, dest);
            });
        Ok(data)
    }

    /// Mean/std are given in R, G, B order; the input channels may be B, G, R.
    fn reorder(&self, rgb: [f32; 3]) -> [f32; 3] {
        self.config.channel_order.sources().map(|s| rgb[s])
    }
}

impl WidgetClassifier for OnnxClassifier {
    fn classify(&self, screen: &RgbImage, boxes: &[Rect]) -> Result<Vec<(WidgetKind, f32)>> {
        if boxes.is_empty() {
            return Ok(Vec::new());
        }
        let data = self.batch(screen, boxes)?;
        let (w, h) = self.config.input_size;
        let shape = [boxes.len(), 3, h as usize, w as usize];
        let input = TensorRef::from_array_view((shape, data.as_slice())).map_err(backend_error)?;
        let mut session = self.session.lock().unwrap_or_else(|e| e.into_inner());
        let outputs = session
            .run(ort::inputs![self.input_name.as_str() => input])
            .map_err(|e| Error::Backend {
                backend: BACKEND,
                message: format!("running {}: {e}", self.model.display()),
            })?;
        let (out_shape, scores) =
            outputs[0]
                .try_extract_tensor::<f32>()
                .map_err(|e| Error::Backend {
                    backend: BACKEND,
                    message: format!(
                        "output 0 of {} is not a float tensor: {e}",
                        self.model.display()
                    ),
                })?;
        let classes = self.config.classes.len();
        let rows_ok = out_shape.first().is_some_and(|&n| n == boxes.len() as i64);
        let cols: i64 = out_shape.iter().skip(1).product();
        if !rows_ok || cols != classes as i64 || scores.len() != boxes.len() * classes {
            return Err(Error::Backend {
                backend: BACKEND,
                message: format!(
                    "{} gave an output of shape {:?} for {} boxes; expected [{}, {classes}] (one column per class of the config)",
                    self.model.display(),
                    &out_shape[..],
                    boxes.len(),
                    boxes.len()
                ),
            });
        }
        Ok(scores
            .chunks_exact(classes)
            .map(|row| {
                let probs = if self.config.softmax_applied {
                    row.to_vec()
                } else {
                    softmax(row)
                };
                let (best, p) =
                    probs
                        .iter()
                        .enumerate()
                        .fold(
                            (0, f32::NEG_INFINITY),
                            |acc, (i, &p)| {
                                if p > acc.1 { (i, p) } else { acc }
                            },
                        );
                (self.config.classes[best], p)
            })
            .collect())
    }
}

/// Softmax of one row of logits, shifted by the maximum for stability.
fn softmax(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = logits.iter().map(|&l| (l - max).exp()).collect();
    let sum: f32 = exp.iter().sum();
    exp.into_iter().map(|e| e / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let p = softmax(&[1.0, 3.0, 2.0, 10.0]);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(p[3] > 0.99 && p[1] > p[2] && p[2] > p[0], "{p:?}");
        // Large logits do not overflow.
        assert_eq!(softmax(&[1000.0, 1000.0]), [0.5, 0.5]);
    }

    #[test]
    fn resize_of_a_flat_crop_is_flat_and_normalised() {
        let mut img = RgbImage::from_pixel(50, 40, image::Rgb([0, 0, 0]));
        for y in 10..30 {
            for x in 5..25 {
                img.put_pixel(x, y, image::Rgb([255, 51, 0]));
            }
        }
        let map = ChannelMap::normalise([2, 1, 0], [0.0; 3], [1.0; 3]);
        let mut out = vec![f32::NAN; 3 * 7 * 9];
        resize_crop_chw(
            &img,
            Rect::new(5, 10, 20, 20),
            (9, 7),
            9,
            63,
            &map,
            &mut out,
        );
        // BGR planes: blue 0, green 0.2, red 1 everywhere, no bleed from the black border.
        assert!(out[..63].iter().all(|v| v.abs() < 1e-6));
        assert!(out[63..126].iter().all(|v| (v - 0.2).abs() < 1e-6));
        assert!(out[126..].iter().all(|v| (v - 1.0).abs() < 1e-6));
    }

    #[test]
    fn resize_interpolates_between_pixel_centres() {
        // Two columns 0 and 255; upscaled 2 -> 4: centres at 0.25, 0.75 of a pixel apart.
        let mut img = RgbImage::new(2, 1);
        img.put_pixel(1, 0, image::Rgb([255, 255, 255]));
        let map = ChannelMap::normalise([0, 1, 2], [0.0; 3], [1.0; 3]);
        let mut out = vec![0.0; 12];
        resize_crop_chw(&img, Rect::new(0, 0, 2, 1), (4, 1), 4, 4, &map, &mut out);
        let expect = [0.0, 0.25, 0.75, 1.0];
        for (v, e) in out[..4].iter().zip(expect) {
            assert!((v - e).abs() < 1e-6, "{:?}", &out[..4]);
        }
    }

    #[test]
    fn invalid_configs_are_refused_by_field() {
        let bad = OnnxClassifierConfig {
            std: [0.2, 0.0, 0.2],
            ..OnnxClassifierConfig::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(Error::Config { field: "std", .. })
        ));
        let bad = OnnxClassifierConfig {
            classes: vec![],
            ..OnnxClassifierConfig::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(Error::Config {
                field: "classes",
                ..
            })
        ));
        assert!(OnnxClassifierConfig::default().validate().is_ok());
    }
}
