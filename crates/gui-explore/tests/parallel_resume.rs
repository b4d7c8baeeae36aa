//! Several workers into one run folder, and runs continued after the tool was killed, on
//! the simulated app.

use std::collections::HashSet;
use std::io::Write;

use gui_driver::{SimApp, Simulator};
use gui_explore::{
    EventCategory, EventRecord, EventWeights, ExploreConfig, FixedThrottle, Monkey, MonkeyConfig,
    RunRecorder, StepRecord, Worker, WorkerParts, explore, explore_parallel, read_steps,
};

struct SimWorker {
    device: Simulator,
    monkey: Monkey,
    throttle: FixedThrottle,
}

impl Worker for SimWorker {
    fn parts(&mut self) -> WorkerParts<'_> {
        WorkerParts {
            device: &mut self.device,
            strategy: &mut self.monkey,
            throttle: &mut self.throttle,
        }
    }
}

/// Touch and text events only: the viewport never changes, so a fresh device after a
/// resumption shows the same geometry the killed run had.
fn touch_monkey(seed: u64) -> Monkey {
    let weights = EventWeights::with_overrides(&[
        (EventCategory::Touch, 80.0),
        (EventCategory::Text, 20.0),
        (EventCategory::Motion, 0.0),
        (EventCategory::Nav, 0.0),
        (EventCategory::Page, 0.0),
        (EventCategory::System, 0.0),
    ])
    .unwrap();
    Monkey::new(MonkeyConfig { seed, weights })
}

fn steps(n: u64) -> ExploreConfig {
    ExploreConfig {
        steps: Some(n),
        ..ExploreConfig::default()
    }
}

fn events(dir: &std::path::Path) -> Vec<EventRecord> {
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn run_once(dir: &std::path::Path, seed: u64, n: u64) -> Vec<StepRecord> {
    let mut rec = RunRecorder::create(dir, &serde_json::json!({})).unwrap();
    rec.durable = false;
    let mut device = Simulator::new(SimApp::demo());
    explore(
        &mut device,
        &mut touch_monkey(seed),
        &mut FixedThrottle::none(),
        &mut rec,
        &steps(n),
    )
    .unwrap();
    read_steps(dir).unwrap()
}

#[test]
fn workers_share_the_budget_the_step_numbers_and_the_coverage() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = RunRecorder::create(dir.path(), &serde_json::json!({})).unwrap();
    rec.durable = false;
    let summary = explore_parallel(
        2,
        |i| {
            Ok(SimWorker {
                device: Simulator::new(SimApp::generate(3, 8, 6)),
                monkey: touch_monkey(10 + u64::from(i)),
                throttle: FixedThrottle::none(),
            })
        },
        &mut rec,
        &steps(60),
    )
    .unwrap();
    assert_eq!(summary.steps, 60);
    assert_eq!(summary.workers, 2);
    assert_eq!(summary.steps_by_worker.iter().sum::<u64>(), 60);
    let recorded = read_steps(dir.path()).unwrap();
    assert_eq!(
        recorded.iter().map(|s| s.step).collect::<Vec<_>>(),
        (1..=60).collect::<Vec<_>>(),
        "steps are numbered across workers in the order they were written"
    );
    for w in 0..2 {
        let n = recorded.iter().filter(|s| s.worker == Some(w)).count() as u64;
        assert_eq!(n, summary.steps_by_worker[w as usize]);
        assert!(n > 0, "worker {w} took no step");
    }
    for s in &recorded {
        assert!(dir.path().join(&s.screenshot).is_file(), "{}", s.screenshot);
    }
    assert!(dir.path().join("screenshots/step-000000.png").is_file());
    assert!(dir.path().join("screenshots/start-000000-w1.png").is_file());

    // Coverage is the union of both workers' functions, and never goes down.
    let union: HashSet<&String> = recorded.iter().flat_map(|s| &s.new_functions).collect();
    let last = summary.coverage.unwrap();
    assert_eq!(last.functions_covered, union.len() as u64);
    let covered: Vec<u64> = recorded
        .iter()
        .map(|s| s.coverage.unwrap().functions_covered)
        .collect();
    assert!(covered.windows(2).all(|w| w[0] <= w[1]), "{covered:?}");
}

#[test]
fn a_killed_run_resumes_with_its_counters_and_the_strategy_where_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = run_once(&tmp.path().join("whole"), 4, 50);

    // The run is killed after step 20, in the middle of writing step 21.
    let dir = tmp.path().join("killed");
    run_once(&dir, 4, 20);
    std::fs::remove_file(dir.join("summary.json")).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("steps.jsonl"))
        .unwrap();
    f.write_all(br#"{"step":21,"action":{"ki"#).unwrap();
    drop(f);

    let mut rec = RunRecorder::resume(&dir).unwrap();
    rec.durable = false;
    assert_eq!(rec.take_prior().unwrap().last_step(), 20);
    // Taken by the test above: reopen to hand it to the loop (after letting go of the
    // folder, which one recorder writes at a time).
    drop(rec);
    let mut rec = RunRecorder::resume(&dir).unwrap();
    rec.durable = false;
    let mut device = Simulator::new(SimApp::demo());
    let summary = explore(
        &mut device,
        &mut touch_monkey(4),
        &mut FixedThrottle::none(),
        &mut rec,
        &steps(50),
    )
    .unwrap();
    assert_eq!(summary.steps, 50);
    assert_eq!(summary.resumed_at, vec![20]);
    let resumed = read_steps(&dir).unwrap();
    assert_eq!(
        resumed.iter().map(|s| s.step).collect::<Vec<_>>(),
        (1..=50).collect::<Vec<_>>(),
        "the torn line is gone and numbering goes on"
    );
    // Monkey's choices continue from where its random stream was: the same actions as
    // the run that was never killed.
    let actions = |steps: &[StepRecord]| steps.iter().map(|s| s.action.clone()).collect::<Vec<_>>();
    assert_eq!(actions(&resumed), actions(&reference));
    let evs = events(&dir);
    assert!(evs.iter().any(|e| e.event == "resumed"), "{evs:?}");
    assert!(!evs.iter().any(|e| e.event == "replay_diverged"), "{evs:?}");
    assert!(dir.join("screenshots/start-000020-w0.png").is_file());
    // Elapsed time and coverage continue too: the fresh device's coverage joins what was
    // covered before the kill.
    assert!(resumed[20].elapsed_ms >= resumed[19].elapsed_ms);
    let covered = |i: usize| resumed[i].coverage.unwrap().functions_covered;
    assert!(
        covered(20) >= covered(19),
        "{} < {}",
        covered(20),
        covered(19)
    );
    let union: HashSet<&String> = resumed.iter().flat_map(|s| &s.new_functions).collect();
    assert_eq!(
        summary.coverage.unwrap().functions_covered,
        union.len() as u64
    );
}

#[test]
fn resuming_a_folder_without_a_run_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let err = RunRecorder::resume(tmp.path()).unwrap_err().to_string();
    assert!(err.contains(&tmp.path().display().to_string()), "{err}");
    assert!(err.contains("no run.json"), "{err}");

    std::fs::write(tmp.path().join("run.json"), "{ not json").unwrap();
    let err = RunRecorder::resume(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("run.json"), "{err}");
}

#[test]
fn a_worker_number_beyond_the_workers_is_an_error_not_an_allocation() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    // No `workers` in the meta: the bound is the workers the loop runs now.
    let mut recorded = run_once(&dir, 4, 3);
    std::fs::remove_file(dir.join("summary.json")).unwrap();
    recorded[1].worker = Some(u32::MAX - 1);
    let mut text = String::new();
    for s in &recorded {
        text.push_str(&serde_json::to_string(s).unwrap());
        text.push('\n');
    }
    std::fs::write(dir.join("steps.jsonl"), text).unwrap();

    let mut rec = RunRecorder::resume(&dir).unwrap();
    rec.durable = false;
    let err = explore(
        &mut Simulator::new(SimApp::demo()),
        &mut touch_monkey(4),
        &mut FixedThrottle::none(),
        &mut rec,
        &steps(10),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("steps.jsonl"), "{err}");
    assert!(err.contains("step 2 names worker 4294967294"), "{err}");
}
