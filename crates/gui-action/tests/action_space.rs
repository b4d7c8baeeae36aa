use gui_action::{ActionSpace, ActionSpaceConfig, applies_to};
use gui_core::{
    Action, ActionGroup, ActionKind, ActionParam, Platform, Rect, SwipeDirection, Widget,
    WidgetKind,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn widget(i: i32, kind: WidgetKind) -> Widget {
    Widget::new(Rect::new(10, 60 * i, 200, 40), kind, 0.9)
}

/// One widget of each of the 14 kinds.
fn every_kind() -> Vec<Widget> {
    WidgetKind::ALL
        .iter()
        .enumerate()
        .map(|(i, k)| widget(i as i32, *k))
        .collect()
}

/// Distinct kinds per group among the candidates of a screen with every widget kind.
fn group_counts(platform: Platform) -> (usize, usize, usize) {
    let mut kinds: Vec<ActionKind> = ActionSpace::for_platform(platform)
        .candidates(&every_kind())
        .iter()
        .map(|a| a.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    let g = |g| kinds.iter().filter(|k| k.group() == g).count();
    (
        g(ActionGroup::Widget),
        g(ActionGroup::Page),
        g(ActionGroup::System),
    )
}

#[test]
fn candidates_reach_the_table_1_counts() {
    // Table 1, PIRLTest row: widget/page/system actions, mobile 5/3/6 and web 6/3/5.
    assert_eq!(group_counts(Platform::Web), (6, 3, 5));
    assert_eq!(group_counts(Platform::Android), (5, 3, 6));
    // No desktop column in the paper; gui-core gives it the web's widget and page actions
    // and the two system actions a desktop has.
    assert_eq!(group_counts(Platform::Desktop), (6, 3, 2));
    for p in [Platform::Web, Platform::Desktop, Platform::Android] {
        let space = ActionSpace::for_platform(p);
        let supported: Vec<_> = ActionKind::supported(p).collect();
        assert_eq!(space.kinds(), supported.as_slice(), "{p:?}");
    }
}

/// The applicability table of `applies_to`, written out independently: columns click,
/// input, drag, double click, long click, mid click, right click.
const TABLE: [(WidgetKind, &str); WidgetKind::COUNT] = [
    (WidgetKind::Button, "C....MR"),
    (WidgetKind::TextView, "CI.DLMR"),
    (WidgetKind::EditText, "CI.DL.R"),
    (WidgetKind::CheckBox, "C......"),
    (WidgetKind::ImageButton, "C...LMR"),
    (WidgetKind::ImageView, "C.GDLMR"),
    (WidgetKind::RadioButton, "C......"),
    (WidgetKind::Switch, "C......"),
    (WidgetKind::SeekBar, "C.G...."),
    (WidgetKind::ProgressBar, "......."),
    (WidgetKind::Spinner, "CI....."),
    (WidgetKind::ListItem, "C.GDLMR"),
    (WidgetKind::Tab, "C....MR"),
    (WidgetKind::Icon, "C...LMR"),
];

const WIDGET_ACTIONS: [ActionKind; 7] = [
    ActionKind::Click,
    ActionKind::Input,
    ActionKind::Drag,
    ActionKind::DoubleClick,
    ActionKind::LongClick,
    ActionKind::MidClick,
    ActionKind::RightClick,
];

#[test]
fn applicability_table() {
    for (i, (kind, row)) in TABLE.iter().enumerate() {
        assert_eq!(
            WidgetKind::ALL[i],
            *kind,
            "table rows follow WidgetKind::ALL"
        );
        for (action, cell) in WIDGET_ACTIONS.iter().zip(row.chars()) {
            assert_eq!(
                applies_to(*action, *kind),
                cell != '.',
                "{action} on {kind:?}"
            );
        }
    }
    // Input goes where text can be typed, to labels, which may be fields showing their
    // placeholder, and to spinners, which may be combo boxes or wide fields.
    for kind in WidgetKind::ALL {
        let field_like = matches!(kind, WidgetKind::TextView | WidgetKind::Spinner);
        assert_eq!(
            applies_to(ActionKind::Input, kind),
            kind.accepts_text() || field_like
        );
    }
}

#[test]
fn platform_support_filters_widget_actions() {
    let web = ActionSpace::for_platform(Platform::Web);
    let android = ActionSpace::for_platform(Platform::Android);
    let item = WidgetKind::ListItem;
    assert_eq!(
        web.widget_kinds(item).collect::<Vec<_>>(),
        [
            ActionKind::Click,
            ActionKind::Drag,
            ActionKind::DoubleClick,
            ActionKind::MidClick,
            ActionKind::RightClick
        ]
    );
    assert_eq!(
        android.widget_kinds(item).collect::<Vec<_>>(),
        [
            ActionKind::Click,
            ActionKind::Drag,
            ActionKind::DoubleClick,
            ActionKind::LongClick
        ]
    );
}

#[test]
fn candidates_of_a_small_web_screen() {
    let button = widget(0, WidgetKind::Button);
    let field = widget(1, WidgetKind::EditText);
    let seek = widget(2, WidgetKind::SeekBar);
    let progress = widget(3, WidgetKind::ProgressBar);
    let space = ActionSpace::for_platform(Platform::Web);
    let got = space.candidates(&[
        button.clone(),
        field.clone(),
        seek.clone(),
        progress.clone(),
    ]);

    use ActionKind::*;
    let expected = vec![
        Action::on(Click, button.clone()),
        Action::on(MidClick, button.clone()),
        Action::on(RightClick, button),
        Action::on(Click, field.clone()),
        Action::on(Input, field.clone()).with_param(ActionParam::Text("hello\n".into())),
        Action::on(DoubleClick, field.clone()),
        Action::on(RightClick, field),
        Action::on(Click, seek.clone()),
        Action::on(Drag, seek.clone()).with_param(ActionParam::Offset { dx: 100, dy: 0 }),
        Action::on(Drag, seek).with_param(ActionParam::Offset { dx: -100, dy: 0 }),
        // The progress bar takes no action.
        Action::new(Swipe).with_param(ActionParam::Direction(SwipeDirection::Up)),
        Action::new(Swipe).with_param(ActionParam::Direction(SwipeDirection::Down)),
        Action::new(SplitScreen),
        Action::new(WindowSize).with_param(ActionParam::Ratio(0.5)),
        Action::new(WindowSize).with_param(ActionParam::Ratio(1.0)),
        Action::new(Return),
        Action::new(BackSwitch),
        Action::new(AccessGrant),
        Action::new(AccessDeny),
        Action::new(NetworkSwitch),
    ];
    assert_eq!(got, expected);
    // A screen without widgets still has its page and system actions.
    assert_eq!(space.candidates(&[]), expected[10..]);
}

fn typed(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match &a.param {
            Some(ActionParam::Text(t)) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn texts_rotate_over_the_text_fields_of_a_screen() {
    let mut screen: Vec<Widget> = (0..4).map(|i| widget(i, WidgetKind::EditText)).collect();
    screen.insert(2, widget(9, WidgetKind::Button));
    let space = ActionSpace::for_platform(Platform::Android);
    assert_eq!(
        typed(&space.candidates(&screen)),
        ["hello\n", "12345", "test@example.com", "hello\n"]
    );
    // The same screen gives the same candidates every time.
    assert_eq!(space.candidates(&screen), space.candidates(&screen));
}

#[test]
fn seeded_text_choice_is_deterministic() {
    let screen: Vec<Widget> = (0..24).map(|i| widget(i, WidgetKind::EditText)).collect();
    let space = ActionSpace::for_platform(Platform::Web);
    let run = |seed| space.candidates_with_rng(&screen, &mut ChaCha8Rng::seed_from_u64(seed));
    let a = run(7);
    assert_eq!(a, run(7));
    let texts = typed(&a);
    assert_eq!(texts.len(), 24);
    assert!(texts.iter().all(|t| space.config().texts.contains(t)));
    // 24 draws from 3 texts: a different seed giving the same sequence is a 3^-24 chance.
    assert_ne!(texts, typed(&run(8)));
    // Every text gets drawn at least once (fails with chance < 3 * (2/3)^24 < 0.2%,
    // and the seed is fixed).
    for t in &space.config().texts {
        assert!(texts.contains(t), "{t} never drawn: {texts:?}");
    }
    // Only the texts differ from the rotating candidates.
    let rotating = space.candidates(&screen);
    assert_eq!(a.len(), rotating.len());
    for (x, y) in a.iter().zip(&rotating) {
        assert_eq!((x.kind, &x.target), (y.kind, &y.target));
    }
}

#[test]
fn config_restricts_kinds_and_parameters() {
    let config = ActionSpaceConfig {
        enabled: [
            ActionKind::Click,
            ActionKind::Drag,
            ActionKind::Swipe,
            ActionKind::WindowSize,
            ActionKind::PhoneInterrupt,
            ActionKind::Return,
        ]
        .into_iter()
        .collect(),
        swipe_directions: vec![SwipeDirection::Down],
        window_ratios: vec![0.75],
        drag_offsets: vec![(0, 40)],
        texts: vec![],
    };
    let space = ActionSpace::new(Platform::Web, config).unwrap();
    // Phone interrupt is not on the web; input is disabled, so no texts are needed.
    assert_eq!(
        space.kinds(),
        [
            ActionKind::Click,
            ActionKind::Drag,
            ActionKind::Swipe,
            ActionKind::WindowSize,
            ActionKind::Return
        ]
    );
    let img = widget(0, WidgetKind::ImageView);
    let got = space.candidates(&[img.clone(), widget(1, WidgetKind::EditText)]);
    let expected = vec![
        Action::on(ActionKind::Click, img.clone()),
        Action::on(ActionKind::Drag, img).with_param(ActionParam::Offset { dx: 0, dy: 40 }),
        Action::on(ActionKind::Click, widget(1, WidgetKind::EditText)),
        Action::new(ActionKind::Swipe).with_param(ActionParam::Direction(SwipeDirection::Down)),
        Action::new(ActionKind::WindowSize).with_param(ActionParam::Ratio(0.75)),
        Action::new(ActionKind::Return),
    ];
    assert_eq!(got, expected);
}

#[test]
fn empty_text_list_with_input_enabled_is_an_error() {
    let config = ActionSpaceConfig {
        texts: vec![],
        ..ActionSpaceConfig::default()
    };
    let err = ActionSpace::new(Platform::Android, config).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("`texts`") && msg.contains("`input`"),
        "message names the field and the action: {msg}"
    );
}

#[test]
fn config_reads_from_partial_json() {
    let config: ActionSpaceConfig =
        serde_json::from_str(r#"{"texts":["a"],"window_ratios":[0.25,2.0]}"#).unwrap();
    assert_eq!(config.texts, ["a"]);
    assert_eq!(config.window_ratios, [0.25, 2.0]);
    assert_eq!(config.enabled.len(), ActionKind::COUNT);
    assert_eq!(
        config.drag_offsets,
        ActionSpaceConfig::default().drag_offsets
    );
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(
        serde_json::from_str::<ActionSpaceConfig>(&json).unwrap(),
        config
    );
}
