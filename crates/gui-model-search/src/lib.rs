//! Monkey++ ("Improving Mobile User Interface Testing with Model Driven Monkey Search"):
//! an app model G with statement, method and UI vertices,
//! a runtime model of the screen stack and its lifecycle, a depth-first search over G
//! that touches every reachable control, interface coverage, and Android Monkey's event
//! log mapped onto G.
//!
//! The `live` feature (on by default) adds the `web` module: building a web app's model
//! from its page in Chromium and playing plans on it. Without it nothing here drives a
//! device; the code part of a web model ([`web_code`]) comes from gui-greybox's
//! JavaScript analysis.
//!
//! ```
//! use gui_model_search::{AppModel, SearchConfig, search};
//!
//! let model: AppModel = serde_json::from_str(r#"{
//!   "app": "hello", "launch": "A",
//!   "screens": [{ "name": "A" }, { "name": "B" }],
//!   "vertices": [
//!     { "id": "SayHi", "type": "ui", "screens": ["A"], "label": "SayHi" },
//!     { "id": "StartB", "type": "ui", "screens": ["A"], "label": "StartB",
//!       "effect": { "launch": "B" } },
//!     { "id": "SayBye", "type": "ui", "screens": ["B"], "label": "SayBye" }
//!   ],
//!   "edges": []
//! }"#).unwrap();
//! let plan = search(&model, &SearchConfig::default()).unwrap();
//! assert_eq!(plan.interactions(), 3);
//! assert_eq!(plan.interface_coverage(), 1.0);
//! ```

mod android_map;
mod error;
mod lifecycle;
mod model;
mod monkey_log;
mod search;
mod uiautomator;
#[cfg(feature = "live")]
pub mod web;
mod web_code;

pub use android_map::{DumpSet, MapConfig, MappedRun, map_monkey_log};
pub use error::{Error, Result};
pub use gui_greybox::js::WebEffect;
pub use lifecycle::{LifeState, Reuse, ScreenStack, Transition};
pub use model::{
    AppModel, Compiled, Counts, Edge, EdgeKind, Effect, Hook, Locator, MethodRole, Screen,
    ScreenKind, UiEvent, Vertex, VertexKind,
};
pub use monkey_log::{
    CrashKind, DEFAULT_TAP_SLOP_PX, Dropped, Gesture, KEYCODE_BACK, KEYCODE_HOME, Malformed,
    MonkeyCrash, MonkeyEvent, MonkeyLog, MotionAction, parse_monkey_log,
};
pub use search::{
    Bound, Interaction, ModelRun, PlanStep, SearchConfig, SearchPlan, bfs_bound, search,
    search_from,
};
pub use uiautomator::{UiDump, UiNode};
pub use web_code::{WebCode, web_code};
