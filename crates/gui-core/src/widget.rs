use serde::{Deserialize, Serialize};

use crate::Rect;

/// The 14 widget classes of PIRLTest (Section 3.1.1; a 14-length one-hot vector).
///
/// The first ten are the Android/HTML pairs of the paper's Table 2. The paper does not name
/// the other four; we chose the four most frequent remaining controls in both Android and
/// web UIs, so that every common control has a class of its own:
/// `Spinner` (Android Spinner, HTML `<select>`), `ListItem` (a row of a RecyclerView or an
/// `<li>`), `Tab` (TabLayout tab, a `role=tab` element) and `Icon` (a small pictogram with
/// no text, such as a toolbar or menu glyph).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WidgetKind {
    Button,
    TextView,
    EditText,
    CheckBox,
    ImageButton,
    ImageView,
    RadioButton,
    Switch,
    SeekBar,
    ProgressBar,
    Spinner,
    ListItem,
    Tab,
    Icon,
}

impl WidgetKind {
    pub const COUNT: usize = 14;

    pub const ALL: [WidgetKind; Self::COUNT] = [
        Self::Button,
        Self::TextView,
        Self::EditText,
        Self::CheckBox,
        Self::ImageButton,
        Self::ImageView,
        Self::RadioButton,
        Self::Switch,
        Self::SeekBar,
        Self::ProgressBar,
        Self::Spinner,
        Self::ListItem,
        Self::Tab,
        Self::Icon,
    ];

    /// Position in [`WidgetKind::ALL`], the index of the one-hot encoding.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The 14-length one-hot vector of the widget embedding.
    pub fn one_hot(self) -> [f32; Self::COUNT] {
        let mut v = [0.0; Self::COUNT];
        v[self.index()] = 1.0;
        v
    }

    /// Whether text can be typed into it.
    pub fn accepts_text(self) -> bool {
        matches!(self, Self::EditText)
    }
}

/// A widget found on a screen: where it is, what kind it is, how sure the finder was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Widget {
    pub rect: Rect,
    pub kind: WidgetKind,
    /// Classifier confidence in `[0, 1]`; 1.0 when the kind came from a DOM or a model.
    pub confidence: f32,
}

impl Widget {
    pub fn new(rect: Rect, kind: WidgetKind, confidence: f32) -> Self {
        Self {
            rect,
            kind,
            confidence,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_match_the_order_of_all() {
        for (i, k) in WidgetKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
            assert_eq!(k.one_hot().iter().sum::<f32>(), 1.0);
            assert_eq!(k.one_hot()[i], 1.0);
        }
    }
}
