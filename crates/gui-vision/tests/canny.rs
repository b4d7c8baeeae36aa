//! Canny edges against `imageproc::edges::canny` on GUI-like images, plus the edge cases.
//!
//! Agreement is measured with a 1-pixel tolerance in both directions: the fraction of our
//! edge pixels that have an imageproc edge within Chebyshev distance 1, and the converse.
//! An exact match is not expected, for reasons that each move an edge by at most a pixel or
//! drop a faint one:
//! - imageproc keeps both pixels of a two-pixel magnitude plateau (`>=` on both sides), we
//!   keep one, so its edges are often two pixels thick where ours are one;
//! - imageproc rounds twice in its blur (truncating to `u8` after each pass) and uses a
//!   float kernel, we round once with 8-bit weights: magnitudes differ by a few units;
//! - imageproc quantises directions with `atan2`, we with integer tangents (boundaries
//!   differ only on exact ties);
//! - imageproc's hysteresis follows 6 of the 8 neighbours (not up or up-right), so it
//!   drops some weak chains that only continue upwards; we follow all 8.
//!
//! Hence 97% both ways, not 100%; what is measured is printed with `--nocapture`.

use std::path::Path;

use gui_vision::{CannyConfig, Error, canny, synthetic_gui_screen, to_gray};
use image::{GrayImage, Luma};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Minimum agreement both ways (see the module comment).
const MIN_AGREEMENT: f64 = 0.97;

fn reference(gray: &GrayImage, config: &CannyConfig) -> GrayImage {
    assert!(
        (config.sigma - 1.4).abs() < 1e-6,
        "imageproc blurs with sigma 1.4 only"
    );
    imageproc::edges::canny(gray, config.low, config.high)
}

fn edge_count(img: &GrayImage) -> usize {
    img.pixels().filter(|p| p.0[0] == 255).count()
}

/// Fraction of the edge pixels of `a` with an edge of `b` within one pixel (1.0 if `a` has
/// none).
fn covered(a: &GrayImage, b: &GrayImage) -> f64 {
    let (w, h) = a.dimensions();
    let mut total = 0usize;
    let mut hit = 0usize;
    for (x, y, p) in a.enumerate_pixels() {
        if p.0[0] != 255 {
            continue;
        }
        total += 1;
        let near = (y.saturating_sub(1)..=(y + 1).min(h - 1)).any(|yy| {
            (x.saturating_sub(1)..=(x + 1).min(w - 1)).any(|xx| b.get_pixel(xx, yy).0[0] == 255)
        });
        hit += usize::from(near);
    }
    if total == 0 {
        1.0
    } else {
        hit as f64 / total as f64
    }
}

fn assert_agrees(name: &str, gray: &GrayImage, config: &CannyConfig) {
    let ours = canny(gray, config).unwrap();
    let theirs = reference(gray, config);
    let (n_ours, n_theirs) = (edge_count(&ours), edge_count(&theirs));
    let (ours_in_theirs, theirs_in_ours) = (covered(&ours, &theirs), covered(&theirs, &ours));
    println!(
        "{name}: {n_ours} edge pixels (imageproc {n_theirs}); ours near theirs {:.2}%, theirs near ours {:.2}%",
        ours_in_theirs * 100.0,
        theirs_in_ours * 100.0
    );
    assert!(n_theirs > 100, "{name}: the image should have edges");
    assert!(
        ours_in_theirs >= MIN_AGREEMENT && theirs_in_ours >= MIN_AGREEMENT,
        "{name}: agreement {ours_in_theirs:.4} / {theirs_in_ours:.4} below {MIN_AGREEMENT}"
    );
}

/// A hand-drawn screen: bordered panels, a striped list, a horizontal gradient, a noisy
/// photo-like area and a dark button with light text.
fn panels_and_stripes(seed: u64) -> GrayImage {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (w, h) = (320, 480);
    let mut img = GrayImage::from_fn(w, h, |x, _| Luma([230 + (x * 20 / w) as u8]));
    let rect = |img: &mut GrayImage, x0: u32, y0: u32, x1: u32, y1: u32, v: u8| {
        for y in y0..y1.min(h) {
            for x in x0..x1.min(w) {
                img.put_pixel(x, y, Luma([v]));
            }
        }
    };
    for i in 0..4 {
        let y0 = 20 + i * 70;
        rect(&mut img, 16, y0, 304, y0 + 60, 150 + (i * 20) as u8);
        rect(&mut img, 17, y0 + 1, 303, y0 + 59, 250);
        for j in 0..rng.random_range(6..12) {
            let x0 = 30 + j * 14;
            rect(
                &mut img,
                x0,
                y0 + 20,
                x0 + rng.random_range(4..12),
                y0 + 32,
                40,
            );
        }
    }
    rect(&mut img, 200, 320, 300, 356, 30);
    rect(&mut img, 215, 332, 285, 344, 240);
    for y in 370..470 {
        for x in 10..310 {
            let base = ((x + y) / 3) as i32;
            let v = base + rng.random_range(-6..=6);
            img.put_pixel(x, y, Luma([v.clamp(0, 255) as u8]));
        }
    }
    img
}

#[test]
fn agrees_with_imageproc_on_synthetic_screens() {
    let config = CannyConfig::default();
    for (i, (w, h)) in [(360, 640), (412, 915), (640, 400)].into_iter().enumerate() {
        let gray = to_gray(&synthetic_gui_screen(w, h, i as u64));
        assert_agrees(&format!("screen {w}x{h}"), &gray, &config);
    }
    // The strong/weak split must matter: a higher pair of thresholds on the same screen.
    let gray = to_gray(&synthetic_gui_screen(360, 640, 7));
    let strict = CannyConfig {
        low: 60.0,
        high: 150.0,
        ..config
    };
    assert_agrees("screen 360x640 strict", &gray, &strict);
}

#[test]
fn agrees_with_imageproc_on_panels_stripes_gradients_and_noise() {
    for seed in 0..3 {
        assert_agrees(
            &format!("panels seed {seed}"),
            &panels_and_stripes(seed),
            &CannyConfig::default(),
        );
    }
}

#[test]
fn agrees_with_imageproc_on_fixture_pngs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "png") {
            let img = image::open(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                .to_rgb8();
            let gray = to_gray(&img);
            if edge_count(&reference(&gray, &CannyConfig::default())) > 100 {
                assert_agrees(&path.display().to_string(), &gray, &CannyConfig::default());
                seen += 1;
            }
        }
    }
    println!("{seen} fixture PNGs with edges under {}", dir.display());
}

#[test]
fn zero_sized_images_are_an_image_error() {
    for (w, h) in [(0, 0), (0, 5), (5, 0)] {
        let err = canny(&GrayImage::new(w, h), &CannyConfig::default()).unwrap_err();
        assert!(
            matches!(err, Error::Image { .. }),
            "{w}x{h}: expected Error::Image, got {err:?}"
        );
        assert!(err.to_string().contains(&format!("{w}x{h}")), "{err}");
    }
}

#[test]
fn tiny_images_work_and_have_no_edges_on_the_frame() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for (w, h) in [
        (1, 1),
        (2, 2),
        (1, 7),
        (7, 1),
        (2, 9),
        (3, 3),
        (4, 3),
        (5, 5),
    ] {
        let gray = GrayImage::from_fn(w, h, |_, _| Luma([rng.random()]));
        let edges = canny(&gray, &CannyConfig::default()).unwrap();
        assert_eq!(edges.dimensions(), (w, h));
        for (x, y, p) in edges.enumerate_pixels() {
            let frame = x == 0 || y == 0 || x + 1 == w || y + 1 == h;
            assert!(
                !frame || p.0[0] == 0,
                "{w}x{h}: edge on the frame at {x},{y}"
            );
        }
    }
    // 3x3 with a bright centre: the only interior pixel is a maximum in every direction.
    let mut dot = GrayImage::new(5, 5);
    dot.put_pixel(2, 2, Luma([255]));
    let edges = canny(
        &dot,
        &CannyConfig {
            sigma: 0.5,
            low: 1.0,
            high: 1.0,
        },
    )
    .unwrap();
    assert!(edge_count(&edges) > 0, "a bright dot should leave edges");
}

#[test]
fn constant_images_have_no_edges() {
    for v in [0, 128, 255] {
        let gray = GrayImage::from_pixel(97, 61, Luma([v]));
        let zero = CannyConfig {
            low: 0.0,
            high: 0.0,
            ..CannyConfig::default()
        };
        for config in [CannyConfig::default(), zero] {
            assert_eq!(edge_count(&canny(&gray, &config).unwrap()), 0, "value {v}");
        }
    }
}

#[test]
fn a_filled_rectangle_gives_its_outline() {
    let (w, h) = (120, 90);
    let (x0, y0, x1, y1) = (30u32, 20u32, 90u32, 70u32); // filled [x0, x1) x [y0, y1)
    let gray = GrayImage::from_fn(w, h, |x, y| {
        Luma([if (x0..x1).contains(&x) && (y0..y1).contains(&y) {
            200
        } else {
            40
        }])
    });
    // Radii 1 to 4 of the blur kernel take fused code paths, 6 the general one.
    for sigma in [0.5, 1.0, 1.4, 2.0, 3.0] {
        let config = CannyConfig {
            sigma,
            ..CannyConfig::default()
        };
        assert_outline(&canny(&gray, &config).unwrap(), (x0, y0, x1, y1), sigma);
    }
}

fn assert_outline(edges: &GrayImage, (x0, y0, x1, y1): (u32, u32, u32, u32), sigma: f32) {
    // The step lies between pixels x0-1 and x0 (etc.): edge pixels sit on either side of it.
    let near_outline = |x: u32, y: u32| {
        let on_x = (x + 1 >= x0 && x <= x0) || (x + 1 >= x1 && x <= x1);
        let on_y = (y + 1 >= y0 && y <= y0) || (y + 1 >= y1 && y <= y1);
        let inside_x = x + 2 >= x0 && x <= x1 + 1;
        let inside_y = y + 2 >= y0 && y <= y1 + 1;
        (on_x && inside_y) || (on_y && inside_x)
    };
    // Blurring rounds the corners off within the kernel's radius.
    let k = (2.0 * sigma).ceil() as u32;
    let near_corner = |x: u32, y: u32| {
        [x0, x1].iter().any(|&cx| x.abs_diff(cx) <= k)
            && [y0, y1].iter().any(|&cy| y.abs_diff(cy) <= k)
    };
    for (x, y, p) in edges.enumerate_pixels() {
        assert!(
            p.0[0] == 0 || near_outline(x, y) || near_corner(x, y),
            "sigma {sigma}: edge at {x},{y} is not on the outline"
        );
    }
    // Every straight stretch of the outline (corners aside) is found, one pixel thick.
    for x in x0 + k..x1 - k {
        for y_step in [y0, y1] {
            let n = (y_step - 1..=y_step)
                .filter(|&y| edges.get_pixel(x, y).0[0] == 255)
                .count();
            assert_eq!(n, 1, "sigma {sigma}: column {x} at the edge y={y_step}");
        }
    }
    for y in y0 + k..y1 - k {
        for x_step in [x0, x1] {
            let n = (x_step - 1..=x_step)
                .filter(|&x| edges.get_pixel(x, y).0[0] == 255)
                .count();
            assert_eq!(n, 1, "sigma {sigma}: row {y} at the edge x={x_step}");
        }
    }
}

#[test]
fn output_is_binary() {
    let gray = to_gray(&synthetic_gui_screen(200, 300, 11));
    let edges = canny(&gray, &CannyConfig::default()).unwrap();
    assert!(edges.pixels().all(|p| p.0[0] == 0 || p.0[0] == 255));
    assert!(edge_count(&edges) > 0);
}

#[test]
fn invalid_configs_are_rejected_by_field() {
    let ok = CannyConfig::default();
    ok.validate().unwrap();
    let cases = [
        ("sigma", CannyConfig { sigma: 0.0, ..ok }),
        ("sigma", CannyConfig { sigma: -1.0, ..ok }),
        (
            "sigma",
            CannyConfig {
                sigma: f32::NAN,
                ..ok
            },
        ),
        ("sigma", CannyConfig { sigma: 100.0, ..ok }),
        ("low", CannyConfig { low: -1.0, ..ok }),
        (
            "low",
            CannyConfig {
                low: f32::NAN,
                ..ok
            },
        ),
        (
            "high",
            CannyConfig {
                high: f32::NAN,
                ..ok
            },
        ),
        (
            "high",
            CannyConfig {
                high: f32::INFINITY,
                ..ok
            },
        ),
        (
            "low",
            CannyConfig {
                low: 60.0,
                high: 50.0,
                ..ok
            },
        ),
    ];
    let gray = GrayImage::new(8, 8);
    for (want, config) in cases {
        for err in [
            config.validate().unwrap_err(),
            canny(&gray, &config).unwrap_err(),
        ] {
            match err {
                Error::Config { field, .. } => assert_eq!(field, want, "{config:?}"),
                other => panic!("{config:?}: expected Error::Config, got {other:?}"),
            }
        }
    }
}

#[test]
fn same_edges_for_any_thread_count() {
    // Tall enough for many bands, so band borders fall across edges.
    let gray = to_gray(&synthetic_gui_screen(300, 1100, 5));
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| canny(&gray, &CannyConfig::default()).unwrap())
    };
    let one = run(1);
    assert!(edge_count(&one) > 1000);
    for threads in [2, 3, 8] {
        assert!(
            one.as_raw() == run(threads).as_raw(),
            "{threads} threads differ from one"
        );
    }
}

#[test]
fn to_gray_matches_bt601() {
    let img = synthetic_gui_screen(64, 48, 2);
    let gray = to_gray(&img);
    for (x, y, p) in img.enumerate_pixels() {
        let [r, g, b] = p.0.map(f64::from);
        let want = 0.299 * r + 0.587 * g + 0.114 * b;
        let got = f64::from(gray.get_pixel(x, y).0[0]);
        assert!((got - want).abs() <= 0.5 + 1e-9, "{x},{y}: {got} vs {want}");
    }
}
