use std::collections::BTreeSet;

use gui_core::{
    Action, ActionGroup, ActionKind, ActionParam, Platform, SwipeDirection, Widget, WidgetKind,
};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Whether the widget action `action` makes sense on a widget of kind `widget`
/// (PIRLTest Section 3.2: "whether a widget action is applicable ... is determined by the
/// widget type"). Page and system actions apply to no widget, so they return `false`.
///
/// The paper gives the principle and two examples (Section 1: a Button takes "click,
/// right-click", an editable text field takes "input, long-click") but no table; this is
/// ours. Platform support is a separate filter ([`ActionKind::supported_on`]): long click
/// exists only on Android, mid and right click only on the web and the desktop.
///
/// | widget kind | click | input | drag | double | long | mid | right | why |
/// |-------------|:-----:|:-----:|:----:|:------:|:----:|:---:|:-----:|-----|
/// | Button      | ✓ |   |   |   |   | ✓ | ✓ | pressed; a web "button" is often a link (mid click opens a tab) and may carry a context menu |
/// | TextView    | ✓ | ✓ |   | ✓ | ✓ | ✓ | ✓ | labels can be links; double and long click select text; right click opens its menu; an empty text field showing its placeholder looks like a label, and the widget classifier often calls it one (the TodoMVC "What needs to be done?" field), so text goes there too |
/// | EditText    | ✓ | ✓ |   | ✓ | ✓ |   | ✓ | the kind that takes text ([`WidgetKind::accepts_text`]); double, long and right click open the selection and paste menus |
/// | CheckBox    | ✓ |   |   |   |   |   |   | a toggle: only a click changes it |
/// | ImageButton | ✓ |   |   |   | ✓ | ✓ | ✓ | a button with a picture: long press shows its tooltip, on the web it is often a link |
/// | ImageView   | ✓ |   | ✓ | ✓ | ✓ | ✓ | ✓ | pictures are dragged (carousels, maps, drag and drop), zoomed by double click, saved by long or right click, often links |
/// | RadioButton | ✓ |   |   |   |   |   |   | a toggle: only a click changes it |
/// | Switch      | ✓ |   |   |   |   |   |   | a toggle: dragging its thumb does what a click does |
/// | SeekBar     | ✓ |   | ✓ |   |   |   |   | a click jumps to a position, a drag moves the thumb |
/// | ProgressBar |   |   |   |   |   |   |   | shows progress and takes no input |
/// | Spinner     | ✓ | ✓ |   |   |   |   |   | a click opens its options, which are widgets of their own; a combo box takes typed text, and the widget classifier calls a wide text field a spinner at times (TodoMVC's new-todo field, 0.4) |
/// | ListItem    | ✓ |   | ✓ | ✓ | ✓ | ✓ | ✓ | rows open on click, are reordered or dismissed by drag, enter selection mode on long click, open in a tab on mid click, have context menus |
/// | Tab         | ✓ |   |   |   |   | ✓ | ✓ | selected by a click; web tabs are often links |
/// | Icon        | ✓ |   |   |   | ✓ | ✓ | ✓ | toolbar glyphs: long press shows the label, on the web often links |
pub fn applies_to(action: ActionKind, widget: WidgetKind) -> bool {
    use WidgetKind::*;
    match action {
        ActionKind::Click => widget != ProgressBar,
        ActionKind::Input => widget.accepts_text() || matches!(widget, TextView | Spinner),
        ActionKind::Drag => matches!(widget, SeekBar | ListItem | ImageView),
        ActionKind::DoubleClick => matches!(widget, TextView | EditText | ImageView | ListItem),
        ActionKind::LongClick => matches!(
            widget,
            TextView | EditText | ImageButton | ImageView | ListItem | Icon
        ),
        ActionKind::MidClick => matches!(
            widget,
            Button | TextView | ImageButton | ImageView | ListItem | Tab | Icon
        ),
        ActionKind::RightClick => matches!(
            widget,
            Button | TextView | EditText | ImageButton | ImageView | ListItem | Tab | Icon
        ),
        _ => false,
    }
}

/// What the action space of a platform may contain and with which parameters.
///
/// Every list is used in its order, which is the order of the candidates. An enabled kind
/// that the platform supports must have at least one parameter value (for example
/// `window_ratios` must not be empty when `window_size` is enabled on the web), so that
/// every enabled kind really appears among the candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ActionSpaceConfig {
    /// The kinds that may appear; kinds the platform does not support are dropped.
    /// Default: all 17.
    pub enabled: BTreeSet<ActionKind>,
    /// Texts typed by `input`. [`ActionSpace::candidates`] hands them out in rotation,
    /// [`ActionSpace::candidates_with_rng`] picks one at random per text field.
    pub texts: Vec<String>,
    /// One `swipe` candidate per direction. Default: up and down (the paper's two).
    pub swipe_directions: Vec<SwipeDirection>,
    /// One `window_size` candidate per ratio of the start window size (finite, > 0).
    /// Default: 0.5 (shrink) and 1.0 (restore).
    pub window_ratios: Vec<f32>,
    /// One `drag` candidate per offset `(dx, dy)` in pixels, per draggable widget.
    /// Default: 100 px right and 100 px left.
    pub drag_offsets: Vec<(i32, i32)>,
}

impl Default for ActionSpaceConfig {
    fn default() -> Self {
        Self {
            enabled: ActionKind::ALL.into_iter().collect(),
            // A word submitted with Enter (a trailing newline presses it), a number and
            // an email address. The PIRLTest agent types them into each field in this
            // order: Enter submits a form while its fields still hold invalid values.
            texts: vec![
                "hello\n".to_owned(),
                "12345".to_owned(),
                "test@example.com".to_owned(),
            ],
            swipe_directions: vec![SwipeDirection::Up, SwipeDirection::Down],
            window_ratios: vec![0.5, 1.0],
            drag_offsets: vec![(100, 0), (-100, 0)],
        }
    }
}

/// The candidate actions of a screen on one platform (PIRLTest Section 3.2, Fig. 3 ➋).
///
/// Candidates come in a fixed order: for each widget, in the order given, every widget
/// action that [`applies_to`] its kind, in [`ActionKind::ALL`] order (one `drag` per
/// configured offset); then the page actions (one `swipe` per direction, `split_screen`,
/// `orientation_switch`, one `window_size` per ratio); then the system actions. Only kinds
/// that are enabled and [supported](ActionKind::supported_on) on the platform appear.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionSpace {
    platform: Platform,
    config: ActionSpaceConfig,
    /// Enabled and supported kinds, in `ActionKind::ALL` order.
    kinds: Vec<ActionKind>,
}

impl ActionSpace {
    /// The action space of `platform` with the given config, after checking the config.
    pub fn new(platform: Platform, config: ActionSpaceConfig) -> Result<Self> {
        let kinds: Vec<ActionKind> = ActionKind::supported(platform)
            .filter(|k| config.enabled.contains(k))
            .collect();
        let active = |k: ActionKind| kinds.contains(&k);
        let non_empty = |field: &'static str, len: usize, kind: ActionKind| {
            if len == 0 && active(kind) {
                Err(Error::Config {
                    field,
                    message: format!(
                        "is empty, so `{kind}` would have no candidate on {platform:?}; \
                         give a value or remove `{kind}` from `enabled`"
                    ),
                })
            } else {
                Ok(())
            }
        };
        non_empty("texts", config.texts.len(), ActionKind::Input)?;
        non_empty(
            "swipe_directions",
            config.swipe_directions.len(),
            ActionKind::Swipe,
        )?;
        non_empty(
            "window_ratios",
            config.window_ratios.len(),
            ActionKind::WindowSize,
        )?;
        non_empty("drag_offsets", config.drag_offsets.len(), ActionKind::Drag)?;

        if let Some(r) = config
            .window_ratios
            .iter()
            .find(|r| !(r.is_finite() && **r > 0.0))
        {
            return Err(Error::Config {
                field: "window_ratios",
                message: format!("{r} is not a finite ratio above 0"),
            });
        }
        // Duplicates would count one action twice in the exploration rate (Eq. 1).
        duplicate("texts", &config.texts)?;
        duplicate("swipe_directions", &config.swipe_directions)?;
        duplicate("window_ratios", &config.window_ratios)?;
        duplicate("drag_offsets", &config.drag_offsets)?;

        Ok(Self {
            platform,
            config,
            kinds,
        })
    }

    /// The action space of `platform` with [`ActionSpaceConfig::default`].
    pub fn for_platform(platform: Platform) -> Self {
        Self {
            platform,
            kinds: ActionKind::supported(platform).collect(),
            config: ActionSpaceConfig::default(),
        }
    }

    pub fn platform(&self) -> Platform {
        self.platform
    }

    pub fn config(&self) -> &ActionSpaceConfig {
        &self.config
    }

    /// The kinds that can appear: enabled and supported, in [`ActionKind::ALL`] order.
    pub fn kinds(&self) -> &[ActionKind] {
        &self.kinds
    }

    /// Whether `kind` can appear among the candidates.
    pub fn contains(&self, kind: ActionKind) -> bool {
        self.kinds.contains(&kind)
    }

    /// The widget actions of this space that apply to a widget of kind `widget`, in
    /// [`ActionKind::ALL`] order.
    pub fn widget_kinds(&self, widget: WidgetKind) -> impl Iterator<Item = ActionKind> + '_ {
        self.kinds
            .iter()
            .copied()
            .filter(move |k| k.group() == ActionGroup::Widget && applies_to(*k, widget))
    }

    /// The candidate actions of a screen showing `widgets` (see the type's doc for the
    /// order). The `i`-th text field of the screen types `texts[i % texts.len()]`, so the
    /// same screen always gives the same candidates.
    pub fn candidates(&self, widgets: &[Widget]) -> Vec<Action> {
        let n = self.config.texts.len().max(1);
        let mut field = 0;
        self.collect(widgets, || {
            field += 1;
            (field - 1) % n
        })
    }

    /// Like [`candidates`](Self::candidates), but each text field types a text drawn from
    /// `rng` (one draw per text field, in widget order), so a seeded `rng` gives the same
    /// candidates.
    pub fn candidates_with_rng(&self, widgets: &[Widget], rng: &mut impl Rng) -> Vec<Action> {
        let n = self.config.texts.len();
        self.collect(widgets, || if n == 0 { 0 } else { rng.random_range(0..n) })
    }

    /// The widget actions of one widget; `text` is the index into `texts` for `input`.
    pub fn widget_candidates(&self, widget: &Widget, text: usize) -> Vec<Action> {
        let mut out = Vec::new();
        self.push_widget(widget, || text, &mut out);
        out
    }

    /// The page actions, which do not depend on the screen.
    pub fn page_candidates(&self) -> Vec<Action> {
        let mut out = Vec::new();
        for kind in self.group(ActionGroup::Page) {
            match kind {
                ActionKind::Swipe => out.extend(
                    self.config
                        .swipe_directions
                        .iter()
                        .map(|d| Action::new(kind).with_param(ActionParam::Direction(*d))),
                ),
                ActionKind::WindowSize => out.extend(
                    self.config
                        .window_ratios
                        .iter()
                        .map(|r| Action::new(kind).with_param(ActionParam::Ratio(*r))),
                ),
                // Split screen and orientation switch are toggles with no parameter.
                _ => out.push(Action::new(kind)),
            }
        }
        out
    }

    /// The system actions, which need no target and no parameter (Section 3.2).
    pub fn system_candidates(&self) -> Vec<Action> {
        self.group(ActionGroup::System).map(Action::new).collect()
    }

    fn group(&self, group: ActionGroup) -> impl Iterator<Item = ActionKind> + '_ {
        self.kinds
            .iter()
            .copied()
            .filter(move |k| k.group() == group)
    }

    fn collect(&self, widgets: &[Widget], mut text: impl FnMut() -> usize) -> Vec<Action> {
        let mut out = Vec::new();
        for w in widgets {
            self.push_widget(w, &mut text, &mut out);
        }
        out.extend(self.page_candidates());
        out.extend(self.system_candidates());
        out
    }

    /// `text` is called once, and only when the widget gets an `input` candidate.
    fn push_widget(&self, widget: &Widget, text: impl FnOnce() -> usize, out: &mut Vec<Action>) {
        let mut text = Some(text);
        for kind in self.widget_kinds(widget.kind) {
            let on = || Action::on(kind, widget.clone());
            match kind {
                ActionKind::Input => {
                    let texts = &self.config.texts;
                    let i = text.take().map_or(0, |f| f());
                    if let Some(t) = texts.get(i % texts.len().max(1)) {
                        out.push(on().with_param(ActionParam::Text(t.clone())));
                    }
                }
                ActionKind::Drag => out.extend(
                    self.config
                        .drag_offsets
                        .iter()
                        .map(|&(dx, dy)| on().with_param(ActionParam::Offset { dx, dy })),
                ),
                _ => out.push(on()),
            }
        }
    }
}

fn duplicate<T: PartialEq + std::fmt::Debug>(field: &'static str, values: &[T]) -> Result<()> {
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(Error::Config {
                field,
                message: format!("{v:?} appears twice; each value gives one candidate"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_widget_actions_apply_to_widgets() {
        for a in ActionKind::ALL {
            let any = WidgetKind::ALL.iter().any(|w| applies_to(a, *w));
            assert_eq!(any, a.group() == ActionGroup::Widget, "{a}");
        }
    }

    #[test]
    fn empty_parameter_list_of_an_unsupported_kind_is_fine() {
        // Window size does not exist on Android, so no ratio is needed there.
        let config = ActionSpaceConfig {
            window_ratios: vec![],
            ..ActionSpaceConfig::default()
        };
        assert!(ActionSpace::new(Platform::Android, config.clone()).is_ok());
        let err = ActionSpace::new(Platform::Web, config).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Config {
                    field: "window_ratios",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn bad_ratios_and_duplicates_are_rejected() {
        for ratios in [vec![0.5, f32::NAN], vec![0.0], vec![-1.0], vec![0.5, 0.5]] {
            let config = ActionSpaceConfig {
                window_ratios: ratios.clone(),
                ..ActionSpaceConfig::default()
            };
            let err = ActionSpace::new(Platform::Web, config).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Config {
                        field: "window_ratios",
                        ..
                    }
                ),
                "{ratios:?}: {err}"
            );
        }
        let config = ActionSpaceConfig {
            texts: vec!["a".into(), "a".into()],
            ..ActionSpaceConfig::default()
        };
        let err = ActionSpace::new(Platform::Web, config).unwrap_err();
        assert!(err.to_string().contains("\"a\" appears twice"), "{err}");
    }

    #[test]
    fn default_space_equals_checked_default() {
        for p in [Platform::Web, Platform::Desktop, Platform::Android] {
            assert_eq!(
                ActionSpace::new(p, ActionSpaceConfig::default()).unwrap(),
                ActionSpace::for_platform(p)
            );
        }
    }
}
