use serde::{Deserialize, Serialize};

/// A position in screenshot pixels, origin top left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

impl Point {
    pub const fn new(x: i32, y: i32) -> Self {
        Self { x, y }
    }

    /// This point moved by `(dx, dy)`.
    pub const fn offset(self, dx: i32, dy: i32) -> Self {
        Self::new(self.x + dx, self.y + dy)
    }
}

/// A width and height in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

impl Size {
    pub const fn new(width: u32, height: u32) -> Self {
        Self { width, height }
    }

    pub const fn area(self) -> u64 {
        self.width as u64 * self.height as u64
    }

    /// Whether `p` lies inside a screen of this size.
    pub const fn contains(self, p: Point) -> bool {
        p.x >= 0 && p.y >= 0 && (p.x as u32) < self.width && (p.y as u32) < self.height
    }
}

/// An axis-aligned box: the bounds of a widget, a group or a text region.
///
/// `x`, `y` may be negative (a widget scrolled partly off screen); the box covers the
/// half-open ranges `x..x+width` and `y..y+height`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Self {
            x,
            y,
            width,
            height,
        }
    }

    /// The smallest box holding both corners (given in any order).
    pub fn from_corners(a: Point, b: Point) -> Self {
        let (x0, x1) = (a.x.min(b.x), a.x.max(b.x));
        let (y0, y1) = (a.y.min(b.y), a.y.max(b.y));
        Self::new(x0, y0, (x1 - x0) as u32, (y1 - y0) as u32)
    }

    pub const fn right(&self) -> i32 {
        self.x + self.width as i32
    }

    pub const fn bottom(&self) -> i32 {
        self.y + self.height as i32
    }

    pub const fn area(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    pub const fn center(&self) -> Point {
        Point::new(
            self.x + self.width as i32 / 2,
            self.y + self.height as i32 / 2,
        )
    }

    pub const fn contains(&self, p: Point) -> bool {
        p.x >= self.x && p.x < self.right() && p.y >= self.y && p.y < self.bottom()
    }

    /// The overlap of two boxes, `None` when they do not overlap (touching edges included).
    pub fn intersection(&self, other: &Rect) -> Option<Rect> {
        let x0 = self.x.max(other.x);
        let y0 = self.y.max(other.y);
        let x1 = self.right().min(other.right());
        let y1 = self.bottom().min(other.bottom());
        (x1 > x0 && y1 > y0).then(|| Rect::new(x0, y0, (x1 - x0) as u32, (y1 - y0) as u32))
    }

    /// The smallest box holding both.
    pub fn union(&self, other: &Rect) -> Rect {
        let x0 = self.x.min(other.x);
        let y0 = self.y.min(other.y);
        let x1 = self.right().max(other.right());
        let y1 = self.bottom().max(other.bottom());
        Rect::new(x0, y0, (x1 - x0) as u32, (y1 - y0) as u32)
    }

    /// Intersection over union in `[0, 1]`; two empty boxes have IoU 0.
    pub fn iou(&self, other: &Rect) -> f64 {
        let inter = self.intersection(other).map_or(0, |r| r.area());
        let union = self.area() + other.area() - inter;
        if union == 0 {
            0.0
        } else {
            inter as f64 / union as f64
        }
    }

    /// This box clipped to a screen of `size`; `None` when nothing of it is visible.
    pub fn clip_to(&self, size: Size) -> Option<Rect> {
        self.intersection(&Rect::new(0, 0, size.width, size.height))
    }

    /// This box grown by `d` pixels on every side (shrunk for a negative `d`, each side
    /// kept at least 1 pixel long).
    pub fn grown(&self, d: i32) -> Rect {
        let side = |v: u32| (v as i32 + 2 * d).max(1) as u32;
        Rect::new(self.x - d, self.y - d, side(self.width), side(self.height))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iou_of_identical_disjoint_and_half_overlapping_boxes() {
        let a = Rect::new(0, 0, 10, 10);
        assert_eq!(a.iou(&a), 1.0);
        assert_eq!(a.iou(&Rect::new(10, 0, 10, 10)), 0.0);
        // 50 shared of 150 covered.
        assert!((a.iou(&Rect::new(5, 0, 10, 10)) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(Rect::new(0, 0, 0, 0).iou(&Rect::new(0, 0, 0, 0)), 0.0);
    }

    #[test]
    fn grown_boxes_keep_their_centre_and_never_vanish() {
        let r = Rect::new(10, 20, 30, 4);
        assert_eq!(r.grown(2), Rect::new(8, 18, 34, 8));
        assert_eq!(r.grown(-1), Rect::new(11, 21, 28, 2));
        assert_eq!(r.grown(-3), Rect::new(13, 23, 24, 1));
        assert_eq!(r.grown(0), r);
    }

    #[test]
    fn iou_stays_in_unit_interval_and_is_symmetric() {
        // A deterministic sweep over many box pairs instead of a property-test dependency.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m) as i64
        };
        for _ in 0..10_000 {
            let a = Rect::new(
                next(50) as i32 - 10,
                next(50) as i32 - 10,
                next(40) as u32,
                next(40) as u32,
            );
            let b = Rect::new(
                next(50) as i32 - 10,
                next(50) as i32 - 10,
                next(40) as u32,
                next(40) as u32,
            );
            let v = a.iou(&b);
            assert!((0.0..=1.0).contains(&v), "{a:?} {b:?} -> {v}");
            assert_eq!(v, b.iou(&a));
        }
    }

    #[test]
    fn clipping_and_union() {
        let screen = Size::new(100, 50);
        assert_eq!(
            Rect::new(-5, -5, 10, 10).clip_to(screen),
            Some(Rect::new(0, 0, 5, 5))
        );
        assert_eq!(Rect::new(100, 0, 10, 10).clip_to(screen), None);
        assert_eq!(
            Rect::new(0, 0, 1, 1).union(&Rect::new(5, 5, 1, 1)),
            Rect::new(0, 0, 6, 6)
        );
        assert!(screen.contains(Point::new(99, 49)));
        assert!(!screen.contains(Point::new(100, 0)));
    }
}
