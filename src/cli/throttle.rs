//! The `--throttle` policy, and AdaT's rendering-state classifier from gui-vision as the
//! loop's judge of when a screen has finished rendering.

use anyhow::{Context, Result};
use gui_explore::{RenderJudge, Throttle};

use super::RunArgs;

impl RunArgs {
    /// The `--throttle` policy; `adat` loads the shipped rendering-state classifier.
    pub fn throttle(&self) -> Result<Box<dyn Throttle>> {
        let judge = if self.throttle.needs_judge() {
            Some(adat_judge()?)
        } else {
            None
        };
        self.throttle
            .build(judge)
            .with_context(|| format!("--throttle {}", self.throttle))
    }
}

/// AdaT's judge: the rendering-state classifier shipped with gui-vision.
pub fn adat_judge() -> Result<Box<dyn RenderJudge>> {
    let net = gui_vision::render::RenderNet::shipped()
        .context("loading AdaT's rendering-state classifier")?;
    Ok(Box::new(VisionJudge(net)))
}

/// A gui-vision rendering-state classifier as the loop's throttle judge.
struct VisionJudge<J>(J);

impl<J: gui_vision::render::RenderJudge> RenderJudge for VisionJudge<J> {
    fn fully_rendered(
        &mut self,
        shot: &gui_core::Screenshot,
    ) -> std::result::Result<bool, gui_explore::JudgeError> {
        Ok(self.0.fully_rendered(shot)?)
    }

    fn name(&self) -> String {
        self.0.name().to_owned()
    }
}
