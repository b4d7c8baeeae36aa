//! Monkey logs: the parser reads what it can out of any text and never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = gui_model_search::parse_monkey_log(text);
});
