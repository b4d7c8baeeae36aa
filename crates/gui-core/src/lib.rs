//! The shared vocabulary of the workspace: what a screen is (a [`Screenshot`]), what is on
//! it ([`Widget`] of one of the 14 [`WidgetKind`]s), what can be done to it (the 17
//! [`ActionKind`]s of PIRLTest, Table 3, grouped and filtered by [`Platform`]), and what a
//! device reports back ([`Signal`], [`CoverageSnapshot`], [`Transition`]).
//!
//! Nothing here knows about devices or models; every other crate speaks these types.
//!
//! ```
//! use gui_core::{Action, ActionKind, Platform, Rect};
//!
//! let button = Rect::new(10, 10, 100, 40);
//! let click = Action::at(ActionKind::Click, button.center());
//! assert!(click.kind.supported_on(Platform::Web));
//! assert_eq!(ActionKind::supported(Platform::Web).count(), 14);
//! assert!((button.iou(&Rect::new(60, 10, 100, 40)) - 1.0 / 3.0).abs() < 1e-9);
//! ```

mod action;
#[cfg(feature = "checkpoint")]
pub mod checkpoint;
mod error;
mod event;
mod geometry;
mod screenshot;
mod signal;
mod ui;
mod widget;

pub use action::{Action, ActionGroup, ActionKind, ActionParam, Platform, SwipeDirection, Target};
pub use error::{Error, Result};
pub use event::{DeviceEvent, DeviceEventKind};
pub use geometry::{Point, Rect, Size};
pub use screenshot::Screenshot;
pub use signal::{CoverageSnapshot, Signal, SignalKind, StackFrame, Transition};
pub use ui::{UiElement, UiHierarchy};
pub use widget::{Widget, WidgetKind};
