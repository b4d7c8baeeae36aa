//! Connected components of a binary edge map, by runs.
//!
//! Each row is cut into runs of edge pixels; runs of neighbouring rows that touch
//! (8-connectivity, widened by `gap`) are joined with a union-find. Working on runs rather
//! than pixels keeps the cost proportional to the number of runs, which on a GUI edge map is
//! a few per cent of the pixels.

use gui_core::Rect;
use image::GrayImage;

/// One connected set of edge pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component {
    /// Bounding box.
    pub rect: Rect,
    /// Number of edge pixels.
    pub pixels: u32,
}

#[derive(Clone, Copy)]
struct Run {
    y: u32,
    x0: u32,
    /// Exclusive.
    x1: u32,
}

/// Connected components of the non-zero pixels of `edges`.
///
/// Pixels separated by at most `gap` background pixels (horizontally, vertically or
/// diagonally) count as connected; `gap = 0` is plain 8-connectivity. Components come out
/// ordered by their first pixel in raster order.
pub fn connected_components(edges: &GrayImage, gap: u32) -> Vec<Component> {
    let (w, h) = edges.dimensions();
    if w == 0 || h == 0 {
        return Vec::new();
    }
    let raw = edges.as_raw();
    let mut runs: Vec<Run> = Vec::new();
    // Index of the first run of each row, plus one sentinel.
    let mut row_start: Vec<usize> = Vec::with_capacity(h as usize + 1);
    for y in 0..h {
        row_start.push(runs.len());
        let row = &raw[(y * w) as usize..((y + 1) * w) as usize];
        let mut x = 0usize;
        let n = row.len();
        while x < n {
            // Skip background quickly.
            while x < n && row[x] == 0 {
                x += 1;
            }
            if x == n {
                break;
            }
            let start = x;
            while x < n && row[x] != 0 {
                x += 1;
            }
            // Join with the previous run of this row if the hole is at most `gap` wide.
            let first_of_row = runs.len() == row_start[y as usize];
            match runs.last_mut() {
                Some(last) if !first_of_row && start as u32 - last.x1 <= gap => {
                    last.x1 = x as u32;
                }
                _ => runs.push(Run {
                    y,
                    x0: start as u32,
                    x1: x as u32,
                }),
            }
        }
    }
    row_start.push(runs.len());

    let mut parent: Vec<u32> = (0..runs.len() as u32).collect();
    let reach = gap + 1;
    for y in 1..h as usize {
        let (cur_lo, cur_hi) = (row_start[y], row_start[y + 1]);
        if cur_lo == cur_hi {
            continue;
        }
        for back in 1..=reach as usize {
            if back > y {
                break;
            }
            let (prev_lo, prev_hi) = (row_start[y - back], row_start[y - back + 1]);
            let (mut i, mut j) = (prev_lo, cur_lo);
            while i < prev_hi && j < cur_hi {
                let (p, c) = (runs[i], runs[j]);
                // Touching when the widened intervals overlap.
                if p.x0 <= c.x1 + gap && c.x0 <= p.x1 + gap {
                    union(&mut parent, i as u32, j as u32);
                }
                if p.x1 < c.x1 {
                    i += 1;
                } else {
                    j += 1;
                }
            }
        }
    }

    // Gather bounding boxes per root, in order of first appearance.
    let mut slot: Vec<u32> = vec![u32::MAX; runs.len()];
    let mut out: Vec<(u32, u32, u32, u32, u32)> = Vec::new(); // x0, y0, x1, y1, pixels
    for (i, r) in runs.iter().enumerate() {
        let root = find(&mut parent, i as u32) as usize;
        if slot[root] == u32::MAX {
            slot[root] = out.len() as u32;
            out.push((r.x0, r.y, r.x1, r.y + 1, 0));
        }
        let b = &mut out[slot[root] as usize];
        b.0 = b.0.min(r.x0);
        b.2 = b.2.max(r.x1);
        b.3 = b.3.max(r.y + 1);
        b.4 += r.x1 - r.x0;
    }
    out.into_iter()
        .map(|(x0, y0, x1, y1, pixels)| Component {
            rect: Rect::new(x0 as i32, y0 as i32, x1 - x0, y1 - y0),
            pixels,
        })
        .collect()
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let grand = parent[parent[i as usize] as usize];
        parent[i as usize] = grand;
        i = grand;
    }
    i
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        // The smaller index stays root so output order follows raster order.
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi as usize] = lo;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(rows: &[&str]) -> GrayImage {
        let h = rows.len() as u32;
        let w = rows[0].len() as u32;
        GrayImage::from_fn(w, h, |x, y| {
            image::Luma([if rows[y as usize].as_bytes()[x as usize] == b'#' {
                255
            } else {
                0
            }])
        })
    }

    #[test]
    fn outline_is_one_component_and_diagonals_connect() {
        let m = map(&[
            "#####.....", //
            "#...#.....",
            "#####..#..",
            "........#.",
            ".........#",
        ]);
        let c = connected_components(&m, 0);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].rect, Rect::new(0, 0, 5, 3));
        assert_eq!(c[0].pixels, 12);
        assert_eq!(c[1].rect, Rect::new(7, 2, 3, 3));
    }

    #[test]
    fn gap_joins_nearby_pieces_only() {
        let m = map(&[
            "##.##...##", //
            "..........",
            "##........",
        ]);
        assert_eq!(connected_components(&m, 0).len(), 4);
        // A one-pixel hole joins the first two and the row below across the blank row.
        let c = connected_components(&m, 1);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].rect, Rect::new(0, 0, 5, 3));
        assert_eq!(c[1].rect, Rect::new(8, 0, 2, 1));
    }

    #[test]
    fn empty_and_full_maps() {
        assert!(connected_components(&GrayImage::new(0, 0), 0).is_empty());
        assert!(connected_components(&GrayImage::new(5, 5), 2).is_empty());
        let full = GrayImage::from_pixel(7, 3, image::Luma([255]));
        let c = connected_components(&full, 0);
        assert_eq!(
            c,
            vec![Component {
                rect: Rect::new(0, 0, 7, 3),
                pixels: 21
            }]
        );
    }

    #[test]
    fn u_shape_merges_late() {
        // Two arms joined only on the last row: the union-find must merge them.
        let m = map(&["#...#", "#...#", "#####"]);
        let c = connected_components(&m, 0);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].pixels, 9);
    }
}
