//! Presets of the agent, and switching its plug-ins on and off by name.
//!
//! The paper's agent is [`AgentConfig::paper`]: Eq. 1 for every step, Eq. 3 targets from
//! the network being trained, a Boltzmann choice over Q-values with system actions
//! weighted 0.5, pages the same at a similarity of 0.75, and nothing else. Everything
//! this workspace added on top of it is a *plug-in*, listed once in [`PLUGINS`] with its
//! name, what it does and whether [`AgentConfig::default`] switches it on.
//! [`AgentConfig::random`] is the baseline that isolates what learning adds: the same
//! vision and the same candidates as the default agent, one drawn uniformly.
//!
//! ```
//! use gui_rl::{AgentConfig, Preset};
//!
//! let paper = AgentConfig::preset(Preset::Paper);
//! assert!(paper.plugins_on().is_empty());
//! let mut config = AgentConfig::preset(Preset::Default);
//! config.apply_plugins("-stall-reset,command-states")?;
//! assert!(config.plugins_on().contains(&"command-states"));
//! assert!(AgentConfig::default().apply_plugins("telepathy").is_err());
//! # Ok::<(), gui_rl::Error>(())
//! ```

use serde::{Deserialize, Serialize};

use crate::plugins::{PLUGINS, PluginInfo, Role, plugin};
use crate::{AgentConfig, Error, Result};

/// How the agent picks among the weighed candidates of a screen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Choice {
    /// Q-values through the Boltzmann policy (Sections 3.4, 3.4.3), with whatever the
    /// plug-ins add; the network learns after every step.
    #[default]
    Boltzmann,
    /// Each candidate equally likely, from the run's seeded RNG. No Q-values are computed,
    /// nothing goes into the exploration memory and the network never trains.
    Uniform,
}

/// A named starting point for an [`AgentConfig`]; `--preset` of `pirltest`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// [`AgentConfig::paper`].
    Paper,
    /// [`AgentConfig::default`]: the paper with the plug-ins marked `in_default`.
    #[default]
    Default,
    /// [`AgentConfig::random`].
    Random,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Paper, Preset::Default, Preset::Random];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Paper => "paper",
            Preset::Default => "default",
            Preset::Random => "random",
        }
    }
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Preset {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| Error::Config {
                field: "preset",
                message: format!("unknown preset `{s}`; the presets are paper, default, random"),
            })
    }
}

impl AgentConfig {
    /// The configuration a [`Preset`] names.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Paper => Self::paper(),
            Preset::Default => Self::default(),
            Preset::Random => Self::random(),
        }
    }

    /// The paper's agent: no plug-in ([`PLUGINS`]) on.
    ///
    /// - Page identity (Section 3.3): widget and layout similarity weighted 0.5–0.5,
    ///   the same page at 0.75, widgets matched one to one at IoU ≥ 0.8 (the threshold
    ///   the paper states for detected widgets; it names none for matching).
    /// - Reward: Eq. 1 for every step, `(1 − n_{t+1}/m_{t+1}) / √N_t`.
    /// - Learning (Sections 3.4.1, 3.4.2, 3.5): after every step, 64 memory entries (the
    ///   newest half and a random half of the rest), Eq. 3 targets with `max Q(s', a)`
    ///   from the network being trained (no target network), 5 epochs of Adam at 0.01 on
    ///   batches of 64, a fully connected network of four hidden layers of 512.
    /// - Choice (Sections 3.4, 3.4.3): the Q-values, system actions' weighted by 0.5,
    ///   through the SoftMax function, which the paper gives without a temperature:
    ///   temperature 1. One draw from the seeded RNG.
    ///
    /// What the paper leaves open or what this workspace cannot match, kept here:
    /// - Vectors: a widget is CNN feature (128) ‖ 16×16 location mask (256) ‖ kind
    ///   one-hot (14), not VGG-16's 4096 ‖ 4096 ‖ 14; the state is 910 numbers, not
    ///   8718; an action 421, not 8224 ([`EmbedConfig::paper`](gui_vision::EmbedConfig::paper)
    ///   puts the location through the CNN, as the paper does, at a CNN pass per widget).
    /// - Discount `γ` = 0.9: the paper does not state it.
    /// - Eq. 3's next-state value is clamped to what discounted rewards in `[0, 1]` can
    ///   reach ([`QNetworkConfig::reward_range`](crate::QNetworkConfig::reward_range)):
    ///   without it the paper's learning rate made the values run away.
    /// - Bounds for long runs: at most 100,000 memory entries, 10,000 pages and
    ///   [`MAX_KNOWN_WIDGETS`](crate::MAX_KNOWN_WIDGETS) widgets per page.
    /// - A page's state vector is that of its first screen, so that every visit of a
    ///   page has the same state.
    /// - A screen with no candidate at all gets `return`.
    pub fn paper() -> Self {
        let mut config = Self {
            temperature: 1.0,
            ..Self::default()
        };
        config.pages.same_page = 0.75;
        for p in PLUGINS {
            (p.set)(&mut config, false);
        }
        config
    }

    /// The widget-random baseline: the default agent's vision, pages and candidates
    /// (its [`Role::Sees`] plug-ins), one candidate drawn uniformly from the seeded RNG,
    /// and no learning: no Q-value is computed and the network never trains. What the
    /// default agent finds beyond this is what its learning and weighing add.
    pub fn random() -> Self {
        let mut config = Self {
            choice: Choice::Uniform,
            ..Self::default()
        };
        for p in PLUGINS.iter().filter(|p| p.role != Role::Sees) {
            (p.set)(&mut config, false);
        }
        config
    }

    /// The plug-ins in effect, in registry order: those switched on whose needs are on
    /// too.
    pub fn plugins_on(&self) -> Vec<&'static str> {
        PLUGINS
            .iter()
            .filter(|p| self.plugin_in_effect(p))
            .map(|p| p.name)
            .collect()
    }

    fn plugin_in_effect(&self, p: &PluginInfo) -> bool {
        p.is_on(self)
            && p.needs
                .iter()
                .all(|n| plugin(n).is_ok_and(|n| self.plugin_in_effect(n)))
    }

    /// Switches the plug-in `name` on or off. On switches on what it needs; off
    /// switches off what needs it.
    pub fn set_plugin(&mut self, name: &str, on: bool) -> Result<()> {
        let p = plugin(name)?;
        if on {
            for need in p.needs {
                self.set_plugin(need, true)?;
            }
            (p.set)(self, true);
        } else {
            (p.set)(self, false);
            for dependent in PLUGINS.iter().filter(|d| d.needs.contains(&name)) {
                self.set_plugin(dependent.name, false)?;
            }
        }
        Ok(())
    }

    /// Applies a `--plugins` list: comma-separated names, each switched on, or off when
    /// it starts with `-`. Later names win. An unknown name is refused with the list of
    /// known ones.
    pub fn apply_plugins(&mut self, spec: &str) -> Result<()> {
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item.strip_prefix('-') {
                Some(name) => self.set_plugin(name.trim(), false)?,
                None => self.set_plugin(item.strip_prefix('+').unwrap_or(item), true)?,
            }
        }
        Ok(())
    }

    /// Refuses plug-ins that weigh or learn under the [uniform choice](Choice::Uniform),
    /// which neither weighs nor learns.
    pub(crate) fn validate_plugins(&self) -> Result<()> {
        if self.choice == Choice::Uniform {
            let ignored: Vec<&str> = PLUGINS
                .iter()
                .filter(|p| p.role != Role::Sees && self.plugin_in_effect(p))
                .map(|p| p.name)
                .collect();
            if !ignored.is_empty() {
                return Err(Error::Config {
                    field: "plugins",
                    message: format!(
                        "the uniform choice neither weighs candidates nor learns, so {} \
                         would do nothing; switch them off",
                        ignored.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_preset_is_the_paper() {
        let c = AgentConfig::paper();
        assert!(c.plugins_on().is_empty(), "{:?}", c.plugins_on());
        assert_eq!(c.pages.same_page, 0.75);
        assert_eq!(c.pages.widget_weight, 0.5);
        // Eq. 1 pays every step; Eq. 3's targets come from the network being trained.
        assert_eq!(c.idle_reward, None);
        assert_eq!(c.target_every, 0);
        assert_eq!(c.choice, Choice::Boltzmann);
        assert_eq!(c.system_weight, 0.5);
        assert_eq!(c.temperature, 1.0);
        assert_eq!(c.train_every, 1);
        assert_eq!((c.learning_rate, c.batch_size, c.epochs), (0.01, 64, 5));
        assert_eq!(c.hidden, vec![512; 4]);
        assert_eq!(c.train_samples, 64);
        // Every heuristic field at its off value.
        for p in PLUGINS {
            assert!(!p.is_on(&c), "{} is on", p.name);
        }
        assert_eq!(c.local_page, 0.0);
        assert_eq!(c.resize_budget, 1.0);
        assert_eq!(c.sequence_budget, 0);
        assert_eq!(c.stall_steps, 0);
    }

    #[test]
    fn the_default_preset_is_the_default_with_its_plugins() {
        assert_eq!(AgentConfig::preset(Preset::Default), AgentConfig::default());
        let on = AgentConfig::default().plugins_on();
        let marked: Vec<&str> = PLUGINS
            .iter()
            .filter(|p| p.in_default)
            .map(|p| p.name)
            .collect();
        assert_eq!(on, marked);
    }

    #[test]
    fn the_random_preset_sees_like_the_default_and_neither_weighs_nor_learns() {
        let c = AgentConfig::random();
        let d = AgentConfig::default();
        assert_eq!(c.choice, Choice::Uniform);
        assert_eq!(
            (c.pages, c.embed, c.extract.clone(), c.layout.clone()),
            (d.pages, d.embed, d.extract.clone(), d.layout.clone())
        );
        assert_eq!(c.actions, d.actions);
        for p in PLUGINS {
            let expect = p.role == Role::Sees && p.in_default;
            assert_eq!(p.is_on(&c), expect, "{}", p.name);
        }
        c.validate_plugins().unwrap();
    }

    #[test]
    fn the_uniform_choice_refuses_weighing_plugins_by_name() {
        let mut c = AgentConfig::random();
        c.apply_plugins("effect-prior").unwrap();
        let err = c.validate_plugins().unwrap_err().to_string();
        assert!(err.contains("effect-prior"), "{err}");
    }

    #[test]
    fn plugins_switch_on_what_they_need_and_off_what_needs_them() {
        let mut c = AgentConfig::paper();
        c.apply_plugins("fresh-exits").unwrap();
        assert_eq!(
            c.plugins_on(),
            ["effect-prior", "frontier", "frontier-mass", "fresh-exits"]
        );
        c.apply_plugins("-effect-prior, stall-reset").unwrap();
        assert_eq!(c.plugins_on(), ["stall-reset"]);
        assert_eq!(c.stall_steps, AgentConfig::default().stall_steps);
    }

    #[test]
    fn a_knob_switched_on_keeps_its_value_and_off_takes_its_off_value() {
        let mut c = AgentConfig {
            stall_steps: 7,
            ..AgentConfig::default()
        };
        c.apply_plugins("stall-reset").unwrap();
        assert_eq!(c.stall_steps, 7);
        c.apply_plugins("-stall-reset,-idle-reward").unwrap();
        assert_eq!((c.stall_steps, c.idle_reward), (0, None));
        c.apply_plugins("+idle-reward").unwrap();
        assert_eq!(c.idle_reward, Some(0.0));
    }

    #[test]
    fn an_unknown_plugin_is_refused_with_the_known_names() {
        let err = AgentConfig::default()
            .apply_plugins("effect-prior,telepathy")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`telepathy`"), "{err}");
        for p in PLUGINS {
            assert!(err.contains(p.name), "{err}");
        }
        let err = "fast".parse::<Preset>().unwrap_err().to_string();
        assert!(err.contains("paper, default, random"), "{err}");
    }

    #[test]
    fn every_need_names_a_plugin_listed_before_it() {
        for (i, p) in PLUGINS.iter().enumerate() {
            for need in p.needs {
                let j = PLUGINS.iter().position(|q| q.name == *need);
                assert!(j.is_some_and(|j| j < i), "{} needs {need}", p.name);
            }
        }
    }
}
