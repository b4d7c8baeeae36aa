//! The grey-box pipeline on the paper's Listing 1 as a web page in real Chromium: rip the
//! event-flow graph from the DOM, analyse the handlers' scripts, generate, replay.

use std::path::Path;

use gui_driver::{ChromiumConfig, ChromiumDevice, StaticServer};
use gui_greybox::js::JsConfig;
use gui_greybox::web::WebApp;
use gui_greybox::{
    Edg, ReplayConfig, RipConfig, abstract_sequences, blackbox_sequences, executable_sequences,
    replay, rip,
};

fn listing1() -> (StaticServer, WebApp) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/listing1/web");
    let server = StaticServer::folder(&dir, "index.html").expect("serve the Listing 1 page");
    let device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())
        .unwrap_or_else(|e| panic!("cannot start Chromium (`cargo xtask setup` installs it): {e}"));
    let app = WebApp::new(device, &JsConfig::default()).expect("read the page's scripts");
    (server, app)
}

#[test]
fn listing1_web_page_rip_generate_replay() {
    let (_server, mut app) = listing1();
    assert!(app.script_errors().is_empty(), "{:?}", app.script_errors());
    let ripped = rip(&mut app, &RipConfig::default()).unwrap();
    let efg = &ripped.efg;
    let ids: Vec<&str> = efg.events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["#e1 click", "#e2 click", "#e3 click", "#e4 click"]);
    assert_eq!(efg.initial, [0, 1, 2].into());
    // Figure 1(b): the modal dialog hides the main window's buttons.
    let main = [0, 1, 2].into();
    assert_eq!(
        efg.follows,
        vec![main, [0, 1, 2].into(), [3].into(), [0, 1, 2].into()]
    );
    assert_eq!(efg.events[3].window, "dialog #dialog");
    assert_eq!(blackbox_sequences(efg, 2).sequences.len(), 10, "Table 1");

    // Algorithm 1 on what the handlers found through the DOM read and write.
    let rw: Vec<_> = efg.events.iter().map(|e| app.read_write(e)).collect();
    assert!(efg.events.iter().all(|e| !e.handlers.is_empty()));
    let edg = Edg::build(&rw);
    let edges: Vec<(usize, usize)> = (0..4)
        .flat_map(|a| edg.post(a).map(move |(b, _)| (a, b)).collect::<Vec<_>>())
        .collect();
    // e3's else branch logs `text`, so e2 and e4 also flow into e3 (Figure 2 leaves
    // those two edges out).
    assert_eq!(edges, [(0, 2), (1, 1), (1, 2), (3, 1), (3, 2)]);
    let generated = executable_sequences(efg, &abstract_sequences(&edg, 2, Some(1)));
    let seqs: Vec<String> = generated
        .sequences
        .iter()
        .map(|s| {
            efg.ids(&s.events)
                .iter()
                .map(|id| id.trim_start_matches('#').trim_end_matches(" click"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    assert_eq!(seqs, ["e1,e3", "e2,e2", "e3", "e3,e4,e2"]);

    let out = replay(
        &mut app,
        efg,
        &generated.sequences,
        None,
        &ReplayConfig::default(),
    )
    .unwrap();
    assert_eq!(out.broken, 0);
    let failing: Vec<usize> = out
        .cases
        .iter()
        .filter(|c| !c.signals.is_empty())
        .map(|c| c.sequence)
        .collect();
    assert_eq!(failing, [3], "{:?}", out.signals.keys());
    let (_, signal) = out.signals.values().next().unwrap();
    assert!(signal.message.contains("toLowerCase"), "{}", signal.message);
    assert_eq!(signal.stack[0].function, "e2");
}
