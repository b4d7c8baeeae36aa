//! Plug-in `modal-focus`: a dialog over a dimmed backdrop is the page.
//!
//! The paper's agent sees every widget on the screen. While a modal dialog is open over a
//! dimmed backdrop ([`ScreenPrint::dialog_over_backdrop`]), the page behind it takes no
//! input, so its widgets are no candidates and do not count in `m` of Eq. 1. The screen's
//! page is the dialog, its widgets with their own layout tree, whatever page is behind
//! it, as a person sees it: one dialog opened from many pages is one page, and once its
//! few actions were tried, opening it again stops paying.
//!
//! While a dialog is open, resizes are no candidates: the backdrop is recognised by
//! comparing the screen with the one before it, which a resize redraws at another size,
//! so after one the dialog's page would be lost and every widget behind the backdrop
//! would be a candidate again.

use gui_core::{Rect, Size, Widget};
use gui_layout::{LayoutConfig, TreeLabels, characterise};

use super::{Pending, Plugin, Sight, slot};
use crate::effect::{DIALOG_KEPT_SHARE, grown, inside};
use crate::{AgentConfig, PageView, Result, ScreenPrint};

#[derive(Debug)]
pub(crate) struct ModalFocus {
    layout: LayoutConfig,
    /// The box of the dialog open over a backdrop on each worker's screen, if any.
    dialog: Vec<Option<Rect>>,
}

impl ModalFocus {
    pub fn new(config: &AgentConfig) -> Self {
        Self {
            layout: config.layout.clone(),
            dialog: Vec::new(),
        }
    }

    /// The dialog open over a backdrop on `worker`'s screen `now`: one that the worker's
    /// last action (`prev`) opened, or the one open before while at most
    /// [`DIALOG_KEPT_SHARE`] of the screen outside it has changed since.
    fn follow(&mut self, worker: usize, prev: Option<&Pending>, now: &ScreenPrint) -> Option<Rect> {
        let (before, pointer) = match prev {
            Some(p) => {
                let pointer: Vec<Rect> = p
                    .target
                    .map(|(r, _)| r)
                    .into_iter()
                    .chain(p.left)
                    .map(grown)
                    .collect();
                (Some(p.before.clone()), pointer)
            }
            None => (None, Vec::new()),
        };
        let open = slot(&mut self.dialog, worker);
        *open = before.and_then(|before| {
            before.dialog_over_backdrop(now, &pointer).or_else(|| {
                open.filter(|d| before.changed_outside(now, Some(grown(*d))) <= DIALOG_KEPT_SHARE)
            })
        });
        *open
    }
}

/// The widgets of `view` inside `dialog`, with their own layout tree: the page of a
/// screen with that dialog open over a backdrop.
pub(crate) fn dialog_view(
    view: &PageView,
    dialog: Rect,
    size: Size,
    layout: &LayoutConfig,
) -> Result<PageView> {
    let (widgets, embeddings): (Vec<Widget>, Vec<Vec<f32>>) = view
        .widgets()
        .iter()
        .zip(view.embeddings())
        .filter(|(w, _)| inside(w.rect, dialog))
        .map(|(w, e)| (w.clone(), e.clone()))
        .unzip();
    let tree = characterise(&widgets, size, layout).tree(TreeLabels::Kinds);
    PageView::new(widgets, embeddings, tree)
}

impl Plugin for ModalFocus {
    fn name(&self) -> &'static str {
        "modal-focus"
    }

    fn see(&mut self, sight: &mut Sight<'_>) -> Result<()> {
        let dialog = self.follow(sight.worker, sight.prev, sight.screen);
        if let Some(d) = dialog {
            sight.view = dialog_view(&sight.view, d, sight.size, &self.layout)?;
            sight.no_resizes = true;
        }
        sight.dialog = dialog;
        Ok(())
    }

    fn restart(&mut self, worker: usize) {
        if let Some(d) = self.dialog.get_mut(worker) {
            *d = None;
        }
    }
}
