//! The exploration loop on the simulated app: determinism, signal bookkeeping, recovery
//! from a crashing app, budgets and impossible actions.

use std::time::Duration;

use gui_core::{Action, ActionKind, ActionParam, SignalKind};
use gui_driver::{SimApp, SimFault, Simulator};
use gui_explore::{
    ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, RunRecorder, Scripted, SignalRecord,
    StepRecord, StopReason, Strategy, Summary, explore, read_steps,
};

fn run_on(
    app: SimApp,
    strategy: &mut dyn Strategy,
    config: ExploreConfig,
) -> (tempfile::TempDir, Summary) {
    let dir = tempfile::tempdir().unwrap();
    let mut device = Simulator::new(app);
    let mut rec = RunRecorder::create(dir.path(), &serde_json::json!({})).unwrap();
    rec.durable = false;
    let summary = explore(
        &mut device,
        strategy,
        &mut FixedThrottle::none(),
        &mut rec,
        &config,
    )
    .unwrap();
    (dir, summary)
}

fn steps(n: u64) -> ExploreConfig {
    ExploreConfig {
        steps: Some(n),
        ..ExploreConfig::default()
    }
}

fn signals(dir: &std::path::Path) -> Vec<SignalRecord> {
    std::fs::read_to_string(dir.join("signals.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Centre of widget `w` of page `p` of the simulated demo app (its viewport is the app's size).
fn at(p: usize, w: usize) -> gui_core::Point {
    SimApp::demo().pages[p].widgets[w].rect.center()
}

fn click(p: usize, w: usize) -> Action {
    Action::at(ActionKind::Click, at(p, w))
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let app = SimApp::generate(5, 6, 8);
    let essence = |s: StepRecord| (s.action, s.coverage, s.new_signals, s.error);
    let once = || {
        let mut m = Monkey::new(MonkeyConfig {
            seed: 9,
            ..MonkeyConfig::default()
        });
        let (dir, _) = run_on(app.clone(), &mut m, steps(300));
        let shots: Vec<Vec<u8>> = (0..=300)
            .map(|i| {
                std::fs::read(dir.path().join(format!("screenshots/step-{i:06}.png"))).unwrap()
            })
            .collect();
        (
            read_steps(dir.path())
                .unwrap()
                .into_iter()
                .map(essence)
                .collect::<Vec<_>>(),
            shots,
        )
    };
    let (a, shots_a) = once();
    let (b, shots_b) = once();
    assert_eq!(a.len(), 300);
    assert_eq!(a, b);
    assert_eq!(
        shots_a, shots_b,
        "screenshots differ between runs of one seed"
    );
}

#[test]
fn a_seeded_fault_is_recorded_once_at_its_first_step_and_counted_each_time() {
    // Home -> form; type a name, tick the checkbox, submit (the demo's fault); back; again.
    let name = Action::at(ActionKind::Input, at(1, 0)).with_param(ActionParam::Text("ada".into()));
    let script = vec![
        click(0, 1),
        name.clone(),
        click(1, 2),
        click(1, 5),
        Action::new(ActionKind::Return),
        name,
        click(1, 2),
        click(1, 5),
    ];
    let n = script.len() as u64;
    let (dir, summary) = run_on(SimApp::demo(), &mut Scripted::new(script), steps(n));
    let records = signals(dir.path());
    let exceptions: Vec<_> = records
        .iter()
        .filter(|r| r.kind == SignalKind::UncaughtException)
        .collect();
    assert_eq!(exceptions.len(), 1, "{records:#?}");
    assert_eq!(exceptions[0].first_step, 4);
    assert!(!exceptions[0].stack.is_empty());
    assert_eq!(summary.signal_counts[&exceptions[0].key], 2);
    let steps = read_steps(dir.path()).unwrap();
    assert_eq!(steps[3].new_signals, vec![exceptions[0].key.clone()]);
    assert!(steps[7].new_signals.is_empty());
    assert_eq!(steps[7].signals_observed, 1);
}

#[test]
fn a_crashing_app_is_restarted_and_the_crash_stays_with_its_step() {
    let mut app = SimApp::demo();
    app.faults.push(SimFault {
        page: 3,
        sequence: vec![2, 2, 2],
        kind: SignalKind::Crash,
        message: "app died".into(),
    });
    // Home -> dialog, three clicks on its first radio button crash the app; then go on.
    let script = vec![
        click(0, 3),
        click(3, 2),
        click(3, 2),
        click(3, 2),
        click(0, 1),
        click(1, 2),
    ];
    let (dir, summary) = run_on(app, &mut Scripted::new(script), steps(6));
    assert_eq!(summary.steps, 6);
    assert_eq!(summary.device_restarts, 1);
    let steps = read_steps(dir.path()).unwrap();
    assert_eq!(
        steps.iter().map(|s| s.step).collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5, 6]
    );
    assert!(
        steps[3]
            .error
            .as_deref()
            .unwrap()
            .starts_with("device lost"),
        "{:?}",
        steps[3]
    );
    let crash = signals(dir.path())
        .into_iter()
        .find(|r| r.kind == SignalKind::Crash)
        .expect("crash recorded");
    assert_eq!(crash.first_step, 4);
    let events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    assert!(
        events.contains("device_lost") && events.contains("device_restarted"),
        "{events}"
    );
}

#[test]
fn budgets_end_runs_and_a_run_needs_one() {
    let mut m = Monkey::new(MonkeyConfig::default());
    let config = ExploreConfig {
        steps: None,
        duration: Some(Duration::from_millis(300)),
        ..ExploreConfig::default()
    };
    let (_dir, summary) = run_on(SimApp::demo(), &mut m, config);
    assert_eq!(summary.stopped_because, StopReason::Time);
    assert!(summary.steps > 0);

    let dir = tempfile::tempdir().unwrap();
    let mut rec = RunRecorder::create(dir.path(), &serde_json::json!({})).unwrap();
    let config = ExploreConfig {
        steps: None,
        duration: None,
        ..ExploreConfig::default()
    };
    let err = explore(
        &mut Simulator::new(SimApp::demo()),
        &mut m,
        &mut FixedThrottle::none(),
        &mut rec,
        &config,
    )
    .unwrap_err();
    assert!(err.to_string().contains("budget"), "{err}");
}

#[test]
fn impossible_actions_are_recorded_as_failed_steps() {
    let script = vec![
        Action::new(ActionKind::PhoneInterrupt),
        Action::new(ActionKind::Click),
        click(0, 1),
    ];
    let (dir, summary) = run_on(SimApp::demo(), &mut Scripted::new(script), steps(3));
    assert_eq!(summary.failed_actions, 2);
    let steps = read_steps(dir.path()).unwrap();
    assert!(
        steps[0].error.as_deref().unwrap().contains("not supported"),
        "{:?}",
        steps[0].error
    );
    assert!(
        steps[1]
            .error
            .as_deref()
            .unwrap()
            .contains("needs a target"),
        "{:?}",
        steps[1].error
    );
    assert!(steps[2].error.is_none());
}

/// Monkey that asks to stop once it has taken `after` steps.
struct Quits {
    inner: Monkey,
    learnt: u64,
    after: u64,
}

impl Strategy for Quits {
    fn name(&self) -> &str {
        "quits"
    }

    fn choose(&mut self, observation: &gui_explore::Observation<'_>) -> Action {
        self.inner.choose(observation)
    }

    fn learn(&mut self, transition: &gui_core::Transition) {
        self.learnt += 1;
        self.inner.learn(transition);
    }

    fn stop_request(&self) -> Option<String> {
        (self.learnt >= self.after).then(|| format!("done after {}", self.learnt))
    }
}

#[test]
fn a_strategy_that_asks_to_stop_ends_the_run_with_its_reason() {
    let mut q = Quits {
        inner: Monkey::new(MonkeyConfig::default()),
        learnt: 0,
        after: 4,
    };
    let (dir, summary) = run_on(SimApp::demo(), &mut q, steps(20));
    assert_eq!(summary.steps, 4);
    assert_eq!(summary.stopped_because, StopReason::Strategy);
    assert_eq!(summary.stop_note.as_deref(), Some("done after 4"));
    assert_eq!(read_steps(dir.path()).unwrap().len(), 4);
}
