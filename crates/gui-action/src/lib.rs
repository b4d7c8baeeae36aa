//! The action space of PIRLTest (Section 3.2): which of the 17 actions of Table 3 a
//! platform offers, which widget actions apply to which of the 14 widget kinds, the
//! candidate actions of one screen, and the action vector the Q-network reads next to the
//! state vector (Section 3.4.1).
//!
//! Built on the vocabulary of `gui-core` ([`ActionKind`](gui_core::ActionKind),
//! [`Action`](gui_core::Action), [`Widget`](gui_core::Widget)); it knows no device and no
//! reinforcement learning.
//!
//! ```
//! use gui_action::{ActionEmbedding, ActionSpace, ParamSlot, action_dim};
//! use gui_core::{ActionKind, ActionParam, Platform, Rect, Widget, WidgetKind};
//!
//! let space = ActionSpace::for_platform(Platform::Android);
//! let field = Widget::new(Rect::new(20, 100, 300, 48), WidgetKind::EditText, 1.0);
//! let actions = space.candidates(&[field]);
//! let kinds: Vec<_> = actions.iter().map(|a| a.kind.name()).collect();
//! assert_eq!(
//!     kinds,
//!     [
//!         // Widget actions that apply to a text field on Android.
//!         "click", "input", "double_click", "long_click",
//!         // Page actions: swipe up and down, split screen, orientation switch.
//!         "swipe", "swipe", "split_screen", "orientation_switch",
//!         // System actions.
//!         "return", "back_switch", "access_grant", "access_deny", "network_switch",
//!         "phone_interrupt",
//!     ]
//! );
//! assert_eq!(actions[1].param, Some(ActionParam::Text("hello\n".into())));
//!
//! // The action vector: kind one-hot | target widget embedding | parameters.
//! let embedding = ActionEmbedding::new(WidgetKind::COUNT);
//! let widget = WidgetKind::EditText.one_hot();
//! let v = embedding.embed(&actions[1], Some(&widget))?;
//! assert_eq!(v.len(), action_dim(WidgetKind::COUNT));
//! assert_eq!(v[ActionKind::Input.index()], 1.0);
//! assert_eq!(&v[embedding.target_range()], &widget);
//! let text_len = v[embedding.param_range()][ParamSlot::TextLength.index()];
//! assert_eq!(text_len, 6.0 / 64.0); // "hello" and Enter
//! # Ok::<(), gui_action::Error>(())
//! ```

mod embed;
mod error;
mod space;

pub use embed::{ActionEmbedding, ParamSlot, action_dim, embed_action};
pub use error::{Error, Result};
pub use space::{ActionSpace, ActionSpaceConfig, applies_to};
