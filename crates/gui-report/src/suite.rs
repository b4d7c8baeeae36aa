//! A suite: several strategies run over many apps and seeds, summarised per app and per
//! split of the corpus (`tune`, the apps defaults are decided on, and `test`, the apps
//! results are reported on).
//!
//! The measure is the coverage *gained beyond the first step*: functions (and bytes of
//! script in blocks that ran) covered at the end of a run less what was covered after its
//! first step, which is mostly what loading the app covers. Each number of a strategy on
//! an app is the median over seeds; each number of a split is the median over its apps.
//! Ratios compare a strategy with the two baselines on the same app, `monkey` (random
//! events on random pixels) and `widget-random` (a uniform choice among the widgets and
//! actions PIRLTest considers, from the same vision): a ratio above 1 is what the strategy
//! adds over that baseline.
//!
//! A strategy `BASE:SPEC` (plug-ins switched by SPEC, an ablation) is also set against
//! each run of `BASE` in the suite (`BASE` itself and any `BASE#LABEL`, the same
//! configuration run again) by the rule defaults are decided by: the plug-ins earn their
//! place if, with them, the split's median gain is higher and no app's median gain is
//! more than 10 % lower ([`AblationResult`]).
//!
//! [`Suite::summarise`] builds the summary from run folders, [`Suite::markdown`] and
//! [`Suite::html`] render it, and `suite.json` holds it between the two.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use gui_core::SignalKind;
use serde::{Deserialize, Serialize};

use crate::escape::escape;
use crate::plot::plot;
use crate::{Error, Result, RunFolder};

/// The baseline of random events on random pixels.
pub const MONKEY: &str = "monkey";
/// The baseline of uniform choice over the detected widgets and their actions.
pub const WIDGET_RANDOM: &str = "widget-random";
/// What the numbers of a suite's tables are, after how the runs were bounded.
const INTRO: &str = "Gains are functions (and block bytes) covered beyond the first step; \
                     medians over seeds, then over apps. Ratios are the gain over the \
                     baseline's on the same app.";
/// Columns of a split's table.
const SPLIT_HEAD: [&str; 11] = head("apps");
/// Columns of an app's table: a split's, with the runs finished in place of the apps.
const APP_HEAD: [&str; 11] = head("runs");

/// The columns of a suite's tables, the second counting `count` (apps or runs).
const fn head(count: &'static str) -> [&'static str; 11] {
    [
        "strategy",
        count,
        "function gain",
        "block gain",
        "÷ monkey",
        "÷ widget-random",
        "signals",
        "hangs",
        "crashes",
        "steps/min",
        "agent share",
    ]
}
/// Columns of the ablation table.
const ABLATION_HEAD: [&str; 8] = [
    "ablation",
    "against",
    "apps",
    "gain",
    "its gain",
    "median ÷",
    "worst app for the plug-ins",
    "plug-ins earn their place",
];
/// What the ablation table says.
const ABLATION_INTRO: &str = "Each ablation against each run of the configuration it \
     changes, over the apps both finished: the median gains, the median of the per-app \
     ratio, the app where the side with the plug-ins fared worst against the side without \
     (its gain with them over its gain without), and the rule defaults are decided by: the \
     plug-ins earn their place if the side with them has the higher median gain and no \
     app more than 10 % below the other side.";
/// The most an app's median gain may drop with a plug-in on, for the plug-in to stay.
const ABLATION_TOLERANCE: f64 = 0.9;
/// Points kept on each coverage curve of the HTML page.
const CURVE_POINTS: usize = 100;

/// One run of a suite, with where it belongs.
#[derive(Debug, Clone)]
pub struct SuiteRun {
    pub app: String,
    /// `tune` or `test` (or any other name of a group of apps).
    pub split: String,
    /// What kind of app it is (editor, chart, game…), shown beside its name.
    pub kind: String,
    pub strategy: String,
    pub seed: u64,
    pub result: RunResult,
}

/// How the suite was run, as its task was told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteSettings {
    pub strategies: Vec<String>,
    pub seeds: Vec<u64>,
    pub steps: u64,
    pub throttle: String,
    /// Runs at a time.
    pub jobs: usize,
    /// Wall-clock budget of each run of a strategy bounded in time rather than steps
    /// (grey-box, Monkey++), if the suite has one.
    #[serde(default)]
    pub minutes: Option<f64>,
}

impl SuiteSettings {
    /// One sentence on how the runs were bounded.
    fn bounds(&self) -> String {
        let mut s = format!(
            "{} steps, seeds {:?}, throttle `{}`",
            self.steps, self.seeds, self.throttle
        );
        if let Some(m) = self.minutes {
            s.push_str(&format!(
                "; strategies bounded in time get {m} min and run once per app"
            ));
        }
        s
    }
}

/// What one strategy did on one app, medians over its seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StrategyResult {
    pub strategy: String,
    /// Seeds whose run finished.
    pub runs: usize,
    /// Functions covered beyond the first step.
    pub function_gain: f64,
    /// Bytes of script in blocks that ran, beyond the first step.
    pub byte_gain: f64,
    /// Functions covered at the end.
    pub functions: f64,
    /// Unique exceptions, console errors and functional bugs.
    pub signals: f64,
    /// Unique hangs (a crash signal whose page stopped answering).
    pub hangs: f64,
    /// Unique other crashes.
    pub crashes: f64,
    pub steps_per_minute: f64,
    /// The strategy's own time (choosing, learning) as a share of the run's wall time.
    pub agent_share: f64,
    /// `function_gain` over Monkey's on the same app; `None` without Monkey or when its
    /// gain is 0.
    pub vs_monkey: Option<f64>,
    /// `function_gain` over widget-random's on the same app.
    pub vs_widget_random: Option<f64>,
}

/// One app of the suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppResult {
    pub app: String,
    pub split: String,
    pub kind: String,
    pub strategies: Vec<StrategyResult>,
    /// Per strategy, the median over seeds of the functions gained beyond the first
    /// step, as `(step, gain)` points.
    pub curves: BTreeMap<String, Vec<(u64, f64)>>,
}

/// One strategy over one split: medians over the split's apps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitResult {
    pub split: String,
    pub strategy: String,
    /// Apps with at least one finished run of the strategy.
    pub apps: usize,
    pub function_gain: f64,
    pub byte_gain: f64,
    pub vs_monkey: Option<f64>,
    pub vs_widget_random: Option<f64>,
    pub steps_per_minute: f64,
    pub agent_share: f64,
    /// Summed over apps (each app's median over seeds).
    pub signals: f64,
    pub hangs: f64,
    pub crashes: f64,
}

/// An ablation (`BASE:SPEC`) against a run of its base configuration on one split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AblationResult {
    pub split: String,
    /// The strategy with plug-ins switched.
    pub strategy: String,
    /// The configuration it switches them in: `BASE` or `BASE#LABEL`.
    pub base: String,
    /// Apps both have finished runs on.
    pub apps: usize,
    /// Median over those apps of the ablation's gain, and of the base's.
    pub function_gain: f64,
    pub base_gain: f64,
    /// Median over apps of the ablation's gain over the base's.
    pub ratio: Option<f64>,
    /// The app where the side with the plug-ins did worst against the side without, and
    /// its gain there over the other side's; for a rerun, the app where the two runs are
    /// furthest apart, and the lower gain over the higher.
    pub worst_app: Option<String>,
    pub worst_ratio: Option<f64>,
    /// Whether the side with the plug-ins has the higher median gain and no app more than
    /// 10 % below the other side; `None` when SPEC both adds and removes plug-ins.
    pub plugins_earn_place: Option<bool>,
}

/// A whole suite, as `suite.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    pub settings: SuiteSettings,
    pub apps: Vec<AppResult>,
    pub splits: Vec<SplitResult>,
    /// Each ablation against each run of its base, per split.
    #[serde(default)]
    pub ablations: Vec<AblationResult>,
    /// Runs asked for that have not finished (a suite still running or stopped).
    pub missing_runs: usize,
}

/// What one run measured: a few hundred bytes of JSON, so that a suite's results can be
/// kept (and committed) without its run folders.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Steps the run finished.
    pub steps: u64,
    pub function_gain: f64,
    pub byte_gain: f64,
    pub functions: f64,
    pub signals: f64,
    pub hangs: f64,
    pub crashes: f64,
    pub steps_per_minute: f64,
    pub agent_share: f64,
    /// Functions gained beyond the first step, as `(step, gain)` at most
    /// [`CURVE_POINTS`] + 1 points, the first and last steps among them.
    pub curve: Vec<(u64, f64)>,
}

impl RunResult {
    /// Measures a finished (or cut short) run folder.
    pub fn of(folder: &RunFolder) -> Self {
        let mut curve = Vec::with_capacity(folder.steps.len());
        let (mut first, mut first_bytes) = (None, None);
        let (mut last, mut last_bytes) = (0u64, 0u64);
        let mut choose_ms = 0.0;
        for s in &folder.steps {
            if let Some(c) = s.coverage {
                first.get_or_insert(c.functions_covered);
                first_bytes.get_or_insert(c.bytes_covered);
                last = c.functions_covered;
                last_bytes = c.bytes_covered;
            }
            choose_ms += s.timings.choose_ms;
            curve.push((s.step, last.saturating_sub(first.unwrap_or(last)) as f64));
        }
        let every = curve.len().div_ceil(CURVE_POINTS).max(1);
        let len = curve.len();
        let curve = curve
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0 || *i + 1 == len)
            .map(|(_, p)| p)
            .collect();
        let (mut signals, mut hangs, mut crashes) = (0.0, 0.0, 0.0);
        for s in &folder.signals {
            match s.kind {
                SignalKind::Crash if s.message.contains("(hang)") => hangs += 1.0,
                SignalKind::Crash => crashes += 1.0,
                _ => signals += 1.0,
            }
        }
        let ms = folder.duration_ms() as f64;
        Self {
            steps: folder.steps.len() as u64,
            function_gain: last.saturating_sub(first.unwrap_or(0)) as f64,
            byte_gain: last_bytes.saturating_sub(first_bytes.unwrap_or(0)) as f64,
            functions: last as f64,
            signals,
            hangs,
            crashes,
            steps_per_minute: if ms > 0.0 {
                folder.steps.len() as f64 * 60_000.0 / ms
            } else {
                0.0
            },
            agent_share: if ms > 0.0 { choose_ms / ms } else { 0.0 },
            curve,
        }
    }

    /// The gain on the curve at `step`: its last point at or before it.
    fn gain_at(&self, step: u64) -> f64 {
        self.curve
            .iter()
            .take_while(|p| p.0 <= step)
            .last()
            .map_or(0.0, |p| p.1)
    }
}

/// The median of `v`; NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite()).then(|| a / b)
}

impl Suite {
    /// Summarises `runs` (finished runs only; `missing_runs` counts those asked for that
    /// are not among them). Apps keep the order in which they first appear; strategies
    /// the order of `settings.strategies`.
    pub fn summarise(settings: SuiteSettings, runs: &[SuiteRun], missing_runs: usize) -> Self {
        let mut order: Vec<&str> = Vec::new();
        let mut by_app: BTreeMap<&str, Vec<&SuiteRun>> = BTreeMap::new();
        for r in runs {
            if !by_app.contains_key(r.app.as_str()) {
                order.push(&r.app);
            }
            by_app.entry(&r.app).or_default().push(r);
        }
        let mut apps = Vec::new();
        for app in order {
            let runs = &by_app[app];
            let mut strategies = Vec::new();
            let mut curves = BTreeMap::new();
            for strategy in &settings.strategies {
                let numbers: Vec<&RunResult> = runs
                    .iter()
                    .filter(|r| &r.strategy == strategy)
                    .map(|r| &r.result)
                    .collect();
                if numbers.is_empty() {
                    continue;
                }
                let m = |f: fn(&RunResult) -> f64| {
                    median(&numbers.iter().map(|n| f(n)).collect::<Vec<_>>())
                };
                // The median curve at the steps of the longest run's points.
                let longest = numbers
                    .iter()
                    .max_by_key(|n| n.steps)
                    .map_or(&[][..], |n| n.curve.as_slice());
                let curve: Vec<(u64, f64)> = longest
                    .iter()
                    .map(|&(step, _)| {
                        let at: Vec<f64> = numbers.iter().map(|n| n.gain_at(step)).collect();
                        (step, median(&at))
                    })
                    .collect();
                curves.insert(strategy.clone(), curve);
                strategies.push(StrategyResult {
                    strategy: strategy.clone(),
                    runs: numbers.len(),
                    function_gain: m(|n| n.function_gain),
                    byte_gain: m(|n| n.byte_gain),
                    functions: m(|n| n.functions),
                    signals: m(|n| n.signals),
                    hangs: m(|n| n.hangs),
                    crashes: m(|n| n.crashes),
                    steps_per_minute: m(|n| n.steps_per_minute),
                    agent_share: m(|n| n.agent_share),
                    vs_monkey: None,
                    vs_widget_random: None,
                });
            }
            let gain_of = |name: &str| {
                strategies
                    .iter()
                    .find(|s| s.strategy == name)
                    .map(|s| s.function_gain)
            };
            let (monkey, random) = (gain_of(MONKEY), gain_of(WIDGET_RANDOM));
            for s in &mut strategies {
                s.vs_monkey = monkey.and_then(|m| ratio(s.function_gain, m));
                s.vs_widget_random = random.and_then(|m| ratio(s.function_gain, m));
            }
            let first = runs[0];
            apps.push(AppResult {
                app: app.to_owned(),
                split: first.split.clone(),
                kind: first.kind.clone(),
                strategies,
                curves,
            });
        }
        let splits = Self::splits(&settings, &apps);
        let ablations = Self::ablations(&settings, &apps);
        Self {
            settings,
            apps,
            splits,
            ablations,
            missing_runs,
        }
    }

    /// Each `BASE:SPEC[#LABEL]` against `BASE#LABEL` if the suite has it, else against
    /// `BASE` and every `BASE#…`, on each split.
    fn ablations(settings: &SuiteSettings, apps: &[AppResult]) -> Vec<AblationResult> {
        let names = &settings.strategies;
        let splits: BTreeSet<&str> = apps.iter().map(|a| a.split.as_str()).collect();
        let mut out = Vec::new();
        for strategy in names {
            let (config, label) = match strategy.split_once('#') {
                Some((c, l)) => (c, Some(l)),
                None => (strategy.as_str(), None),
            };
            // A rerun (`BASE#LABEL`) is set against `BASE`: how far two runs of one
            // configuration differ, with no verdict.
            let (base, spec) = match config.split_once(':') {
                Some(split) => split,
                None if label.is_some() && names.iter().any(|n| n == config) => (config, ""),
                None => continue,
            };
            let labelled = label.map(|l| format!("{base}#{l}"));
            let bases: Vec<&String> = match labelled.as_ref().filter(|b| names.contains(b)) {
                _ if spec.is_empty() => names.iter().filter(|n| *n == base).collect(),
                Some(b) => vec![b],
                None => names
                    .iter()
                    .filter(|n| {
                        *n == base || n.strip_prefix(base).is_some_and(|r| r.starts_with('#'))
                    })
                    .collect(),
            };
            // Which side has the plug-ins SPEC names.
            let off = !spec.is_empty() && spec.split(':').all(|p| p.starts_with('-'));
            let on = !spec.is_empty() && spec.split(':').all(|p| !p.starts_with('-'));
            for b in bases {
                for split in &splits {
                    let pairs: Vec<(&str, f64, f64)> = apps
                        .iter()
                        .filter(|a| a.split == *split)
                        .filter_map(|a| {
                            let gain = |n: &str| {
                                a.strategies
                                    .iter()
                                    .find(|s| s.strategy == n)
                                    .map(|s| s.function_gain)
                            };
                            Some((a.app.as_str(), gain(strategy)?, gain(b)?))
                        })
                        .collect();
                    if pairs.is_empty() {
                        continue;
                    }
                    let gain = median(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
                    let base_gain = median(&pairs.iter().map(|p| p.2).collect::<Vec<_>>());
                    let ratios: Vec<f64> = pairs.iter().filter_map(|p| ratio(p.1, p.2)).collect();
                    // The side with the plug-ins over the side without, per app; for a
                    // rerun, the lower of the two ratios.
                    let with_over_without = |p: &(&str, f64, f64)| match (off, on) {
                        (true, _) => ratio(p.2, p.1),
                        (_, true) => ratio(p.1, p.2),
                        _ if spec.is_empty() => ratio(p.1, p.2).map(|r| r.min(1.0 / r)),
                        _ => ratio(p.1, p.2),
                    };
                    let worst = pairs
                        .iter()
                        .filter_map(|p| with_over_without(p).map(|r| (p.0, r)))
                        .min_by(|x, y| x.1.total_cmp(&y.1));
                    let plugins_earn_place = (off || on).then(|| {
                        let (with, without) = if off {
                            (base_gain, gain)
                        } else {
                            (gain, base_gain)
                        };
                        with > without && worst.is_none_or(|w| w.1 >= ABLATION_TOLERANCE)
                    });
                    out.push(AblationResult {
                        split: (*split).to_owned(),
                        strategy: strategy.clone(),
                        base: b.clone(),
                        apps: pairs.len(),
                        function_gain: gain,
                        base_gain,
                        ratio: (!ratios.is_empty()).then(|| median(&ratios)),
                        worst_app: worst.map(|w| w.0.to_owned()),
                        worst_ratio: worst.map(|w| w.1),
                        plugins_earn_place,
                    });
                }
            }
        }
        out
    }

    fn splits(settings: &SuiteSettings, apps: &[AppResult]) -> Vec<SplitResult> {
        let names: BTreeSet<&str> = apps.iter().map(|a| a.split.as_str()).collect();
        let mut out = Vec::new();
        for split in names {
            for strategy in &settings.strategies {
                let rows: Vec<&StrategyResult> = apps
                    .iter()
                    .filter(|a| a.split == split)
                    .filter_map(|a| a.strategies.iter().find(|s| &s.strategy == strategy))
                    .collect();
                if rows.is_empty() {
                    continue;
                }
                let m = |f: fn(&StrategyResult) -> f64| {
                    median(&rows.iter().map(|r| f(r)).collect::<Vec<_>>())
                };
                let m_opt = |f: fn(&StrategyResult) -> Option<f64>| {
                    let v: Vec<f64> = rows.iter().filter_map(|r| f(r)).collect();
                    (!v.is_empty()).then(|| median(&v))
                };
                let sum = |f: fn(&StrategyResult) -> f64| rows.iter().map(|r| f(r)).sum::<f64>();
                out.push(SplitResult {
                    split: split.to_owned(),
                    strategy: strategy.clone(),
                    apps: rows.len(),
                    function_gain: m(|r| r.function_gain),
                    byte_gain: m(|r| r.byte_gain),
                    vs_monkey: m_opt(|r| r.vs_monkey),
                    vs_widget_random: m_opt(|r| r.vs_widget_random),
                    steps_per_minute: m(|r| r.steps_per_minute),
                    agent_share: m(|r| r.agent_share),
                    signals: sum(|r| r.signals),
                    hangs: sum(|r| r.hangs),
                    crashes: sum(|r| r.crashes),
                });
            }
        }
        out
    }

    /// Reads `suite.json` from a suite folder.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self> {
        let path = dir.as_ref().join("suite.json");
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        serde_json::from_str(&text).map_err(|e| Error::BadJson {
            path,
            line: 0,
            message: format!("not a suite summary: {e}"),
        })
    }

    /// The tables as Markdown: per split, then per app.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "# Suite\n\n{}; {} run(s) at a time. {INTRO}\n\n",
            self.settings.bounds(),
            self.settings.jobs
        );
        if self.missing_runs > 0 {
            let _ = writeln!(
                s,
                "**Incomplete:** {} run(s) have not finished.\n",
                self.missing_runs
            );
        }
        let markdown = |head: &[&str], rows: Vec<Vec<String>>| {
            let mut t = format!("| {} |\n|{}\n", head.join(" | "), "---|".repeat(head.len()));
            for row in rows {
                let _ = writeln!(t, "| {} |", row.join(" | "));
            }
            t
        };
        for split in self.split_names() {
            let _ = writeln!(s, "## Split `{split}`\n");
            s.push_str(&markdown(&SPLIT_HEAD, self.split_rows(split)));
            s.push('\n');
            let ablations = self.ablation_rows(split);
            if !ablations.is_empty() {
                let _ = writeln!(s, "### Ablations on `{split}`\n\n{ABLATION_INTRO}\n");
                s.push_str(&markdown(&ABLATION_HEAD, ablations));
                s.push('\n');
            }
        }
        s.push_str("## Per app\n\n");
        let rows = self
            .apps
            .iter()
            .flat_map(|a| {
                Self::app_rows(a).into_iter().map(|mut row| {
                    let mut cells = vec![a.app.clone(), a.split.clone(), a.kind.clone()];
                    cells.append(&mut row);
                    cells
                })
            })
            .collect();
        let head: Vec<&str> = ["app", "split", "kind"]
            .into_iter()
            .chain(APP_HEAD)
            .collect();
        s.push_str(&markdown(&head, rows));
        s
    }

    /// One row per strategy of split `split`, in the order of [`SPLIT_HEAD`].
    fn split_rows(&self, split: &str) -> Vec<Vec<String>> {
        self.splits
            .iter()
            .filter(|r| r.split == split)
            .map(|r| {
                vec![
                    r.strategy.clone(),
                    r.apps.to_string(),
                    format!("{:.0}", r.function_gain),
                    format!("{:.0}", r.byte_gain),
                    times(r.vs_monkey),
                    times(r.vs_widget_random),
                    format!("{:.0}", r.signals),
                    format!("{:.0}", r.hangs),
                    format!("{:.0}", r.crashes),
                    format!("{:.0}", r.steps_per_minute),
                    percent(r.agent_share),
                ]
            })
            .collect()
    }

    /// One row per ablation and base on split `split`, in the order of [`ABLATION_HEAD`].
    fn ablation_rows(&self, split: &str) -> Vec<Vec<String>> {
        self.ablations
            .iter()
            .filter(|r| r.split == split)
            .map(|r| {
                let worst = match (&r.worst_app, r.worst_ratio) {
                    (Some(app), Some(x)) => format!("{app} {x:.2}x"),
                    _ => "–".to_owned(),
                };
                vec![
                    r.strategy.clone(),
                    r.base.clone(),
                    r.apps.to_string(),
                    format!("{:.0}", r.function_gain),
                    format!("{:.0}", r.base_gain),
                    times(r.ratio),
                    worst,
                    match r.plugins_earn_place {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "–",
                    }
                    .to_owned(),
                ]
            })
            .collect()
    }

    /// One row per strategy of app `a`, in the order of [`APP_HEAD`].
    fn app_rows(a: &AppResult) -> Vec<Vec<String>> {
        a.strategies
            .iter()
            .map(|r| {
                vec![
                    r.strategy.clone(),
                    r.runs.to_string(),
                    format!("{:.0}", r.function_gain),
                    format!("{:.0}", r.byte_gain),
                    times(r.vs_monkey),
                    times(r.vs_widget_random),
                    format!("{:.1}", r.signals),
                    format!("{:.1}", r.hangs),
                    format!("{:.1}", r.crashes),
                    format!("{:.0}", r.steps_per_minute),
                    percent(r.agent_share),
                ]
            })
            .collect()
    }

    /// One self-contained page: the split and app tables, then a coverage plot per app
    /// with one line per strategy.
    pub fn html(&self) -> String {
        let mut s = String::from(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>Suite</title><style>body{font-family:sans-serif;margin:2em;max-width:70em}\
             table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;\
             padding:.2em .5em;text-align:right}td:first-child,th:first-child{text-align:left}\
             </style></head><body>\n",
        );
        let _ = writeln!(
            s,
            "<h1>Suite</h1><p>{}; {} run(s) at a time. {INTRO}</p>",
            escape(&self.settings.bounds()),
            self.settings.jobs
        );
        if self.missing_runs > 0 {
            let _ = writeln!(
                s,
                "<p><strong>Incomplete:</strong> {} run(s) have not finished.</p>",
                self.missing_runs
            );
        }
        let table = |head: &[&str], rows: Vec<Vec<String>>| {
            let mut t = String::from("<table><tr>");
            for h in head {
                let _ = write!(t, "<th>{}</th>", escape(h));
            }
            t.push_str("</tr>\n");
            for row in rows {
                t.push_str("<tr>");
                for c in row {
                    let _ = write!(t, "<td>{}</td>", escape(&c));
                }
                t.push_str("</tr>\n");
            }
            t.push_str("</table>\n");
            t
        };
        for split in self.split_names() {
            let _ = writeln!(s, "<h2>Split {}</h2>", escape(split));
            s.push_str(&table(&SPLIT_HEAD, self.split_rows(split)));
            let ablations = self.ablation_rows(split);
            if !ablations.is_empty() {
                let _ = writeln!(
                    s,
                    "<h3>Ablations on {}</h3><p>{ABLATION_INTRO}</p>",
                    escape(split)
                );
                s.push_str(&table(&ABLATION_HEAD, ablations));
            }
        }
        for a in &self.apps {
            let _ = writeln!(
                s,
                "<h2>{} <small>({}, {})</small></h2>",
                escape(&a.app),
                escape(&a.split),
                escape(&a.kind)
            );
            s.push_str(&table(&APP_HEAD, Self::app_rows(a)));
            let (legend, series): (Vec<String>, Vec<Vec<(f64, u64)>>) = a
                .strategies
                .iter()
                .filter_map(|r| a.curves.get(&r.strategy).map(|c| (r, c)))
                .map(|(r, c)| {
                    (
                        format!("{} (median of {} seed(s))", r.strategy, r.runs),
                        c.iter()
                            .map(|&(x, y)| (x as f64, y.max(0.0).round() as u64))
                            .collect(),
                    )
                })
                .unzip();
            s.push_str(&plot(
                &legend,
                series,
                &format!("Functions gained beyond the first step on {}", a.app),
                "step",
                "functions gained",
            ));
        }
        s.push_str("</body></html>\n");
        s
    }

    fn split_names(&self) -> Vec<&str> {
        let names: BTreeSet<&str> = self.splits.iter().map(|r| r.split.as_str()).collect();
        names.into_iter().collect()
    }
}

fn times(r: Option<f64>) -> String {
    r.map_or("–".to_owned(), |r| format!("{r:.2}x"))
}

fn percent(share: f64) -> String {
    if share.is_nan() {
        "–".to_owned()
    } else {
        format!("{:.1} %", share * 100.0)
    }
}
