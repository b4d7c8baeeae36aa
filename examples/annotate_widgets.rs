//! Finds the widgets of a screenshot and writes a copy with their boxes drawn in.
//!
//! ```text
//! cargo run --release --example annotate_widgets -- screen.png annotated.png [--mobile] [--scale 2]
//! ```
//!
//! Box colours: blue for controls and images (edge components), orange for text. Each box
//! is labelled in the printed list with its kind from the widget CNN.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use gui_testing::core::{Rect, Screenshot};
use gui_testing::vision::{ExtractConfig, Vision, VisionConfig};
use image::{Rgb, RgbImage};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut input, mut output, mut mobile, mut scale) = (None, None, false, 1.0f32);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--mobile" => mobile = true,
            "--scale" => scale = it.next().context("--scale needs a value")?.parse()?,
            _ if input.is_none() => input = Some(PathBuf::from(a)),
            _ if output.is_none() => output = Some(PathBuf::from(a)),
            other => bail!("unexpected argument {other}"),
        }
    }
    let (Some(input), Some(output)) = (input, output) else {
        bail!("usage: annotate_widgets <screen.png> <annotated.png> [--mobile] [--scale S]");
    };
    let mut shot = Screenshot::load(&input)?;
    shot.scale = scale;
    let config = VisionConfig {
        extract: if mobile {
            ExtractConfig::mobile()
        } else {
            ExtractConfig::web()
        },
        ..VisionConfig::default()
    };
    let vision = Vision::shipped(config)?;
    let seen = vision.analyse(&shot)?;
    let mut img = shot.pixels().clone();
    for (w, b) in seen.widgets.iter().zip(&seen.boxes) {
        let colour = if b.is_text() {
            Rgb([240, 120, 0])
        } else {
            Rgb([20, 90, 230])
        };
        outline(&mut img, w.rect, colour);
        println!(
            "{:>5} {:>5} {:>5}x{:<5} {:?} ({:.2})",
            w.rect.x, w.rect.y, w.rect.width, w.rect.height, w.kind, w.confidence
        );
    }
    img.save(&output)
        .with_context(|| format!("cannot write {}", output.display()))?;
    println!("{} widgets; wrote {}", seen.widgets.len(), output.display());
    Ok(())
}

/// A two-pixel box outline, clipped to the image.
fn outline(img: &mut RgbImage, r: Rect, c: Rgb<u8>) {
    let (w, h) = (img.width() as i32, img.height() as i32);
    let mut put = |x: i32, y: i32| {
        if (0..w).contains(&x) && (0..h).contains(&y) {
            img.put_pixel(x as u32, y as u32, c);
        }
    };
    for t in 0..2 {
        for x in r.x..r.right() {
            put(x, r.y + t);
            put(x, r.bottom() - 1 - t);
        }
        for y in r.y..r.bottom() {
            put(r.x + t, y);
            put(r.right() - 1 - t, y);
        }
    }
}
