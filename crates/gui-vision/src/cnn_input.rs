//! What the widget CNN reads: one prepared crop and the shape numbers beside it. Both the
//! network and its training (`cnn`) and the fused inference kernels (`cnn_infer`) speak
//! it, so it sits below them both.

/// Numbers a prepared input carries beside its pixels; a network reads the first
/// [`WidgetCnnConfig::geometry_inputs`](crate::WidgetCnnConfig::geometry_inputs) of them
/// after its convolutions.
pub const GEOMETRY_INPUTS: usize = SHAPE_INPUTS + SIDE_INPUTS;
/// The box's shape: log aspect ratio, log width, log height.
pub const SHAPE_INPUTS: usize = 3;
/// Two numbers per side of the box (left, top, right, bottom), read by networks with
/// [`WidgetCnnConfig::sides`](crate::WidgetCnnConfig::sides): see
/// [`side_numbers`](crate::side_numbers).
pub const SIDE_INPUTS: usize = 8;

/// One prepared input: the squashed crop (CHW, values in [-0.5, 0.5]; with context, the
/// crop of the surroundings as three more channels) and its shape numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct CnnInput {
    pub pixels: Vec<f32>,
    pub geometry: [f32; GEOMETRY_INPUTS],
}
