//! UI Automator dumps, through both readers: Monkey++'s (`UiDump::parse`) and the Android
//! device's. Either a value or an error, never a panic; the device's error names the dump.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|xml: &str| {
    let _ = gui_model_search::UiDump::parse(xml);
    if let Err(e) = gui_driver::fuzzing::parse_ui_dump(xml, "fuzz.xml") {
        assert!(
            e.to_string().contains("fuzz.xml"),
            "error does not name the dump: {e}"
        );
    }
});
