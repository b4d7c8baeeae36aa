//! The loop with polling throttles on the simulated app: the throttle's last frame becomes
//! the step's screenshot, and what the throttle did is recorded with each step.

use gui_core::Screenshot;
use gui_driver::{SimApp, Simulator};
use gui_explore::{
    Adaptive, ConsecutiveFrames, ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, PollConfig,
    RunRecorder, Throttle, explore, read_steps,
};

/// Runs 15 seeded Monkey steps with `throttle`; returns the folder and the screenshots.
fn run(throttle: &mut dyn Throttle) -> (tempfile::TempDir, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let mut device = Simulator::new(SimApp::demo());
    let mut rec = RunRecorder::create(&dir.path().join("run"), &serde_json::json!({})).unwrap();
    rec.durable = false;
    let mut monkey = Monkey::new(MonkeyConfig {
        seed: 3,
        ..MonkeyConfig::default()
    });
    let config = ExploreConfig {
        steps: Some(15),
        ..ExploreConfig::default()
    };
    explore(&mut device, &mut monkey, throttle, &mut rec, &config).unwrap();
    let shots = (0..=15)
        .map(|i| {
            std::fs::read(dir.path().join(format!("run/screenshots/step-{i:06}.png"))).unwrap()
        })
        .collect();
    (dir, shots)
}

#[test]
fn a_polling_throttle_hands_its_settled_frame_to_the_step() {
    let (_d, fixed) = run(&mut FixedThrottle::none());
    let (dir, consecutive) = run(&mut ConsecutiveFrames::new(PollConfig::default()));
    // The simulator draws synchronously: two frames always match, and the frame the
    // throttle kept is the screen a fresh screenshot would have shown.
    assert_eq!(fixed, consecutive);
    let steps = read_steps(&dir.path().join("run")).unwrap();
    assert_eq!(steps.len(), 15);
    for s in &steps {
        let t = s.timings.throttle.expect("throttle outcome recorded");
        assert_eq!((t.frames, t.capped), (2, false), "step {}", s.step);
        assert_eq!(s.timings.screenshot_ms, 0.0, "no second capture");
    }
    let line = std::fs::read_to_string(dir.path().join("run/steps.jsonl")).unwrap();
    assert!(line.contains(r#""throttle":{"waited_ms":"#), "{line}");
}

#[test]
fn adat_with_a_judge_that_never_agrees_waits_its_cap_each_step() {
    let judge = |_: &Screenshot| false;
    let mut adat = Adaptive::new(
        PollConfig::with_cap(std::time::Duration::from_millis(100)),
        Box::new(judge),
    );
    let (dir, _) = run(&mut adat);
    let steps = read_steps(&dir.path().join("run")).unwrap();
    for s in &steps {
        let t = s.timings.throttle.unwrap();
        assert!(t.capped && t.frames >= 1 && t.waited_ms >= 100.0, "{t:?}");
    }
    // It polls on while the judge says no. How many frames fit in the cap depends on
    // the machine's load (one frame took 42 ms in a loaded debug build), so this asks
    // only that some step took more than one.
    let most = steps.iter().map(|s| s.timings.throttle.unwrap().frames);
    assert!(most.max().unwrap() >= 2);
}

#[test]
fn old_step_lines_without_a_throttle_outcome_still_read() {
    let (dir, _) = run(&mut FixedThrottle::ms(1));
    let path = dir.path().join("run/steps.jsonl");
    // A line as written before throttle outcomes existed.
    let old: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["timings"]["throttle"].is_object());
            v["timings"].as_object_mut().unwrap().remove("throttle");
            v.to_string()
        })
        .collect();
    std::fs::write(&path, old.join("\n") + "\n").unwrap();
    let steps = read_steps(&dir.path().join("run")).unwrap();
    assert_eq!(steps.len(), 15);
    assert!(steps.iter().all(|s| s.timings.throttle.is_none()));
}
