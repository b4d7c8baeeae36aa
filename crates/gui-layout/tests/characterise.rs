//! Snapshot tests of the layout characterisation over hand-written screens in
//! `tests/data/characterise/*.json` (see the README there). Each snapshot holds the plain
//! and the kind-labelled layout trees and the outline of Groups, Lines and widgets.
//!
//! Regenerate after a deliberate change with
//! `INSTA_UPDATE=always cargo test -p gui-layout --test characterise`, then read the diff.

use std::path::{Path, PathBuf};

use gui_core::{Size, Widget};
use gui_layout::{Layout, LayoutConfig, LayoutTree, TreeLabels, characterise};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Fixture {
    description: String,
    screen: Size,
    widgets: Vec<Widget>,
}

fn fixtures() -> Vec<(String, Fixture)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/characterise");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 5, "fixtures missing in {}", dir.display());
    paths
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let fixture =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name, fixture)
        })
        .collect()
}

fn rendering(layout: &Layout) -> String {
    format!(
        "{}\n{}\n\n{layout}",
        layout.tree(TreeLabels::Plain),
        layout.tree(TreeLabels::Kinds)
    )
}

#[test]
fn fixtures_characterise_as_in_their_snapshots() {
    for (name, fixture) in fixtures() {
        let layout = characterise(&fixture.widgets, fixture.screen, &LayoutConfig::default());
        insta::with_settings!({ description => fixture.description.as_str(), omit_expression => true }, {
            insta::assert_snapshot!(name, rendering(&layout));
        });
    }
}

#[test]
fn every_fixture_widget_is_placed_once_and_the_tree_has_four_levels() {
    for (name, fixture) in fixtures() {
        let layout = characterise(&fixture.widgets, fixture.screen, &LayoutConfig::default());
        let mut seen: Vec<usize> = layout
            .columns()
            .map(|c| c.index)
            .chain(layout.dropped.iter().copied())
            .collect();
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..fixture.widgets.len()).collect::<Vec<_>>(),
            "{name}"
        );

        let tree = layout.tree(TreeLabels::Kinds);
        assert_eq!(tree.depth(), 4, "{name}");
        assert_eq!(
            LayoutTree::parse(&tree.to_bracket()).expect("own output parses"),
            tree,
            "{name}"
        );

        // Bounds nest: widgets inside their Line, Lines inside their Group, all on screen.
        let screen = gui_core::Rect::new(0, 0, fixture.screen.width, fixture.screen.height);
        for group in &layout.groups {
            assert_eq!(group.bounds.union(&screen), screen, "{name}");
            for line in &group.lines {
                assert_eq!(group.bounds.union(&line.bounds), group.bounds, "{name}");
                for c in &line.columns {
                    assert_eq!(line.bounds.union(&c.widget.rect), line.bounds, "{name}");
                }
                // Columns left to right.
                assert!(
                    line.columns
                        .windows(2)
                        .all(|p| p[0].widget.rect.x <= p[1].widget.rect.x),
                    "{name}"
                );
            }
            // Lines top to bottom.
            assert!(
                group
                    .lines
                    .windows(2)
                    .all(|p| p[0].bounds.y <= p[1].bounds.y),
                "{name}"
            );
        }
    }
}

#[test]
fn shuffled_fixtures_give_the_same_layout_up_to_input_positions() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2024);
    for (name, fixture) in fixtures() {
        let config = LayoutConfig::default();
        let reference = characterise(&fixture.widgets, fixture.screen, &config);
        let mut widgets = fixture.widgets.clone();
        for _ in 0..10 {
            widgets.shuffle(&mut rng);
            let mut layout = characterise(&widgets, fixture.screen, &config);
            // Map positions back to the original input to compare whole layouts.
            let original = |w: &Widget| -> usize {
                fixture
                    .widgets
                    .iter()
                    .position(|v| v == w)
                    .expect("a fixture widget")
            };
            for group in &mut layout.groups {
                for line in &mut group.lines {
                    for c in &mut line.columns {
                        c.index = original(&widgets[c.index]);
                    }
                }
            }
            layout.dropped = layout
                .dropped
                .iter()
                .map(|&i| original(&widgets[i]))
                .collect();
            layout.dropped.sort_unstable();
            assert_eq!(layout, reference, "{name}");
        }
    }
}
