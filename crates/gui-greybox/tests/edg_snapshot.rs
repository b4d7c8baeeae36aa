//! Snapshot of the demo app's event-dependency graph as the static analysis alone sees it:
//! one event per handler registered on an element with an id, an edge where one handler
//! writes what another reads. A change in the analysis rules shows up here as a diff.

use std::fmt::Write as _;
use std::path::Path;

use gui_greybox::Edg;
use gui_greybox::js::{JsAnalysis, JsConfig, Script};

#[test]
fn demo_app_edg_from_the_static_analysis() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/apps/demo/app.js");
    let source = std::fs::read_to_string(&path).unwrap();
    let analysis = JsAnalysis::analyse(
        &[Script {
            name: "app.js".into(),
            source,
        }],
        &JsConfig::default(),
    );
    assert!(analysis.errors().is_empty());
    let mut events: Vec<(String, usize)> = analysis
        .handlers()
        .iter()
        .filter_map(|h| {
            let sel = h.selector.as_deref().filter(|s| s.starts_with('#'))?;
            Some((format!("{sel} {}", h.event_type), h.function?))
        })
        .collect();
    events.sort();
    events.dedup();
    let rw: Vec<_> = events
        .iter()
        .map(|(_, f)| analysis.read_write(*f))
        .collect();
    let edg = Edg::build(&rw);
    let mut out = String::new();
    for ((a, b), fields) in &edg.fields {
        let _ = writeln!(
            out,
            "{} -> {}: {}",
            events[*a].0,
            events[*b].0,
            fields.join(", ")
        );
    }
    insta::assert_snapshot!(out);
}
