//! The macroscopic half of the PIRLTest page state (Section 3.1.2): widget boxes become a
//! four-level layout tree (screen, Groups, Lines, Columns = widgets), written in bracket
//! notation, compared by exact tree edit distance and layout similarity (Eq. 2).
//!
//! Pure algorithms on boxes: no pixels, no devices.
//!
//! ```
//! use gui_layout::{LayoutTree, layout_similarity, tree_edit_distance};
//!
//! let a = LayoutTree::parse("{screen{group{line{w}{w}}}}")?;
//! let b = LayoutTree::parse("{screen{group{line{w}{w}{w}}}}")?;
//! let c = LayoutTree::parse("{screen{group{line{w}}{line{w}}}}")?;
//! assert_eq!(a.to_bracket(), "{screen{group{line{w}{w}}}}");
//! assert_eq!(tree_edit_distance(&a, &b), 1.0); // insert one widget
//! assert!((layout_similarity(&a, &b) - (1.0 - 1.0 / 6.0)).abs() < 1e-12);
//! // Splitting a line in two: delete `line`, insert two new ones around the widgets.
//! assert_eq!(tree_edit_distance(&a, &c), 3.0);
//! # Ok::<(), gui_layout::Error>(())
//! ```

mod characterise;
#[cfg(feature = "lstm")]
mod embed;
mod error;
mod generate;
mod ted;
mod tree;

pub use characterise::{Column, Gap, Group, Layout, LayoutConfig, Line, TreeLabels, characterise};
#[cfg(feature = "lstm")]
pub use embed::{
    LayoutEmbedder, LayoutEmbedderConfig, LayoutPair, LayoutPairConfig, LayoutPairs,
    LayoutVocabulary, PairMetrics, TrainConfig, TrainReport, WidgetLabels, evaluate_pairs,
    shipped_model_path, spearman, train_embedder,
};
pub use error::{Error, Result};
pub use generate::{random_layout, random_tree};
pub use ted::{TedCost, UnitCost, layout_similarity, tree_edit_distance, tree_edit_distance_with};
pub use tree::{LayoutTree, NodeId};
