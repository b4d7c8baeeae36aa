//! Text regions with the PP-OCRv4 models of the `rapidocr-onnxruntime` wheel.
//!
//! Detection is a DB network (differentiable binarisation): it paints a per-pixel
//! probability of "inside a text line" whose blobs are shrunk text lines. We binarise the
//! map, take connected components, and grow each component's box back by DB's unclip
//! distance. Unlike PaddleOCR we keep boxes axis-aligned: screen text is horizontal, and
//! widgets are axis-aligned boxes everywhere else in this crate (Section 3.1.1).
//!
//! Recognition reads a box with the CRNN-style PP-OCR recogniser and greedy CTC decoding.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use gui_core::{Rect, Size};
use image::RgbImage;
use ort::session::Session;
use ort::value::TensorRef;

use crate::onnx::{ChannelMap, backend_error, load_session, models_dir, resize_crop_chw};
use crate::{Error, Result};

/// File name of the detection model inside `<models_dir>/rapidocr/`.
pub const DET_MODEL_FILE: &str = "ch_PP-OCRv4_det_infer.onnx";
/// File name of the recognition model inside `<models_dir>/rapidocr/`.
pub const REC_MODEL_FILE: &str = "ch_PP-OCRv4_rec_infer.onnx";

/// The PP-OCR models read BGR and normalise each byte as `(x/255 - 0.5) / 0.5`.
const PP_OCR_INPUT: ChannelMap = ChannelMap {
    source: [2, 1, 0],
    scale: [2.0 / 255.0; 3],
    offset: [-1.0; 3],
};
/// Side lengths of the detector input must be multiples of this (five stride-2 stages).
const DET_STRIDE: u32 = 32;
/// Height of the recogniser input.
const REC_HEIGHT: u32 = 48;
/// The narrowest recogniser input, as a width/height ratio (rapidocr's 320x48).
const REC_MIN_RATIO: f32 = 320.0 / 48.0;

/// A line of text found on a screenshot.
#[derive(Debug, Clone, PartialEq)]
pub struct TextRegion {
    /// The line's box in screenshot pixels.
    pub rect: Rect,
    /// Mean text probability of the detector inside the line, in `[0, 1]`.
    pub score: f32,
    /// What it says, once a [`TextRecognizer`] has read it.
    pub text: Option<String>,
}

/// Settings of [`TextDetector`]; the thresholds are those of PaddleOCR's DB post-processing
/// as rapidocr ships them.
#[derive(Debug, Clone, PartialEq)]
pub struct TextDetectorConfig {
    /// The PP-OCR detection model (default `<models_dir>/rapidocr/ch_PP-OCRv4_det_infer.onnx`).
    pub model: PathBuf,
    /// The longer side of the screenshot is scaled down to at most this many pixels before
    /// detection (never up), then both sides are rounded to multiples of 32. The default
    /// 960 (PaddleOCR's own) turns 1280x800 into 960x608 and 1080x2400 into 448x960, which
    /// keeps text of 12 px and up readable while a detection stays well under 100 ms here.
    pub limit_side: u32,
    /// A map pixel is text when its probability exceeds this.
    pub threshold: f32,
    /// A region is kept when the mean probability of its pixels reaches this.
    pub box_threshold: f32,
    /// How far a region grows back: by `area * unclip_ratio / perimeter` on every side.
    pub unclip_ratio: f32,
    /// Regions whose shorter side is below this many map pixels are dropped.
    pub min_size: u32,
}

impl Default for TextDetectorConfig {
    fn default() -> Self {
        Self {
            model: models_dir().join("rapidocr").join(DET_MODEL_FILE),
            limit_side: 960,
            threshold: 0.3,
            box_threshold: 0.5,
            unclip_ratio: 1.6,
            min_size: 3,
        }
    }
}

impl TextDetectorConfig {
    fn validate(&self) -> Result<()> {
        let unit = |field: &'static str, v: f32| {
            if (0.0..1.0).contains(&v) {
                Ok(())
            } else {
                Err(Error::Config {
                    field,
                    message: format!("{v} must be in [0, 1)"),
                })
            }
        };
        unit("threshold", self.threshold)?;
        unit("box_threshold", self.box_threshold)?;
        if self.limit_side < DET_STRIDE {
            return Err(Error::Config {
                field: "limit_side",
                message: format!("{} must be at least {DET_STRIDE}", self.limit_side),
            });
        }
        if !(self.unclip_ratio.is_finite() && self.unclip_ratio >= 0.0) {
            return Err(Error::Config {
                field: "unclip_ratio",
                message: format!("{} must be a non-negative number", self.unclip_ratio),
            });
        }
        Ok(())
    }
}

/// Finds text lines on screenshots with the PP-OCRv4 detection model.
#[derive(Debug)]
pub struct TextDetector {
    config: TextDetectorConfig,
    input_name: String,
    // `Session::run` takes `&mut`; detections take turns.
    session: Mutex<Session>,
}

impl TextDetector {
    /// Opens the detection model, loading ONNX Runtime first if needed.
    ///
    /// # Errors
    /// [`Error::Config`] for an invalid config; [`Error::Model`] naming the model or the
    /// runtime library when missing (run `cargo xtask models`).
    pub fn new(config: TextDetectorConfig) -> Result<Self> {
        config.validate()?;
        let session = load_session(&config.model)?;
        let input_name = single_input(&session, &config.model)?;
        Ok(Self {
            config,
            input_name,
            session: Mutex::new(session),
        })
    }

    /// The configuration the detector was built with.
    pub fn config(&self) -> &TextDetectorConfig {
        &self.config
    }

    /// The text lines of `screen`, top to bottom then left to right, with `text` unset.
    ///
    /// # Errors
    /// [`Error::Image`] for an empty screenshot; [`Error::Backend`] when the model fails or
    /// gives an unexpected shape.
    pub fn detect(&self, screen: &RgbImage) -> Result<Vec<TextRegion>> {
        let (sw, sh) = screen.dimensions();
        if sw == 0 || sh == 0 {
            return Err(Error::image("screenshot", format!("is empty ({sw}x{sh})")));
        }
        let (mw, mh) = detector_input_size(sw, sh, self.config.limit_side);
        let plane = (mw * mh) as usize;
        let mut data = vec![0.0f32; 3 * plane];
        resize_crop_chw(
            screen,
            Rect::new(0, 0, sw, sh),
            (mw, mh),
            mw as usize,
            plane,
            &PP_OCR_INPUT,
            &mut data,
        );
        let shape = [1, 3, mh as usize, mw as usize];
        let input = TensorRef::from_array_view((shape, data.as_slice())).map_err(backend_error)?;
        let mut session = self.session.lock().unwrap_or_else(|e| e.into_inner());
        let outputs = session
            .run(ort::inputs![self.input_name.as_str() => input])
            .map_err(|e| run_error(&self.config.model, e))?;
        let (out_shape, prob) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| run_error(&self.config.model, e))?;
        if out_shape[..] != [1, 1, i64::from(mh), i64::from(mw)] {
            return Err(Error::Backend {
                backend: "text detector",
                message: format!(
                    "{} gave a map of shape {:?} for an input of {mw}x{mh}; expected [1, 1, {mh}, {mw}]",
                    self.config.model.display(),
                    &out_shape[..]
                ),
            });
        }
        Ok(regions_from_map(
            prob,
            (mw, mh),
            Size::new(sw, sh),
            &self.config,
        ))
    }
}

fn single_input(session: &Session, model: &Path) -> Result<String> {
    match session.inputs() {
        [only] => Ok(only.name().to_owned()),
        inputs => Err(Error::Model {
            path: model.to_path_buf(),
            message: format!("expected one image input, the model has {}", inputs.len()),
        }),
    }
}

fn run_error(model: &Path, e: impl std::fmt::Display) -> Error {
    Error::Backend {
        backend: "onnx runtime",
        message: format!("running {}: {e}", model.display()),
    }
}

/// The detector input for a `w`x`h` screenshot: the longer side at most `limit`, both sides
/// rounded to the nearest multiple of 32 (at least 32).
fn detector_input_size(w: u32, h: u32, limit: u32) -> (u32, u32) {
    let ratio = (limit as f32 / w.max(h) as f32).min(1.0);
    let round = |side: u32| {
        let scaled = (side as f32 * ratio / DET_STRIDE as f32).round() as u32;
        scaled.max(1) * DET_STRIDE
    };
    (round(w), round(h))
}

/// One 4-connected blob of text pixels on the probability map.
#[derive(Debug, Clone, Copy)]
struct Blob {
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
    pixels: u32,
    prob_sum: f32,
}

/// 4-connected components of the pixels above `threshold`, by flood fill with an explicit
/// stack (every pixel is pushed at most once).
fn blobs(prob: &[f32], (w, h): (u32, u32), threshold: f32) -> Vec<Blob> {
    let (wu, hu) = (w as usize, h as usize);
    let mut seen = vec![false; wu * hu];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    for start in 0..wu * hu {
        if seen[start] || prob[start] <= threshold {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        let (sx, sy) = ((start % wu) as u32, (start / wu) as u32);
        let mut blob = Blob {
            x0: sx,
            y0: sy,
            x1: sx,
            y1: sy,
            pixels: 0,
            prob_sum: 0.0,
        };
        while let Some(i) = stack.pop() {
            let (x, y) = (i % wu, i / wu);
            blob.x0 = blob.x0.min(x as u32);
            blob.x1 = blob.x1.max(x as u32);
            blob.y0 = blob.y0.min(y as u32);
            blob.y1 = blob.y1.max(y as u32);
            blob.pixels += 1;
            blob.prob_sum += prob[i];
            let mut visit = |j: usize| {
                if !seen[j] && prob[j] > threshold {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < wu {
                visit(i + 1);
            }
            if y > 0 {
                visit(i - wu);
            }
            if y + 1 < hu {
                visit(i + wu);
            }
        }
        out.push(blob);
    }
    out
}

/// DB post-processing for axis-aligned boxes: components of the binarised map, scored by
/// their mean probability, grown by `area * unclip_ratio / perimeter` (the offset DB uses
/// to undo the shrinking of its training targets), scaled to the screenshot.
fn regions_from_map(
    prob: &[f32],
    (mw, mh): (u32, u32),
    screen: Size,
    config: &TextDetectorConfig,
) -> Vec<TextRegion> {
    let sx = screen.width as f32 / mw as f32;
    let sy = screen.height as f32 / mh as f32;
    let min_size = config.min_size as f32;
    let mut regions: Vec<TextRegion> = blobs(prob, (mw, mh), config.threshold)
        .into_iter()
        .filter_map(|b| {
            let w = (b.x1 - b.x0 + 1) as f32;
            let h = (b.y1 - b.y0 + 1) as f32;
            if w.min(h) < min_size {
                return None;
            }
            let score = b.prob_sum / b.pixels as f32;
            if score < config.box_threshold {
                return None;
            }
            let d = w * h * config.unclip_ratio / (2.0 * (w + h));
            // DB drops grown boxes whose shorter side is under min_size + 2.
            if w.min(h) + 2.0 * d < min_size + 2.0 {
                return None;
            }
            // Rounded to the nearest pixel edge, as PaddleOCR rounds its box corners.
            let x0 = ((b.x0 as f32 - d) * sx).round().max(0.0) as i32;
            let y0 = ((b.y0 as f32 - d) * sy).round().max(0.0) as i32;
            let x1 = (((b.x1 + 1) as f32 + d) * sx)
                .round()
                .min(screen.width as f32) as i32;
            let y1 = (((b.y1 + 1) as f32 + d) * sy)
                .round()
                .min(screen.height as f32) as i32;
            (x1 > x0 && y1 > y0).then(|| TextRegion {
                rect: Rect::new(x0, y0, (x1 - x0) as u32, (y1 - y0) as u32),
                score,
                text: None,
            })
        })
        .collect();
    regions.sort_by_key(|r| (r.rect.y, r.rect.x));
    regions
}

/// Settings of [`TextRecognizer`].
#[derive(Debug, Clone, PartialEq)]
pub struct TextRecognizerConfig {
    /// The PP-OCR recognition model (default `<models_dir>/rapidocr/ch_PP-OCRv4_rec_infer.onnx`).
    pub model: PathBuf,
    /// Boxes read per model run; boxes of similar aspect ratio share a run (rapidocr: 6).
    pub batch_size: usize,
}

impl Default for TextRecognizerConfig {
    fn default() -> Self {
        Self {
            model: models_dir().join("rapidocr").join(REC_MODEL_FILE),
            batch_size: 6,
        }
    }
}

/// Reads text boxes with the PP-OCRv4 recognition model: each box is scaled to 48 pixels
/// high, and the per-column character scores are decoded greedily (CTC: drop repeats, then
/// blanks).
#[derive(Debug)]
pub struct TextRecognizer {
    config: TextRecognizerConfig,
    input_name: String,
    /// Output index → character: 0 is the CTC blank, then the model's `character`
    /// metadata one per line, then a space (as rapidocr builds it).
    charset: Vec<String>,
    session: Mutex<Session>,
}

impl TextRecognizer {
    /// Opens the recognition model and reads its character set from the model metadata.
    ///
    /// # Errors
    /// [`Error::Config`] for a zero batch size; [`Error::Model`] naming the model or the
    /// runtime library when missing, or a model without `character` metadata.
    pub fn new(config: TextRecognizerConfig) -> Result<Self> {
        if config.batch_size == 0 {
            return Err(Error::Config {
                field: "batch_size",
                message: "must be at least 1".into(),
            });
        }
        let session = load_session(&config.model)?;
        let input_name = single_input(&session, &config.model)?;
        let characters = session
            .metadata()
            .ok()
            .and_then(|m| m.custom("character"))
            .ok_or_else(|| Error::Model {
                path: config.model.clone(),
                message: "no `character` entry in the model metadata; is this a PP-OCR recognition model?".into(),
            })?;
        let charset: Vec<String> = std::iter::once(String::new())
            .chain(characters.lines().map(str::to_owned))
            .chain(std::iter::once(" ".to_owned()))
            .collect();
        Ok(Self {
            config,
            input_name,
            charset,
            session: Mutex::new(session),
        })
    }

    /// Number of outputs the model must have per column: blank + characters + space.
    pub fn charset_len(&self) -> usize {
        self.charset.len()
    }

    /// The text in each box, in the order given.
    ///
    /// # Errors
    /// [`Error::Image`] naming a box that is empty once clipped to the screen;
    /// [`Error::Backend`] when the model fails or its output does not fit the character set.
    pub fn recognise(&self, screen: &RgbImage, boxes: &[Rect]) -> Result<Vec<String>> {
        let size = Size::new(screen.width(), screen.height());
        let crops = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| {
                b.clip_to(size).ok_or_else(|| {
                    Error::image(
                        format!("text box {i} {b:?}"),
                        format!(
                            "is empty once clipped to the {}x{} screen",
                            size.width, size.height
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let ratio = |r: &Rect| r.width as f32 / r.height as f32;
        // Similar shapes share a run, so little of each input is padding.
        let mut order: Vec<usize> = (0..crops.len()).collect();
        order.sort_by(|&a, &b| ratio(&crops[a]).total_cmp(&ratio(&crops[b])));
        let mut texts = vec![String::new(); crops.len()];
        for chunk in order.chunks(self.config.batch_size) {
            let max_ratio = chunk
                .iter()
                .map(|&i| ratio(&crops[i]))
                .fold(REC_MIN_RATIO, f32::max);
            let width = (REC_HEIGHT as f32 * max_ratio).ceil() as u32;
            let plane = (width * REC_HEIGHT) as usize;
            // Zero is mid-grey after normalisation: the padding right of narrower crops.
            let mut data = vec![0.0f32; chunk.len() * 3 * plane];
            for (dest, &i) in data.chunks_exact_mut(3 * plane).zip(chunk) {
                let w = ((REC_HEIGHT as f32 * ratio(&crops[i])).ceil() as u32).clamp(1, width);
                resize_crop_chw(
                    screen,
                    crops[i],
                    (w, REC_HEIGHT),
                    width as usize,
                    plane,
                    &PP_OCR_INPUT,
                    dest,
                );
            }
            let shape = [chunk.len(), 3, REC_HEIGHT as usize, width as usize];
            let input =
                TensorRef::from_array_view((shape, data.as_slice())).map_err(backend_error)?;
            let mut session = self.session.lock().unwrap_or_else(|e| e.into_inner());
            let outputs = session
                .run(ort::inputs![self.input_name.as_str() => input])
                .map_err(|e| run_error(&self.config.model, e))?;
            let (out_shape, scores) = outputs[0]
                .try_extract_tensor::<f32>()
                .map_err(|e| run_error(&self.config.model, e))?;
            let classes = self.charset.len();
            let fits = out_shape.len() == 3
                && out_shape[0] == chunk.len() as i64
                && out_shape[2] == classes as i64;
            if !fits {
                return Err(Error::Backend {
                    backend: "text recogniser",
                    message: format!(
                        "{} gave scores of shape {:?}; expected [{}, columns, {classes}] (blank + {} characters + space)",
                        self.config.model.display(),
                        &out_shape[..],
                        chunk.len(),
                        classes - 2
                    ),
                });
            }
            let per_box = scores.len() / chunk.len();
            for (&i, columns) in chunk.iter().zip(scores.chunks_exact(per_box)) {
                texts[i] = self.decode(columns);
            }
        }
        Ok(texts)
    }

    /// Reads every region and stores the result in its `text`.
    ///
    /// # Errors
    /// As [`TextRecognizer::recognise`].
    pub fn annotate(&self, screen: &RgbImage, regions: &mut [TextRegion]) -> Result<()> {
        let rects: Vec<Rect> = regions.iter().map(|r| r.rect).collect();
        for (region, text) in regions.iter_mut().zip(self.recognise(screen, &rects)?) {
            region.text = Some(text);
        }
        Ok(())
    }

    /// Greedy CTC: the best class per column, repeats merged, blanks dropped.
    fn decode(&self, columns: &[f32]) -> String {
        let mut text = String::new();
        let mut previous = 0;
        for column in columns.chunks_exact(self.charset.len()) {
            let best = column
                .iter()
                .enumerate()
                .fold(
                    (0, f32::NEG_INFINITY),
                    |acc, (i, &p)| {
                        if p > acc.1 { (i, p) } else { acc }
                    },
                )
                .0;
            if best != 0 && best != previous {
                text.push_str(&self.charset[best]);
            }
            previous = best;
        }
        text.trim().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detector_input_keeps_small_screens_and_shrinks_large_ones_to_multiples_of_32() {
        assert_eq!(detector_input_size(1280, 800, 960), (960, 608));
        assert_eq!(detector_input_size(1080, 2400, 960), (448, 960));
        assert_eq!(detector_input_size(640, 360, 960), (640, 352));
        assert_eq!(detector_input_size(10, 5, 960), (32, 32));
    }

    #[test]
    fn two_separate_blobs_give_two_grown_boxes_in_reading_order() {
        let (w, h) = (40u32, 20u32);
        let mut prob = vec![0.0f32; (w * h) as usize];
        let mut paint = |x0: u32, y0: u32, x1: u32, y1: u32, p: f32| {
            for y in y0..y1 {
                for x in x0..x1 {
                    prob[(y * w + x) as usize] = p;
                }
            }
        };
        paint(20, 12, 36, 16, 0.9); // 16x4, lower
        paint(4, 2, 14, 6, 0.8); // 10x4, upper
        paint(4, 10, 6, 11, 0.9); // 2x1: below min_size
        paint(25, 2, 35, 6, 0.4); // above threshold, below box_threshold
        let config = TextDetectorConfig::default();
        // Screen twice the map size.
        let regions = regions_from_map(&prob, (w, h), Size::new(80, 40), &config);
        assert_eq!(regions.len(), 2, "{regions:?}");
        // Upper blob: 10x4, d = 40 * 1.6 / 28 = 2.29 map px.
        let upper = regions[0].rect;
        assert_eq!(upper, Rect::new(3, 0, 30, 17), "{upper:?}");
        assert!((regions[0].score - 0.8).abs() < 1e-6);
        // Lower blob: 16x4, d = 64 * 1.6 / 40 = 2.56.
        assert_eq!(regions[1].rect, Rect::new(35, 19, 42, 18));
    }

    #[test]
    fn diagonal_neighbours_are_separate_components() {
        let prob = [1.0, 0.0, 0.0, 1.0];
        assert_eq!(blobs(&prob, (2, 2), 0.3).len(), 2);
        let prob = [1.0, 1.0, 0.0, 1.0];
        let b = blobs(&prob, (2, 2), 0.3);
        assert_eq!((b.len(), b[0].pixels), (1, 3));
    }

    #[test]
    fn invalid_detector_configs_are_refused_by_field() {
        let bad = TextDetectorConfig {
            threshold: 1.5,
            ..TextDetectorConfig::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(Error::Config {
                field: "threshold",
                ..
            })
        ));
        let bad = TextDetectorConfig {
            limit_side: 16,
            ..TextDetectorConfig::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(Error::Config {
                field: "limit_side",
                ..
            })
        ));
    }
}
