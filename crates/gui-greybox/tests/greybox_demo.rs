//! The grey-box pipeline on the bundled demo app in real Chromium: the cross-screen data
//! dependency of bug F (notifications off, then the home counter) is chained by the
//! grey-box generator (configuration D) and found by replaying it, while no black-box
//! test case of length 2 (configuration B) even contains the two events. The navigation
//! effects the ripper observes make D leave screens whose clean-up code runs on exit.

use gui_driver::{ChromiumConfig, ChromiumDevice, StaticServer};
use gui_greybox::js::JsConfig;
use gui_greybox::web::WebApp;
use gui_greybox::{Edg, Mode, ReplayConfig, RipConfig, plan, replay, rip};

#[test]
fn configuration_d_finds_the_demo_data_dependency_bug_b_cannot_reach() {
    let server = StaticServer::demo().expect("serve the demo app");
    let device = ChromiumDevice::launch(&server.url(), ChromiumConfig::default())
        .unwrap_or_else(|e| panic!("cannot start Chromium (`cargo xtask setup` installs it): {e}"));
    let mut app = WebApp::new(device, &JsConfig::default()).unwrap();
    assert!(app.script_errors().is_empty(), "{:?}", app.script_errors());
    let efg = rip(&mut app, &RipConfig::default()).unwrap().efg;
    let id = |s: &str| {
        efg.index_of(s).unwrap_or_else(|| {
            panic!(
                "{s} not ripped: {:?}",
                efg.ids(&(0..efg.len()).collect::<Vec<_>>())
            )
        })
    };
    let (notify, home, counter) = (
        id("#settings-notify click"),
        id("#back-home click"),
        id("#home-counter-btn click"),
    );
    assert!(efg.initial.contains(&counter));
    assert!(efg.follows[notify].contains(&home));

    // Navigation sets off the router after the click handler returns: the ripper saw
    // what it ran, branch by branch. Leaving a screen reads the router's current screen;
    // `closeHelp` with no help open only tests `state.helpOpen` and returns.
    let (list, feed, about) = (
        id("#nav-list click"),
        id("#nav-feed click"),
        id("#nav-about click"),
    );
    let seen = &efg.effects;
    assert!(seen[&home].reads.contains("state.route"), "{seen:?}");
    assert!(seen[&about].writes.contains("state.route"), "{seen:?}");
    assert!(!seen[&about].writes.contains("state.helpOpen"), "{seen:?}");
    assert!(seen[&feed].writes.contains("state.feed.timer"), "{seen:?}");
    assert!(!seen.contains_key(&counter), "{seen:?}");

    let rw = efg.read_writes(|e| app.read_write(e));
    assert!(
        rw[notify].writes.contains("state.notifier"),
        "{:?}",
        rw[notify]
    );
    assert!(
        rw[counter].reads.contains("state.notifier"),
        "{:?}",
        rw[counter]
    );
    let mut edg = Edg::build(&rw);
    // Every navigation reads and writes the current screen, but from one screen to
    // another the way passes home, which rewrites it: no edge is left between them.
    assert!(edg.weight(list, about).is_some());
    assert!(edg.drop_overwritten(&efg, &rw) > 0);
    assert_eq!(edg.weight(list, about), None);
    assert!(edg.weight(list, home).is_some());
    assert!(edg.weight(notify, counter).is_some());
    // Typing into the coupon field feeds Apply (bug B's first half).
    let (coupon, apply) = (id("#cart-coupon type"), id("#cart-apply click"));
    assert!(edg.weight(coupon, apply).is_some());

    let has_f = |events: &[usize]| {
        events
            .iter()
            .position(|&e| e == notify)
            .is_some_and(|i| events[i..].contains(&counter))
    };
    let b = plan(&efg, &edg, Mode::Blackbox { len: 2 });
    let d = plan(&efg, &edg, Mode::Greybox { len: 2, top: None });
    assert!(!b.generated.sequences.iter().any(|s| has_f(&s.events)));
    assert!(
        (d.generated.sequences.len() as f64) <= 0.6 * b.generated.sequences.len() as f64,
        "D {} test cases, B {}",
        d.generated.sequences.len(),
        b.generated.sequences.len()
    );
    // Leaving the list and the feed (their clean-up code) is tested by D.
    for nav in [list, feed] {
        assert!(
            d.generated
                .sequences
                .iter()
                .any(|s| s.events.windows(2).any(|w| w == [nav, home])),
            "no D test case leaves {}",
            efg.events[nav].id
        );
    }
    let chained: Vec<_> = d
        .generated
        .sequences
        .iter()
        .filter(|s| has_f(&s.events))
        .cloned()
        .collect();
    assert_eq!(chained.len(), 1, "{chained:?}");
    assert_eq!(
        efg.ids(&chained[0].events),
        [
            "#nav-settings click",
            "#settings-notify click",
            "#back-home click",
            "#home-counter-btn click"
        ]
    );
    let out = replay(&mut app, &efg, &chained, None, &ReplayConfig::default()).unwrap();
    assert_eq!(out.broken, 0);
    let keys: Vec<&String> = out.signals.keys().collect();
    assert!(
        keys.len() == 1
            && keys[0].contains("reading 'count'")
            && keys[0].contains("incrementHomeCounter"),
        "{keys:?}"
    );
}
