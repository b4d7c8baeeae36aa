//! Screenshot decoding: any bytes give a screenshot or an error, never a panic. A decoded
//! screenshot is never empty (zero-size screens are errors).
#![no_main]

use gui_core::Screenshot;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(shot) = Screenshot::from_png(data, "fuzz", 1.0, 0) {
        assert!(shot.width() > 0 && shot.height() > 0);
    }
});
