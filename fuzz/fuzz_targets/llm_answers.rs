//! A model's free-text answers: the action, bug-detection and input-text readers accept
//! any text or return an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = gui_llm::parse_action_answer(text);
    let _ = gui_llm::parse_detect_answer(text);
    let _ = gui_llm::parse_input_answer(text);
});
