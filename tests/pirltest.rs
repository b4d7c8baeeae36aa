//! The PIRLTest agent through the exploration loop: the same seed gives the same run on
//! the simulator, and in a real Chromium it finds a seeded bug of the demo app.
//!
//! The Chromium test needs Debian's Chromium (`cargo xtask setup` installs it); without it
//! it fails saying so.

use std::collections::BTreeSet;

use gui_core::ActionKind;
use gui_driver::{ChromiumConfig, ChromiumDevice, SimApp, Simulator, StaticServer};
use gui_explore::{ExploreConfig, FixedThrottle, RunRecorder, Summary, explore, read_steps};
use gui_rl::{AgentConfig, PirlAgent, QNetwork};
use gui_testing::pirltest::PirlStrategy;

fn agent(seed: u64) -> PirlAgent {
    PirlAgent::new(AgentConfig {
        seed,
        ..AgentConfig::default()
    })
    .unwrap()
}

/// Runs `steps` steps on the simulated demo app; returns the actions as JSON lines.
fn simulated_run(seed: u64, steps: u64, dir: &std::path::Path) -> (Vec<String>, PirlStrategy) {
    let mut device = Simulator::new(SimApp::demo());
    let mut strategy = PirlStrategy::new(agent(seed));
    let mut recorder = RunRecorder::create(dir, &serde_json::json!({ "seed": seed })).unwrap();
    let config = ExploreConfig {
        steps: Some(steps),
        ..ExploreConfig::default()
    };
    explore(
        &mut device,
        &mut strategy,
        &mut FixedThrottle::none(),
        &mut recorder,
        &config,
    )
    .unwrap();
    let actions = read_steps(dir)
        .unwrap()
        .iter()
        .map(|s| serde_json::to_string(&s.action).unwrap())
        .collect();
    (actions, strategy)
}

#[test]
fn the_same_seed_gives_the_same_run_on_the_simulator() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, mut first) = simulated_run(3, 30, &tmp.path().join("a"));
    let (b, _) = simulated_run(3, 30, &tmp.path().join("b"));
    let (c, _) = simulated_run(4, 30, &tmp.path().join("c"));
    assert_eq!(a.len(), 30);
    assert_eq!(a, b, "same seed, different actions");
    assert_ne!(a, c, "seeds 3 and 4 chose the same 30 actions");
    assert!(first.errors().is_empty(), "{:?}", first.errors());

    let stats = first.agent().stats();
    assert!(stats.pages >= 2, "the agent saw one page only: {stats:?}");
    // Every step but the first closes a transition, and each one retrains the network.
    assert_eq!(stats.memory, 29);
    let network = first.agent_mut().network().unwrap();
    assert!(network.adam_steps() > 0);

    // What was learnt is saved, and a new agent starts from it.
    let path = tmp.path().join("q.safetensors");
    first.agent_mut().save_network(&path).unwrap();
    let loaded = QNetwork::load(&path).unwrap();
    assert_eq!(loaded.adam_steps(), network_steps(&mut first));
    agent(5).with_network(loaded).unwrap();
}

fn network_steps(s: &mut PirlStrategy) -> u64 {
    s.agent_mut().network().unwrap().adam_steps()
}

#[test]
fn a_network_of_other_sizes_is_refused() {
    let mut config = gui_rl::QNetworkConfig::new(10, 20);
    config.hidden = vec![8];
    let err = agent(1)
        .with_network(QNetwork::new(config).unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("takes state 10 + action 20"), "{err}");
}

/// Started on the demo's profile form, a short run finds one of the demo's seeded bugs
/// (`examples/apps/demo/README.md`): most often D, the invalid email logged with
/// `console.error` on submit; some runs leave the form and find E, the claim on the
/// feed, first. Which one depends on the frames Chromium shows under the machine's load.
/// Clicks and typing only, so the short run stays on the task.
#[test]
fn a_short_chromium_run_finds_a_seeded_demo_bug() {
    let server = StaticServer::demo().expect("serve demo app");
    let url = format!("{}#/form", server.url());
    let mut device = ChromiumDevice::launch(&url, ChromiumConfig::default())
        .unwrap_or_else(|e| panic!("cannot start Chromium for the browser tests: {e}"));
    let mut config = AgentConfig {
        seed: 1,
        ..AgentConfig::default()
    };
    config.actions.enabled = BTreeSet::from([ActionKind::Click, ActionKind::Input]);
    let mut strategy = PirlStrategy::new(PirlAgent::new(config).unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut recorder = RunRecorder::create(&dir, &serde_json::json!({ "seed": 1 })).unwrap();
    let explore_config = ExploreConfig {
        steps: Some(120),
        ..ExploreConfig::default()
    };
    let summary: Summary = explore(
        &mut device,
        &mut strategy,
        &mut FixedThrottle::ms(150),
        &mut recorder,
        &explore_config,
    )
    .unwrap();
    assert!(strategy.errors().is_empty(), "{:?}", strategy.errors());
    // D, E, A and B of the demo's README, by the signal each leaves.
    let seeded = [
        "ConsoleError|invalid email",
        "UncaughtException|TypeError: Cannot read properties of undefined (reading 'code')|claimOffer",
        "UncaughtException|TypeError: Cannot read properties of undefined (reading 'length')|undoArchive",
        "UncaughtException|TypeError: Cannot read properties of undefined (reading 'percent')|checkout",
    ];
    let found: Vec<&String> = summary
        .signal_counts
        .keys()
        .filter(|k| seeded.iter().any(|s| k.starts_with(s)))
        .collect();
    assert!(
        !found.is_empty(),
        "120 steps from #/form found no seeded bug; signals: {:?}",
        summary.signal_counts.keys().collect::<Vec<_>>()
    );
    let signals = std::fs::read_to_string(dir.join("signals.jsonl")).unwrap();
    println!("signals of the run:\n{signals}");
    let coverage = summary.coverage.expect("Chromium reports coverage");
    assert!(coverage.functions_covered > 20, "{coverage:?}");
}
