//! gui-greybox as a library, no browser: the paper's Listing 1 in JavaScript is analysed
//! statically, its event-flow graph (Figure 1(b)) is written down by hand, and the
//! grey-box and black-box test cases of length 2 are printed.
//!
//! `cargo run --example greybox_sequences`

use std::collections::BTreeSet;
use std::path::Path;

use gui_greybox::js::{JsAnalysis, JsConfig, Script};
use gui_greybox::{Edg, Efg, Event, EventKind, Mode, plan};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/gui-greybox/tests/data/listing1/web/listing1.js");
    let source = std::fs::read_to_string(&path)?;
    let analysis = JsAnalysis::analyse(
        &[Script {
            name: "listing1.js".into(),
            source,
        }],
        &JsConfig::default(),
    );

    // Figure 1(b): e1..e3 in the main window, e3 opens the modal dialog holding e4.
    let mut efg = Efg::default();
    for (id, window) in [
        ("e1", "main"),
        ("e2", "main"),
        ("e3", "main"),
        ("e4", "dialog"),
    ] {
        efg.add_event(Event {
            id: id.into(),
            label: id.into(),
            window: window.into(),
            kind: EventKind::Click,
            handlers: vec![],
        });
    }
    let main: BTreeSet<usize> = [0, 1, 2].into();
    efg.initial = main.clone();
    efg.follows = vec![main.clone(), main.clone(), [3].into(), main];

    // Each event's handler is the function of the same name (Algorithm 1's input).
    let rw: Vec<_> = efg
        .events
        .iter()
        .map(|e| {
            let f = analysis
                .function_named(&e.id)
                .expect("listing1.js defines e1..e4");
            analysis.read_write(f)
        })
        .collect();
    let edg = Edg::build(&rw);
    for ((a, b), fields) in &edg.fields {
        println!(
            "EDG {} -> {}: {}",
            efg.events[*a].id,
            efg.events[*b].id,
            fields.join(", ")
        );
    }
    for mode in [
        Mode::Greybox {
            len: 2,
            top: Some(1),
        },
        Mode::Greybox { len: 2, top: None },
        Mode::Blackbox { len: 2 },
    ] {
        let p = plan(&efg, &edg, mode);
        println!("\n{mode}: {} test cases", p.generated.sequences.len());
        for s in &p.generated.sequences {
            println!("  <{}>", efg.ids(&s.events).join(", "));
        }
    }
    Ok(())
}
