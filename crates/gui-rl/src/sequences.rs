//! Orders of a screen's commands ([`AgentConfig::sequence_budget`]).
//!
//! A *command* is a click on a button or image button that changed the screen and left
//! the button where it was: Select all, Archive, Apply. Some faults show only when such
//! commands come in one order, one right after the other (Select all, Archive, Undo on
//! the demo's list). Novelty cannot ask for that order: each command shows what it
//! shows the first time, and the fortieth click of Select all shows nothing new.
//!
//! This is sequence coverage in the sense of combinatorial testing: every ordered pair
//! of distinct commands shown together should once run back to back, and every ordered
//! triple where a screen shows few enough of them. The agent's own policy starts a run of
//! commands by choosing one; from there, while the run is unbroken and the budget lasts,
//! the next command is the one that completes the most orders not yet run.
//!
//! Commands are known by their place and kind on the screen, not by the page store's
//! pages: the list with its boxes ticked, emptied or refilled is several pages to the
//! store, and its buttons stay where they are.
//!
//! [`AgentConfig::sequence_budget`]: crate::AgentConfig::sequence_budget

use std::collections::{HashMap, HashSet};

use gui_core::{Rect, WidgetKind};
use rand::Rng;

/// Most pixels by which a command's box may move on any side and still be that command.
pub const COMMAND_SLACK: i32 = 4;

/// Most commands on one screen for their ordered triples to be run; with more, pairs.
/// Four commands have 24 triples.
pub const TRIPLE_COMMANDS: usize = 4;

/// Most times a screen's orders start again because a value was set on it
/// ([`CommandSequences::values_set`]).
pub const VALUE_RENEWALS: u32 = 2;

/// A button as the screen shows it: its box and kind.
pub type Control = (Rect, WidgetKind);

/// Whether two boxes are one widget's: every side within [`COMMAND_SLACK`].
pub fn same_place(a: &Rect, b: &Rect) -> bool {
    (a.x - b.x).abs() <= COMMAND_SLACK
        && (a.y - b.y).abs() <= COMMAND_SLACK
        && (a.width as i32 - b.width as i32).abs() <= COMMAND_SLACK
        && (a.height as i32 - b.height as i32).abs() <= COMMAND_SLACK
}

/// Whether two controls are the same button: the same kind, in the same place
/// (`same_place`).
pub fn same_control(a: &Control, b: &Control) -> bool {
    a.1 == b.1 && same_place(&a.0, &b.0)
}

/// What a step did, as [`CommandSequences::record`] needs it.
#[derive(Debug, Clone, Copy)]
pub struct StepOutcome {
    /// The button the action clicked, if it clicked a button or an image button.
    pub clicked: Option<Control>,
    /// The screen changed (not only the hover tint of the widget the pointer left).
    pub changed: bool,
    /// The clicked button is still on the screen after the step, where it was.
    pub still_there: bool,
}

/// The commands of the run and which of their orders have run back to back.
#[derive(Debug)]
pub struct CommandSequences {
    budget: u32,
    /// Steps chosen per screen, keyed by the first found of the commands it shows.
    spent: HashMap<usize, u32>,
    commands: Vec<Control>,
    /// Buttons clicked that were no command: they changed nothing or went away.
    others: Vec<Control>,
    /// Ordered pairs and triples of command indices (a pair's third place is `None`).
    covered: HashSet<(usize, usize, Option<usize>)>,
    /// Times each screen's orders started again, keyed like `spent`.
    renewed: HashMap<usize, u32>,
    /// Text fields typed into, by screen (keyed like `spent`) and box.
    typed: Vec<(usize, Rect)>,
    /// Commands seen as the one known command of their screen ([`Self::observe`]).
    lone: Vec<usize>,
    /// Lone commands to click once more, each when next shown ([`Self::setting_changed`]).
    stale: Vec<usize>,
    /// Settings changed, by box, with how often each asked for lone commands again.
    settings: Vec<(Rect, u32)>,
}

impl CommandSequences {
    /// At most `budget` steps per screen are chosen to complete orders; 0 chooses none.
    /// A screen is known by the first found of the commands it shows.
    pub fn new(budget: u32) -> Self {
        Self {
            budget,
            spent: HashMap::new(),
            commands: Vec::new(),
            others: Vec::new(),
            covered: HashSet::new(),
            renewed: HashMap::new(),
            typed: Vec::new(),
            lone: Vec::new(),
            stale: Vec::new(),
            settings: Vec::new(),
        }
    }

    /// The commands found, in the order found.
    pub fn commands(&self) -> &[Control] {
        &self.commands
    }

    /// Steps chosen so far, over all screens.
    pub fn spent(&self) -> u32 {
        self.spent.values().sum()
    }

    fn index(&self, control: &Control) -> Option<usize> {
        self.commands.iter().position(|c| same_control(c, control))
    }

    /// The distinct command indices among `indices`, sorted: a screen's commands. The
    /// first is the screen's key for its budget and renewals.
    fn distinct(indices: impl Iterator<Item = usize>) -> Vec<usize> {
        let mut shown: Vec<usize> = indices.collect();
        shown.sort_unstable();
        shown.dedup();
        shown
    }

    /// The known commands that `shown` (the button each candidate of a screen clicks, if
    /// it clicks one) click: the screen's commands, distinct and sorted, the first being
    /// the screen's key. What [`values_set`](Self::values_set),
    /// [`setting_changed`](Self::setting_changed), [`field_typed`](Self::field_typed)
    /// and [`observe`](Self::observe) take, found once per step.
    pub fn commands_on(&self, shown: &[Option<Control>]) -> Vec<usize> {
        Self::distinct(shown.iter().flatten().filter_map(|c| self.index(c)))
    }

    /// Whether commands `a`, `b` (and `c`) have run back to back in that order.
    pub fn covered(&self, a: &Control, b: &Control, c: Option<&Control>) -> bool {
        let (Some(a), Some(b)) = (self.index(a), self.index(b)) else {
            return false;
        };
        let c = match c {
            Some(c) => match self.index(c) {
                Some(c) => Some(c),
                None => return false,
            },
            None => None,
        };
        self.covered.contains(&(a, b, c))
    }

    /// Closes a step: learns a new command, extends or ends the worker's `run` (command
    /// indices, most recent last), and marks the orders the run now ends with as run.
    ///
    /// A click on a known command that left it in place extends the run, even when it
    /// changed nothing (Select all a second time). A click that took its button away
    /// (a link to another screen) ends it, and so does any other action that changed the
    /// screen (a tick, typed text): the commands before it no longer ran back to back.
    /// Actions that changed nothing leave the run as it was.
    pub fn record(&mut self, run: &mut Vec<usize>, step: StepOutcome) {
        if let Some(c) = step.clicked
            && self.index(&c).is_none()
            && !(step.changed && step.still_there)
            && !self.others.iter().any(|o| same_control(o, &c))
        {
            self.others.push(c);
        }
        let Some(clicked) = step.clicked.filter(|_| step.still_there) else {
            if step.changed || step.clicked.is_some() {
                run.clear();
            }
            return;
        };
        let i = match self.index(&clicked) {
            Some(i) => i,
            None if step.changed => {
                self.others.retain(|o| !same_control(o, &clicked));
                self.commands.push(clicked);
                self.commands.len() - 1
            }
            None => return,
        };
        run.push(i);
        let n = run.len();
        if n >= 2 && run[n - 2] != run[n - 1] {
            self.covered.insert((run[n - 2], run[n - 1], None));
            if n >= 3 && run[n - 3] != run[n - 1] && run[n - 3] != run[n - 2] {
                self.covered
                    .insert((run[n - 3], run[n - 2], Some(run[n - 1])));
            }
        }
        // Only the last two places matter for what comes next.
        if n > 2 {
            run.drain(..n - 2);
        }
    }

    /// A value was set on the screen that shows the commands `on`
    /// ([`commands_on`](Self::commands_on)): typed text, a tick, a choice that changed
    /// the screen. What the commands do may depend on it (Apply
    /// with a code typed, Checkout after it), so the orders of the commands it shows
    /// count as not yet run again and the screen's budget starts again, at most
    /// [`VALUE_RENEWALS`] times per screen. Only screens showing two to
    /// [`TRIPLE_COMMANDS`] known commands start again: fewer have no orders, and more
    /// have too many to run again (a cart's 8 commands make 56 pairs, which would take the
    /// steps of other screens).
    pub fn values_set(&mut self, on: &[usize]) {
        if on.len() < 2 || on.len() > TRIPLE_COMMANDS || self.budget == 0 {
            return;
        }
        let screen = on[0];
        let renewed = self.renewed.entry(screen).or_default();
        if *renewed >= VALUE_RENEWALS {
            return;
        }
        *renewed += 1;
        self.spent.remove(&screen);
        self.covered.retain(|&(a, b, c)| {
            !(on.contains(&a) && on.contains(&b) && c.is_none_or(|c| on.contains(&c)))
        });
    }

    /// Notes the commands a screen shows (`on`, [`commands_on`](Self::commands_on)): the
    /// one known command
    /// of a screen is a *lone* command (the start screen's counter, a page's Refresh)
    /// until a screen shows it beside others (a screen seen before its other commands
    /// were learnt).
    pub fn observe(&mut self, on: &[usize]) {
        match *on {
            [one] if !self.lone.contains(&one) => self.lone.push(one),
            [_, _, ..] => self.lone.retain(|c| !on.contains(c)),
            _ => {}
        }
    }

    /// A setting was changed: a box ticked, a switch turned or a choice made at `setting`
    /// on the screen that shows the commands `on` ([`commands_on`](Self::commands_on)).
    /// What other screens do may depend on
    /// it (a counter that announces milestones while notifications are on), so every
    /// lone command ([`observe`](Self::observe)) not on this screen is clicked once more
    /// when next shown ([`recheck`](Self::recheck)). Each setting, known by its box,
    /// asks this at most [`VALUE_RENEWALS`] times. Screens with more commands are left
    /// to their orders: running them all again would take the steps of other screens.
    pub fn setting_changed(&mut self, on: &[usize], setting: Rect) {
        if self.budget == 0 {
            return;
        }
        let asked = match self
            .settings
            .iter_mut()
            .find(|(r, _)| same_place(r, &setting))
        {
            Some((_, n)) => n,
            None => {
                self.settings.push((setting, 0));
                &mut self.settings.last_mut().expect("just pushed").1
            }
        };
        if *asked >= VALUE_RENEWALS {
            return;
        }
        *asked += 1;
        for &c in &self.lone {
            if !on.contains(&c) && !self.stale.contains(&c) {
                self.stale.push(c);
            }
        }
    }

    /// The candidate that clicks a lone command due again after a setting changed
    /// ([`setting_changed`](Self::setting_changed)), if `candidates` show one; it is
    /// then no longer due.
    pub fn recheck(&mut self, candidates: &[Option<Control>]) -> Option<usize> {
        if self.stale.is_empty() {
            return None;
        }
        let (i, k) = candidates.iter().enumerate().find_map(|(i, c)| {
            let k = self.index(c.as_ref()?)?;
            self.stale.contains(&k).then_some((i, k))
        })?;
        self.stale.retain(|&c| c != k);
        Some(i)
    }

    fn was_typed(&self, screen: usize, field: &Rect) -> bool {
        self.typed
            .iter()
            .any(|(s, f)| *s == screen && same_place(f, field))
    }

    /// Text was typed into `field` on the screen that shows the commands `on`
    /// ([`commands_on`](Self::commands_on)).
    pub fn field_typed(&mut self, on: &[usize], field: Rect) {
        if let Some(&screen) = on.first()
            && !self.was_typed(screen, &field)
        {
            self.typed.push((screen, field));
        }
    }

    /// The candidate to run next, if the worker's `run` is under way (its last command is
    /// among those `candidates` click; the button each candidate clicks, if it clicks
    /// one) and the screen's budget is not spent. Counts the step against the budget.
    ///
    /// First a text field of the screen no text was typed into yet: `fields` gives, per
    /// candidate, the text field it types into, if it does (empty: none), and the first
    /// untyped one wins. What commands do often depends on what the fields hold (Apply
    /// with a coupon code, Submit with an address), and a screen's orders can take its
    /// whole budget before the policy types anything.
    ///
    /// Else a command that completes an order not yet run or opens the way to one. A new
    /// pair counts 1, a new triple 1 more, and a step that completes nothing but can be
    /// followed by an order not yet run a half; a button never clicked counts as a new
    /// pair, since it may be a command. The highest wins, ties drawn with `rng`. Triples
    /// count when the screen shows at most [`TRIPLE_COMMANDS`] commands.
    pub fn next(
        &mut self,
        run: &[usize],
        candidates: &[Option<Control>],
        fields: &[Option<Rect>],
        rng: &mut impl Rng,
    ) -> Option<usize> {
        let &last = run.last()?;
        // The commands on this screen, by candidate.
        let on_screen: Vec<Option<usize>> = candidates
            .iter()
            .map(|c| c.as_ref().and_then(|c| self.index(c)))
            .collect();
        let shown = Self::distinct(on_screen.iter().flatten().copied());
        if !shown.contains(&last) {
            // The last command is gone: the screen is another one.
            return None;
        }
        // Each screen has its budget.
        let screen = shown[0];
        if self.spent.get(&screen).copied().unwrap_or(0) >= self.budget {
            return None;
        }
        let field = fields
            .iter()
            .enumerate()
            .find_map(|(i, f)| f.filter(|f| !self.was_typed(screen, f)).map(|f| (i, f)));
        let i = match field {
            Some((i, f)) => {
                self.typed.push((screen, f));
                i
            }
            None => self.next_command(run, candidates, &on_screen, &shown, rng)?,
        };
        *self.spent.entry(screen).or_default() += 1;
        Some(i)
    }

    /// [`next`](Self::next)'s command: `on_screen` holds each candidate's command index,
    /// `shown` the screen's commands.
    fn next_command(
        &self,
        run: &[usize],
        candidates: &[Option<Control>],
        on_screen: &[Option<usize>],
        shown: &[usize],
        rng: &mut impl Rng,
    ) -> Option<usize> {
        let last = run[run.len() - 1];
        let before = run.len().checked_sub(2).map(|i| run[i]);
        let triples = shown.len() <= TRIPLE_COMMANDS;
        let new = |a: usize, b: usize, c: Option<usize>| !self.covered.contains(&(a, b, c));
        let mut best = 0;
        let mut ties: Vec<usize> = Vec::new();
        for (i, k) in on_screen.iter().enumerate() {
            let Some(k) = *k else {
                // A button never clicked may be a command: trying it is worth a new pair.
                let unknown = candidates[i]
                    .as_ref()
                    .is_some_and(|c| !self.others.iter().any(|o| same_control(o, c)));
                if unknown && 2 > best {
                    best = 2;
                    ties.clear();
                }
                if unknown && best == 2 {
                    ties.push(i);
                }
                continue;
            };
            if k == last {
                continue;
            }
            let mut score = 2 * u32::from(new(last, k, None));
            if triples && let Some(b) = before.filter(|&b| b != k && b != last) {
                score += 2 * u32::from(new(b, last, Some(k)));
            }
            if score == 0 {
                let opens = shown.iter().any(|&c| {
                    c != k && (new(k, c, None) || (triples && c != last && new(last, k, Some(c))))
                });
                score = u32::from(opens);
            }
            if score > best {
                best = score;
                ties.clear();
            }
            if score == best && score > 0 {
                ties.push(i);
            }
        }
        if ties.is_empty() {
            return None;
        }
        Some(ties[rng.random_range(0..ties.len())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn button(x: i32) -> Control {
        (Rect::new(x, 244, 120, 42), WidgetKind::Button)
    }

    fn click(control: Control, changed: bool) -> StepOutcome {
        StepOutcome {
            clicked: Some(control),
            changed,
            still_there: true,
        }
    }

    /// Learns `keys` as commands, each clicked alone, and leaves no run under way.
    fn learn(s: &mut CommandSequences, keys: &[Control]) {
        let mut run = Vec::new();
        for &k in keys {
            s.record(&mut run, click(k, true));
            s.record(&mut run, TICK);
        }
    }

    const TICK: StepOutcome = StepOutcome {
        clicked: None,
        changed: true,
        still_there: false,
    };

    #[test]
    fn a_button_that_changed_its_screen_and_stayed_is_a_command() {
        let mut s = CommandSequences::new(30);
        let mut run = Vec::new();
        // A click that changed nothing is no command, and a tick is none either.
        s.record(&mut run, click(button(1), false));
        s.record(&mut run, TICK);
        assert!(s.commands().is_empty());
        assert!(run.is_empty());
        // A link that took its button away is none.
        let link = StepOutcome {
            still_there: false,
            ..click(button(500), true)
        };
        s.record(&mut run, link);
        assert!(s.commands().is_empty());
        s.record(&mut run, click(button(1), true));
        // The same button two pixels off is the same command.
        let moved = (Rect::new(3, 245, 121, 42), WidgetKind::Button);
        s.record(&mut run, click(button(200), true));
        assert_eq!(s.commands(), &[button(1), button(200)]);
        assert!(s.covered(&moved, &button(200), None));
        assert!(!s.covered(&button(200), &button(1), None));
        // An idle step keeps the run; a tick that changed the screen breaks it.
        s.record(
            &mut run,
            StepOutcome {
                clicked: None,
                changed: false,
                still_there: false,
            },
        );
        assert_eq!(run.len(), 2);
        s.record(&mut run, TICK);
        assert!(run.is_empty());
        // So does a click that left the screen.
        s.record(&mut run, click(button(1), false));
        assert_eq!(run.len(), 1);
        s.record(&mut run, link);
        assert!(run.is_empty());
    }

    #[test]
    fn the_next_command_completes_an_order_not_yet_run() {
        let (select, archive, undo) = (button(197), button(329), button(461));
        let mut s = CommandSequences::new(30);
        let mut run = Vec::new();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        learn(&mut s, &[select, archive, undo]);
        let candidates = [None, Some(select), Some(archive), Some(undo)];
        // No run under way: the policy chooses.
        assert_eq!(s.next(&run, &candidates, &[], &mut rng), None);
        s.record(&mut run, click(select, false));
        s.record(&mut run, click(archive, true));
        let i = s.next(&run, &candidates, &[], &mut rng).unwrap();
        // Undo completes the pair (A, U) and the triple (S, A, U); Select all only the
        // pair (A, S).
        assert_eq!(candidates[i], Some(undo));
        s.record(&mut run, click(undo, true));
        assert!(s.covered(&select, &archive, Some(&undo)));
        assert_eq!(s.spent(), 1);
        // On a screen without the last command the run has nothing to say.
        assert_eq!(
            s.next(&run, &[Some(select), Some(archive)], &[], &mut rng),
            None
        );
    }

    #[test]
    fn a_button_never_clicked_is_tried_as_a_command() {
        let (select, archive, help) = (button(197), button(329), button(1144));
        let mut s = CommandSequences::new(30);
        let mut run = Vec::new();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        // Help opened a dialog over the screen: its button is no command.
        let dialog = StepOutcome {
            still_there: false,
            ..click(help, true)
        };
        s.record(&mut run, dialog);
        s.record(&mut run, click(select, true));
        let candidates = [Some(help), Some(select), Some(archive), None];
        let i = s.next(&run, &candidates, &[], &mut rng).unwrap();
        assert_eq!(candidates[i], Some(archive));
        // Archive showed a message and stayed: a command, and the pair has run.
        s.record(&mut run, click(archive, true));
        assert_eq!(s.commands(), &[select, archive]);
        assert!(s.covered(&select, &archive, None));
        // Help is never chosen: the next is Select all, for the pair (A, S).
        let i = s.next(&run, &candidates, &[], &mut rng).unwrap();
        assert_eq!(candidates[i], Some(select));
    }

    #[test]
    fn every_order_of_three_commands_runs_within_the_budget() {
        let keys = [button(1), button(200), button(400)];
        let candidates: Vec<Option<Control>> = keys.iter().copied().map(Some).collect();
        let mut s = CommandSequences::new(30);
        let mut run = Vec::new();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        learn(&mut s, &keys);
        // The policy starts one run; the sequences carry it until no order is left.
        s.record(&mut run, click(keys[0], true));
        let mut steps = 0;
        while let Some(i) = s.next(&run, &candidates, &[], &mut rng) {
            s.record(&mut run, click(keys[i], true));
            steps += 1;
        }
        for a in &keys {
            for b in &keys {
                if a == b {
                    continue;
                }
                assert!(s.covered(a, b, None), "{a:?} {b:?}");
                for c in &keys {
                    if c != a && c != b {
                        assert!(s.covered(a, b, Some(c)));
                    }
                }
            }
        }
        // Six triples from one start need at least 7 more steps; greedy takes a few more.
        assert!((7..=12).contains(&steps), "{steps} steps");
    }

    #[test]
    fn a_value_set_on_the_screen_runs_its_orders_again() {
        let (apply, checkout) = (button(1), button(200));
        let candidates = [Some(apply), Some(checkout), None];
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut s = CommandSequences::new(2);
        let mut run = Vec::new();
        s.record(&mut run, click(apply, true));
        s.record(&mut run, click(checkout, true));
        s.record(&mut run, click(apply, true));
        assert!(s.covered(&apply, &checkout, None) && s.covered(&checkout, &apply, None));
        // Both orders ran: nothing is left to choose.
        assert_eq!(s.next(&run, &candidates, &[], &mut rng), None);
        // A code typed into the field: Apply, then Checkout, are worth running again.
        for renewal in 0..VALUE_RENEWALS {
            s.record(&mut run, TICK);
            s.values_set(&s.commands_on(&candidates));
            assert!(!s.covered(&apply, &checkout, None), "renewal {renewal}");
            s.record(&mut run, click(apply, true));
            let i = s.next(&run, &candidates, &[], &mut rng).unwrap();
            assert_eq!(candidates[i], Some(checkout));
            s.record(&mut run, click(checkout, true));
        }
        // Renewals are limited, and a screen with one command has no orders to renew.
        s.values_set(&s.commands_on(&candidates));
        assert!(s.covered(&apply, &checkout, None));
        let mut one = CommandSequences::new(2);
        one.record(&mut Vec::new(), click(apply, true));
        one.values_set(&one.commands_on(&candidates));
        assert!(one.renewed.is_empty());
        // Nor does a screen with more commands than TRIPLE_COMMANDS.
        let keys: Vec<Control> = (0..=TRIPLE_COMMANDS as i32)
            .map(|i| button(1 + 150 * i))
            .collect();
        let shown: Vec<Option<Control>> = keys.iter().copied().map(Some).collect();
        let mut many = CommandSequences::new(2);
        let mut run = Vec::new();
        for &k in &keys {
            many.record(&mut run, click(k, true));
        }
        many.values_set(&many.commands_on(&shown));
        assert!(many.renewed.is_empty() && many.covered(&keys[0], &keys[1], None));
        many.values_set(&many.commands_on(&shown[..TRIPLE_COMMANDS]));
        assert!(!many.covered(&keys[0], &keys[1], None));
    }

    #[test]
    fn an_untyped_field_is_typed_into_before_the_next_command_once() {
        let (apply, checkout) = (button(449), button(600));
        let (coupon, note) = (Rect::new(197, 383, 240, 40), Rect::new(197, 460, 240, 40));
        let candidates = [Some(apply), Some(checkout), None, None];
        let fields = [None, None, Some(coupon), Some(note)];
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut s = CommandSequences::new(30);
        let mut run = Vec::new();
        learn(&mut s, &[apply, checkout]);
        // No run under way: the policy chooses, typing included.
        assert_eq!(s.next(&run, &candidates, &fields, &mut rng), None);
        s.record(&mut run, click(checkout, true));
        // A run under way: the first untyped field comes before the next command.
        assert_eq!(s.next(&run, &candidates, &fields, &mut rng), Some(2));
        assert_eq!(s.spent(), 1);
        // The typed text ends the run. The policy starts another; the coupon is not typed
        // again, the note is, and then the orders go on.
        s.record(&mut run, TICK);
        s.record(&mut run, click(checkout, true));
        assert_eq!(s.next(&run, &candidates, &fields, &mut rng), Some(3));
        s.record(&mut run, TICK);
        s.record(&mut run, click(checkout, true));
        // Both typed: the next step is the command Apply, no field.
        let i = s.next(&run, &candidates, &fields, &mut rng).unwrap();
        assert_eq!(candidates[i], Some(apply));
        // A field the policy typed into counts as typed, on its own screen only: the
        // same box on a screen with other commands is still to be typed into.
        let mut t = CommandSequences::new(30);
        let mut run = Vec::new();
        learn(&mut t, &[apply, checkout]);
        t.field_typed(&t.commands_on(&candidates), coupon);
        t.record(&mut run, click(apply, true));
        assert_eq!(t.next(&run, &candidates, &fields, &mut rng), Some(3));
        let submit = (Rect::new(197, 600, 120, 42), WidgetKind::Button);
        t.record(&mut run, TICK);
        t.record(&mut run, click(submit, true));
        let form = [Some(submit), None];
        assert_eq!(
            t.next(&run, &form, &[None, Some(coupon)], &mut rng),
            Some(1)
        );
        // Without a budget nothing is typed.
        let mut off = CommandSequences::new(0);
        let mut run = Vec::new();
        off.record(&mut run, click(apply, true));
        assert_eq!(off.next(&run, &candidates, &fields, &mut rng), None);
    }

    #[test]
    fn a_changed_setting_asks_for_the_other_screens_lone_commands_once_more() {
        let (save, counter, apply, checkout) = (button(700), button(197), button(449), button(600));
        let switch = Rect::new(197, 242, 44, 24);
        let settings = [None, Some(save)];
        let home = [Some(counter), None];
        let cart = [Some(apply), Some(checkout)];
        let mut s = CommandSequences::new(30);
        learn(&mut s, &[save, counter, apply, checkout]);
        // The cart, seen first with Apply alone known, then with both: not lone.
        for screen in [&settings[..], &home, &cart[..1], &cart] {
            s.observe(&s.commands_on(screen));
        }
        // Nothing changed yet: nothing is due.
        assert_eq!(s.recheck(&home), None);
        // The switch turned: the home counter is due, once; Save is on the settings
        // screen itself, and the cart's commands are not lone.
        s.setting_changed(&s.commands_on(&settings), switch);
        assert_eq!(s.recheck(&cart), None);
        assert_eq!(s.recheck(&settings), None);
        assert_eq!(s.recheck(&home), Some(0));
        assert_eq!(s.recheck(&home), None);
        // A setting in another place makes Save due as well.
        s.setting_changed(&s.commands_on(&cart), Rect::new(197, 383, 24, 24));
        assert_eq!(s.recheck(&settings), Some(1));
        assert_eq!(s.recheck(&home), Some(0));
        // Each setting asks VALUE_RENEWALS times at most, wherever its box moved within
        // the slack.
        s.setting_changed(&s.commands_on(&settings), switch);
        assert_eq!(s.recheck(&home), Some(0));
        let moved = Rect::new(199, 244, 44, 24);
        s.setting_changed(&s.commands_on(&settings), moved);
        assert_eq!(s.recheck(&home), None);
        // Without a budget nothing is asked for.
        let mut off = CommandSequences::new(0);
        learn(&mut off, &[counter]);
        off.observe(&off.commands_on(&home));
        off.setting_changed(&off.commands_on(&settings), switch);
        assert_eq!(off.recheck(&home), None);
    }

    #[test]
    fn a_spent_budget_hands_the_choice_back() {
        let keys = [button(1), button(200), button(400), button(600)];
        let candidates: Vec<Option<Control>> = keys.iter().copied().map(Some).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut s = CommandSequences::new(2);
        let mut run = Vec::new();
        for k in keys {
            s.record(&mut run, click(k, true));
        }
        assert!(s.next(&run, &candidates, &[], &mut rng).is_some());
        assert!(s.next(&run, &candidates, &[], &mut rng).is_some());
        assert_eq!(s.next(&run, &candidates, &[], &mut rng), None);
        assert_eq!(s.spent(), 2);
        // Another screen, with commands of its own, has a budget of its own.
        let other = [button(1), button(200)].map(|(r, k)| (Rect { y: 600, ..r }, k));
        for k in other {
            s.record(&mut run, click(k, true));
        }
        let there: Vec<Option<Control>> = other.iter().copied().map(Some).collect();
        assert!(s.next(&run, &there, &[], &mut rng).is_some());
        assert_eq!(s.spent(), 3);
        // Without a budget nothing is chosen.
        let mut off = CommandSequences::new(0);
        let mut run = Vec::new();
        for k in keys {
            off.record(&mut run, click(k, true));
        }
        assert_eq!(off.next(&run, &candidates, &[], &mut rng), None);
    }
}
