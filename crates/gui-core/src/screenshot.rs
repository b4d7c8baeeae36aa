use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use image::{ImageFormat, RgbImage};

use crate::{Error, Result, Size};

/// One frame of the screen as the tester sees it: RGB pixels plus the facts needed to map
/// them back to the device (its scale) and in time.
///
/// Pixels are shared (`Arc`), so cloning a screenshot for a transition or a report is cheap.
#[derive(Debug, Clone)]
pub struct Screenshot {
    pixels: Arc<RgbImage>,
    /// Device pixels per logical (CSS) pixel.
    pub scale: f32,
    /// Milliseconds since the Unix epoch when the frame was taken.
    pub timestamp_ms: u64,
}

impl Screenshot {
    /// Wraps pixels; fails on an empty image, which no real screen produces.
    pub fn new(pixels: RgbImage, scale: f32, timestamp_ms: u64) -> Result<Self> {
        if pixels.width() == 0 || pixels.height() == 0 {
            return Err(Error::EmptyScreenshot {
                what: "from pixels".into(),
                width: pixels.width(),
                height: pixels.height(),
            });
        }
        Ok(Self {
            pixels: Arc::new(pixels),
            scale,
            timestamp_ms,
        })
    }

    /// Decodes PNG bytes; `what` names the source in errors (a file, a device call).
    pub fn from_png(bytes: &[u8], what: &str, scale: f32, timestamp_ms: u64) -> Result<Self> {
        let img = image::load_from_memory_with_format(bytes, ImageFormat::Png)
            .map_err(|source| Error::Decode {
                what: what.to_owned(),
                source,
            })?
            .into_rgb8();
        if img.width() == 0 || img.height() == 0 {
            return Err(Error::EmptyScreenshot {
                what: what.to_owned(),
                width: img.width(),
                height: img.height(),
            });
        }
        Ok(Self {
            pixels: Arc::new(img),
            scale,
            timestamp_ms,
        })
    }

    /// Reads a PNG file.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.into(),
            source,
        })?;
        Self::from_png(&bytes, &path.display().to_string(), 1.0, 0)
    }

    /// Encodes as PNG (fast compression: screenshots are written every step).
    pub fn to_png(&self) -> Result<Vec<u8>> {
        use image::ImageEncoder;
        use image::codecs::png::{CompressionType, FilterType, PngEncoder};
        let mut out = Vec::with_capacity(self.pixels.len() / 4);
        PngEncoder::new_with_quality(
            Cursor::new(&mut out),
            CompressionType::Fast,
            FilterType::Sub,
        )
        .write_image(
            self.pixels.as_raw(),
            self.width(),
            self.height(),
            image::ExtendedColorType::Rgb8,
        )
        .map_err(Error::Encode)?;
        Ok(out)
    }

    pub fn pixels(&self) -> &RgbImage {
        &self.pixels
    }

    pub fn width(&self) -> u32 {
        self.pixels.width()
    }

    pub fn height(&self) -> u32 {
        self.pixels.height()
    }

    /// Size in device pixels.
    pub fn size(&self) -> Size {
        Size::new(self.width(), self.height())
    }

    /// Fraction of pixels that differ by more than `tolerance` in any channel; 1.0 when the
    /// sizes differ. A cheap "did the screen change" measure used by tests and heuristics.
    pub fn diff_fraction(&self, other: &Screenshot, tolerance: u8) -> f64 {
        if self.size() != other.size() {
            return 1.0;
        }
        let differing = self
            .pixels
            .as_raw()
            .chunks_exact(3)
            .zip(other.pixels.as_raw().chunks_exact(3))
            .filter(|(a, b)| {
                a.iter()
                    .zip(b.iter())
                    .any(|(x, y)| x.abs_diff(*y) > tolerance)
            })
            .count();
        differing as f64 / self.size().area() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_round_trip_keeps_pixels() {
        let img = RgbImage::from_fn(7, 5, |x, y| image::Rgb([x as u8 * 30, y as u8 * 40, 9]));
        let shot = Screenshot::new(img.clone(), 2.0, 42).unwrap();
        let back = Screenshot::from_png(&shot.to_png().unwrap(), "round trip", 2.0, 42).unwrap();
        assert_eq!(back.pixels(), &img);
        assert_eq!(shot.diff_fraction(&back, 0), 0.0);
    }

    #[test]
    fn corrupt_and_truncated_png_name_the_input() {
        let err = Screenshot::from_png(b"not a png", "shot.png", 1.0, 0).unwrap_err();
        assert!(err.to_string().contains("shot.png"), "{err}");
        let img = RgbImage::from_pixel(20, 20, image::Rgb([1, 2, 3]));
        let png = Screenshot::new(img, 1.0, 0).unwrap().to_png().unwrap();
        let err = Screenshot::from_png(&png[..png.len() / 2], "half.png", 1.0, 0).unwrap_err();
        assert!(err.to_string().contains("half.png"), "{err}");
    }

    #[test]
    fn empty_screens_are_rejected() {
        assert!(Screenshot::new(RgbImage::new(0, 10), 1.0, 0).is_err());
    }
}
