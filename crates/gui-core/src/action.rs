use serde::{Deserialize, Serialize};

use crate::{Point, Widget};

/// The kind of device an application runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    Web,
    Desktop,
    Android,
}

/// The three action categories of PIRLTest (Section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionGroup {
    /// Applied to one widget.
    Widget,
    /// Applied to the whole page (its size, orientation or scroll position).
    Page,
    /// Applied to the operating system or browser around the app.
    System,
}

/// The 17 actions of PIRLTest, Table 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    // Widget actions.
    Click,
    Input,
    Drag,
    DoubleClick,
    LongClick,
    MidClick,
    RightClick,
    // Page actions.
    Swipe,
    SplitScreen,
    OrientationSwitch,
    WindowSize,
    // System actions.
    Return,
    BackSwitch,
    AccessGrant,
    AccessDeny,
    NetworkSwitch,
    PhoneInterrupt,
}

impl ActionKind {
    pub const COUNT: usize = 17;

    pub const ALL: [ActionKind; Self::COUNT] = [
        Self::Click,
        Self::Input,
        Self::Drag,
        Self::DoubleClick,
        Self::LongClick,
        Self::MidClick,
        Self::RightClick,
        Self::Swipe,
        Self::SplitScreen,
        Self::OrientationSwitch,
        Self::WindowSize,
        Self::Return,
        Self::BackSwitch,
        Self::AccessGrant,
        Self::AccessDeny,
        Self::NetworkSwitch,
        Self::PhoneInterrupt,
    ];

    /// Position in [`ActionKind::ALL`], the index of the 17-dim one-hot action encoding.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn group(self) -> ActionGroup {
        use ActionKind::*;
        match self {
            Click | Input | Drag | DoubleClick | LongClick | MidClick | RightClick => {
                ActionGroup::Widget
            }
            Swipe | SplitScreen | OrientationSwitch | WindowSize => ActionGroup::Page,
            Return | BackSwitch | AccessGrant | AccessDeny | NetworkSwitch | PhoneInterrupt => {
                ActionGroup::System
            }
        }
    }

    /// Whether the platform can perform this action.
    ///
    /// Web and Android follow Table 3 exactly (Table 1 counts: web 6/3/5, mobile 5/3/6).
    /// The paper has no desktop column; a desktop under X11 has a mouse with three buttons
    /// and resizable windows like the web, and no permission, network or phone system, so
    /// it gets the web's widget and page actions and the two system actions a desktop has
    /// (return = Escape, back switch = focus another window and come back).
    pub fn supported_on(self, platform: Platform) -> bool {
        use ActionKind::*;
        match self {
            Click | Input | Drag | DoubleClick | Swipe | SplitScreen | Return | BackSwitch => true,
            MidClick | RightClick | WindowSize => platform != Platform::Android,
            LongClick | OrientationSwitch | PhoneInterrupt => platform == Platform::Android,
            AccessGrant | AccessDeny | NetworkSwitch => platform != Platform::Desktop,
        }
    }

    /// The actions a platform supports, in [`ActionKind::ALL`] order.
    pub fn supported(platform: Platform) -> impl Iterator<Item = ActionKind> {
        Self::ALL
            .into_iter()
            .filter(move |k| k.supported_on(platform))
    }

    /// Widget actions need a target position; page and system actions do not.
    pub fn needs_target(self) -> bool {
        self.group() == ActionGroup::Widget
    }

    /// The snake_case name used in logs, run folders and on the command line.
    pub fn name(self) -> &'static str {
        use ActionKind::*;
        match self {
            Click => "click",
            Input => "input",
            Drag => "drag",
            DoubleClick => "double_click",
            LongClick => "long_click",
            MidClick => "mid_click",
            RightClick => "right_click",
            Swipe => "swipe",
            SplitScreen => "split_screen",
            OrientationSwitch => "orientation_switch",
            WindowSize => "window_size",
            Return => "return",
            BackSwitch => "back_switch",
            AccessGrant => "access_grant",
            AccessDeny => "access_deny",
            NetworkSwitch => "network_switch",
            PhoneInterrupt => "phone_interrupt",
        }
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ActionKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|k| k.name()).collect();
                format!("unknown action `{s}`; expected one of {}", names.join(", "))
            })
    }
}

/// What a widget action is aimed at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// A raw screen position (Monkey-style random events).
    Point(Point),
    /// A detected widget; the action lands on its centre.
    Widget(Widget),
}

impl Target {
    pub fn point(&self) -> Point {
        match self {
            Target::Point(p) => *p,
            Target::Widget(w) => w.rect.center(),
        }
    }
}

/// Swipe directions; PIRLTest considers only up and down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwipeDirection {
    Up,
    Down,
}

/// The parameter of an action (Section 3.2: a number for size ratio or orientation; we
/// also carry the text to type and the drag offset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type", content = "value")]
pub enum ActionParam {
    /// Text typed by `input`. A trailing `\n` presses Enter after the text (submits a
    /// form, adds a todo); the newline itself is not typed.
    Text(String),
    /// Scroll direction of `swipe`.
    Direction(SwipeDirection),
    /// Window size ratio for `window_size` (relative to the start size).
    Ratio(f32),
    /// Offset in pixels for `drag`.
    Offset { dx: i32, dy: i32 },
}

impl ActionParam {
    /// The one number that goes into the action embedding (0 when it has none).
    pub fn scalar(&self) -> f32 {
        match self {
            ActionParam::Text(_) => 0.0,
            ActionParam::Direction(SwipeDirection::Up) => 1.0,
            ActionParam::Direction(SwipeDirection::Down) => -1.0,
            ActionParam::Ratio(r) => *r,
            ActionParam::Offset { dx, dy } => ((dx * dx + dy * dy) as f32).sqrt(),
        }
    }
}

/// One concrete action: a kind, where it lands, and its parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Action {
    pub kind: ActionKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<ActionParam>,
}

impl Action {
    /// A page or system action with no target and no parameter.
    pub fn new(kind: ActionKind) -> Self {
        Self {
            kind,
            target: None,
            param: None,
        }
    }

    /// An action at a screen position.
    pub fn at(kind: ActionKind, p: Point) -> Self {
        Self {
            kind,
            target: Some(Target::Point(p)),
            param: None,
        }
    }

    /// An action aimed at a widget.
    pub fn on(kind: ActionKind, widget: Widget) -> Self {
        Self {
            kind,
            target: Some(Target::Widget(widget)),
            param: None,
        }
    }

    pub fn with_param(mut self, param: ActionParam) -> Self {
        self.param = Some(param);
        self
    }

    /// Where the action lands, if it has a target.
    pub fn point(&self) -> Option<Point> {
        self.target.as_ref().map(Target::point)
    }

    /// The widget the action is aimed at, if it has one.
    pub fn widget(&self) -> Option<&Widget> {
        match &self.target {
            Some(Target::Widget(w)) => Some(w),
            _ => None,
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(p) = self.point() {
            write!(f, " @({},{})", p.x, p.y)?;
        }
        match &self.param {
            Some(ActionParam::Text(t)) => write!(f, " {t:?}"),
            Some(ActionParam::Direction(d)) => write!(f, " {d:?}"),
            Some(ActionParam::Ratio(r)) => write!(f, " x{r}"),
            Some(ActionParam::Offset { dx, dy }) => write!(f, " by ({dx},{dy})"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(p: Platform) -> (usize, usize, usize) {
        let g = |g| ActionKind::supported(p).filter(|k| k.group() == g).count();
        (
            g(ActionGroup::Widget),
            g(ActionGroup::Page),
            g(ActionGroup::System),
        )
    }

    #[test]
    fn platform_subsets_match_table_1() {
        assert_eq!(counts(Platform::Web), (6, 3, 5));
        assert_eq!(counts(Platform::Android), (5, 3, 6));
        assert_eq!(counts(Platform::Desktop), (6, 3, 2));
        // Every action is supported somewhere.
        for k in ActionKind::ALL {
            assert!(
                [Platform::Web, Platform::Android]
                    .iter()
                    .any(|p| k.supported_on(*p))
            );
        }
    }

    #[test]
    fn names_round_trip_and_match_serde() {
        for k in ActionKind::ALL {
            assert_eq!(k.name().parse::<ActionKind>().unwrap(), k);
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.name())
            );
            assert_eq!(ActionKind::ALL[k.index()], k);
        }
        assert!("tap".parse::<ActionKind>().unwrap_err().contains("click"));
    }

    #[test]
    fn actions_serialise_compactly() {
        let a = Action::at(ActionKind::Input, Point::new(3, 4))
            .with_param(ActionParam::Text("hi".into()));
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"input","target":{"point":{"x":3,"y":4}},"param":{"type":"text","value":"hi"}}"#
        );
        assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), a);
        assert_eq!(
            serde_json::to_string(&Action::new(ActionKind::Return)).unwrap(),
            r#"{"kind":"return"}"#
        );
    }
}
