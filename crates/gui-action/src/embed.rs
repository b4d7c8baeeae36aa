use std::ops::Range;

use gui_core::{Action, ActionKind, ActionParam, SwipeDirection};

use crate::{Error, Result};

/// One value of the parameter block at the end of an action embedding.
///
/// The paper embeds "the number parameter" of page actions as one value (Section 3.2:
/// window size ratio or orientation). We give each parameter its own slot, so that values
/// of different meaning never share one input of the Q-network:
///
/// | slot | value |
/// |------|-------|
/// | [`WindowRatio`](Self::WindowRatio) | the `window_size` ratio as is (the paper's one number) |
/// | [`SwipeUp`](Self::SwipeUp), [`SwipeDown`](Self::SwipeDown) | one-hot swipe direction (the paper considers only up and down) |
/// | [`DragDx`](Self::DragDx), [`DragDy`](Self::DragDy) | drag offset divided by the drag scale, clamped to [-1, 1] |
/// | [`TextLength`](Self::TextLength) | characters typed by `input` divided by the text scale, clamped to [0, 1], so two texts for one field differ |
///
/// Slots of a parameter the action does not have are 0. `orientation_switch` and
/// `split_screen` are toggles without a parameter: the kind's one-hot already says all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamSlot {
    WindowRatio,
    SwipeUp,
    SwipeDown,
    DragDx,
    DragDy,
    TextLength,
}

impl ParamSlot {
    /// Number of slots, the length of the parameter block.
    pub const COUNT: usize = 6;

    pub const ALL: [ParamSlot; Self::COUNT] = [
        Self::WindowRatio,
        Self::SwipeUp,
        Self::SwipeDown,
        Self::DragDx,
        Self::DragDy,
        Self::TextLength,
    ];

    /// Position inside the parameter block.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Length of the action embedding for a target widget embedding of `widget_dim` values:
/// 17 (kind one-hot) + `widget_dim` + [`ParamSlot::COUNT`].
///
/// With the paper's 8206-value widget embedding this is 8229.
pub fn action_dim(widget_dim: usize) -> usize {
    ActionKind::COUNT + widget_dim + ParamSlot::COUNT
}

/// Embeds an action with [`ActionEmbedding::new`]`(widget_dim)`; see
/// [`ActionEmbedding::embed`].
pub fn embed_action(
    action: &Action,
    widget_embedding: Option<&[f32]>,
    widget_dim: usize,
) -> Result<Vec<f32>> {
    ActionEmbedding::new(widget_dim).embed(action, widget_embedding)
}

/// The action vector of PIRLTest (Section 3.2), one half of the Q-network input
/// (Section 3.4.1: the state vector concatenated with the action vector):
///
/// ```text
/// [ kind one-hot (17) | target widget embedding (widget_dim) | parameters (ParamSlot::COUNT) ]
/// ```
///
/// The kind one-hot is at [`ActionKind::index`]. The target block is the embedding of the
/// widget the action is aimed at (Section 3.1.1), computed by the caller, and zeros when
/// the action has no target or the caller has no embedding for it (the paper pads with
/// "0"s). The parameter block is laid out by [`ParamSlot`].
#[derive(Debug, Clone, PartialEq)]
pub struct ActionEmbedding {
    widget_dim: usize,
    drag_scale: f32,
    text_scale: f32,
}

impl ActionEmbedding {
    /// Default drag scale in pixels: an offset of this length in one axis embeds as 1.
    pub const DEFAULT_DRAG_SCALE: f32 = 1000.0;
    /// Default text scale in characters: a text this long or longer embeds as 1.
    pub const DEFAULT_TEXT_SCALE: f32 = 64.0;

    /// An embedding for target widget embeddings of `widget_dim` values.
    pub fn new(widget_dim: usize) -> Self {
        Self {
            widget_dim,
            drag_scale: Self::DEFAULT_DRAG_SCALE,
            text_scale: Self::DEFAULT_TEXT_SCALE,
        }
    }

    /// Sets the drag offset (pixels) that embeds as ±1; it must be finite and above 0.
    pub fn with_drag_scale(mut self, pixels: f32) -> Result<Self> {
        self.drag_scale = positive("drag_scale", pixels)?;
        Ok(self)
    }

    /// Sets the text length (characters) that embeds as 1; it must be finite and above 0.
    pub fn with_text_scale(mut self, chars: f32) -> Result<Self> {
        self.text_scale = positive("text_scale", chars)?;
        Ok(self)
    }

    /// Length of the target widget block.
    pub fn widget_dim(&self) -> usize {
        self.widget_dim
    }

    /// Length of the whole action vector, [`action_dim`]`(widget_dim)`.
    pub fn dim(&self) -> usize {
        action_dim(self.widget_dim)
    }

    /// Where the kind one-hot lies in the action vector.
    pub fn kind_range(&self) -> Range<usize> {
        0..ActionKind::COUNT
    }

    /// Where the target widget embedding lies in the action vector.
    pub fn target_range(&self) -> Range<usize> {
        ActionKind::COUNT..ActionKind::COUNT + self.widget_dim
    }

    /// Where the parameter block lies in the action vector.
    pub fn param_range(&self) -> Range<usize> {
        let start = ActionKind::COUNT + self.widget_dim;
        start..start + ParamSlot::COUNT
    }

    /// The action vector of `action`, whose target widget has the embedding
    /// `widget_embedding` (`None` embeds the target as zeros).
    ///
    /// Fails when `widget_embedding` does not have `widget_dim` values, when it is given
    /// for an action without a target, or when a window ratio is not finite.
    pub fn embed(&self, action: &Action, widget_embedding: Option<&[f32]>) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(self.dim());
        self.embed_into(action, widget_embedding, &mut out)?;
        Ok(out)
    }

    /// Appends the action vector to `out` (to fill a batch without one allocation per
    /// action); on error nothing is appended.
    pub fn embed_into(
        &self,
        action: &Action,
        widget_embedding: Option<&[f32]>,
        out: &mut Vec<f32>,
    ) -> Result<()> {
        if let Some(w) = widget_embedding {
            if action.target.is_none() {
                return Err(Error::UnexpectedWidgetEmbedding {
                    action: action.kind,
                });
            }
            if w.len() != self.widget_dim {
                return Err(Error::WidgetDim {
                    action: action.kind,
                    expected: self.widget_dim,
                    found: w.len(),
                });
            }
        }
        let params = self.params(action)?;

        let start = out.len();
        out.resize(start + ActionKind::COUNT, 0.0);
        out[start + action.kind.index()] = 1.0;
        match widget_embedding {
            Some(w) => out.extend_from_slice(w),
            None => out.resize(out.len() + self.widget_dim, 0.0),
        }
        out.extend_from_slice(&params);
        Ok(())
    }

    fn params(&self, action: &Action) -> Result<[f32; ParamSlot::COUNT]> {
        let mut p = [0.0; ParamSlot::COUNT];
        match &action.param {
            None => {}
            Some(ActionParam::Ratio(r)) => {
                if !r.is_finite() {
                    return Err(Error::Param {
                        action: action.kind,
                        message: format!("window ratio {r} is not finite"),
                    });
                }
                p[ParamSlot::WindowRatio.index()] = *r;
            }
            Some(ActionParam::Direction(SwipeDirection::Up)) => {
                p[ParamSlot::SwipeUp.index()] = 1.0;
            }
            Some(ActionParam::Direction(SwipeDirection::Down)) => {
                p[ParamSlot::SwipeDown.index()] = 1.0;
            }
            Some(ActionParam::Offset { dx, dy }) => {
                let norm = |v: i32| (v as f32 / self.drag_scale).clamp(-1.0, 1.0);
                p[ParamSlot::DragDx.index()] = norm(*dx);
                p[ParamSlot::DragDy.index()] = norm(*dy);
            }
            Some(ActionParam::Text(t)) => {
                let chars = t.chars().count() as f32;
                p[ParamSlot::TextLength.index()] = (chars / self.text_scale).min(1.0);
            }
        }
        Ok(p)
    }
}

fn positive(field: &'static str, v: f32) -> Result<f32> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::Config {
            field,
            message: format!("{v} is not a finite number above 0"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_in_order() {
        for (i, s) in ParamSlot::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
        }
    }

    #[test]
    fn ranges_tile_the_vector() {
        let e = ActionEmbedding::new(5);
        assert_eq!(e.kind_range().end, e.target_range().start);
        assert_eq!(e.target_range().end, e.param_range().start);
        assert_eq!(e.param_range().end, e.dim());
        assert_eq!(action_dim(8206), 8229);
    }

    #[test]
    fn scales_must_be_positive() {
        for bad in [0.0, -3.0, f32::NAN, f32::INFINITY] {
            let err = ActionEmbedding::new(1).with_drag_scale(bad).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Config {
                        field: "drag_scale",
                        ..
                    }
                ),
                "{err}"
            );
            assert!(ActionEmbedding::new(1).with_text_scale(bad).is_err());
        }
    }

    #[test]
    fn errors_append_nothing() {
        let e = ActionEmbedding::new(2);
        let mut out = vec![7.0];
        let a = Action::new(ActionKind::WindowSize).with_param(ActionParam::Ratio(f32::NAN));
        assert!(matches!(
            e.embed_into(&a, None, &mut out),
            Err(Error::Param { .. })
        ));
        assert_eq!(out, [7.0]);
    }
}
