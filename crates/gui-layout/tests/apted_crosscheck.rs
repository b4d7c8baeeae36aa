//! Cross-check against the PyPI `apted` package (the reference implementation's Python
//! port) on seeded random trees. Needs `python3` with `apted==1.0.3`; `cargo xtask setup`
//! installs it.

use std::process::Command;

use gui_layout::{LayoutTree, random_tree, tree_edit_distance};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn distances_match_the_apted_package() {
    let mut rng = ChaCha8Rng::seed_from_u64(2016);
    let labels = ["a", "b", "c", "d"];
    let pairs: Vec<(LayoutTree, LayoutTree)> = (0..150)
        .map(|_| {
            let (n, m) = (rng.random_range(1..40), rng.random_range(1..40));
            (
                random_tree(&mut rng, n, &labels),
                random_tree(&mut rng, m, &labels),
            )
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pairs.json");
    let text: Vec<[String; 2]> = pairs
        .iter()
        .map(|(a, b)| [a.to_bracket(), b.to_bracket()])
        .collect();
    std::fs::write(&input, serde_json::to_string(&text).unwrap()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/apted_distances.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(&input)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}); install Python 3 and run `cargo xtask setup`")
        });
    assert!(
        out.status.success(),
        "the apted cross-check needs `apted==1.0.3` for python3: run `cargo xtask setup` \
         (pip install apted==1.0.3)\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<(f64, f64)> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(theirs.len(), pairs.len());
    for ((a, b), (d, _)) in pairs.iter().zip(&theirs) {
        assert_eq!(tree_edit_distance(a, b), *d, "{a} vs {b}");
    }
}
