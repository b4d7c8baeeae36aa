//! Synthetic partially rendered screens made from fully rendered ones, so the rendering
//! classifier sees the paper's three kinds of unfinished screen (AdaT Section II-B:
//! transiting, explicit loading, implicit loading) on every training app's own look, not
//! only where an app happens to have a loader.
//!
//! A recorded data set of a few apps has few loaders: most of its partial frames are
//! transitions, and a network trained on them learns the training apps' screens rather
//! than what makes a screen unfinished. Each [`Degradation`] draws one such cue on a full
//! frame with seeded sizes, places and colours:
//!
//! - [`Degradation::Skeleton`]: a region cleared to its background with grey bars and a
//!   grey block where text and a picture will go (implicit loading);
//! - [`Degradation::Spinner`]: a ring with a gap, in an accent colour, often on a region
//!   cleared of its content (explicit loading);
//! - [`Degradation::ProgressBar`]: a thin bar part-way across, at the top or inside the page
//!   (explicit loading);
//! - [`Degradation::CrossFade`]: the frame blended with another screen of the same app
//!   (transiting: two GUIs overlapped);
//! - [`Degradation::Slide`]: the frame moved sideways or down with another screen of the
//!   app coming in beside it (transiting).
//!
//! [`dialog_over_dimmed`] and [`larger_window`] go the other way: finished screens that
//! share a look with unfinished ones (a dialog over a dimmed page looks faded, a page in a
//! large window is mostly empty), so the network does not learn "dim means transiting"
//! or "empty means loading".

use image::{Rgb, RgbImage};
use rand::Rng;
use rand::seq::IndexedRandom;
use serde::{Deserialize, Serialize};

/// One kind of synthetic unfinished screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Degradation {
    Skeleton,
    Spinner,
    ProgressBar,
    CrossFade,
    Slide,
}

impl Degradation {
    /// All kinds, in the order [`degrade`] draws from.
    pub const ALL: [Degradation; 5] = [
        Degradation::Skeleton,
        Degradation::Spinner,
        Degradation::ProgressBar,
        Degradation::CrossFade,
        Degradation::Slide,
    ];
}

/// Draws one degradation on a copy of `full`. `other` is another screen of the same app
/// for the two transitions; without it (or when its size differs) a transition falls back
/// to a skeleton.
pub fn degrade(
    full: &RgbImage,
    other: Option<&RgbImage>,
    kind: Degradation,
    rng: &mut impl Rng,
) -> RgbImage {
    let mut img = full.clone();
    let other = other.filter(|o| o.dimensions() == full.dimensions());
    match (kind, other) {
        (Degradation::Skeleton, _) | (Degradation::CrossFade | Degradation::Slide, None) => {
            skeleton(&mut img, rng)
        }
        (Degradation::Spinner, _) => spinner(&mut img, rng),
        (Degradation::ProgressBar, _) => progress_bar(&mut img, rng),
        (Degradation::CrossFade, Some(o)) => cross_fade(&mut img, o, rng),
        (Degradation::Slide, Some(o)) => slide(&mut img, o, rng),
    }
    img
}

/// The most common of a few pixels sampled along the region's border: its background.
fn background(img: &RgbImage, x0: u32, y0: u32, x1: u32, y1: u32) -> Rgb<u8> {
    let mut seen: Vec<(Rgb<u8>, u32)> = Vec::new();
    let steps = 16;
    for i in 0..=steps {
        let x = x0 + (x1 - 1 - x0) * i / steps;
        let y = y0 + (y1 - 1 - y0) * i / steps;
        for p in [
            *img.get_pixel(x, y0),
            *img.get_pixel(x, y1 - 1),
            *img.get_pixel(x0, y),
            *img.get_pixel(x1 - 1, y),
        ] {
            match seen.iter_mut().find(|(c, _)| *c == p) {
                Some((_, n)) => *n += 1,
                None => seen.push((p, 1)),
            }
        }
    }
    seen.into_iter()
        .max_by_key(|(_, n)| *n)
        .map_or(Rgb([255, 255, 255]), |(c, _)| c)
}

fn fill(img: &mut RgbImage, x0: u32, y0: u32, x1: u32, y1: u32, c: Rgb<u8>) {
    let (w, h) = img.dimensions();
    for y in y0.min(h)..y1.min(h) {
        for x in x0.min(w)..x1.min(w) {
            img.put_pixel(x, y, c);
        }
    }
}

/// A random region covering `min..max` of each side, as (x0, y0, x1, y1).
fn region(img: &RgbImage, min: f32, max: f32, rng: &mut impl Rng) -> (u32, u32, u32, u32) {
    let (w, h) = img.dimensions();
    let rw = ((w as f32 * rng.random_range(min..max)) as u32).clamp(1, w);
    let rh = ((h as f32 * rng.random_range(min..max)) as u32).clamp(1, h);
    let x0 = rng.random_range(0..=w - rw);
    let y0 = rng.random_range(0..=h - rh);
    (x0, y0, x0 + rw, y0 + rh)
}

/// A colour apps use for accents: saturated, not near white or grey.
fn accent(rng: &mut impl Rng) -> Rgb<u8> {
    const ACCENTS: [[u8; 3]; 8] = [
        [33, 150, 243],
        [76, 175, 80],
        [244, 67, 54],
        [255, 152, 0],
        [156, 39, 176],
        [0, 150, 136],
        [63, 81, 181],
        [96, 96, 96],
    ];
    Rgb(*ACCENTS.choose(rng).expect("not empty"))
}

fn skeleton(img: &mut RgbImage, rng: &mut impl Rng) {
    let cards = rng.random_range(1..=3);
    let shade = rng.random_range(200..=232u8);
    let grey = Rgb([shade, shade, shade.saturating_add(rng.random_range(0..6))]);
    for _ in 0..cards {
        let (x0, y0, x1, y1) = region(img, 0.25, 0.8, rng);
        let bg = background(img, x0, y0, x1, y1);
        fill(img, x0, y0, x1, y1, bg);
        let (rw, rh) = (x1 - x0, y1 - y0);
        let pad = (rw.min(rh) / 12).max(2);
        let mut left = x0 + pad;
        // A picture placeholder on the left half of the time.
        if rng.random_bool(0.5) && rw > 6 * pad {
            let side = (rh / 3).clamp(4, rw / 3);
            fill(img, left, y0 + pad, left + side, y0 + pad + side, grey);
            left += side + pad;
        }
        let bar = (rh / 10).clamp(3, 14);
        let mut y = y0 + pad;
        while y + bar < y1.saturating_sub(pad) {
            let span = x1.saturating_sub(pad).saturating_sub(left);
            let len = (span as f32 * rng.random_range(0.4..1.0)) as u32;
            fill(img, left, y, left + len, y + bar, grey);
            y += bar * rng.random_range(2..=3);
        }
    }
}

fn spinner(img: &mut RgbImage, rng: &mut impl Rng) {
    let (w, h) = img.dimensions();
    let r = rng.random_range(6.0..(w.min(h) as f32 / 8.0).max(7.0));
    let thick = rng.random_range(1.5..(r / 3.0).max(2.0));
    let cx = rng.random_range(r + thick..w as f32 - r - thick);
    let cy = rng.random_range(r + thick..h as f32 - r - thick);
    if rng.random_bool(0.3) {
        // The content the spinner stands for is not there yet. Not always: a blank area
        // alone must not mean "loading", finished pages have plenty.
        let grow = rng.random_range(2.0..8.0);
        let (x0, y0) = (
            (cx - r * grow).max(0.0) as u32,
            (cy - r * grow).max(0.0) as u32,
        );
        let (x1, y1) = (
            ((cx + r * grow) as u32).min(w),
            ((cy + r * grow) as u32).min(h),
        );
        if x1 > x0 + 1 && y1 > y0 + 1 {
            let bg = background(img, x0, y0, x1, y1);
            fill(img, x0, y0, x1, y1, bg);
        }
    }
    let color = accent(rng);
    let gap_start = rng.random_range(0.0..std::f32::consts::TAU);
    let gap = rng.random_range(0.6..2.5f32);
    let (x0, x1) = ((cx - r - thick) as u32, (cx + r + thick) as u32 + 1);
    let (y0, y1) = ((cy - r - thick) as u32, (cy + r + thick) as u32 + 1);
    for y in y0..y1.min(h) {
        for x in x0..x1.min(w) {
            let (dx, dy) = (x as f32 - cx, y as f32 - cy);
            let d = (dx * dx + dy * dy).sqrt();
            if (d - r).abs() > thick / 2.0 {
                continue;
            }
            let angle = (dy.atan2(dx) - gap_start).rem_euclid(std::f32::consts::TAU);
            if angle > gap {
                img.put_pixel(x, y, color);
            }
        }
    }
}

fn progress_bar(img: &mut RgbImage, rng: &mut impl Rng) {
    let (w, h) = img.dimensions();
    let thick = rng.random_range(2..=(h / 40).max(3));
    let (x0, x1, y) = if rng.random_bool(0.5) {
        (0, w, 0)
    } else {
        let (x0, y0, x1, _) = region(img, 0.2, 0.7, rng);
        (x0, x1, y0)
    };
    let track = background(img, x0, y, x1, (y + thick).min(h));
    let track = Rgb(track.0.map(|c| c.saturating_sub(24)));
    fill(img, x0, y, x1, y + thick, track);
    let done = x0 + ((x1 - x0) as f32 * rng.random_range(0.05..0.9)) as u32;
    fill(img, x0, y, done, y + thick, accent(rng));
}

fn cross_fade(img: &mut RgbImage, other: &RgbImage, rng: &mut impl Rng) {
    let a = rng.random_range(0.2..0.8f32);
    for (p, q) in img.pixels_mut().zip(other.pixels()) {
        for c in 0..3 {
            p.0[c] = (f32::from(p.0[c]) * (1.0 - a) + f32::from(q.0[c]) * a).round() as u8;
        }
    }
}

fn slide(img: &mut RgbImage, other: &RgbImage, rng: &mut impl Rng) {
    let (w, h) = img.dimensions();
    let src = img.clone();
    let horizontal = rng.random_bool(0.6);
    let frac = rng.random_range(0.1..0.7f32);
    let shift = if horizontal {
        (w as f32 * frac) as u32
    } else {
        (h as f32 * frac) as u32
    };

    for y in 0..h {
        for x in 0..w {
            let (sx, sy) = if horizontal {
                (x.checked_sub(shift), Some(y))
            } else {
                (Some(x), y.checked_sub(shift))
            };
            // The next screen comes in beside the old one: its far side fills the gap (a
            // plain background there would teach that blank areas mean unfinished).
            let p = match (sx, sy) {
                (Some(sx), Some(sy)) => *src.get_pixel(sx, sy),
                _ => {
                    let (ox, oy) = if horizontal {
                        (x + w - shift, y)
                    } else {
                        (x, y + h - shift)
                    };
                    *other.get_pixel(ox.min(w - 1), oy.min(h - 1))
                }
            };
            img.put_pixel(x, y, p);
        }
    }
}

/// A finished screen that shares a fade's dimmed look: the page darkened as behind a
/// modal dialog, with a crisp dialog on top (a white panel holding a part of `other`, or
/// of the page itself). Such screens are labelled full; without them, a network that has
/// learnt "faded means transiting" calls every open dialog unfinished.
pub fn dialog_over_dimmed(
    full: &RgbImage,
    other: Option<&RgbImage>,
    rng: &mut impl Rng,
) -> RgbImage {
    let mut img = full.clone();
    let (w, h) = img.dimensions();
    let dim = rng.random_range(0.45..0.8f32);
    let tint = rng.random_range(0.0..60.0f32);
    for p in img.pixels_mut() {
        for c in 0..3 {
            p.0[c] = (f32::from(p.0[c]) * dim + tint * (1.0 - dim)).round() as u8;
        }
    }
    let source = other
        .filter(|o| o.dimensions() == full.dimensions())
        .unwrap_or(full);
    let (x0, y0, x1, y1) = region(&img, 0.3, 0.7, rng);
    let (pw, ph) = (x1 - x0, y1 - y0);
    // The panel shows a part of the source screen at its own size, on white.
    let (sx, sy) = (rng.random_range(0..=w - pw), rng.random_range(0..=h - ph));
    for y in 0..ph {
        for x in 0..pw {
            let p = if x < 2 || y < 2 || x + 2 >= pw || y + 2 >= ph {
                Rgb([255, 255, 255])
            } else {
                *source.get_pixel(sx + x, sy + y)
            };
            img.put_pixel(x0 + x, y0 + y, p);
        }
    }
    // A title bar in an accent colour half of the time.
    if rng.random_bool(0.5) {
        let bar = (ph / 10).clamp(3, 24);
        fill(&mut img, x0, y0, x1, y0 + bar, accent(rng));
    }
    img
}

/// A finished screen with more empty background than the recorded ones: the frame as it
/// would look in a larger window, its content smaller against the screen (55-90 %) at the
/// top, centred or at the left, the rest the page's background. Labelled full: a mostly
/// empty screen is not a loading one.
pub fn larger_window(full: &RgbImage, rng: &mut impl Rng) -> RgbImage {
    let (w, h) = full.dimensions();
    let bg = background(full, 0, h - h / 8, w, h);
    let scale = rng.random_range(0.55..0.9f32);
    let (sw, sh) = (
        ((w as f32 * scale) as u32).max(1),
        ((h as f32 * scale) as u32).max(1),
    );
    let small = image::imageops::resize(full, sw, sh, image::imageops::FilterType::Triangle);
    let mut img = RgbImage::from_pixel(w, h, bg);
    let x0 = if rng.random_bool(0.5) {
        (w - sw) / 2
    } else {
        0
    };
    image::imageops::replace(&mut img, &small, i64::from(x0), 0);
    img
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// A header bar, text-like lines of uneven length, and a light background.
    fn page(seed: u8) -> RgbImage {
        RgbImage::from_fn(160, 100, |x, y| {
            let line_end = 40 + (y * 37 + u32::from(seed)) % 90;
            if y < 12 {
                Rgb([20, 60, 200u8.wrapping_add(seed)])
            } else if (y / 6) % 2 == 0 && x > 10 && x < line_end {
                Rgb([30, 30, 30])
            } else {
                Rgb([250, 250, 250])
            }
        })
    }

    #[test]
    fn every_degradation_changes_the_screen_and_keeps_its_size() {
        let (a, b) = (page(0), page(40));
        for (i, kind) in Degradation::ALL.into_iter().enumerate() {
            for seed in 0..20 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed * 10 + i as u64);
                let out = degrade(&a, Some(&b), kind, &mut rng);
                assert_eq!(out.dimensions(), a.dimensions());
                let changed = out.pixels().zip(a.pixels()).filter(|(p, q)| p != q).count();
                assert!(
                    changed >= 20,
                    "{kind:?} seed {seed}: {changed} pixels changed"
                );
            }
        }
    }

    #[test]
    fn a_dialog_dims_the_page_around_a_crisp_panel() {
        let (a, b) = (page(0), page(40));
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let out = dialog_over_dimmed(&a, Some(&b), &mut rng);
        assert_eq!(out.dimensions(), a.dimensions());
        // The corners are outside any panel of at most 70% of a side, and darker.
        let corner = out.get_pixel(159, 99).0;
        assert!(corner.iter().all(|&c| c < 250), "{corner:?}");
        // Some pixels keep full white (the panel's frame).
        assert!(out.pixels().any(|p| p.0 == [255, 255, 255]));
    }

    #[test]
    fn a_larger_window_keeps_the_content_at_the_top_on_the_page_background() {
        let a = page(0);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let out = larger_window(&a, &mut rng);
        assert_eq!(out.dimensions(), a.dimensions());
        // The bottom row is background; the top still shows the header's blue.
        assert!(out.pixels().skip(160 * 99).all(|p| p.0 == [250, 250, 250]));
        assert!(
            out.pixels()
                .take(160 * 4)
                .any(|p| p.0[2] > 150 && p.0[0] < 100)
        );
    }

    #[test]
    fn same_seed_same_picture_and_transitions_need_a_same_size_screen() {
        let (a, b) = (page(0), page(40));
        let draw = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            degrade(&a, Some(&b), Degradation::Slide, &mut rng)
        };
        assert!(draw(1) == draw(1), "the same seed drew two pictures");
        // Seed 1 slides sideways, seed 2 down.
        assert!(draw(1) != draw(2), "two seeds drew the same picture");
        // A screen of another size cannot be blended in: a skeleton is drawn instead.
        let small = RgbImage::from_pixel(10, 10, Rgb([0, 0, 0]));
        let mut r1 = ChaCha8Rng::seed_from_u64(9);
        let mut r2 = ChaCha8Rng::seed_from_u64(9);
        assert!(
            degrade(&a, Some(&small), Degradation::CrossFade, &mut r1)
                == degrade(&a, None, Degradation::Skeleton, &mut r2),
            "a cross-fade with a screen of another size is not the skeleton"
        );
    }
}
