use std::time::{Duration, Instant};

use gui_driver::Device;

use crate::Result;

/// Decides how long to wait after an action before the next screenshot is taken.
///
/// The fixed wait is Monkey's `--throttle`; adaptive policies (AdaT, consecutive frames)
/// look at the device while they wait.
pub trait Throttle {
    /// Waits after an action; returns how long it waited.
    fn wait(&mut self, device: &mut dyn Device) -> Result<Duration>;

    /// Name for run folders, e.g. `fixed:400`.
    fn name(&self) -> String;
}

/// Waits a fixed time after every action.
#[derive(Debug, Clone, Copy)]
pub struct FixedThrottle(pub Duration);

impl FixedThrottle {
    pub fn ms(ms: u64) -> Self {
        Self(Duration::from_millis(ms))
    }

    /// No wait at all (simulators, which render synchronously).
    pub fn none() -> Self {
        Self(Duration::ZERO)
    }
}

impl Throttle for FixedThrottle {
    fn wait(&mut self, _device: &mut dyn Device) -> Result<Duration> {
        let start = Instant::now();
        if !self.0.is_zero() {
            std::thread::sleep(self.0);
        }
        Ok(start.elapsed())
    }

    fn name(&self) -> String {
        format!("fixed:{}", self.0.as_millis())
    }
}
