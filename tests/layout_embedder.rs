//! The shipped LSTM layout embedder (`gui-layout` feature `lstm`, weights in
//! `crates/gui-layout/models/`). The umbrella crate enables the feature for its tests, so
//! `cargo test --workspace` runs these without `--all-features`.

use gui_layout::{
    Error, LayoutEmbedder, LayoutPairConfig, LayoutPairs, LayoutTree, shipped_model_path, spearman,
};

fn shipped() -> LayoutEmbedder {
    LayoutEmbedder::shipped().unwrap_or_else(|e| {
        panic!("{e}\nregenerate with `cargo run --release -p xtask -- layout-embedder train`")
    })
}

const PAGE: &str =
    "{screen{group{line{w:text_view}}{line{w:edit_text}{w:button}}}{group{line{w:tab}{w:tab}}}}";

#[test]
fn shipped_weights_give_a_512_dim_vector() {
    let e = shipped();
    assert_eq!(e.config().out_dim, 512);
    let v = e.embed_bracket(PAGE).unwrap();
    assert_eq!(v.len(), 512);
    assert!(v.iter().all(|x| x.is_finite()));
    assert!(v.iter().any(|x| *x != 0.0));
    // Labels outside the vocabulary still embed.
    assert_eq!(e.embed_bracket("{screen{panel{x}}}").unwrap().len(), 512);
}

#[test]
fn embedding_is_deterministic() {
    let (a, b) = (shipped(), shipped());
    let t = LayoutTree::parse(PAGE).unwrap();
    let first = a.embed(&t).unwrap();
    assert_eq!(first, a.embed(&t).unwrap());
    assert_eq!(first, b.embed(&t).unwrap());
    assert_eq!(
        a.embed_many(&[t.clone(), t]).unwrap(),
        vec![first.clone(), first]
    );
    assert_eq!(
        a.distance(
            &LayoutTree::parse(PAGE).unwrap(),
            &LayoutTree::parse(PAGE).unwrap()
        )
        .unwrap(),
        0.0
    );
}

#[test]
fn save_and_load_round_trip_exactly() {
    let e = shipped();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/copy.safetensors");
    e.save(&path).unwrap();
    let back = LayoutEmbedder::load(&path).unwrap();
    assert_eq!(back.config(), e.config());
    assert_eq!(back.vocabulary(), e.vocabulary());
    let trees: Vec<LayoutTree> = [PAGE, "{screen{group{line{w}}}}", "{screen}"]
        .iter()
        .map(|s| LayoutTree::parse(s).unwrap())
        .collect();
    assert_eq!(
        back.embed_many(&trees).unwrap(),
        e.embed_many(&trees).unwrap()
    );
    // The same bytes again: saving is deterministic too.
    let again = dir.path().join("again.safetensors");
    back.save(&again).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn bad_weights_files_are_errors_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.safetensors");
    let corrupt = dir.path().join("corrupt.safetensors");
    std::fs::write(
        &corrupt,
        b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}",
    )
    .unwrap();
    let truncated = dir.path().join("truncated.safetensors");
    let bytes = std::fs::read(shipped_model_path()).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for path in [&missing, &corrupt, &truncated] {
        match LayoutEmbedder::load(path) {
            Err(err @ Error::Model { .. }) => {
                let Error::Model { path: named, .. } = &err else {
                    unreachable!()
                };
                assert_eq!(named, path);
                assert!(
                    err.to_string().contains(&path.display().to_string()),
                    "{err}"
                );
            }
            Err(other) => panic!("{}: unexpected error {other}", path.display()),
            Ok(_) => panic!("{} loaded", path.display()),
        }
    }
}

/// A cheap sanity check, not the evaluation (that is `cargo xtask layout-embedder eval`):
/// on fresh random layouts the predicted distance ranks pairs like the tree edit distance.
#[test]
fn predicted_distance_follows_tree_edit_distance() {
    let e = shipped();
    let fresh = LayoutPairs::generate(&LayoutPairConfig {
        strings: 12,
        seed: 2024,
        ..LayoutPairConfig::default()
    })
    .unwrap();
    let v = e.embed_many(&fresh.trees).unwrap();
    let (mut predicted, mut truth) = (Vec::new(), Vec::new());
    for p in fresh.all_pairs().into_iter().filter(|p| p.a < p.b) {
        predicted.push(e.predicted_distance(&v[p.a as usize], &v[p.b as usize]));
        truth.push(f64::from(fresh.distance(p)));
    }
    let rho = spearman(&predicted, &truth);
    assert!(rho > 0.5, "Spearman ρ {rho} on 66 fresh pairs");
}
