//! The Monkey++ search (Section V) and the breadth-first bound it is measured against.
//!
//! The search starts on the launch screen, takes the screen's UI vertices one by one and
//! follows each into the code behind it, recursively exploring the screens that code
//! launches, and goes back one screen when a screen has nothing left (Back, as on a
//! device). Touching a control runs a *local search* from its UI vertex along listener,
//! call and execution-order edges, which may not visit a vertex twice; lifecycle methods
//! that the runtime model ([`ScreenStack`]) says run after a launch or a back get local
//! searches of their own. Local searches may overlap, which is how the same lifecycle
//! code runs each time a screen comes back.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{
    AppModel, Compiled, Counts, EdgeKind, Effect, Error, Result, Reuse, ScreenStack, Transition,
    VertexKind,
};

/// Knobs of the search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchConfig {
    /// What launching a screen already on the stack does: Android brings it to the front
    /// (the paper), a browser pushes a new history entry.
    pub reuse: Reuse,
    /// Screens deeper than this are not launched by the search.
    pub max_depth: usize,
    /// Touch the controls that stay on the screen first, then the ones that launch
    /// another screen, then the ones that close it: each screen is then left once. With
    /// `false`, controls are taken in model order (the paper's plain DFS).
    pub local_first: bool,
    /// States the breadth-first bound may expand before it gives up and reports its
    /// lower estimate instead.
    pub bound_states: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            reuse: Reuse::BringToFront,
            max_depth: 32,
            local_first: true,
            bound_states: 200_000,
        }
    }
}

/// One interaction with the device.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interaction {
    /// Touch (or type into) the control of a UI vertex, by vertex id.
    Touch(String),
    /// The device's back button (history back on the web, Escape for a dialog).
    Back,
    /// Start the app again after its last screen was finished.
    Relaunch,
}

/// One step of a plan, with the coverage after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    pub interaction: Interaction,
    /// The screen on top before the step.
    pub screen: String,
    /// The screen stack after the step, bottom first.
    pub stack: Vec<String>,
    /// UI vertices covered so far.
    pub covered_ui: usize,
    pub covered_methods: usize,
    pub covered_statements: usize,
}

/// The interactions the search chose and what they cover.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchPlan {
    pub app: String,
    pub steps: Vec<PlanStep>,
    pub ui_total: usize,
    pub methods_total: usize,
    pub statements_total: usize,
    /// UI vertices the search did not reach, by id.
    pub unreached: Vec<String>,
    /// Local searches run (touches and lifecycle callbacks).
    pub local_searches: usize,
}

impl SearchPlan {
    pub fn interactions(&self) -> usize {
        self.steps.len()
    }

    pub fn covered_ui(&self) -> usize {
        self.steps.last().map_or(0, |s| s.covered_ui)
    }

    /// Covered UI vertices over all UI vertices of the model (Definition 3).
    pub fn interface_coverage(&self) -> f64 {
        if self.ui_total == 0 {
            return 1.0;
        }
        self.covered_ui() as f64 / self.ui_total as f64
    }

    /// Ids of the UI vertices the plan touches, in first-touch order.
    pub fn touched(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.steps
            .iter()
            .filter_map(|s| match &s.interaction {
                Interaction::Touch(id) if seen.insert(id.clone()) => Some(id.clone()),
                _ => None,
            })
            .collect()
    }
}

/// Precomputed effects: what touching each UI vertex does, and what each lifecycle
/// callback does, to the stack.
#[derive(Debug, Clone)]
struct Effects {
    /// Per UI vertex and lifecycle method (the only starts of local searches whose effect
    /// is asked for): the first effect a local search from it meets. `None` elsewhere.
    reach: Vec<Option<Effect>>,
}

impl Effects {
    fn new(c: &Compiled<'_>) -> Effects {
        let mut reach = vec![None; c.model.vertices.len()];
        let starts = c
            .model
            .ui_vertices()
            .map(|(i, _)| i)
            .chain(c.lifecycle.values().flatten().copied());
        for v in starts {
            if reach[v].is_some() {
                continue;
            }
            let mut first = None;
            local_walk(c, v, |w| {
                if first.is_none() {
                    first = c.statement_effect(w).cloned();
                }
            });
            reach[v] = first;
        }
        Effects { reach }
    }

    /// What touching a UI vertex does: its own declared effect, else the first effect of
    /// its listener code.
    fn touch(&self, c: &Compiled<'_>, ui: usize) -> Option<Effect> {
        c.ui_effect(ui).cloned().or_else(|| self.reach[ui].clone())
    }

    fn lifecycle(&self, c: &Compiled<'_>, t: &Transition<usize>) -> Option<Effect> {
        c.lifecycle
            .get(&(t.screen, t.hook))?
            .iter()
            .find_map(|&m| self.reach[m].clone())
    }
}

/// A depth-first walk from `start` that visits no vertex twice (one local search). Calls
/// are followed before the next statement, as they run first.
fn local_walk(c: &Compiled<'_>, start: usize, mut visit: impl FnMut(usize)) {
    let mut seen = HashSet::from([start]);
    let mut stack = vec![start];
    while let Some(v) = stack.pop() {
        visit(v);
        let out = &c.out[v];
        // Pushed in reverse so that calls and listeners pop before the next statement.
        for &(w, _) in out
            .iter()
            .filter(|(_, k)| *k != EdgeKind::Next)
            .chain(out.iter().filter(|(_, k)| *k == EdgeKind::Next))
            .rev()
        {
            if seen.insert(w) {
                stack.push(w);
            }
        }
    }
}

/// Applies an effect to the stack, with the effects of the lifecycle callbacks it causes
/// (to a depth of 4, so that two screens that launch each other on creation cannot
/// loop). Returns the callbacks that ran.
fn run_effect(
    c: &Compiled<'_>,
    fx: &Effects,
    stack: &mut ScreenStack<usize>,
    effect: &Effect,
    depth: usize,
) -> Vec<Transition<usize>> {
    let ran = match effect {
        Effect::Launch(s) => {
            let s = c.screen_index[s.as_str()];
            stack.launch(s, c.screen_kind(s))
        }
        Effect::Finish => stack.back(),
    };
    let mut all = ran.clone();
    if depth < 4 {
        for t in &ran {
            if let Some(e) = fx.lifecycle(c, t) {
                all.extend(run_effect(c, fx, stack, &e, depth + 1));
            }
        }
    }
    all
}

/// The model run forward: the screen stack (the runtime model) plus the vertices
/// covered so far. The search plans with it; [`crate::map_monkey_log`] and the live
/// runs follow what happened on a device with it.
#[derive(Debug, Clone)]
pub struct ModelRun<'m> {
    c: Compiled<'m>,
    fx: Effects,
    reuse: Reuse,
    stack: ScreenStack<usize>,
    covered: Vec<bool>,
    local_searches: usize,
}

impl<'m> ModelRun<'m> {
    /// Launches the model's app: its launch screen is created.
    pub fn new(model: &'m AppModel, reuse: Reuse) -> Result<ModelRun<'m>> {
        let c = Compiled::new(model)?;
        let fx = Effects::new(&c);
        let mut run = ModelRun {
            covered: vec![false; model.vertices.len()],
            c,
            fx,
            reuse,
            stack: ScreenStack::new(reuse),
            local_searches: 0,
        };
        run.relaunch();
        Ok(run)
    }

    pub fn model(&self) -> &'m AppModel {
        self.c.model
    }

    /// Starts the app again from its launch screen (coverage is kept).
    pub fn relaunch(&mut self) {
        self.stack = ScreenStack::new(self.reuse);
        let launch = Effect::Launch(self.c.screen_name(self.c.launch).to_string());
        self.apply(&launch);
    }

    /// The screen on top, or `None` when the app has finished its last screen.
    pub fn top(&self) -> Option<&'m str> {
        self.stack.top().map(|&s| self.c.screen_name(s))
    }

    /// Screens from the bottom of the stack to its top.
    pub fn stack(&self) -> Vec<&'m str> {
        self.stack
            .screens()
            .map(|&s| self.c.screen_name(s))
            .collect()
    }

    /// Ids of the UI vertices shown on the top screen.
    pub fn ui_on_top(&self) -> Vec<&'m str> {
        let model = self.c.model;
        self.stack.top().map_or_else(Vec::new, |&s| {
            self.c.ui_on[s]
                .iter()
                .map(|&u| model.vertices[u].id.as_str())
                .collect()
        })
    }

    /// Touches the control of UI vertex `id`: its code is covered and its effect applied.
    pub fn touch(&mut self, id: &str) -> Result<()> {
        let ui = self
            .c
            .index
            .get(id)
            .copied()
            .filter(|&i| matches!(self.c.model.vertices[i].kind, VertexKind::Ui { .. }))
            .ok_or_else(|| Error::BadModel {
                what: format!("`{id}` is not a UI vertex"),
            })?;
        self.touch_index(ui);
        Ok(())
    }

    /// Back: the top screen is finished.
    pub fn back(&mut self) {
        self.apply(&Effect::Finish);
    }

    /// Makes `screen` the top screen because the device shows it, whatever the model
    /// expected: a screen on the stack is gone back to (the ones above it are finished),
    /// any other is launched. False when the model has no such screen (the run is then
    /// left as it was).
    pub fn follow(&mut self, screen: &str) -> bool {
        let Some(&s) = self.c.screen_index.get(screen) else {
            return false;
        };
        if self.stack.top() == Some(&s) {
            return true;
        }
        if self.stack.screens().any(|&x| x == s) {
            // Lifecycle code may launch screens as others finish: bounded, not looped.
            for _ in 0..self.stack.depth() {
                if self.stack.top() == Some(&s) || self.stack.is_empty() {
                    break;
                }
                self.apply(&Effect::Finish);
            }
        } else {
            self.apply(&Effect::Launch(screen.to_owned()));
        }
        true
    }

    /// Counts the vertex `id` as covered without touching it (its code and effect are
    /// not run): for planning around a control known to be unavailable.
    pub fn assume_covered(&mut self, id: &str) {
        if let Some(&i) = self.c.index.get(id) {
            self.covered[i] = true;
        }
    }

    pub fn is_covered(&self, id: &str) -> bool {
        self.c.index.get(id).is_some_and(|&i| self.covered[i])
    }

    /// Covered (UI, method, statement) vertices.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = Counts::of(
            self.c
                .model
                .vertices
                .iter()
                .zip(&self.covered)
                .filter(|(_, done)| **done)
                .map(|(v, _)| v),
        );
        (n.ui, n.methods, n.statements)
    }

    /// Covered UI vertices over all UI vertices (Definition 3).
    pub fn interface_coverage(&self) -> f64 {
        let total = self.c.model.count().ui;
        if total == 0 {
            return 1.0;
        }
        self.counts().0 as f64 / total as f64
    }

    fn apply(&mut self, effect: &Effect) {
        let ran = run_effect(&self.c, &self.fx, &mut self.stack, effect, 0);
        for t in ran {
            let methods = self.c.lifecycle.get(&(t.screen, t.hook)).cloned();
            for m in methods.into_iter().flatten() {
                self.cover_from(m);
            }
        }
    }

    fn cover_from(&mut self, v: usize) {
        self.local_searches += 1;
        let covered = &mut self.covered;
        local_walk(&self.c, v, |w| covered[w] = true);
    }

    fn touch_index(&mut self, ui: usize) {
        self.cover_from(ui);
        if let Some(e) = self.fx.touch(&self.c, ui) {
            self.apply(&e);
        }
    }
}

/// Plans Monkey++'s interactions over `model`.
pub fn search(model: &AppModel, config: &SearchConfig) -> Result<SearchPlan> {
    let mut sim = ModelRun::new(model, config.reuse)?;
    let c = sim.c.clone();
    let mut steps = Vec::new();
    let orders = touch_orders(&c, &sim.fx, config);
    explore(&c, &mut sim, &mut steps, &orders, config, 1);
    Ok(finish_plan(&sim, steps, sim.local_searches))
}

/// Plans the interactions that touch what `run` has not covered yet, from where `run`
/// is (its screen stack): this is how a live run goes on when the device showed another
/// screen than the plan expected. While the top screen has controls left, it is
/// explored as [`search`] explores (depth first); when it has none, the cheapest way to
/// a screen that has some is taken: Back down the stack, then controls whose effects lead
/// there (covered ones too), or a relaunch and controls from the launch screen.
///
/// `in_place_unreliable` are controls that did not do what the model says when touched
/// during the run (the survey saw their effect from a fresh start): they are used on a
/// way only after a relaunch.
pub fn search_from(
    run: &ModelRun<'_>,
    config: &SearchConfig,
    in_place_unreliable: &[String],
) -> SearchPlan {
    let mut sim = run.clone();
    let searches_before = sim.local_searches;
    let c = sim.c.clone();
    let orders = touch_orders(&c, &sim.fx, config);
    let avoid: HashSet<usize> = in_place_unreliable
        .iter()
        .filter_map(|id| c.index.get(id.as_str()).copied())
        .collect();
    let mut steps = Vec::new();
    // Each round covers a control or moves to a screen with one; the cap only guards the
    // model's lifecycle effects against cycles.
    for _ in 0..4 * (c.model.vertices.len() + 8) {
        if !sim.any_uncovered_ui() {
            break;
        }
        let Some(&top) = sim.stack.top() else {
            sim.relaunch();
            record(&c, &sim, &mut steps, Interaction::Relaunch, String::new());
            continue;
        };
        if c.ui_on[top].iter().any(|&u| !sim.covered[u]) {
            let depth = sim.stack.depth();
            explore(&c, &mut sim, &mut steps, &orders, config, depth);
            continue;
        }
        let Some(way) = sim.way_to_open(&avoid) else {
            break;
        };
        for _ in 0..way.backs {
            let before = sim.top().unwrap_or_default().to_string();
            sim.back();
            record(&c, &sim, &mut steps, Interaction::Back, before);
        }
        if way.relaunch {
            let before = sim.top().unwrap_or_default().to_string();
            sim.relaunch();
            record(&c, &sim, &mut steps, Interaction::Relaunch, before);
        }
        for u in way.touches {
            let before = sim.top().unwrap_or_default().to_string();
            sim.touch_index(u);
            record(
                &c,
                &sim,
                &mut steps,
                Interaction::Touch(c.model.vertices[u].id.clone()),
                before,
            );
        }
    }
    let searches = sim.local_searches - searches_before;
    finish_plan(&sim, steps, searches)
}

/// A way to a screen with controls left: Backs, then perhaps a relaunch, then touches.
struct Way {
    backs: usize,
    relaunch: bool,
    touches: Vec<usize>,
}

impl ModelRun<'_> {
    fn any_uncovered_ui(&self) -> bool {
        self.c.model.ui_vertices().any(|(i, _)| !self.covered[i])
    }

    /// The cheapest [`Way`] (fewest moves; staying before going back, going back before a
    /// relaunch) to a screen with an uncovered control.
    fn way_to_open(&self, avoid: &HashSet<usize>) -> Option<Way> {
        let stack: Vec<usize> = self.stack.screens().copied().collect();
        let mut best: Option<(usize, Way)> = None;
        for (k, &s) in stack.iter().enumerate().rev() {
            let backs = stack.len() - 1 - k;
            if best.as_ref().is_some_and(|(cost, _)| backs >= *cost) {
                break;
            }
            if let Some(touches) = self.route(s, avoid) {
                let cost = backs + touches.len();
                if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                    let way = Way {
                        backs,
                        relaunch: false,
                        touches,
                    };
                    best = Some((cost, way));
                }
            }
        }
        if let Some(touches) = self.route(self.c.launch, &HashSet::new()) {
            let cost = 1 + touches.len();
            if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                let way = Way {
                    backs: 0,
                    relaunch: true,
                    touches,
                };
                best = Some((cost, way));
            }
        }
        best.map(|(_, w)| w)
    }

    /// The fewest controls (not in `avoid`) whose effects lead from `from` to a screen
    /// with an uncovered control (none when `from` has one), breadth first in model
    /// order.
    fn route(&self, from: usize, avoid: &HashSet<usize>) -> Option<Vec<usize>> {
        let c = &self.c;
        let open = |s: usize| c.ui_on[s].iter().any(|&u| !self.covered[u]);
        let mut prev: Vec<Option<(usize, usize)>> = vec![None; c.model.screens.len()];
        let mut seen = vec![false; c.model.screens.len()];
        seen[from] = true;
        let mut queue = std::collections::VecDeque::from([from]);
        while let Some(s) = queue.pop_front() {
            if open(s) {
                let mut touches = Vec::new();
                let mut at = s;
                while let Some((back, u)) = prev[at] {
                    touches.push(u);
                    at = back;
                }
                touches.reverse();
                return Some(touches);
            }
            for &u in &c.ui_on[s] {
                if avoid.contains(&u) {
                    continue;
                }
                if let Some(Effect::Launch(t)) = self.fx.touch(c, u) {
                    let t = c.screen_index[t.as_str()];
                    if !seen[t] {
                        seen[t] = true;
                        prev[t] = Some((s, u));
                        queue.push_back(t);
                    }
                }
            }
        }
        None
    }
}

/// The order in which a screen's controls are taken: controls that stay first, then
/// launches, then finishes (see [`SearchConfig::local_first`]); all alike without it.
fn touch_orders(c: &Compiled<'_>, fx: &Effects, config: &SearchConfig) -> Vec<u8> {
    let mut orders: Vec<u8> = vec![0; c.model.vertices.len()];
    if config.local_first {
        for (ui, _) in c.model.ui_vertices() {
            orders[ui] = match fx.touch(c, ui) {
                None => 0,
                // A screen with a control that closes it comes back on its own; one
                // without needs a Back, which the last launch of a screen can save.
                Some(Effect::Launch(t)) => {
                    let t = c.screen_index[t.as_str()];
                    let returns = c.ui_on[t]
                        .iter()
                        .any(|&v| fx.touch(c, v) == Some(Effect::Finish));
                    if returns { 1 } else { 2 }
                }
                Some(Effect::Finish) => 3,
            };
        }
    }
    orders
}

fn finish_plan(sim: &ModelRun<'_>, steps: Vec<PlanStep>, local_searches: usize) -> SearchPlan {
    let model = sim.c.model;
    let n = model.count();
    let unreached = model
        .ui_vertices()
        .filter(|(i, _)| !sim.covered[*i])
        .map(|(_, v)| v.id.clone())
        .collect();
    SearchPlan {
        app: model.app.clone(),
        steps,
        ui_total: n.ui,
        methods_total: n.methods,
        statements_total: n.statements,
        unreached,
        local_searches,
    }
}

/// Explores the screen on top of the stack at `depth` (1 = the launch screen) until
/// its controls are all covered or it cannot be got back to.
fn explore(
    c: &Compiled<'_>,
    sim: &mut ModelRun<'_>,
    steps: &mut Vec<PlanStep>,
    order: &[u8],
    config: &SearchConfig,
    depth: usize,
) {
    let Some(&screen) = sim.stack.top() else {
        return;
    };
    loop {
        let next = c.ui_on[screen]
            .iter()
            .copied()
            .filter(|&u| !sim.covered[u])
            .min_by_key(|&u| (order[u], u));
        let Some(u) = next else { return };
        // Come back to this screen: Back until it is on top at its depth.
        while sim.stack.depth() > depth {
            let before = c
                .screen_name(*sim.stack.top().expect("not empty"))
                .to_string();
            sim.back();
            record(c, sim, steps, Interaction::Back, before);
        }
        if sim.stack.depth() != depth || sim.stack.top() != Some(&screen) {
            return;
        }
        sim.touch_index(u);
        record(
            c,
            sim,
            steps,
            Interaction::Touch(c.model.vertices[u].id.clone()),
            c.screen_name(screen).to_string(),
        );
        if sim.stack.is_empty() {
            // The app finished its last screen: start it again, and let the callers
            // (the launch screen's loop) carry on.
            sim.relaunch();
            record(
                c,
                sim,
                steps,
                Interaction::Relaunch,
                c.screen_name(screen).to_string(),
            );
            return;
        }
        let d = sim.stack.depth();
        let top = *sim.stack.top().expect("not empty");
        let open = c.ui_on[top].iter().any(|&v| !sim.covered[v]);
        if top != screen && open && d <= config.max_depth && d >= depth {
            explore(c, sim, steps, order, config, d);
        }
        if sim.stack.depth() < depth {
            return;
        }
    }
}

fn record(
    c: &Compiled<'_>,
    sim: &ModelRun<'_>,
    steps: &mut Vec<PlanStep>,
    interaction: Interaction,
    screen: String,
) {
    let (ui, m, s) = sim.counts();
    steps.push(PlanStep {
        interaction,
        screen,
        stack: sim
            .stack
            .screens()
            .map(|&s| c.screen_name(s).to_string())
            .collect(),
        covered_ui: ui,
        covered_methods: m,
        covered_statements: s,
    });
}

/// The fewest interactions that touch a set of UI vertices, found breadth first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The exact minimum over the same moves the search makes (touches, back, relaunch).
    Exact(usize),
    /// The search space was too large: at least this many (one touch per vertex).
    AtLeast(usize),
}

impl Bound {
    pub fn value(self) -> usize {
        match self {
            Bound::Exact(n) | Bound::AtLeast(n) => n,
        }
    }
}

/// The fewest interactions that touch every vertex of `targets` (UI vertex ids), searched
/// breadth first (best first by an admissible estimate, A*) over (screen stack,
/// navigating controls touched, screens visited), with the moves the search makes:
/// touch a control on the top screen, Back, relaunch.
///
/// Controls that do not change the stack cost one touch each and can be touched whenever
/// one of their screens is on top, so they are counted once and only their screens need
/// visiting; the search proper is over the controls that launch or finish screens.
/// `upper` (a known plan's length) prunes states that cannot beat it; when every state
/// under it has been seen, the plan is optimal. Stacks deeper than `config.max_depth` are
/// not entered. When more than `config.bound_states` states would be expanded, the answer
/// is [`Bound::AtLeast`] the estimate at the start: one touch per control plus the moves
/// that leaving screens needs (see the estimate's comment below).
pub fn bfs_bound(
    model: &AppModel,
    config: &SearchConfig,
    targets: &[String],
    upper: Option<usize>,
) -> Result<Bound> {
    let c = Compiled::new(model)?;
    let fx = Effects::new(&c);
    let mut nav: Vec<usize> = Vec::new();
    let mut plain_masks: HashSet<u64> = HashSet::new();
    let mut plain = 0usize;
    let fallback = Bound::AtLeast(targets.len());
    if model.screens.len() > 64 {
        return Ok(fallback);
    }
    for id in targets {
        let &u = c.index.get(id.as_str()).ok_or_else(|| Error::BadModel {
            what: format!("bound target `{id}` is not a vertex"),
        })?;
        if fx.touch(&c, u).is_some() {
            nav.push(u);
        } else {
            plain += 1;
            let mask = c
                .ui_on
                .iter()
                .enumerate()
                .filter(|(_, on)| on.contains(&u))
                .fold(0u64, |m, (s, _)| m | 1 << s);
            plain_masks.insert(mask);
        }
    }
    // Navigating controls with the same screens and the same effect are interchangeable
    // (the demo's five Remove buttons): they form one class, and the state counts how
    // many of each class were touched, in a bit field of the class's width.
    let mut classes: Vec<(Vec<usize>, Option<Effect>, usize)> = Vec::new();
    let mut class_of: HashMap<usize, usize> = HashMap::new();
    for &u in &nav {
        let on: Vec<usize> = (0..c.ui_on.len())
            .filter(|&s| c.ui_on[s].contains(&u))
            .collect();
        let effect = fx.touch(&c, u);
        let k = match classes
            .iter()
            .position(|(s, e, _)| *s == on && *e == effect)
        {
            Some(k) => k,
            None => {
                classes.push((on, effect, 0));
                classes.len() - 1
            }
        };
        classes[k].2 += 1;
        class_of.insert(u, k);
    }
    let mut field: Vec<(u32, u64, u64)> = Vec::new(); // (shift, mask, size)
    let mut shift = 0u32;
    for (_, _, n) in &classes {
        let width = u64::BITS - (*n as u64).leading_zeros();
        field.push((shift, (1u64 << width) - 1, *n as u64));
        shift += width;
    }
    if shift > 64 {
        return Ok(fallback);
    }
    let all_nav: u64 = field.iter().map(|&(sh, _, n)| n << sh).sum();
    let remaining = |t: u64| -> usize {
        field
            .iter()
            .map(|&(sh, m, n)| (n - ((t >> sh) & m)) as usize)
            .sum()
    };
    let touch_class = |t: u64, k: usize| -> u64 {
        let (sh, m, n) = field[k];
        if (t >> sh) & m < n { t + (1 << sh) } else { t }
    };
    let masks: Vec<u64> = plain_masks.into_iter().collect();
    let done =
        |touched: u64, visited: u64| touched == all_nav && masks.iter().all(|m| m & visited != 0);
    let budget = upper.map(|u| u.saturating_sub(plain));

    type State = (ScreenStack<usize>, u64, u64);
    let mut start_stack = ScreenStack::new(config.reuse);
    run_effect(
        &c,
        &fx,
        &mut start_stack,
        &Effect::Launch(c.screen_name(c.launch).to_string()),
        0,
    );
    let visited0 = start_stack.top().map_or(0, |&s| 1u64 << s);
    let start_top = start_stack.top().copied();
    let start: State = (start_stack, 0, visited0);
    if done(0, visited0) {
        return Ok(Bound::Exact(plain));
    }
    // Best first by g + h (A*), reopening states reached more cheaply later, so any
    // admissible h gives the exact minimum when the goal is taken from the heap.
    //
    // h = the navigating controls still to touch, plus the leaves still owed: every
    // visit of a screen but the last ends with a move that changes the top screen (Back,
    // or a control that launches or finishes), and each move ends one visit. The visits
    // still to come are at least the untouched controls that launch each screen (plus the
    // current one); a first touch of a leaving control ends one of them for free (a
    // control shown on several screens only once). What is left are extra moves. Lifecycle
    // code with effects could end visits on its own, so then only the first part is used.
    // A second, weaker estimate is the single-screen groups still to visit.
    let lifecycle_moves = c
        .lifecycle
        .iter()
        .any(|(&(s, hook), _)| fx.lifecycle(&c, &Transition { screen: s, hook }).is_some());
    let n_screens = c.ui_on.len();
    let class_info: Vec<(Option<usize>, Vec<usize>, bool)> = classes
        .iter()
        .map(|(on, effect, _)| {
            let enters = match effect {
                Some(Effect::Launch(t)) => {
                    let t = c.screen_index[t.as_str()];
                    (!on.contains(&t)).then_some(t)
                }
                _ => None,
            };
            let leaves = match effect {
                Some(Effect::Launch(t)) => on.iter().any(|s| *s != c.screen_index[t.as_str()]),
                Some(Effect::Finish) => true,
                None => false,
            };
            (enters, on.clone(), leaves)
        })
        .collect();
    let owed = |t: u64, top: Option<usize>| -> usize {
        if lifecycle_moves {
            return 0;
        }
        let mut visits = vec![0i64; n_screens];
        let mut free = vec![0i64; n_screens];
        let mut free_multi = 0i64;
        if let Some(top) = top {
            visits[top] += 1;
        }
        for (k, (enters, on, leaves)) in class_info.iter().enumerate() {
            let (sh, m, n) = field[k];
            let untouched = (n - ((t >> sh) & m)) as i64;
            if let Some(s) = enters {
                visits[*s] += untouched;
            }
            if *leaves {
                match on.as_slice() {
                    [s] => free[*s] += untouched,
                    _ => free_multi += untouched,
                }
            }
        }
        let deficit: i64 = (0..n_screens).map(|s| (visits[s] - free[s]).max(0)).sum();
        (deficit - free_multi - 1).max(0) as usize
    };
    let singles: Vec<u64> = masks
        .iter()
        .copied()
        .filter(|m| m.count_ones() == 1)
        .collect();
    let h = |t: u64, v: u64, top: Option<usize>| -> usize {
        let a = remaining(t) + owed(t, top);
        let b = singles.iter().filter(|&&m| m & v == 0).count();
        a.max(b)
    };
    let mut states: Vec<State> = vec![start.clone()];
    let mut best: HashMap<State, usize> = HashMap::from([(start, 0)]);
    let mut heap: BinaryHeap<(Reverse<usize>, usize, usize)> = BinaryHeap::new();
    heap.push((Reverse(h(0, visited0, start_top)), 0, 0));
    // When the search is too large, h at the start is itself a lower bound.
    let fallback = Bound::AtLeast(plain + h(0, visited0, start_top));
    let mut expanded = 0usize;
    while let Some((_, dist, at)) = heap.pop() {
        let (stack, touched, visited) = states[at].clone();
        if best.get(&states[at]).is_some_and(|&g| g < dist) {
            continue;
        }
        if done(touched, visited) {
            return Ok(Bound::Exact(dist + plain));
        }
        expanded += 1;
        if expanded > config.bound_states {
            return Ok(fallback);
        }
        let mut moves: Vec<(ScreenStack<usize>, u64)> = Vec::new();
        match stack.top() {
            Some(&top) => {
                let mut tried: HashSet<usize> = HashSet::new();
                for &u in &c.ui_on[top] {
                    let Some(&k) = class_of.get(&u) else { continue };
                    if !tried.insert(k) {
                        continue;
                    }
                    let mut next = stack.clone();
                    if let Some(e) = &classes[k].1 {
                        run_effect(&c, &fx, &mut next, e, 0);
                    }
                    moves.push((next, touch_class(touched, k)));
                }
                if stack.depth() > 1 {
                    let mut next = stack.clone();
                    run_effect(&c, &fx, &mut next, &Effect::Finish, 0);
                    moves.push((next, touched));
                }
            }
            None => {
                let mut next = ScreenStack::new(config.reuse);
                run_effect(
                    &c,
                    &fx,
                    &mut next,
                    &Effect::Launch(c.screen_name(c.launch).to_string()),
                    0,
                );
                moves.push((next, touched));
            }
        }
        for (next, t) in moves {
            if next.depth() > config.max_depth {
                continue;
            }
            let v = visited | next.top().map_or(0, |&s| 1u64 << s);
            let g = dist + 1;
            let f = g + h(t, v, next.top().copied());
            if budget.is_some_and(|b| f > b) {
                continue;
            }
            let state = (next, t, v);
            if best.get(&state).is_some_and(|&old| old <= g) {
                continue;
            }
            best.insert(state.clone(), g);
            states.push(state);
            heap.push((Reverse(f), g, states.len() - 1));
        }
    }
    // Every state within the budget was expanded without reaching the goal: the known
    // plan is optimal, or (without a plan) the targets are not all reachable.
    Ok(match upper {
        Some(u) => Bound::Exact(u),
        None => fallback,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Edge, Hook, Locator, MethodRole, Screen, ScreenKind, UiEvent, Vertex};

    fn ui(id: &str, screen: &str, effect: Option<Effect>) -> Vertex {
        Vertex {
            id: id.into(),
            kind: VertexKind::Ui {
                screens: vec![screen.into()],
                label: id.into(),
                event: UiEvent::Click,
                effect,
                locator: Locator::default(),
            },
        }
    }

    fn page(name: &str) -> Screen {
        Screen {
            name: name.into(),
            kind: ScreenKind::Page,
        }
    }

    /// Figure 1 and 3 of the paper: SayHi and StartB on A; StartB's listener launches B,
    /// whose onResume runs; SayBye on B.
    fn figure1() -> AppModel {
        let v = |id: &str, kind: VertexKind| Vertex {
            id: id.into(),
            kind,
        };
        let method = |name: &str, role: MethodRole, screen: Option<&str>| VertexKind::Method {
            name: name.into(),
            role,
            screen: screen.map(Into::into),
        };
        let stmt = |m: &str, text: &str, effect: Option<Effect>| VertexKind::Statement {
            method: m.into(),
            text: text.into(),
            effect,
        };
        let e = |from: &str, to: &str, kind: EdgeKind| Edge {
            from: from.into(),
            to: to.into(),
            kind,
        };
        AppModel {
            app: "figure1".into(),
            platform: "android".into(),
            launch: "A".into(),
            screens: vec![page("A"), page("B")],
            vertices: vec![
                ui("SayHi", "A", None),
                ui("StartB", "A", None),
                ui("SayBye", "B", None),
                v("m:sayHello", method("sayHello", MethodRole::Callback, None)),
                v("s:toast", stmt("m:sayHello", "Toast.makeText(..)", None)),
                v(
                    "m:startB",
                    method("startActivityB", MethodRole::Callback, None),
                ),
                v(
                    "s:intent",
                    stmt("m:startB", "intent = new Intent(..)", None),
                ),
                v(
                    "s:start",
                    stmt(
                        "m:startB",
                        "startActivity(intent)",
                        Some(Effect::Launch("B".into())),
                    ),
                ),
                v(
                    "m:B.onResume",
                    method("onResume", MethodRole::Lifecycle(Hook::Resume), Some("B")),
                ),
                v("s:resume", stmt("m:B.onResume", "super.onResume()", None)),
            ],
            edges: vec![
                e("SayHi", "m:sayHello", EdgeKind::Listener),
                e("m:sayHello", "s:toast", EdgeKind::Next),
                e("StartB", "m:startB", EdgeKind::Listener),
                e("m:startB", "s:intent", EdgeKind::Next),
                e("s:intent", "s:start", EdgeKind::Next),
                e("m:B.onResume", "s:resume", EdgeKind::Next),
            ],
        }
    }

    #[test]
    fn figure1_is_covered_in_three_touches() {
        let model = figure1();
        let plan = search(&model, &SearchConfig::default()).unwrap();
        let touches: Vec<_> = plan.steps.iter().map(|s| s.interaction.clone()).collect();
        assert_eq!(
            touches,
            [
                Interaction::Touch("SayHi".into()),
                Interaction::Touch("StartB".into()),
                Interaction::Touch("SayBye".into()),
            ]
        );
        assert_eq!(plan.interface_coverage(), 1.0);
        // SayHi alone is a third of the interface (Figure 3).
        assert_eq!(plan.steps[0].covered_ui, 1);
        // B's onResume ran when B was launched: every method and statement is covered.
        let last = plan.steps.last().unwrap();
        assert_eq!(last.covered_methods, 3);
        assert_eq!(last.covered_statements, 4);
        assert_eq!(last.stack, ["A", "B"]);
        let bound = bfs_bound(&model, &SearchConfig::default(), &plan.touched(), None).unwrap();
        assert_eq!(bound, Bound::Exact(3));
    }

    /// A: Go (launches B), Stay; B: Leaf.
    fn go_stay_leaf() -> AppModel {
        AppModel {
            app: "order".into(),
            platform: String::new(),
            launch: "A".into(),
            screens: vec![page("A"), page("B")],
            vertices: vec![
                ui("Go", "A", Some(Effect::Launch("B".into()))),
                ui("Stay", "A", None),
                ui("Leaf", "B", None),
            ],
            edges: vec![],
        }
    }

    #[test]
    fn plain_dfs_order_goes_back_and_local_first_does_not() {
        // A: Go (launches B), Stay; B: Leaf. Model order touches Go first and must come
        // back for Stay; local-first touches Stay first and never goes back.
        let model = go_stay_leaf();
        let plain = search(
            &model,
            &SearchConfig {
                local_first: false,
                ..SearchConfig::default()
            },
        )
        .unwrap();
        assert_eq!(plain.interactions(), 4);
        assert_eq!(plain.steps[2].interaction, Interaction::Back);
        let smart = search(&model, &SearchConfig::default()).unwrap();
        assert_eq!(smart.interactions(), 3);
        let bound = bfs_bound(&model, &SearchConfig::default(), &smart.touched(), None).unwrap();
        assert_eq!(bound, Bound::Exact(3));
    }

    #[test]
    fn a_screen_that_closes_itself_is_explored_before_one_that_needs_back() {
        let model = AppModel {
            app: "notes".into(),
            platform: String::new(),
            launch: "A".into(),
            screens: vec![page("A"), page("Edit"), page("Settings")],
            vertices: vec![
                ui("ToSettings", "A", Some(Effect::Launch("Settings".into()))),
                ui("ToEdit", "A", Some(Effect::Launch("Edit".into()))),
                ui("Text", "Edit", None),
                ui("Save", "Edit", Some(Effect::Finish)),
                ui("Dark", "Settings", None),
            ],
            edges: vec![],
        };
        let plan = search(&model, &SearchConfig::default()).unwrap();
        assert_eq!(
            plan.touched(),
            ["ToEdit", "Text", "Save", "ToSettings", "Dark"]
        );
        assert_eq!(plan.interactions(), 5);
        let bound = bfs_bound(&model, &SearchConfig::default(), &plan.touched(), None).unwrap();
        assert_eq!(bound, Bound::Exact(5));
    }

    #[test]
    fn a_plan_made_where_the_device_diverged_covers_what_is_left() {
        // The device was expected on A after Stay, but shows B (Stay navigated after all).
        // From B: Leaf, then Back to A, where Go is left.
        let model = go_stay_leaf();
        let mut run = ModelRun::new(&model, Reuse::BringToFront).unwrap();
        run.touch("Stay").unwrap();
        assert_eq!(run.top(), Some("A"));
        assert!(run.follow("B"));
        assert_eq!(run.stack(), ["A", "B"]);
        let plan = search_from(&run, &SearchConfig::default(), &[]);
        let moves: Vec<_> = plan.steps.iter().map(|s| s.interaction.clone()).collect();
        assert_eq!(
            moves,
            [
                Interaction::Touch("Leaf".into()),
                Interaction::Back,
                Interaction::Touch("Go".into()),
            ]
        );
        assert!(plan.unreached.is_empty());
        assert_eq!(plan.interface_coverage(), 1.0);
        // A screen the model does not know is not followed.
        assert!(!run.follow("Elsewhere"));
        // Following a screen down the stack goes back to it.
        assert!(run.follow("A"));
        assert_eq!(run.stack(), ["A"]);
    }

    #[test]
    fn a_plan_from_a_screen_off_the_launch_path_relaunches_for_the_rest() {
        // The device shows Island, which nothing in the model leads to; what A offers is
        // reached by a relaunch after Island is done.
        let model = AppModel {
            app: "island".into(),
            platform: String::new(),
            launch: "A".into(),
            screens: vec![page("A"), page("Island")],
            vertices: vec![ui("a", "A", None), ui("lost", "Island", None)],
            edges: vec![],
        };
        let mut run = ModelRun::new(&model, Reuse::NewInstance).unwrap();
        run.back();
        assert!(run.follow("Island"));
        let plan = search_from(&run, &SearchConfig::default(), &[]);
        let moves: Vec<_> = plan.steps.iter().map(|s| s.interaction.clone()).collect();
        assert_eq!(
            moves,
            [
                Interaction::Touch("lost".into()),
                Interaction::Relaunch,
                Interaction::Touch("a".into()),
            ]
        );
        assert_eq!(plan.interface_coverage(), 1.0);
    }

    #[test]
    fn unreachable_controls_are_listed_and_not_counted_as_covered() {
        let model = AppModel {
            app: "island".into(),
            platform: String::new(),
            launch: "A".into(),
            screens: vec![page("A"), page("Island")],
            vertices: vec![ui("a", "A", None), ui("lost", "Island", None)],
            edges: vec![],
        };
        let plan = search(&model, &SearchConfig::default()).unwrap();
        assert_eq!(plan.unreached, ["lost"]);
        assert_eq!(plan.interface_coverage(), 0.5);
    }

    #[test]
    fn dialogs_are_closed_by_back_and_the_bound_agrees() {
        // A has Open (a dialog D with Ok, which finishes D) and two tabs to B and C, each
        // with two plain controls. Optimal: the plain ones, then Open, Ok, then B's
        // controls, Back, C's controls.
        let mut vertices = vec![
            ui("Open", "A", Some(Effect::Launch("D".into()))),
            ui("Ok", "D", Some(Effect::Finish)),
            ui("ToB", "A", Some(Effect::Launch("B".into()))),
            ui("ToC", "A", Some(Effect::Launch("C".into()))),
            ui("a1", "A", None),
        ];
        for s in ["B", "C"] {
            for k in 1..=2 {
                vertices.push(ui(&format!("{s}{k}"), s, None));
            }
        }
        let model = AppModel {
            app: "tabs".into(),
            platform: String::new(),
            launch: "A".into(),
            screens: vec![
                page("A"),
                page("B"),
                page("C"),
                Screen {
                    name: "D".into(),
                    kind: ScreenKind::Dialog,
                },
            ],
            vertices,
            edges: vec![],
        };
        let plan = search(&model, &SearchConfig::default()).unwrap();
        assert_eq!(plan.interface_coverage(), 1.0);
        // a1, Open, Ok, ToB, B1, B2, Back, ToC, C1, C2.
        assert_eq!(plan.interactions(), 10);
        let bound = bfs_bound(
            &model,
            &SearchConfig::default(),
            &plan.touched(),
            Some(plan.interactions()),
        )
        .unwrap();
        assert_eq!(bound, Bound::Exact(10));
        let bound = bfs_bound(&model, &SearchConfig::default(), &plan.touched(), None).unwrap();
        assert_eq!(bound, Bound::Exact(10));
    }

    #[test]
    fn without_a_budget_the_bound_falls_back_to_one_touch_per_control() {
        let model = go_stay_leaf();
        let targets: Vec<String> = ["Go", "Stay", "Leaf"].map(String::from).to_vec();
        let cfg = SearchConfig {
            bound_states: 0,
            ..SearchConfig::default()
        };
        // No expansion allowed: the simple lower bound comes back.
        assert_eq!(
            bfs_bound(&model, &cfg, &targets, None).unwrap(),
            Bound::AtLeast(3)
        );
        assert!(bfs_bound(&model, &cfg, &["nope".into()], None).is_err());
    }
}
