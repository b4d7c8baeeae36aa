//! The PIRLTest agent on screenshots alone: pages, transitions, memory and odd screens.

use gui_core::{ActionGroup, ActionKind, Platform, Screenshot};
use gui_rl::{AgentConfig, PirlAgent};
use gui_vision::synthetic_gui_screen;
use image::RgbImage;

fn screen(seed: u64) -> Screenshot {
    Screenshot::new(synthetic_gui_screen(640, 480, seed), 1.0, 0).unwrap()
}

fn agent() -> PirlAgent {
    PirlAgent::new(AgentConfig {
        seed: 7,
        ..AgentConfig::default()
    })
    .unwrap()
}

#[test]
fn the_same_screen_is_one_page_and_each_step_is_remembered() {
    let mut a = agent();
    let shot = screen(1);
    for _ in 0..4 {
        a.decide(&shot, Platform::Web, &ActionKind::ALL).unwrap();
    }
    let stats = a.stats();
    assert_eq!(stats.pages, 1);
    assert_eq!(stats.decisions, 4);
    // The first decision closes no step; each later one closes the step before it.
    assert_eq!(stats.memory, 3);
    let page = a.pages().stats(gui_rl::PageId(0)).unwrap();
    // One arrival (the start) and three transitions back onto the page.
    assert_eq!(page.transitions(), 4);
    assert!(page.executable() > 10, "{page:?}");
    assert!((1..=3).contains(&page.executed()), "{page:?}");

    // A screen without widgets is another page.
    let blank =
        Screenshot::new(RgbImage::from_pixel(640, 480, image::Rgb([255; 3])), 1.0, 0).unwrap();
    a.decide(&blank, Platform::Web, &ActionKind::ALL).unwrap();
    assert_eq!(a.stats().pages, 2);
}

/// Learning in the background: decisions go on while a retraining runs, every step is
/// still remembered, and the network the run ends with has been trained.
#[test]
fn background_learning_keeps_every_step_and_trains() {
    let mut a = PirlAgent::new(AgentConfig {
        seed: 7,
        train_async: true,
        ..AgentConfig::default()
    })
    .unwrap();
    let decisions = 12;
    for i in 0..decisions {
        a.decide(&screen(1 + i % 3), Platform::Web, &ActionKind::ALL)
            .unwrap();
    }
    let stats = a.stats();
    assert_eq!(stats.decisions, decisions);
    assert_eq!(stats.memory, decisions as usize - 1);
    assert!(
        (1..decisions).contains(&stats.retrainings),
        "{} retrainings",
        stats.retrainings
    );
    assert!(a.network().unwrap().adam_steps() > 0);
}

#[test]
fn a_restart_starts_a_new_episode() {
    let mut a = agent();
    a.decide(&screen(1), Platform::Web, &ActionKind::ALL)
        .unwrap();
    a.reset_episode();
    a.decide(&screen(1), Platform::Web, &ActionKind::ALL)
        .unwrap();
    assert_eq!(a.stats().memory, 0);
}

#[test]
fn blank_and_tiny_screens_still_get_an_action() {
    let mut a = agent();
    let blank =
        Screenshot::new(RgbImage::from_pixel(320, 480, image::Rgb([255; 3])), 1.0, 0).unwrap();
    let action = a
        .decide(&blank, Platform::Android, &ActionKind::ALL)
        .unwrap();
    assert_ne!(action.kind.group(), ActionGroup::Widget, "{action:?}");
    let tiny = Screenshot::new(RgbImage::from_pixel(2, 2, image::Rgb([0; 3])), 1.0, 0).unwrap();
    a.decide(&tiny, Platform::Android, &ActionKind::ALL)
        .unwrap();
}

#[test]
fn only_actions_the_device_supports_are_chosen() {
    let mut a = agent();
    let shot = screen(3);
    for _ in 0..20 {
        let action = a
            .decide(
                &shot,
                Platform::Web,
                &[ActionKind::Click, ActionKind::Return],
            )
            .unwrap();
        assert!(
            matches!(action.kind, ActionKind::Click | ActionKind::Return),
            "{action:?}"
        );
    }
}

#[test]
fn bad_settings_are_refused_by_name() {
    for (config, field) in [
        (
            AgentConfig {
                gamma: 2.0,
                ..AgentConfig::default()
            },
            "gamma",
        ),
        (
            AgentConfig {
                temperature: -1.0,
                ..AgentConfig::default()
            },
            "temperature",
        ),
        (
            AgentConfig {
                train_samples: 0,
                ..AgentConfig::default()
            },
            "train_samples",
        ),
        (
            AgentConfig {
                learning_rate: 0.0,
                ..AgentConfig::default()
            },
            "learning_rate",
        ),
    ] {
        let err = PirlAgent::new(config).unwrap_err().to_string();
        assert!(err.contains(field), "{err}");
    }
}

/// The widget-random baseline chooses among the same candidates, by the seed alone, and
/// learns nothing: no memory, no retraining.
#[test]
fn the_random_preset_draws_by_seed_and_never_trains() {
    let run = |seed| {
        let mut a = PirlAgent::new(AgentConfig {
            seed,
            ..AgentConfig::random()
        })
        .unwrap();
        let actions: Vec<String> = (0..12)
            .map(|i| {
                let action = a
                    .decide(&screen(1 + i % 3), Platform::Web, &ActionKind::ALL)
                    .unwrap();
                format!("{action:?}")
            })
            .collect();
        let stats = a.stats();
        assert_eq!((stats.memory, stats.retrainings), (0, 0), "{stats:?}");
        assert_eq!(a.network().unwrap().adam_steps(), 0);
        actions
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
}

/// The paper's agent runs as the paper has it: every step remembered and learnt from.
#[test]
fn the_paper_preset_learns_from_every_step() {
    let mut a = PirlAgent::new(AgentConfig {
        seed: 7,
        ..AgentConfig::paper()
    })
    .unwrap();
    for i in 0..6 {
        a.decide(&screen(1 + i % 2), Platform::Web, &ActionKind::ALL)
            .unwrap();
    }
    a.network().unwrap(); // waits for the retraining in flight
    let stats = a.stats();
    assert_eq!(stats.memory, 5);
    assert_eq!(stats.retrainings, 5);
    assert_eq!(
        stats.dialog_steps + stats.stalled_steps + stats.sequence_steps,
        0
    );
}
