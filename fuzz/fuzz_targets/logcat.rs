//! Logcat output: the Android device's crash reader turns any text into signals (crashes,
//! ANRs of the package) without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = gui_driver::fuzzing::logcat_signals("com.example.notes", text);
});
