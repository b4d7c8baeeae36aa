//! Visible extents of labelled boxes.
//!
//! A DOM box is not always what a person sees: a 24x24 button with no border or fill
//! shows only its 12x12 glyph, and a line of text occupies less height than its line box.
//! [`tighten_to_ink`] shrinks such a box to the pixels that differ from its background,
//! and leaves boxes with a visible boundary (a fill or border that differs from what lies
//! just outside) as they are.

use gui_core::Rect;
use image::RgbImage;

/// Largest per-channel difference for two colours to count as the same background.
const SAME_COLOUR: u8 = 24;

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(&b).all(|(x, y)| x.abs_diff(*y) <= SAME_COLOUR)
}

/// The most frequent colour (quantised to 8 levels per channel) of the given pixels and
/// the share of pixels close to it.
fn dominant(pixels: &[[u8; 3]]) -> Option<([u8; 3], f64)> {
    if pixels.is_empty() {
        return None;
    }
    let mut counts: std::collections::HashMap<[u8; 3], (usize, [u8; 3])> = Default::default();
    for p in pixels {
        let key = [p[0] >> 5, p[1] >> 5, p[2] >> 5];
        counts.entry(key).or_insert((0, *p)).0 += 1;
    }
    let (_, (_, colour)) = counts.into_iter().max_by_key(|(k, (n, _))| (*n, *k))?;
    let share = pixels.iter().filter(|p| close(**p, colour)).count() as f64 / pixels.len() as f64;
    Some((colour, share))
}

fn ring(img: &RgbImage, r: Rect, grow: i32) -> Vec<[u8; 3]> {
    let (w, h) = (img.width() as i32, img.height() as i32);
    let (x0, y0, x1, y1) = (
        r.x - grow,
        r.y - grow,
        r.right() - 1 + grow,
        r.bottom() - 1 + grow,
    );
    let mut out = Vec::new();
    let mut take = |x: i32, y: i32| {
        if (0..w).contains(&x) && (0..h).contains(&y) {
            out.push(img.get_pixel(x as u32, y as u32).0);
        }
    };
    for x in x0..=x1 {
        take(x, y0);
        if y1 != y0 {
            take(x, y1);
        }
    }
    for y in y0 + 1..y1 {
        take(x0, y);
        if x1 != x0 {
            take(x1, y);
        }
    }
    out
}

/// The visible extent of `rect` on `img`.
///
/// When the box's own border ring and the ring just outside it share one background
/// colour, the box has no visible boundary: it is shrunk to the bounding box of the
/// pixels inside that differ from that colour (`None` when nothing inside differs: the box
/// shows nothing). Otherwise the box is returned clipped to the image.
pub fn tighten_to_ink(img: &RgbImage, rect: Rect) -> Option<Rect> {
    let r = rect.clip_to(gui_core::Size::new(img.width(), img.height()))?;
    let inner = ring(img, r, 0);
    let outer = ring(img, r, 1);
    let (bg, inner_share) = dominant(&inner)?;
    let boundary_free = inner_share >= 0.9
        && dominant(&outer).is_none_or(|(c, share)| share >= 0.7 && close(c, bg));
    if !boundary_free {
        return Some(r);
    }
    let (mut x0, mut y0, mut x1, mut y1) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
    for y in r.y..r.bottom() {
        for x in r.x..r.right() {
            if !close(img.get_pixel(x as u32, y as u32).0, bg) {
                x0 = x0.min(x);
                y0 = y0.min(y);
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
        }
    }
    (x0 <= x1).then(|| Rect::new(x0, y0, (x1 - x0 + 1) as u32, (y1 - y0 + 1) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgb;

    fn fill(img: &mut RgbImage, r: Rect, c: [u8; 3]) {
        for y in r.y..r.bottom() {
            for x in r.x..r.right() {
                img.put_pixel(x as u32, y as u32, Rgb(c));
            }
        }
    }

    #[test]
    fn text_box_shrinks_to_its_glyphs() {
        let mut img = RgbImage::from_pixel(100, 60, Rgb([250, 250, 250]));
        fill(&mut img, Rect::new(22, 14, 30, 9), [20, 20, 20]);
        assert_eq!(
            tighten_to_ink(&img, Rect::new(20, 10, 40, 18)),
            Some(Rect::new(22, 14, 30, 9))
        );
        // Nothing drawn: nothing visible.
        assert_eq!(tighten_to_ink(&img, Rect::new(60, 30, 20, 20)), None);
    }

    #[test]
    fn filled_and_bordered_boxes_stay() {
        let mut img = RgbImage::from_pixel(100, 60, Rgb([250, 250, 250]));
        let button = Rect::new(10, 10, 50, 20);
        fill(&mut img, button, [30, 90, 210]);
        fill(&mut img, Rect::new(20, 16, 20, 6), [255, 255, 255]);
        assert_eq!(tighten_to_ink(&img, button), Some(button));
        // A box hanging off the image is clipped before it is measured.
        let t = tighten_to_ink(&img, Rect::new(-5, -5, 40, 40)).unwrap();
        assert!(t.x >= 0 && t.y >= 0 && t.right() <= 100 && t.bottom() <= 60);
    }
}
