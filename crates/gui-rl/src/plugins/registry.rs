//! The registry of plug-ins: every addition to the paper's agent, with its name, what it
//! does, whether the `default` preset has it, and how a config switches it.

use serde::{Deserialize, Serialize};

use super::{
    Plugin, code, commands, dialog, novelty, orders, pages, prior, resize, routes, values,
};
use crate::{AgentConfig, Error, Result};

/// Makes a plug-in's trait object from the config.
type Build = fn(&AgentConfig) -> Box<dyn Plugin>;

/// What part of a step a plug-in changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// What the agent takes for the page and its candidates, or whether a step showed
    /// something new. The [uniform choice](crate::Choice::Uniform) keeps these.
    Sees,
    /// How the candidates of a screen are weighed or picked.
    Weighs,
    /// What the network learns from: the reward or the targets.
    Learns,
}

/// One plug-in of the registry [`PLUGINS`].
#[derive(Clone, Copy)]
pub struct PluginInfo {
    /// The name `--plugins` takes.
    pub name: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// Whether [`AgentConfig::default`] switches it on.
    pub in_default: bool,
    pub role: Role,
    /// Plug-ins it works through; switching it on switches these on, and switching one
    /// of these off switches it off.
    pub needs: &'static [&'static str],
    is_on: fn(&AgentConfig) -> bool,
    pub(crate) set: fn(&mut AgentConfig, bool),
    /// `None` for a setting of the paper's parts or a refinement of another plug-in.
    pub(crate) build: Option<Build>,
}

impl std::fmt::Debug for PluginInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginInfo")
            .field("name", &self.name)
            .field("in_default", &self.in_default)
            .field("role", &self.role)
            .field("needs", &self.needs)
            .finish()
    }
}

impl PluginInfo {
    /// Whether `config` has this plug-in on (its own switch; see
    /// [`AgentConfig::plugins_on`] for the ones in effect).
    pub fn is_on(&self, config: &AgentConfig) -> bool {
        (self.is_on)(config)
    }
}

/// A numeric knob that is a plug-in: off at `off`; switched on, at `on` unless already on
/// at another value.
macro_rules! knob {
    ($field:ident, $off:expr, $on:expr) => {
        (
            |c: &AgentConfig| c.$field != $off,
            |c: &mut AgentConfig, on: bool| {
                if !on {
                    c.$field = $off;
                } else if c.$field == $off {
                    c.$field = $on;
                }
            },
        )
    };
}

/// A boolean field that is a plug-in.
macro_rules! switch {
    ($field:ident) => {
        (
            |c: &AgentConfig| c.$field,
            |c: &mut AgentConfig, on: bool| c.$field = on,
        )
    };
}

macro_rules! plugin {
    ($name:literal, $default:literal, $role:ident, [$($need:literal),*], $access:expr, $build:expr, $summary:literal) => {{
        let (is_on, set) = $access;
        PluginInfo {
            name: $name,
            summary: $summary,
            in_default: $default,
            role: Role::$role,
            needs: &[$($need),*],
            is_on,
            set,
            build: $build,
        }
    }};
}

/// The trait object of plug-in type `$t`, made by its `new(&AgentConfig)`.
macro_rules! object {
    ($t:ty) => {
        Some(|c: &AgentConfig| -> Box<dyn Plugin> { Box::new(<$t>::new(c)) } as Build)
    };
}

/// Every addition to the paper's agent, in the order a step meets them (`docs/pirltest.md`
/// has the table with the reasons). Each row: name, whether `default` has it, role, what
/// it needs, the config field that switches it, its trait object, and what it does.
#[rustfmt::skip]
pub const PLUGINS: &[PluginInfo] = &[
    plugin! { "modal-focus", true, Sees, [], switch!(modal_focus), object!(dialog::ModalFocus),
        "a dialog over a dimmed backdrop is the page: only its widgets are candidates" },
    plugin! { "local-page", true, Sees, [], knob!(local_page, 0.0, 0.03), object!(pages::LocalPage),
        "an action that changed at most 3 % of the screen leaves the agent on its page" },
    plugin! { "print-pages", false, Sees, [], switch!(print_pages), object!(pages::PrintPages),
        "a new screen within 3 % of the cells of a known page's screen is that page" },
    plugin! { "anchor-match", true, Sees, [], switch!(anchor_match), object!(pages::AnchorMatch),
        "a widget that kept its left edge, top edge and height is the same widget" },
    plugin! { "resize-budget", true, Sees, [], knob!(resize_budget, 1.0, 0.1), object!(resize::ResizeBudget),
        "at most 10 % of the decisions at a window size other than the start size" },
    plugin! { "local-novelty", true, Sees, [], switch!(local_novelty), object!(novelty::LocalNovelty),
        "on the same page, only the part of the screen an action changed has to be new" },
    plugin! { "region-sights", true, Sees, ["local-novelty"], knob!(region_sights, 0, 4), None,
        "a part of a page shows something new for at most 4 distinct sights" },
    plugin! { "idle-reward", true, Learns, [], knob!(idle_reward, None, Some(0.0)), object!(novelty::IdleReward),
        "a step that changed nothing but its widget's tint is paid 0, not Eq. 1" },
    plugin! { "code-novelty", false, Sees, [], switch!(code_novelty), object!(code::CodeNovelty),
        "with coverage measured, a step is new iff it ran new code, and is paid 1" },
    plugin! { "target-network", true, Learns, [], knob!(target_every, 0, 10), None,
        "Eq. 3's targets from a copy of the network refreshed every 10 retrainings" },
    plugin! { "effect-prior", true, Weighs, [], switch!(effect_prior), object!(prior::EffectPriorPlugin),
        "each softmax term times the learnt chance that the action shows something new" },
    plugin! { "state-refresh", true, Weighs, ["effect-prior"], switch!(state_refresh), object!(prior::StateRefresh),
        "a page in a new state makes its actions that showed something new untried again" },
    plugin! { "state-reward", false, Learns, ["state-refresh"], switch!(state_reward), object!(prior::StateReward),
        "a page in a new state starts Eq. 1's executed count n again" },
    plugin! { "frontier", true, Weighs, ["effect-prior"], switch!(frontier), object!(routes::FrontierRoutes),
        "an action that led to another page weighs the best chance reachable through it" },
    plugin! { "frontier-mass", true, Weighs, ["frontier"], switch!(frontier_mass), object!(routes::FrontierMass),
        "a route weighs the untried mass where it leads, less the page's own" },
    plugin! { "fresh-exits", true, Weighs, ["frontier-mass"], switch!(fresh_exits), object!(routes::FreshExits),
        "an untried action weighs at least what a page not seen yet offers" },
    plugin! { "command-states", false, Weighs, ["effect-prior"], switch!(command_states), object!(commands::CommandStates),
        "a record per (command, next action), and a command weighs what is untried after it" },
    plugin! { "optimistic", true, Weighs, [], switch!(optimistic), object!(values::Optimistic),
        "a likely untried action takes the page's best Q-value" },
    plugin! { "stall-reset", true, Weighs, [], knob!(stall_steps, 0, 20), object!(values::StallReset),
        "after 20 steps that showed nothing new, the Q-values stop ranking until one does" },
    plugin! { "command-sequences", false, Weighs, [], knob!(sequence_budget, 0, 30), object!(orders::CommandOrders),
        "up to 30 steps per screen run its commands back to back in orders not yet run" },
    plugin! { "fields-first", false, Weighs, ["command-sequences"], switch!(fields_first), None,
        "while commands run back to back, untyped text fields are typed into first" },
    plugin! { "settings-recheck", false, Weighs, ["command-sequences"], switch!(settings_recheck), None,
        "after a setting changed, each other screen's lone command is clicked once more" },
    plugin! { "spread-scale", false, Weighs, [], switch!(spread_scale), None,
        "Q-values divided by their spread over the screen's candidates before the softmax" },
];

/// The registry entry named `name`.
pub fn plugin(name: &str) -> Result<&'static PluginInfo> {
    PLUGINS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| Error::Config {
            field: "plugins",
            message: format!(
                "unknown plug-in `{name}`; the plug-ins are {}",
                PLUGINS
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plugin_with_an_object_builds_under_its_own_name() {
        let mut config = AgentConfig::default();
        for p in PLUGINS {
            config.set_plugin(p.name, true).unwrap();
        }
        assert_eq!(config.plugins_on().len(), PLUGINS.len());
        let built: Vec<&str> = crate::plugins::build(&config)
            .iter()
            .map(|p| p.name())
            .collect();
        let expected: Vec<&str> = PLUGINS
            .iter()
            .filter(|p| p.build.is_some())
            .map(|p| p.name)
            .collect();
        assert_eq!(built, expected);
        // The paper's agent has none.
        assert!(crate::plugins::build(&AgentConfig::paper()).is_empty());
    }

    #[test]
    fn code_novelty_judges_after_the_screen_and_before_what_learns_from_novelty() {
        let at = |name: &str| PLUGINS.iter().position(|p| p.name == name).unwrap();
        for screen in ["local-novelty", "idle-reward"] {
            assert!(at(screen) < at("code-novelty"), "{screen}");
        }
        for learner in [
            "effect-prior",
            "state-refresh",
            "state-reward",
            "command-states",
            "stall-reset",
        ] {
            assert!(at("code-novelty") < at(learner), "{learner}");
        }
        let info = plugin("code-novelty").unwrap();
        assert!(!info.in_default);
        assert_eq!(info.role, Role::Sees);
        assert!(!info.is_on(&AgentConfig::default()));

        // `--plugins code-novelty` on the default keeps the rest, which learn from it.
        let mut config = AgentConfig::default();
        config.apply_plugins("code-novelty").unwrap();
        assert!(config.code_novelty);
        let mut expected = AgentConfig::default().plugins_on();
        let i = expected.iter().position(|n| *n == "idle-reward").unwrap();
        expected.insert(i + 1, "code-novelty");
        assert_eq!(config.plugins_on(), expected);
        let built: Vec<&str> = crate::plugins::build(&config)
            .iter()
            .map(|p| p.name())
            .collect();
        assert!(built.contains(&"code-novelty") && built.contains(&"effect-prior"));
        // It needs nothing, and the widget-random baseline may count by it.
        let mut paper = AgentConfig::paper();
        paper.apply_plugins("code-novelty").unwrap();
        assert_eq!(paper.plugins_on(), ["code-novelty"]);
        let mut random = AgentConfig::random();
        random.apply_plugins("code-novelty").unwrap();
        random.validate_plugins().unwrap();
        config.apply_plugins("-code-novelty").unwrap();
        assert_eq!(config, AgentConfig::default());
    }
}
