//! The ripper, generator and replayer on an in-process model of the paper's Listing 1
//! (the same app runs for real in `tests/greybox_web.rs` and `tests/greybox_swing.rs`;
//! this one checks the algorithms' bookkeeping without a browser or an X server).

use gui_core::{Action, CoverageSnapshot, Platform, Point, Screenshot, Signal, SignalKind, Size};
use gui_driver::Device;
use gui_greybox::{
    Edg, Event, EventKind, GreyboxApp, LiveEvent, ReadWrite, ReplayConfig, RipConfig, RipCut,
    RipState, Ripper, abstract_sequences, blackbox_sequences, executable_sequences, replay, rip,
};

/// MainWindow with e1..e3 at x = 10, 110, 210; the modal Dialog with e4 at x = 310.
#[derive(Debug, Default)]
struct Listing1 {
    enabled: bool,
    text: Option<String>,
    dialog: bool,
    signals: Vec<Signal>,
}

impl Listing1 {
    fn fresh() -> Self {
        Listing1 {
            enabled: true,
            text: Some("Hello World".into()),
            ..Default::default()
        }
    }
}

impl Device for Listing1 {
    fn platform(&self) -> Platform {
        Platform::Desktop
    }
    fn viewport(&self) -> Size {
        Size::new(400, 100)
    }
    fn screenshot(&mut self) -> gui_driver::Result<Screenshot> {
        Ok(Screenshot::new(image::RgbImage::new(4, 4), 1.0, 0).expect("non-empty"))
    }
    fn perform(&mut self, action: &Action) -> gui_driver::Result<()> {
        let x = action
            .target
            .as_ref()
            .expect("clicks have targets")
            .point()
            .x;
        match (self.dialog, x / 100) {
            (false, 0) => self.enabled = false,
            (false, 1) => match &self.text {
                Some(t) => self.text = Some(t.to_lowercase()),
                None => self.signals.push(Signal::new(
                    SignalKind::UncaughtException,
                    "java.lang.NullPointerException",
                    vec![],
                )),
            },
            (false, 2) if self.enabled => self.dialog = true,
            (false, 2) => {}
            (true, 3) => {
                self.text = None;
                self.dialog = false;
            }
            _ => {}
        }
        Ok(())
    }
    fn restart(&mut self) -> gui_driver::Result<()> {
        *self = Listing1::fresh();
        Ok(())
    }
    fn drain_signals(&mut self) -> gui_driver::Result<Vec<Signal>> {
        Ok(std::mem::take(&mut self.signals))
    }
    fn coverage(&mut self) -> gui_driver::Result<Option<CoverageSnapshot>> {
        Ok(None)
    }
    fn describe(&self) -> String {
        "Listing 1 model".into()
    }
}

fn event(id: &str, window: &str) -> Event {
    Event {
        id: id.into(),
        label: id.into(),
        window: window.into(),
        kind: EventKind::Click,
        handlers: vec![],
    }
}

impl GreyboxApp for Listing1 {
    fn device(&mut self) -> &mut dyn Device {
        self
    }
    fn available(&mut self) -> gui_greybox::Result<Vec<LiveEvent>> {
        let live = |i: i32, window: &str| LiveEvent {
            event: event(&format!("e{}", i + 1), window),
            at: Point::new(i * 100 + 50, 50),
        };
        Ok(if self.dialog {
            vec![live(3, "Dialog")]
        } else {
            (0..3).map(|i| live(i, "MainWindow")).collect()
        })
    }
    fn settle(&mut self) -> gui_greybox::Result<()> {
        Ok(())
    }
}

fn rw(reads: &[&str], writes: &[&str]) -> ReadWrite {
    ReadWrite {
        reads: reads.iter().map(|s| s.to_string()).collect(),
        writes: writes.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn rip_generate_and_replay_the_papers_example() {
    let mut app = Listing1::fresh();
    let ripped = rip(&mut app, &RipConfig::default()).unwrap();
    let efg = ripped.efg;
    assert_eq!(
        efg.ids(&efg.initial.iter().copied().collect::<Vec<_>>()),
        ["e1", "e2", "e3"]
    );
    let follows: Vec<Vec<&str>> = efg
        .follows
        .iter()
        .map(|f| efg.ids(&f.iter().copied().collect::<Vec<_>>()))
        .collect();
    // Figure 1(b).
    assert_eq!(
        follows,
        [
            vec!["e1", "e2", "e3"],
            vec!["e1", "e2", "e3"],
            vec!["e4"],
            vec!["e1", "e2", "e3"]
        ]
    );
    assert_eq!(blackbox_sequences(&efg, 2).sequences.len(), 10);

    // The handlers' fields as Figure 2 draws them.
    let handlers = [
        rw(&[], &["enabled"]),
        rw(&["text"], &["text"]),
        rw(&["enabled"], &[]),
        rw(&["mainWindow"], &["text"]),
    ];
    let edg = Edg::build(&handlers);
    assert_eq!(edg.edge_count(), 3);
    let generated = executable_sequences(&efg, &abstract_sequences(&edg, 2, None));
    let seqs: Vec<String> = generated
        .sequences
        .iter()
        .map(|s| efg.ids(&s.events).join(","))
        .collect();
    assert_eq!(seqs, ["e1,e3", "e2,e2", "e3", "e3,e4,e2"]);

    let out = replay(
        &mut app,
        &efg,
        &generated.sequences,
        None,
        &ReplayConfig::default(),
    )
    .unwrap();
    assert_eq!(out.broken, 0);
    let crashed: Vec<usize> = out
        .cases
        .iter()
        .filter(|c| !c.signals.is_empty())
        .map(|c| c.sequence)
        .collect();
    assert_eq!(crashed, [3], "only <e3, e4, e2> dereferences the null text");
    assert_eq!(out.steps, 2 + 2 + 1 + 3);
}

#[test]
fn a_sequence_whose_event_is_not_offered_counts_as_broken() {
    let mut app = Listing1::fresh();
    let efg = rip(&mut app, &RipConfig::default()).unwrap().efg;
    // e1 disables the dialog, so e4 after e1, e3 is not there: broken at position 2.
    let e = |id: &str| efg.index_of(id).unwrap();
    let seq = gui_greybox::Executable {
        events: vec![e("e1"), e("e3"), e("e4")],
        focus: vec![0, 1, 2],
        source: 0,
        part: 0,
    };
    let out = replay(&mut app, &efg, &[seq], None, &ReplayConfig::default()).unwrap();
    assert_eq!(out.broken, 1);
    assert_eq!(out.cases[0].broken_at, Some(2));
    assert_eq!(out.cases[0].fired, 2);
}

#[test]
fn a_rip_stopped_after_any_event_and_resumed_from_its_saved_state_finds_the_same_graph() {
    let whole = rip(&mut Listing1::fresh(), &RipConfig::default()).unwrap();
    assert!(whole.cut.is_none() && whole.unripped.is_empty());
    for stop_after in 1..=4 {
        // The first run stops after `stop_after` events; its state goes through JSON, as
        // `greybox` saves it in `rip.json`, and a new ripper on a new app continues.
        let mut app = Listing1::fresh();
        let mut first = Ripper::new(&RipConfig::default());
        for _ in 0..stop_after {
            assert!(first.step(&mut app).unwrap().is_some());
        }
        let saved = serde_json::to_string(first.state()).unwrap();
        // After the fourth, e1..e4 are all ripped and nothing is left.
        assert_eq!(first.state().has_work(), stop_after < 4);
        let state: RipState = serde_json::from_str(&saved).unwrap();
        assert_eq!(state.ripped(), stop_after);
        let mut app = Listing1::fresh();
        let mut second = Ripper::resume(&RipConfig::default(), state);
        while second.step(&mut app).unwrap().is_some() {}
        let resumed = second.finish();
        assert_eq!(resumed.efg, whole.efg, "stopped after {stop_after} events");
        assert_eq!(resumed.states, whole.states);
    }
    // A budget of nothing cuts the rip before its first event: the initial events are
    // known, none ripped.
    let config = RipConfig {
        budget: Some(std::time::Duration::ZERO),
        ..RipConfig::default()
    };
    let cut = rip(&mut Listing1::fresh(), &config).unwrap();
    assert_eq!(cut.cut, Some(RipCut::Budget));
    assert_eq!(cut.unripped, ["e1", "e2", "e3"]);
    // A cap on events says so too.
    let config = RipConfig {
        max_events: 2,
        ..RipConfig::default()
    };
    let capped = rip(&mut Listing1::fresh(), &config).unwrap();
    assert_eq!(capped.cut, Some(RipCut::MaxEvents));
    assert_eq!(capped.efg.len() - capped.unripped.len(), 2);
}
