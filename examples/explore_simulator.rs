//! Library use without a browser: Monkey on the simulated demo app, recorded to a run
//! folder. `cargo run --example explore_simulator`
use gui_driver::{SimApp, Simulator};
use gui_explore::{ExploreConfig, FixedThrottle, Monkey, MonkeyConfig, RunRecorder, explore};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::temp_dir().join(format!("explore-simulator-{}", std::process::id()));
    let mut device = Simulator::new(SimApp::demo());
    let mut monkey = Monkey::new(MonkeyConfig {
        seed: 7,
        ..MonkeyConfig::default()
    });
    let mut run = RunRecorder::create(
        &out,
        &serde_json::json!({ "example": "explore_simulator", "seed": 7 }),
    )?;
    let config = ExploreConfig {
        steps: Some(200),
        ..ExploreConfig::default()
    };
    let summary = explore(
        &mut device,
        &mut monkey,
        &mut FixedThrottle::none(),
        &mut run,
        &config,
    )?;
    println!(
        "{} steps, {} unique signals, coverage {:?}; run folder {}",
        summary.steps,
        summary.unique_signals,
        summary.coverage,
        out.display()
    );
    Ok(())
}
