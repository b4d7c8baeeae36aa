//! The agent on small synthetic screens: pages, dialogs, novelty, workers.

use gui_core::{ActionParam, Size, WidgetKind};
use gui_layout::{TreeLabels, characterise};
use image::{Rgb, RgbImage};

use super::*;
use crate::effect::{BACKDROP_MIN_CHANGED, DIALOG_KEPT_SHARE, inside};
use crate::learner::{TRAINING_NICE, thread_nice};
use crate::plugins::commands::CommandStates;
use crate::plugins::dialog::dialog_view;
use crate::plugins::novelty::LocalNovelty;
use crate::plugins::resize::ResizeBudget;
use crate::{ActionKey, PageView, SEEN_SHARE};

/// Typing into the text field at `field` (widget 0 of page 0) on the screen `before`.
fn input_step(before: Arc<ScreenPrint>, field: Rect) -> Pending {
    Pending {
        page: PageId(0),
        key: ActionKey {
            kind: ActionKind::Input,
            target: Some(0),
            variant: 0,
        },
        embedding: Arc::from(vec![0.0f32]),
        before,
        kind: ActionKind::Input,
        target: Some((field, WidgetKind::EditText)),
        left: None,
        aim: Aim::default(),
        index: 0,
        chances: None,
        tried: Vec::new(),
        new_code: None,
    }
}

fn assert_send<T: Send>() {}

#[test]
fn agent_and_reader_can_move_between_threads() {
    assert_send::<PirlAgent>();
    assert_send::<ScreenReader>();
    assert_send::<ScreenRead>();
}

/// A small light screen with dark-bordered boxes at `boxes` (x, y, w, h).
fn screen(boxes: &[(u32, u32, u32, u32)]) -> Screenshot {
    let mut img = RgbImage::from_pixel(240, 320, Rgb([245, 245, 245]));
    for &(x, y, w, h) in boxes {
        for py in y..y + h {
            for px in x..x + w {
                let edge = px < x + 2 || py < y + 2 || px >= x + w - 2 || py >= y + h - 2;
                let c = if edge { [40, 40, 40] } else { [200, 220, 250] };
                img.put_pixel(px, py, Rgb(c));
            }
        }
    }
    Screenshot::new(img, 1.0, 0).unwrap()
}

/// Three screens with different boxes, so three pages.
fn screens() -> Vec<Screenshot> {
    vec![
        screen(&[(20, 20, 200, 40), (20, 100, 90, 40)]),
        screen(&[(30, 200, 60, 60), (130, 200, 60, 60), (30, 280, 180, 30)]),
        screen(&[(20, 20, 80, 30), (140, 20, 80, 30), (20, 260, 200, 40)]),
    ]
}

fn agent() -> PirlAgent {
    agent_with(AgentConfig::default())
}

/// An agent with `config` and seed 5, the tests' seed.
fn agent_with(config: AgentConfig) -> PirlAgent {
    PirlAgent::new(AgentConfig { seed: 5, ..config }).unwrap()
}

/// Background retrainings run on threads of their own at `TRAINING_NICE`, as many
/// as the global pool has, and the threads that read and choose keep their priority.
#[cfg(target_os = "linux")]
#[test]
fn background_retrainings_run_at_a_lower_priority() {
    let a = agent_with(AgentConfig {
        train_async: true,
        ..AgentConfig::default()
    });
    let before = thread_nice();
    let pool = a.learner.pool.clone().expect("made with train_async");
    assert_eq!(pool.current_num_threads(), rayon::current_num_threads());
    let nices: Vec<i32> = pool.broadcast(|_| thread_nice());
    assert!(
        nices.iter().all(|n| *n == TRAINING_NICE.max(before)),
        "{nices:?}"
    );
    assert_eq!(thread_nice(), before);
    assert_eq!(
        rayon::broadcast(|_| thread_nice()),
        vec![before; rayon::current_num_threads()]
    );
    // Without train_async there is none: the loop waits for learning anyway.
    assert!(agent().learner.pool.is_none());
}

#[test]
fn decide_reads_and_decides_like_a_reader_and_decide_read() {
    let shots = screens();
    let order = [0, 1, 1, 2, 0, 2, 1, 0];
    let mut a = agent();
    let mut b = agent();
    let mut reader = b.reader();
    for &i in &order {
        let x = a
            .decide(&shots[i], Platform::Web, &ActionKind::ALL)
            .unwrap();
        let read = reader.read(&shots[i]).unwrap();
        let y = b
            .decide_read(0, read, Platform::Web, &ActionKind::ALL)
            .unwrap();
        assert_eq!(x, y);
        assert_eq!(a.last_seen(), b.last_seen());
        assert_eq!(b.last_seen(), b.last_seen_of(0));
        assert!(
            !b.last_seen().unwrap().1.is_empty(),
            "no widgets on screen {i}"
        );
    }
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!(
        (sa.pages, sa.memory, sa.decisions),
        (sb.pages, sb.memory, sb.decisions)
    );
    assert_eq!(sa.memory, order.len() - 1);
    assert!(b.last_seen_of(1).is_none());
}

/// `page` under a black layer at 55 %, with a white dialog at `dialog` holding a
/// button.
fn with_dialog(page: &Screenshot, dialog: Rect) -> Screenshot {
    let mut img = page.pixels().clone();
    for p in img.pixels_mut() {
        p.0 = p.0.map(|v| (f32::from(v) * 0.45).round() as u8);
    }
    let inner = screen(&[(60, 190, 100, 30)]);
    for y in dialog.y..dialog.bottom() {
        for x in dialog.x..dialog.right() {
            let edge = x < dialog.x + 2
                || y < dialog.y + 2
                || x >= dialog.right() - 2
                || y >= dialog.bottom() - 2;
            let c = if edge {
                Rgb([40, 40, 40])
            } else {
                *inner.pixels().get_pixel(x as u32, y as u32)
            };
            img.put_pixel(x as u32, y as u32, c);
        }
    }
    Screenshot::new(img, 1.0, 0).unwrap()
}

#[test]
fn behind_a_backdrop_only_the_dialog_takes_input() {
    let page = screen(&[
        (20, 20, 200, 40),
        (20, 100, 90, 40),
        (130, 100, 90, 40),
        (20, 260, 200, 40),
    ]);
    let dialog = Rect::new(40, 140, 160, 100);
    let open = with_dialog(&page, dialog);
    let mut focused_m = 0;
    for modal_focus in [true, false] {
        let mut a = agent_with(AgentConfig {
            modal_focus,
            ..AgentConfig::default()
        });
        a.decide(&page, Platform::Web, &ActionKind::ALL).unwrap();
        let mut behind = 0;
        for _ in 0..20 {
            let action = a.decide(&open, Platform::Web, &ActionKind::ALL).unwrap();
            behind += usize::from(action.widget().is_some_and(|w| !inside(w.rect, dialog)));
        }
        let (page, _) = a.last_seen().unwrap();
        let m = a.pages().stats(page).unwrap().executable();
        if modal_focus {
            assert_eq!(behind, 0);
            assert_eq!(a.stats().dialog_steps, 20);
            // Eq. 1's `m` counts the dialog's actions and the fixed ones alone.
            focused_m = m;
        } else {
            assert!(
                m > focused_m,
                "{m} executable actions, {focused_m} with the focus"
            );
            assert!(
                behind > 0,
                "no action behind the backdrop without the focus"
            );
            assert_eq!(a.stats().dialog_steps, 0);
        }
    }
}

#[test]
fn a_selection_behind_the_backdrop_leaves_the_dialog_open() {
    let page = screen(&[(20, 20, 200, 40), (20, 100, 90, 40), (20, 260, 200, 40)]);
    let dialog = Rect::new(40, 140, 160, 100);
    let open = with_dialog(&page, dialog);
    // A word highlighted behind the backdrop that comes and goes: 16 of the 4,800
    // cells, more than `SEEN_SHARE`, far less than the backdrop's change.
    let mut marked = open.pixels().clone();
    for y in 280..288 {
        for x in 40..72 {
            marked.put_pixel(x, y, Rgb([20, 40, 110]));
        }
    }
    let marked = Screenshot::new(marked, 1.0, 0).unwrap();
    let changed = ScreenPrint::of(&open).changed_outside(&ScreenPrint::of(&marked), None);
    assert!(
        changed > SEEN_SHARE && changed < DIALOG_KEPT_SHARE,
        "{changed}"
    );
    let mut a = agent();
    a.decide(&page, Platform::Web, &ActionKind::ALL).unwrap();
    let mut behind = 0;
    for i in 0..12 {
        let shot = if i % 2 == 0 { &open } else { &marked };
        let action = a.decide(shot, Platform::Web, &ActionKind::ALL).unwrap();
        behind += usize::from(action.widget().is_some_and(|w| !inside(w.rect, dialog)));
    }
    assert_eq!(behind, 0);
    assert_eq!(a.stats().dialog_steps, 12);
}

#[test]
fn on_the_same_page_only_the_changed_part_has_to_be_new() {
    // Two fields; a dark block inside one stands for the text typed into it.
    let (field_a, field_b) = ((20, 20, 200, 40), (20, 100, 200, 40));
    let print = |extra: &[(u32, u32, u32, u32)]| {
        let mut boxes = vec![field_a, field_b];
        boxes.extend_from_slice(extra);
        Arc::new(ScreenPrint::of(&screen(&boxes)))
    };
    let (hello, other, in_b) = ((30, 30, 60, 20), (30, 30, 100, 20), (30, 110, 40, 20));
    let step = |before| input_step(before, Rect::new(20, 20, 200, 40));
    let mut a = LocalNovelty::new(&AgentConfig::default());
    // The first text in the first field is new.
    assert!(a.first_sight(&step(print(&[])), &print(&[hello])));
    // The same text again, over another text and beside another text in the second
    // field: the whole screen was never seen, the field's look was.
    let before = print(&[other, in_b]);
    assert!(!a.first_sight(&step(before.clone()), &print(&[hello, in_b])));
    // Another text in the field is new.
    assert!(a.first_sight(&step(print(&[in_b])), &print(&[other, in_b])));
    // Nothing changed: nothing new.
    assert!(!a.first_sight(&step(before.clone()), &before));
    // A tick in a box far below and a count at the top: two parts. Once both were
    // seen, ticking again beside another state of the boxes between shows nothing
    // new, though the box around tick and count never looked like this.
    let (count, tick) = ((150, 5, 30, 10), (20, 280, 20, 20));
    let box_target = Some((Rect::new(20, 280, 20, 20), WidgetKind::CheckBox));
    let tick_step = |before: Arc<ScreenPrint>| Pending {
        target: box_target,
        kind: ActionKind::Click,
        ..step(before)
    };
    assert!(a.first_sight(&tick_step(print(&[])), &print(&[count, tick])));
    let mid = (20, 200, 20, 20);
    let before = print(&[mid]);
    assert!(!a.first_sight(&tick_step(before), &print(&[mid, count, tick])));
}

#[test]
fn a_part_of_a_page_runs_out_of_new_sights() {
    let field = (20, 20, 200, 40);
    let print = |text: Option<(u32, u32, u32, u32)>| {
        let mut boxes = vec![field];
        boxes.extend(text);
        Arc::new(ScreenPrint::of(&screen(&boxes)))
    };
    let step = |before| input_step(before, Rect::new(20, 20, 200, 40));
    // Four texts of different lengths in one field.
    let texts: Vec<_> = (0..4).map(|i| (30, 30, 40 + 30 * i, 20)).collect();
    let sights = |cap: u32| {
        let mut a = LocalNovelty::new(&AgentConfig {
            region_sights: cap,
            ..AgentConfig::default()
        });
        let mut new: Vec<bool> = texts
            .iter()
            .map(|t| a.first_sight(&step(print(None)), &print(Some(*t))))
            .collect();
        // The first text again is no new sight, whatever the cap.
        new.push(a.first_sight(&step(print(None)), &print(Some(texts[0]))));
        new
    };
    assert_eq!(sights(0), [true, true, true, true, false]);
    assert_eq!(sights(2), [true, true, false, false, false]);
}

#[test]
fn a_screen_close_to_a_known_one_in_pixels_joins_its_page() {
    let form = [(20, 20, 200, 40), (20, 100, 90, 40)];
    let empty = screen(&form);
    // Three small marks below the form: new widgets, 2 % of the cells.
    let marks = [(30, 200, 20, 20), (80, 200, 20, 20), (130, 200, 20, 20)];
    let filled = screen(&[&form[..], &marks[..]].concat());
    let elsewhere = &screens()[2];
    let pages = |print_pages: bool| {
        let mut a = agent_with(AgentConfig {
            print_pages,
            ..AgentConfig::default()
        });
        for shot in [&empty, elsewhere, &filled] {
            a.decide(shot, Platform::Web, &[ActionKind::Click]).unwrap();
        }
        a.stats().pages
    };
    assert_eq!(
        pages(false),
        3,
        "the store alone should tell the forms apart"
    );
    assert_eq!(pages(true), 2);
}

#[test]
fn after_a_stall_the_prior_alone_chooses() {
    // The same screen over and over: nothing new after the first step.
    let shot = screen(&[(20, 20, 200, 40), (20, 100, 200, 40)]);
    let run = |stall: u32| {
        let mut a = agent_with(AgentConfig {
            stall_steps: stall,
            ..AgentConfig::default()
        });
        for _ in 0..8 {
            a.decide(&shot, Platform::Web, &[ActionKind::Click])
                .unwrap();
        }
        a.stats().stalled_steps
    };
    assert_eq!(run(0), 0);
    // Decision k closes step k - 1: decisions 4 to 8 come after three idle steps.
    assert_eq!(run(3), 5);
}

/// Closes `prev` with `plugin`, as the agent does: it led to `page` and `changed` and
/// showed something `novel`, or not.
fn close_with(
    plugin: &mut dyn Plugin,
    shared: &mut Shared,
    prev: &Pending,
    page: PageId,
    changed: bool,
    novel: bool,
) {
    let mut store = PageStore::new(crate::PageStoreConfig::default()).unwrap();
    let screen = ScreenPrint::of(&screen(&[]));
    let now = Candidates::default();
    let mut step = FinishedStep {
        worker: 0,
        prev,
        page,
        screen: &screen,
        now: &now,
        resize: false,
        changed,
        novel,
        idle: !changed,
        reward: None,
        store: &mut store,
        shared,
    };
    plugin.observe(&mut step).unwrap();
}

#[test]
fn a_command_lasts_until_the_screen_changes_and_keeps_its_pairs() {
    let click = |target| ActionKey {
        kind: ActionKind::Click,
        target: Some(target),
        variant: 0,
    };
    // The chosen action is candidate 1; the other one's chance was 0.25.
    let on = |key: ActionKey, kind: WidgetKind| Pending {
        page: PageId(0),
        key,
        index: 1,
        embedding: Arc::from(vec![0.0f32]),
        before: Arc::new(ScreenPrint::of(&screen(&[]))),
        kind: ActionKind::Click,
        target: Some((Rect::new(0, 0, 10, 10), kind)),
        left: None,
        aim: Aim::from(Some(kind)),
        chances: Some(vec![Some(0.25), Some(0.5)]),
        tried: vec![false, false],
        new_code: None,
    };
    let (select_all, archive, tick) = (click(0), click(1), click(2));
    let mut plugin = CommandStates::new(&AgentConfig::default());
    let mut shared = Shared::default();
    let mut close = |shared: &mut Shared, prev: &Pending, page, changed, novel| {
        close_with(&mut plugin, shared, prev, page, changed, novel);
    };
    // A button that changed its page and stayed on it is a command.
    close(
        &mut shared,
        &on(select_all, WidgetKind::Button),
        PageId(0),
        true,
        true,
    );
    assert_eq!(shared.after_command(0, PageId(0)), Some(select_all));
    // An action right after it that changed nothing: the pair is recorded, and the
    // command goes on.
    close(
        &mut shared,
        &on(archive, WidgetKind::Button),
        PageId(0),
        false,
        false,
    );
    assert_eq!(shared.after_command(0, PageId(0)), Some(select_all));
    let button = Some(WidgetKind::Button);
    let pair = shared
        .prior
        .chance_after(PageId(0), select_all, archive, button);
    assert!((pair - 0.5 / 4.0).abs() < 1e-12, "{pair}");
    // A tick that changed the screen ends it; a box is no command.
    close(
        &mut shared,
        &on(tick, WidgetKind::CheckBox),
        PageId(0),
        true,
        true,
    );
    assert_eq!(shared.after_command(0, PageId(0)), None);
    // Leaving the page ends a command too.
    close(
        &mut shared,
        &on(select_all, WidgetKind::Button),
        PageId(0),
        true,
        true,
    );
    close(
        &mut shared,
        &on(archive, WidgetKind::Button),
        PageId(1),
        true,
        true,
    );
    assert_eq!(shared.after_command(0, PageId(0)), None);
    assert_eq!(shared.after_command(0, PageId(1)), None);
}

/// The page of `view` in `a`'s page store and its candidates, as a decision finds them.
fn candidates_of(a: &mut PirlAgent, view: PageView) -> (PageId, Candidates) {
    let page = a.store.lookup_or_insert(view.clone()).unwrap();
    let space = a.known.space_for(Platform::Web, &ActionKind::ALL).unwrap();
    if page.0 == a.known.len() {
        a.known.add(&view, &space).unwrap();
    }
    let c = a
        .known
        .candidates(
            page,
            &view,
            &space,
            &|_: &[KnownWidget], _: &Widget, _: &[bool]| None,
        )
        .unwrap();
    (page, c)
}

#[test]
fn once_the_size_budget_is_spent_the_agent_goes_back_to_the_start_size() {
    let page = screen(&[(20, 20, 200, 40), (20, 100, 90, 40)]);
    let mut a = agent();
    let view = a.reader().read(&page).unwrap().view;
    let (_, all) = candidates_of(&mut a, view);
    let (half, start) = ((320, 200), (640, 400));
    let count = |c: &Candidates| c.actions.iter().filter(|x| resizes(x.kind)).count();
    let resized = count(&all);
    assert!(resized > 1 && resized < all.actions.len());
    let mut budget = ResizeBudget::new(&AgentConfig::default());
    // 1 of 10 decisions away: within the budget, nothing changes anywhere.
    let mut stats = AgentStats {
        decisions: 9,
        away_steps: 1,
        ..AgentStats::default()
    };
    let mut c = all.clone();
    budget.keep(&mut c, half, start, &stats);
    assert_eq!(c.actions.len(), all.actions.len());
    // 2 of 10: spent. At the start size no resize is offered.
    stats.away_steps = 2;
    let mut c = all.clone();
    budget.keep(&mut c, start, start, &stats);
    assert_eq!(
        (count(&c), c.actions.len()),
        (0, all.actions.len() - resized)
    );
    // Away from it, every resize while none is known to lead back...
    let mut c = all.clone();
    budget.keep(&mut c, half, start, &stats);
    assert_eq!((count(&c), c.actions.len()), (resized, resized));
    // ...and the one that did, once known.
    let back = (0..all.actions.len())
        .rfind(|i| all.actions[*i].kind == ActionKind::WindowSize)
        .unwrap();
    let resize = Pending {
        key: all.keys[back],
        kind: ActionKind::WindowSize,
        target: None,
        before: Arc::new(ScreenPrint::of(
            &Screenshot::new(RgbImage::new(320, 200), 1.0, 0).unwrap(),
        )),
        ..input_step(Arc::new(ScreenPrint::of(&page)), Rect::new(0, 0, 1, 1))
    };
    let after = ScreenPrint::of(&Screenshot::new(RgbImage::new(640, 400), 1.0, 0).unwrap());
    let mut store = PageStore::new(crate::PageStoreConfig::default()).unwrap();
    let mut shared = Shared::default();
    budget
        .observe(&mut FinishedStep {
            worker: 0,
            prev: &resize,
            page: PageId(0),
            screen: &after,
            now: &all,
            resize: true,
            changed: false,
            novel: false,
            idle: true,
            reward: None,
            store: &mut store,
            shared: &mut shared,
        })
        .unwrap();
    let mut c = all.clone();
    budget.keep(&mut c, half, start, &stats);
    assert_eq!(c.keys, vec![all.keys[back]]);
    // With no limit, nothing is ever held back.
    let free = ResizeBudget::new(&AgentConfig {
        resize_budget: 1.0,
        ..AgentConfig::default()
    });
    let mut c = all.clone();
    free.keep(&mut c, half, start, &stats);
    assert_eq!(c.actions.len(), all.actions.len());
}

#[test]
fn a_page_with_a_dialog_open_offers_no_resize() {
    let page = screen(&[(20, 20, 200, 40), (20, 100, 90, 40), (20, 260, 200, 40)]);
    let dialog = Rect::new(40, 140, 160, 100);
    let open = with_dialog(&page, dialog);
    let mut a = agent();
    a.decide(&page, Platform::Web, &ActionKind::ALL).unwrap();
    for _ in 0..6 {
        let action = a.decide(&open, Platform::Web, &ActionKind::ALL).unwrap();
        assert!(!resizes(action.kind), "{action:?}");
    }
    // Eq. 1's `m` of the dialog's page counts its actions without the resizes.
    let (id, _) = a.last_seen().unwrap();
    let m = a.pages().stats(id).unwrap().executable();
    let read = a.reader().read(&open).unwrap();
    let view = dialog_view(&read.view, dialog, read.size, &a.config.layout).unwrap();
    let mut fresh = agent();
    let (_, all) = candidates_of(&mut fresh, view);
    let resized = all.actions.iter().filter(|x| resizes(x.kind)).count();
    assert!(resized > 0);
    assert_eq!(m, all.actions.len() - resized);
}

#[test]
fn a_small_change_stays_on_the_page_acted_on() {
    let page = [(20, 20, 200, 40), (20, 100, 90, 40)];
    let before = screen(&page);
    // The same screen with a small box more: about 1 % of it changed.
    let after = screen(&[page[0], page[1], (150, 110, 30, 20)]);
    let elsewhere = screens()[1].clone();
    let pages_of = |local_page: f64| {
        let mut a = agent_with(AgentConfig {
            local_page,
            ..AgentConfig::default()
        });
        [&before, &after, &elsewhere]
            .map(|s| {
                a.decide(s, Platform::Web, &ActionKind::ALL).unwrap();
                a.last_seen().unwrap().0
            })
            .to_vec()
    };
    let looked_up = pages_of(0.0);
    assert_ne!(
        looked_up[0], looked_up[1],
        "the page store tells them apart"
    );
    let stayed = pages_of(AgentConfig::default().local_page);
    assert_eq!(stayed[0], stayed[1]);
    assert_ne!(stayed[1], stayed[2], "a large change is looked up");
    for bad in [-0.1, BACKDROP_MIN_CHANGED, 1.5] {
        let err = PirlAgent::new(AgentConfig {
            local_page: bad,
            ..AgentConfig::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("local_page"), "{err}");
    }
}

#[test]
fn one_dialog_over_two_pages_is_one_page() {
    let dialog = Rect::new(40, 140, 160, 100);
    let pages = [
        screen(&[(20, 20, 200, 40), (20, 260, 200, 40)]),
        screen(&[(20, 20, 80, 30), (140, 20, 80, 30), (30, 280, 180, 30)]),
    ];
    let mut a = agent();
    let mut behind = Vec::new();
    let mut dialogs = Vec::new();
    for page in &pages {
        a.decide(page, Platform::Web, &ActionKind::ALL).unwrap();
        behind.push(a.last_seen().unwrap().0);
        a.decide(&with_dialog(page, dialog), Platform::Web, &ActionKind::ALL)
            .unwrap();
        let (id, widgets) = a.last_seen().unwrap();
        assert!(
            widgets.iter().all(|w| inside(w.rect, dialog)),
            "{widgets:?}"
        );
        dialogs.push(id);
    }
    assert_ne!(behind[0], behind[1]);
    assert_eq!(dialogs[0], dialogs[1]);
    assert!(!behind.contains(&dialogs[0]));
}

#[test]
fn a_step_that_changes_nothing_gets_the_idle_reward() {
    let shots = screens();
    // The same screen again: nothing changed, whatever the action was.
    let mut a = agent();
    for _ in 0..3 {
        a.decide(&shots[0], Platform::Web, &ActionKind::ALL)
            .unwrap();
    }
    assert_eq!(a.stats().idle_steps, 2);
    assert_eq!(a.stats().last_reward, 0.0);
    // A new page: Eq. 1, a fresh page reached from a page seen 3 times.
    a.decide(&shots[1], Platform::Web, &ActionKind::ALL)
        .unwrap();
    assert_eq!(a.stats().idle_steps, 2);
    assert!((a.stats().last_reward - 1.0 / 3f64.sqrt()).abs() < 1e-9);

    // Without an idle reward every step is paid by Eq. 1.
    let mut paper = agent_with(AgentConfig {
        idle_reward: None,
        effect_prior: false,
        ..AgentConfig::default()
    });
    for _ in 0..3 {
        paper
            .decide(&shots[0], Platform::Web, &ActionKind::ALL)
            .unwrap();
    }
    assert_eq!(paper.stats().idle_steps, 2);
    assert!(paper.stats().last_reward > 0.0);
}

#[test]
fn only_the_first_sight_of_a_screen_is_novel() {
    let shots = screens();
    let mut a = agent();
    for i in [0, 1, 0, 1, 0, 2] {
        a.decide(&shots[i], Platform::Web, &ActionKind::ALL)
            .unwrap();
    }
    let s = a.stats();
    // Only the steps to screens 1 and 2 showed new screens; going back to one seen
    // before is a change but nothing new.
    assert_eq!(s.novel_steps, 2, "{s:?}");
    let mut off = agent_with(AgentConfig {
        effect_prior: false,
        ..AgentConfig::default()
    });
    off.decide(&shots[0], Platform::Web, &ActionKind::ALL)
        .unwrap();
    off.decide(&shots[1], Platform::Web, &ActionKind::ALL)
        .unwrap();
    // Counted without the prior too.
    assert_eq!(off.stats().novel_steps, 1);
}

#[test]
fn the_map_keeps_where_each_action_led_and_what_each_page_promises() {
    let shots = screens();
    let run = |seed: u64, frontier: bool| {
        let mut a = PirlAgent::new(AgentConfig {
            seed,
            frontier,
            ..AgentConfig::default()
        })
        .unwrap();
        a.decide(&shots[0], Platform::Web, &ActionKind::ALL)
            .unwrap();
        let key = a.pending[0].as_ref().unwrap().key;
        a.decide(&shots[1], Platform::Web, &ActionKind::ALL)
            .unwrap();
        (a, key)
    };
    // A resize is left out of the prior, so the test needs a seed whose first step is
    // another action (which one depends on the shipped widget CNN).
    let seed = (1..=20)
        .find(|&s| !resizes(run(s, true).1.kind))
        .expect("a seed whose first step is no resize");
    let (a, key) = run(seed, true);
    assert_eq!(a.shared.frontier.leads_to(PageId(0), key), Some(PageId(1)));
    // Both pages had untried actions: neither is without promise.
    assert!(a.shared.frontier.promise(PageId(0)) > 0.0);
    assert!(a.shared.frontier.promise(PageId(1)) > 0.0);
    let (off, key) = run(seed, false);
    assert_eq!(off.shared.frontier.leads_to(PageId(0), key), None);
    assert_eq!(off.shared.frontier.promise(PageId(0)), 0.0);
}

#[test]
fn each_input_into_a_field_types_the_next_text() {
    let mut a = agent();
    let texts = a.config.actions.texts.clone();
    let field = Widget::new(Rect::new(20, 20, 200, 40), WidgetKind::EditText, 1.0);
    let dim = a.known.widget_dim();
    let widgets = vec![field];
    let tree =
        characterise(&widgets, Size::new(240, 320), &a.config.layout).tree(TreeLabels::Kinds);
    let view = PageView::new(widgets, vec![vec![0.1; dim]], tree).unwrap();
    let typed = |a: &mut PirlAgent| {
        let (page, c) = candidates_of(a, view.clone());
        let i = c
            .actions
            .iter()
            .position(|x| x.kind == ActionKind::Input)
            .unwrap();
        let Some(ActionParam::Text(t)) = c.actions[i].param.clone() else {
            panic!("an input without a text: {:?}", c.actions[i]);
        };
        (page, c.keys[i], c.embeddings[i].clone(), t)
    };
    let (page, key, embedding, first) = typed(&mut a);
    let start = texts.iter().position(|t| *t == first).unwrap();
    for k in 1..=texts.len() {
        a.known.count_typing(page, key);
        let (p, kk, e, t) = typed(&mut a);
        // The same action of the same page, with the same vector, types the next text.
        assert_eq!((p, kk), (page, key));
        assert_eq!(e, embedding);
        assert_eq!(t, texts[(start + k) % texts.len()]);
    }
}

#[test]
fn a_non_finite_idle_reward_is_refused() {
    let e = PirlAgent::new(AgentConfig {
        idle_reward: Some(f64::NAN),
        ..AgentConfig::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("idle_reward"), "{e}");
}

#[test]
fn each_worker_closes_its_own_step() {
    let shots = screens();
    let mut a = agent();
    let mut readers = [a.reader(), a.reader()];
    let mut step = |a: &mut PirlAgent, worker: usize, shot: usize| {
        let read = readers[worker].read(&shots[shot]).unwrap();
        a.decide_read(worker, read, Platform::Web, &ActionKind::ALL)
            .unwrap();
        a.last_seen_of(worker).unwrap().0
    };
    // Worker 0 on screen 0, worker 1 on screen 2: first steps, nothing to close.
    let p0 = step(&mut a, 0, 0);
    let p2 = step(&mut a, 1, 2);
    assert_eq!(a.stats().memory, 0);
    assert_ne!(p0, p2);
    // Worker 0 reaches screen 1: its step from screen 0, not worker 1's from screen 2.
    let p1 = step(&mut a, 0, 1);
    assert_eq!(a.stats().memory, 1);
    let last = a.memory.iter().last().unwrap();
    assert_eq!(&last.state, a.known.state(p0));
    assert_eq!(&last.next_state, a.known.state(p1));
    // Worker 1 reaches screen 1 too: its step from screen 2.
    step(&mut a, 1, 1);
    assert_eq!(a.stats().memory, 2);
    let last = a.memory.iter().last().unwrap();
    assert_eq!(&last.state, a.known.state(p2));
    assert_eq!(a.last_seen_of(0).unwrap().0, p1);
    assert_eq!(a.last_seen_of(1).unwrap().0, p1);
    // One more each: one entry per decision.
    step(&mut a, 0, 2);
    step(&mut a, 1, 0);
    assert_eq!(a.stats().memory, 4);
    // A restart of worker 1 leaves worker 0's step in flight.
    a.reset_episode_of(1);
    step(&mut a, 1, 0);
    assert_eq!(a.stats().memory, 4);
    step(&mut a, 0, 0);
    assert_eq!(a.stats().memory, 5);
    assert_eq!(a.stats().decisions, 8);
    assert_eq!(a.stats().pages, 3);
}

#[test]
fn workers_on_threads_share_one_agent() {
    use std::sync::Mutex;
    let agent = Arc::new(Mutex::new(agent()));
    let workers: Vec<_> = (0..2)
        .map(|worker| {
            let agent = agent.clone();
            let mut reader = agent.lock().unwrap().reader();
            std::thread::spawn(move || {
                let shots = screens();
                for i in 0..3 {
                    // The reading runs outside the lock.
                    let read = reader.read(&shots[(worker + i) % 3]).unwrap();
                    let mut a = agent.lock().unwrap();
                    a.decide_read(worker, read, Platform::Web, &ActionKind::ALL)
                        .unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let stats = agent.lock().unwrap().stats();
    assert_eq!(stats.decisions, 6);
    assert_eq!(stats.memory, 4);
}

fn covered(functions: u64, bytes: u64) -> gui_core::CoverageSnapshot {
    gui_core::CoverageSnapshot {
        functions_covered: functions,
        bytes_covered: bytes,
        ..gui_core::CoverageSnapshot::default()
    }
}

/// Every action kind but the resizes, which the effect prior does not learn.
fn no_resizes() -> Vec<ActionKind> {
    ActionKind::ALL
        .into_iter()
        .filter(|k| !resizes(*k))
        .collect()
}

/// The chance the effect prior gives worker 0's step in flight on its page once the
/// next decision, on `shot`, has closed it.
fn prior_after(a: &mut PirlAgent, shot: &Screenshot) -> f64 {
    let prev = a.pending[0].clone().unwrap();
    a.decide(shot, Platform::Web, &no_resizes()).unwrap();
    a.shared.prior.chance(prev.page, prev.key, prev.aim)
}

#[test]
fn with_code_novelty_new_code_is_novel_and_paid_and_new_pixels_alone_are_idle() {
    let shots = screens();
    let run = |code_novelty: bool| {
        let mut a = agent_with(AgentConfig {
            code_novelty,
            ..AgentConfig::default()
        });
        a.decide(&shots[0], Platform::Web, &no_resizes()).unwrap();
        // The first snapshot has nothing to be compared with: the screen judges the step.
        a.observe_coverage(0, &covered(10, 1000));
        a.decide(&shots[0], Platform::Web, &no_resizes()).unwrap();
        let first = a.stats();
        // The same screen again, but the action ran a new branch.
        a.observe_coverage(0, &covered(10, 1200));
        let chance = prior_after(&mut a, &shots[0]);
        let second = a.stats();
        // A new screen whose action ran nothing new.
        a.observe_coverage(0, &covered(10, 1200));
        a.decide(&shots[1], Platform::Web, &no_resizes()).unwrap();
        (first, second, chance, a.stats())
    };
    let count = |s: &AgentStats| (s.idle_steps, s.novel_steps, s.code_steps);
    let (first, second, chance, third) = run(true);
    assert_eq!(count(&first), (1, 0, 0));
    assert_eq!(first.last_reward, 0.0);
    // New code on an unchanged screen: novel, not idle, paid 1.
    assert_eq!(count(&second), (1, 1, 1));
    assert_eq!(second.last_reward, 1.0);
    // New pixels and no new code: idle, not novel, and paid by Eq. 1 (a fresh page
    // reached from one seen 3 times).
    assert_eq!(count(&third), (2, 1, 1));
    assert!(
        (third.last_reward - 1.0 / 3f64.sqrt()).abs() < 1e-9,
        "{third:?}"
    );

    // Without the plug-in the screen judges: the unchanged screen is idle and paid 0,
    // the new one novel, and the effect prior thinks less of the action that ran code.
    let (first_off, second_off, chance_off, third_off) = run(false);
    assert_eq!(count(&first_off), (1, 0, 0));
    assert_eq!(count(&second_off), (2, 0, 1));
    assert_eq!(second_off.last_reward, 0.0);
    assert_eq!(count(&third_off), (2, 1, 1));
    assert!(chance > chance_off, "{chance} against {chance_off}");
}

#[test]
fn without_coverage_code_novelty_changes_nothing_and_coverage_alone_changes_nothing() {
    let shots = screens();
    let run = |code_novelty: bool, coverage: bool| {
        let mut a = agent_with(AgentConfig {
            code_novelty,
            ..AgentConfig::default()
        });
        let mut actions = Vec::new();
        for (step, i) in [0, 1, 0, 2, 2, 1, 0, 0].into_iter().enumerate() {
            actions.push(
                a.decide(&shots[i], Platform::Web, &ActionKind::ALL)
                    .unwrap(),
            );
            if coverage {
                a.observe_coverage(0, &covered(step as u64 / 2, 100 * step as u64));
            }
        }
        let s = a.stats();
        (
            actions,
            s.idle_steps,
            s.novel_steps,
            s.last_reward,
            s.code_steps,
        )
    };
    let plain = run(false, false);
    assert_eq!(run(true, false), plain);
    // Coverage observed by the default preset is counted and changes nothing else: the
    // bytes rise after every action, the first snapshot has nothing before it.
    let counted = run(false, true);
    assert_eq!(counted.4, 7);
    assert_eq!(counted.0, plain.0);
    assert_eq!(
        (counted.1, counted.2, counted.3),
        (plain.1, plain.2, plain.3)
    );
    // With the plug-in, the same coverage makes every step novel and none idle: the
    // first (to a new screen) by its screen, the 6 after it by their code.
    let (_, idle, novel, reward, _) = run(true, true);
    assert_eq!((idle, novel, reward), (0, 7, 1.0));
    assert_ne!((plain.1, plain.2), (0, 7));
}

#[test]
fn coverage_after_a_restart_is_not_credited_to_the_next_step() {
    let shots = screens();
    let mut a = agent_with(AgentConfig {
        code_novelty: true,
        ..AgentConfig::default()
    });
    a.decide(&shots[0], Platform::Web, &ActionKind::ALL)
        .unwrap();
    a.observe_coverage(0, &covered(10, 1000));
    a.reset_episode();
    // The restart's start screen runs code, but no step is in flight to take it.
    a.observe_coverage(0, &covered(12, 1500));
    a.decide(&shots[0], Platform::Web, &ActionKind::ALL)
        .unwrap();
    a.observe_coverage(0, &covered(12, 1500));
    a.decide(&shots[0], Platform::Web, &ActionKind::ALL)
        .unwrap();
    let s = a.stats();
    assert_eq!((s.code_steps, s.novel_steps, s.idle_steps), (0, 0, 1));
}
