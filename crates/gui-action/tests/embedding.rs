use gui_action::{ActionEmbedding, ActionSpace, Error, ParamSlot, action_dim, embed_action};
use gui_core::{
    Action, ActionKind, ActionParam, Platform, Point, Rect, SwipeDirection, Widget, WidgetKind,
};

const DIM: usize = 4;

fn button() -> Widget {
    Widget::new(Rect::new(0, 0, 80, 30), WidgetKind::Button, 1.0)
}

fn params(e: &ActionEmbedding, v: &[f32]) -> Vec<f32> {
    v[e.param_range()].to_vec()
}

#[test]
fn kind_one_hot_sits_at_the_kind_index() {
    let e = ActionEmbedding::new(DIM);
    for kind in ActionKind::ALL {
        let v = e.embed(&Action::new(kind), None).unwrap();
        assert_eq!(v.len(), action_dim(DIM));
        assert_eq!(v.len(), ActionKind::COUNT + DIM + ParamSlot::COUNT);
        let hot: Vec<usize> = (0..ActionKind::COUNT).filter(|i| v[*i] != 0.0).collect();
        assert_eq!(hot, [kind.index()], "{kind}");
        assert_eq!(v[kind.index()], 1.0);
        // No target and no parameter: everything after the one-hot is 0.
        assert!(v[ActionKind::COUNT..].iter().all(|x| *x == 0.0), "{kind}");
    }
}

#[test]
fn target_block_is_the_widget_embedding_or_zeros() {
    let e = ActionEmbedding::new(DIM);
    let w = [0.5, -1.0, 2.0, 0.25];
    let click = Action::on(ActionKind::Click, button());
    let v = e.embed(&click, Some(&w)).unwrap();
    assert_eq!(e.target_range(), 17..21);
    assert_eq!(&v[17..21], &w);
    assert_eq!(params(&e, &v), [0.0; 6]);
    // A widget action without a known embedding pads the target with zeros.
    let v = e.embed(&click, None).unwrap();
    assert_eq!(&v[17..21], &[0.0; 4]);
    // So does a point target (Monkey-style).
    let at = Action::at(ActionKind::Click, Point::new(3, 4));
    assert_eq!(e.embed(&at, None).unwrap(), v);
    assert_eq!(&e.embed(&at, Some(&w)).unwrap()[17..21], &w);
}

#[test]
fn parameter_block_layout() {
    let e = ActionEmbedding::new(DIM);
    let p = |a: Action| params(&e, &e.embed(&a, None).unwrap());

    let ratio = Action::new(ActionKind::WindowSize).with_param(ActionParam::Ratio(0.5));
    assert_eq!(p(ratio), [0.5, 0.0, 0.0, 0.0, 0.0, 0.0]);

    let swipe = |d| Action::new(ActionKind::Swipe).with_param(ActionParam::Direction(d));
    assert_eq!(p(swipe(SwipeDirection::Up)), [0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(
        p(swipe(SwipeDirection::Down)),
        [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    );

    // Drag offsets are divided by the drag scale (1000 px) and clamped to [-1, 1].
    let drag =
        |dx, dy| Action::on(ActionKind::Drag, button()).with_param(ActionParam::Offset { dx, dy });
    assert_eq!(p(drag(100, -250)), [0.0, 0.0, 0.0, 0.1, -0.25, 0.0]);
    assert_eq!(p(drag(-5000, 3000)), [0.0, 0.0, 0.0, -1.0, 1.0, 0.0]);
    let e200 = ActionEmbedding::new(DIM).with_drag_scale(200.0).unwrap();
    let v = e200.embed(&drag(100, 0), None).unwrap();
    assert_eq!(params(&e200, &v)[ParamSlot::DragDx.index()], 0.5);

    // Text length counts characters, not bytes, over 64 and at most 1.
    let input =
        |t: &str| Action::on(ActionKind::Input, button()).with_param(ActionParam::Text(t.into()));
    assert_eq!(p(input("héllo"))[ParamSlot::TextLength.index()], 5.0 / 64.0);
    assert_eq!(p(input(&"x".repeat(200)))[5], 1.0);
    assert_eq!(p(input("")), [0.0; 6]);

    // Toggles have no parameter.
    assert_eq!(p(Action::new(ActionKind::OrientationSwitch)), [0.0; 6]);
}

#[test]
fn wrong_widget_dim_is_an_error() {
    let click = Action::on(ActionKind::Click, button());
    let err = embed_action(&click, Some(&[1.0, 2.0, 3.0]), DIM).unwrap_err();
    assert_eq!(
        err,
        Error::WidgetDim {
            action: ActionKind::Click,
            expected: 4,
            found: 3
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains("`click`") && msg.contains("3 values, expected 4"),
        "{msg}"
    );
    assert!(embed_action(&click, Some(&[0.0; 5]), DIM).is_err());
    assert!(embed_action(&click, Some(&[0.0; 4]), DIM).is_ok());
}

#[test]
fn widget_embedding_for_an_action_without_target_is_an_error() {
    let swipe = Action::new(ActionKind::Swipe);
    let err = embed_action(&swipe, Some(&[0.0; DIM]), DIM).unwrap_err();
    assert_eq!(
        err,
        Error::UnexpectedWidgetEmbedding {
            action: ActionKind::Swipe
        }
    );
}

#[test]
fn free_function_matches_the_struct() {
    let a = Action::on(ActionKind::Drag, button()).with_param(ActionParam::Offset { dx: 7, dy: 9 });
    let w = [1.0, 2.0, 3.0, 4.0];
    assert_eq!(
        embed_action(&a, Some(&w), DIM).unwrap(),
        ActionEmbedding::new(DIM).embed(&a, Some(&w)).unwrap()
    );
    let mut batch = Vec::new();
    let e = ActionEmbedding::new(DIM);
    e.embed_into(&a, Some(&w), &mut batch).unwrap();
    e.embed_into(&Action::new(ActionKind::Return), None, &mut batch)
        .unwrap();
    assert_eq!(batch.len(), 2 * e.dim());
    assert_eq!(batch[e.dim() + ActionKind::Return.index()], 1.0);
}

#[test]
fn every_candidate_of_a_screen_embeds_distinctly() {
    // With one embedding per widget, no two candidates of a screen share a vector: the
    // Q-network can tell every choice apart.
    let widgets: Vec<Widget> = WidgetKind::ALL
        .iter()
        .enumerate()
        .map(|(i, k)| Widget::new(Rect::new(0, 50 * i as i32, 100, 40), *k, 1.0))
        .collect();
    for platform in [Platform::Web, Platform::Android, Platform::Desktop] {
        let space = ActionSpace::for_platform(platform);
        let e = ActionEmbedding::new(WidgetKind::COUNT);
        let vectors: Vec<Vec<f32>> = space
            .candidates(&widgets)
            .iter()
            .map(|a| {
                let w = match &a.target {
                    Some(gui_core::Target::Widget(w)) => Some(w.kind.one_hot()),
                    _ => None,
                };
                e.embed(a, w.as_ref().map(|w| w.as_slice())).unwrap()
            })
            .collect();
        for (i, a) in vectors.iter().enumerate() {
            assert_eq!(a.len(), e.dim());
            for b in &vectors[..i] {
                assert_ne!(a, b, "{platform:?}: two candidates embed alike");
            }
        }
    }
}
