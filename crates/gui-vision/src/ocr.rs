//! Text regions with the PP-OCRv4 models of the `rapidocr-onnxruntime` wheel.
//!
//! Detection is a DB network (differentiable binarisation): it paints a per-pixel
//! probability of "inside a text line" whose blobs are shrunk text lines. We binarise the
//! map, take connected components, and grow each component's box back by DB's unclip
//! distance. Unlike PaddleOCR we keep boxes axis-aligned: screen text is horizontal, and
//! widgets are axis-aligned boxes everywhere else in this crate (Section 3.1.1).
//!
//! Recognition reads a box with the PP-OCRv4 recogniser (CTC head) and greedy decoding.
//! Boxes are read as they are: rapidocr's direction classifier (for upside-down text) and
//! its turning of tall boxes by 90 degrees are left out, as screen text is upright.
//!
//! The geometry matches rapidocr-onnxruntime 1.4.4 to a pixel or two on the same input
//! (`tests/ocr.rs`, `tests/data/ocr/rapidocr_compare.py`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use gui_core::{Rect, Size};
use image::RgbImage;
use ort::session::Session;
use ort::value::TensorRef;

use crate::classify::clip_boxes;
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
    /// 960 (PaddleOCR's own `det_limit_side_len`) turns 1280x800 into 960x608 and 1080x2400
    /// into 448x960: text of 12 px and up stays detectable, and the model's cost, which grows
    /// with the input area, stays at a fraction of rapidocr's default (shorter side scaled
    /// *up* to 736, so 1088x2400 for a phone screen; see `benches/ocr.rs`).
    pub limit_side: u32,
    /// A map pixel is text when its probability exceeds this.
    pub threshold: f32,
    /// A region is kept when the mean probability inside its box (before growing) reaches
    /// this.
    pub box_threshold: f32,
    /// How far a region grows back: by `area * unclip_ratio / perimeter` on every side.
    pub unclip_ratio: f32,
    /// Regions whose shorter side is below this many map pixels are dropped.
    pub min_size: u32,
    /// Dilate the binarised map by a 2x2 square before taking components (rapidocr does).
    pub dilate: bool,
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
            dilate: true,
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

/// The bounding box of one 4-connected blob of text pixels on the probability map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Blob {
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
}

/// The binarised map: pixels above `threshold`, dilated by a 2x2 square when `dilate` (the
/// `use_dilation` of rapidocr, which joins letters a pixel apart on downscaled screens).
fn text_mask(prob: &[f32], (w, h): (u32, u32), threshold: f32, dilate: bool) -> Vec<bool> {
    let w = w as usize;
    let mut mask: Vec<bool> = prob.iter().map(|&p| p > threshold).collect();
    if dilate {
        // A pixel is set when it or its left, upper or upper-left neighbour was: walk
        // backwards so every read sees the undilated value.
        for i in (0..mask.len()).rev() {
            let (x, y) = (i % w, i / w);
            let left = x > 0 && mask[i - 1];
            let up = y > 0 && mask[i - w];
            let up_left = x > 0 && y > 0 && mask[i - w - 1];
            mask[i] |= left || up || up_left;
        }
        debug_assert_eq!(mask.len(), w * h as usize);
    }
    mask
}

/// 4-connected components of the mask, by flood fill with an explicit stack (every pixel
/// is pushed at most once).
fn blobs(mask: &[bool], (w, h): (u32, u32)) -> Vec<Blob> {
    let (wu, hu) = (w as usize, h as usize);
    let mut seen = vec![false; wu * hu];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    for start in 0..wu * hu {
        if seen[start] || !mask[start] {
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
        };
        while let Some(i) = stack.pop() {
            let (x, y) = (i % wu, i / wu);
            blob.x0 = blob.x0.min(x as u32);
            blob.x1 = blob.x1.max(x as u32);
            blob.y0 = blob.y0.min(y as u32);
            blob.y1 = blob.y1.max(y as u32);
            let mut visit = |j: usize| {
                if !seen[j] && mask[j] {
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

/// Mean probability inside a blob's bounding box: DB's "fast" box score, which counts the
/// gaps between letters too.
fn box_score(prob: &[f32], w: u32, b: &Blob) -> f32 {
    let w = w as usize;
    let (x0, x1) = (b.x0 as usize, b.x1 as usize);
    let sum: f32 = (b.y0 as usize..=b.y1 as usize)
        .map(|y| prob[y * w + x0..=y * w + x1].iter().sum::<f32>())
        .sum();
    sum / ((x1 - x0 + 1) * (b.y1 - b.y0 + 1) as usize) as f32
}

/// DB post-processing for axis-aligned boxes: components of the binarised map, scored by
/// the mean probability in their box, grown by `area * unclip_ratio / perimeter` on every
/// side (the offset DB uses to undo the shrinking of its training targets), scaled to the
/// screenshot.
///
/// Geometry follows PaddleOCR's contours, which run through pixel centres: a component
/// over pixels `x0..=x1` is `x1 - x0` wide, and its grown box spans `x0 - d ..= x1 + d`.
fn regions_from_map(
    prob: &[f32],
    (mw, mh): (u32, u32),
    screen: Size,
    config: &TextDetectorConfig,
) -> Vec<TextRegion> {
    let sx = screen.width as f32 / mw as f32;
    let sy = screen.height as f32 / mh as f32;
    let min_size = config.min_size as f32;
    let mask = text_mask(prob, (mw, mh), config.threshold, config.dilate);
    let mut regions: Vec<TextRegion> = blobs(&mask, (mw, mh))
        .into_iter()
        .filter_map(|b| {
            let w = (b.x1 - b.x0) as f32;
            let h = (b.y1 - b.y0) as f32;
            if w.min(h) < min_size {
                return None;
            }
            let score = box_score(prob, mw, &b);
            if score < config.box_threshold {
                return None;
            }
            let d = w * h * config.unclip_ratio / (2.0 * (w + h));
            // DB drops grown boxes whose shorter side is under min_size + 2.
            if w.min(h) + 2.0 * d < min_size + 2.0 {
                return None;
            }
            // Corners rounded to whole pixels, as PaddleOCR rounds them.
            let x0 = ((b.x0 as f32 - d) * sx).round().max(0.0) as i32;
            let y0 = ((b.y0 as f32 - d) * sy).round().max(0.0) as i32;
            let x1 = ((b.x1 as f32 + d) * sx).round().min(screen.width as f32) as i32;
            let y1 = ((b.y1 as f32 + d) * sy).round().min(screen.height as f32) as i32;
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
        let crops = clip_boxes(screen, boxes, "text box")?;
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
        let config = TextDetectorConfig {
            dilate: false,
            ..TextDetectorConfig::default()
        };
        // Screen twice the map size.
        let regions = regions_from_map(&prob, (w, h), Size::new(80, 40), &config);
        assert_eq!(regions.len(), 2, "{regions:?}");
        // Upper blob over pixels 4..=13 x 2..=5: 9x3 between pixel centres, so
        // d = 27 * 1.6 / 24 = 1.8 map px; corners (2.2, 0.2) and (14.8, 6.8), times 2.
        let upper = regions[0].rect;
        assert_eq!(upper, Rect::new(4, 0, 26, 14), "{upper:?}");
        assert!((regions[0].score - 0.8).abs() < 1e-6);
        // Lower blob over 20..=35 x 12..=15: 15x3, d = 45 * 1.6 / 36 = 2.
        assert_eq!(regions[1].rect, Rect::new(36, 20, 38, 14));
    }

    #[test]
    fn diagonal_neighbours_are_separate_components_until_dilated() {
        let prob = [1.0, 0.0, 0.0, 1.0];
        assert_eq!(
            blobs(&text_mask(&prob, (2, 2), 0.3, false), (2, 2)).len(),
            2
        );
        assert_eq!(blobs(&text_mask(&prob, (2, 2), 0.3, true), (2, 2)).len(), 1);
        let prob = [1.0, 1.0, 0.0, 1.0];
        let b = blobs(&text_mask(&prob, (2, 2), 0.3, false), (2, 2));
        assert_eq!(
            b,
            [Blob {
                x0: 0,
                y0: 0,
                x1: 1,
                y1: 1
            }]
        );
    }

    #[test]
    fn dilation_grows_right_and_down_by_one_pixel() {
        let mut prob = [0.0f32; 16];
        prob[5] = 0.9; // (1, 1) of a 4x4 map
        let mask = text_mask(&prob, (4, 4), 0.3, true);
        let set: Vec<usize> = (0..16).filter(|&i| mask[i]).collect();
        assert_eq!(set, [5, 6, 9, 10]);
        let b = blobs(&mask, (4, 4));
        assert_eq!(
            b,
            [Blob {
                x0: 1,
                y0: 1,
                x1: 2,
                y1: 2
            }]
        );
        assert!((box_score(&prob, 4, &b[0]) - 0.225).abs() < 1e-6);
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
