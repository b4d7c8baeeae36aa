//! Random events in the manner of Android's Monkey: each event's type is drawn from
//! configurable percentages, its position uniformly from the screen, and nothing is learnt.
//! The random stream depends only on the seed and the viewport sizes the device reports,
//! so the same seed on the same app gives the same event sequence.

use gui_core::{Action, ActionKind, ActionParam, Point, SwipeDirection};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Observation, Result, Strategy};

/// Event types, grouped like Monkey's `--pct-*` options over our 17 actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventCategory {
    /// click, double click, long click, middle and right click (Monkey `--pct-touch`).
    Touch,
    /// drag and swipe (Monkey `--pct-motion`).
    Motion,
    /// input of a random string.
    Text,
    /// return / history back (Monkey `--pct-nav`).
    Nav,
    /// split screen, window size, orientation (Monkey `--pct-rotation`).
    Page,
    /// back switch, permission grant/deny, network switch, phone interrupt (Monkey
    /// `--pct-syskeys` and `--pct-appswitch`).
    System,
}

impl EventCategory {
    pub const ALL: [EventCategory; 6] = [
        Self::Touch,
        Self::Motion,
        Self::Text,
        Self::Nav,
        Self::Page,
        Self::System,
    ];

    pub fn actions(self) -> &'static [ActionKind] {
        use ActionKind::*;
        match self {
            Self::Touch => &[Click, DoubleClick, LongClick, MidClick, RightClick],
            Self::Motion => &[Drag, Swipe],
            Self::Text => &[Input],
            Self::Nav => &[Return],
            Self::Page => &[SplitScreen, WindowSize, OrientationSwitch],
            Self::System => &[
                BackSwitch,
                AccessGrant,
                AccessDeny,
                NetworkSwitch,
                PhoneInterrupt,
            ],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Touch => "touch",
            Self::Motion => "motion",
            Self::Text => "text",
            Self::Nav => "nav",
            Self::Page => "page",
            Self::System => "system",
        }
    }
}

/// Percentages of each event category.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EventWeights {
    pub touch: f64,
    pub motion: f64,
    pub text: f64,
    pub nav: f64,
    pub page: f64,
    pub system: f64,
}

impl Default for EventWeights {
    /// Touch and motion dominate, as in Monkey's defaults; rare page and system events
    /// keep runs on one screen long enough to get somewhere.
    fn default() -> Self {
        Self {
            touch: 55.0,
            motion: 15.0,
            text: 10.0,
            nav: 8.0,
            page: 4.0,
            system: 8.0,
        }
    }
}

impl EventWeights {
    pub fn get(&self, c: EventCategory) -> f64 {
        match c {
            EventCategory::Touch => self.touch,
            EventCategory::Motion => self.motion,
            EventCategory::Text => self.text,
            EventCategory::Nav => self.nav,
            EventCategory::Page => self.page,
            EventCategory::System => self.system,
        }
    }

    fn set(&mut self, c: EventCategory, v: f64) {
        match c {
            EventCategory::Touch => self.touch = v,
            EventCategory::Motion => self.motion = v,
            EventCategory::Text => self.text = v,
            EventCategory::Nav => self.nav = v,
            EventCategory::Page => self.page = v,
            EventCategory::System => self.system = v,
        }
    }

    /// Monkey's rule: the given percentages are kept, and what is left of 100 is shared by
    /// the categories not given, in proportion to their defaults. Fails when a value is not
    /// a percentage or the given ones add up to more than 100.
    pub fn with_overrides(overrides: &[(EventCategory, f64)]) -> Result<Self> {
        let mut w = Self::default();
        let mut given = 0.0;
        for &(c, v) in overrides {
            if !(0.0..=100.0).contains(&v) {
                return Err(Error::Config(format!(
                    "--pct-{} {v}: a percentage must be within 0..=100",
                    c.name()
                )));
            }
            given += v;
        }
        if given > 100.0 + 1e-9 {
            return Err(Error::Config(format!(
                "event percentages add up to {given}, more than 100"
            )));
        }
        let free: Vec<EventCategory> = EventCategory::ALL
            .into_iter()
            .filter(|c| !overrides.iter().any(|(o, _)| o == c))
            .collect();
        let free_default: f64 = free.iter().map(|c| w.get(*c)).sum();
        for c in &free {
            let share = if free_default > 0.0 {
                w.get(*c) / free_default
            } else {
                0.0
            };
            w.set(*c, (100.0 - given) * share);
        }
        for &(c, v) in overrides {
            w.set(c, v);
        }
        if EventCategory::ALL.iter().all(|c| w.get(*c) == 0.0) {
            return Err(Error::Config("all event percentages are zero".into()));
        }
        Ok(w)
    }
}

/// Settings of the Monkey strategy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonkeyConfig {
    pub seed: u64,
    pub weights: EventWeights,
}

/// The random baseline.
#[derive(Debug)]
pub struct Monkey {
    rng: ChaCha8Rng,
    weights: EventWeights,
}

impl Monkey {
    pub fn new(config: MonkeyConfig) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            weights: config.weights,
        }
    }

    fn random_text(&mut self) -> String {
        // Mostly short words, sometimes numbers, empty strings, long or odd input.
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        match self.rng.random_range(0..10) {
            0 => String::new(),
            1 => self.rng.random_range(-1000i64..100_000).to_string(),
            2 => "<b>&\"'%;--".to_owned(),
            3 => (0..self.rng.random_range(40..120)).map(|_| 'x').collect(),
            // A word, then Enter half the time (a trailing newline presses it).
            _ => {
                let mut word: String = (0..self.rng.random_range(3..12))
                    .map(|_| ALPHABET[self.rng.random_range(0..ALPHABET.len())] as char)
                    .collect();
                if self.rng.random_bool(0.5) {
                    word.push('\n');
                }
                word
            }
        }
    }
}

impl Strategy for Monkey {
    fn name(&self) -> &str {
        "monkey"
    }

    fn choose(&mut self, obs: &Observation<'_>) -> Action {
        // Categories the device can serve, weighted.
        let usable: Vec<(EventCategory, f64, Vec<ActionKind>)> = EventCategory::ALL
            .into_iter()
            .filter_map(|c| {
                let kinds: Vec<_> = c
                    .actions()
                    .iter()
                    .copied()
                    .filter(|k| obs.actions.contains(k))
                    .collect();
                let w = self.weights.get(c);
                (w > 0.0 && !kinds.is_empty()).then_some((c, w, kinds))
            })
            .collect();
        let total: f64 = usable.iter().map(|u| u.1).sum();
        let Some(kinds) = (if total > 0.0 {
            let mut r = self.rng.random_range(0.0..total);
            usable.iter().find(|u| {
                r -= u.1;
                r < 0.0
            })
        } else {
            None
        })
        .or(usable.last())
        .map(|u| u.2.clone()) else {
            // Nothing the weights allow is supported: fall back to a click.
            return Action::at(ActionKind::Click, Point::new(0, 0));
        };
        let kind = kinds[self.rng.random_range(0..kinds.len())];
        let vp = obs.viewport;
        let point = Point::new(
            self.rng.random_range(0..vp.width.max(1)) as i32,
            self.rng.random_range(0..vp.height.max(1)) as i32,
        );
        let base = if kind.needs_target() {
            Action::at(kind, point)
        } else {
            Action::new(kind)
        };
        match kind {
            ActionKind::Input => {
                let text = self.random_text();
                base.with_param(ActionParam::Text(text))
            }
            ActionKind::Drag => {
                let dx = self
                    .rng
                    .random_range(-(vp.width as i32) / 4..=vp.width as i32 / 4);
                let dy = self
                    .rng
                    .random_range(-(vp.height as i32) / 4..=vp.height as i32 / 4);
                base.with_param(ActionParam::Offset { dx, dy })
            }
            ActionKind::Swipe => {
                let d = if self.rng.random_bool(0.5) {
                    SwipeDirection::Up
                } else {
                    SwipeDirection::Down
                };
                base.with_param(ActionParam::Direction(d))
            }
            ActionKind::WindowSize => {
                // Ratios 0.50, 0.55, ..., 1.50 of the start size.
                let r = 0.5 + 0.05 * self.rng.random_range(0..=20) as f32;
                base.with_param(ActionParam::Ratio(r))
            }
            _ => base,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gui_core::{Platform, Screenshot, Size};

    fn run(seed: u64, n: usize) -> Vec<Action> {
        let shot = Screenshot::new(image::RgbImage::new(4, 4), 1.0, 0).unwrap();
        let actions: Vec<_> = ActionKind::supported(Platform::Web).collect();
        let mut m = Monkey::new(MonkeyConfig {
            seed,
            ..MonkeyConfig::default()
        });
        (0..n)
            .map(|i| {
                m.choose(&Observation {
                    step: i as u64 + 1,
                    screenshot: &shot,
                    viewport: Size::new(1280, 800),
                    platform: Platform::Web,
                    actions: &actions,
                    ui: None,
                })
            })
            .collect()
    }

    #[test]
    fn same_seed_same_events_other_seed_other_events() {
        assert_eq!(run(3, 200), run(3, 200));
        assert_ne!(run(3, 200), run(4, 200));
    }

    #[test]
    fn events_follow_the_percentages_and_the_platform() {
        let events = run(11, 4000);
        let web: Vec<_> = ActionKind::supported(Platform::Web).collect();
        assert!(events.iter().all(|a| web.contains(&a.kind)));
        let touch = events
            .iter()
            .filter(|a| EventCategory::Touch.actions().contains(&a.kind))
            .count();
        // 55% expected; 4000 draws keep it within a few points.
        let share = touch as f64 / events.len() as f64;
        assert!((0.51..0.59).contains(&share), "touch share {share}");
        assert!(
            events
                .iter()
                .filter_map(|a| a.point())
                .all(|p| Size::new(1280, 800).contains(p))
        );
    }

    #[test]
    fn overrides_follow_monkeys_rule() {
        let w = EventWeights::with_overrides(&[(EventCategory::Touch, 80.0)]).unwrap();
        let sum: f64 = EventCategory::ALL.iter().map(|c| w.get(*c)).sum();
        assert!((sum - 100.0).abs() < 1e-9);
        assert_eq!(w.touch, 80.0);
        // The other five share 20 in their default proportions (15:10:8:4:8).
        assert!((w.motion - 20.0 * 15.0 / 45.0).abs() < 1e-9);
        assert!(
            EventWeights::with_overrides(&[
                (EventCategory::Touch, 80.0),
                (EventCategory::Nav, 30.0)
            ])
            .is_err()
        );
        assert!(EventWeights::with_overrides(&[(EventCategory::Text, -1.0)]).is_err());
    }
}
