//! The explorer and the detector against a scripted model over real HTTP on 127.0.0.1:
//! answers that cannot be read or that name the wrong widget get feedback and a retry,
//! then the step is skipped; the text input query; the prompt's text (a snapshot); and
//! the detector's segments, retrieved examples and bug mapping.

use gui_core::{ActionKind, ActionParam, Rect, Screenshot, UiElement, UiHierarchy};
use gui_llm::scripted::ScriptedServer;
use gui_llm::{
    Accounting, BugScope, ChatAnswer, ChatRequest, DetectorConfig, ExampleSet, ExplorerConfig,
    FunctionAwareExplorer, LlmClient, OpenAiClient, OpenAiConfig, Operation, Part, StepImage,
    Usage, detect_bugs,
};
use image::{Rgb, RgbImage};

fn screen() -> Screenshot {
    Screenshot::new(RgbImage::from_pixel(320, 240, Rgb([250, 250, 250])), 1.0, 0).unwrap()
}

fn element(bounds: Rect, class: &str, id: &str, text: &str) -> UiElement {
    UiElement {
        bounds,
        class: class.into(),
        id: id.into(),
        text: text.into(),
        clickable: true,
        ..UiElement::default()
    }
}

/// A small cart screen: two buttons in a row, a coupon field below, a total.
fn cart() -> UiHierarchy {
    let mut coupon = element(Rect::new(10, 60, 200, 24), "input[text]", "coupon", "");
    coupon.clickable = false;
    coupon.editable = true;
    coupon.hint = "Coupon code".into();
    let mut total = element(Rect::new(10, 100, 80, 16), "span", "total", "$13.75");
    total.clickable = false;
    UiHierarchy {
        app: "Shop".into(),
        screen: "#/cart".into(),
        elements: vec![
            element(Rect::new(120, 10, 80, 30), "button", "more", "+ More"),
            element(Rect::new(10, 10, 80, 30), "button", "less", "- Less"),
            coupon,
            total,
        ],
    }
}

fn explorer(server: &ScriptedServer, retries: u32) -> FunctionAwareExplorer {
    let mut config = OpenAiConfig::new(server.endpoint());
    config.retries = 0;
    let client = OpenAiClient::new(config).unwrap();
    FunctionAwareExplorer::new(
        Box::new(client),
        ExplorerConfig {
            retries,
            seed: 7,
            ..ExplorerConfig::default()
        },
    )
}

#[test]
fn a_usable_answer_becomes_an_action_on_the_named_widget() {
    let server = ScriptedServer::recorded(vec![
        "Action: click\nWidget id: 2\nWidget text: + More\nFunction: change quantity\nStatus: ongoing\nBug: none".into(),
    ])
    .unwrap();
    let mut ex = explorer(&server, 2);
    let d = ex.decide(1, &screen(), &cart());
    assert_eq!(d.operation, Operation::Click);
    assert_eq!(d.widget_id, Some(2));
    assert_eq!(d.bounds, Some(Rect::new(120, 10, 80, 30)));
    assert_eq!(d.fallback, None);
    let a = d.to_action(1.0);
    assert_eq!(a.kind, ActionKind::Click);
    assert_eq!(a.point(), Some(Rect::new(120, 10, 80, 30).center()));
    assert_eq!(ex.history().entries()[0].caption(), "Change quantity-1");
    assert!(ex.failures().is_empty());
    let req = &server.requests()[0];
    assert_eq!(req.images, 1, "the current screenshot only: no history yet");
}

#[test]
fn a_widget_id_that_disagrees_with_its_text_gets_feedback_and_a_retry() {
    let server = ScriptedServer::recorded(vec![
        // Widget 1 is "- Less", not "+ More".
        "Action: click\nWidget id: 1\nWidget text: + More\nFunction: change quantity".into(),
        "Action: click\nWidget id: 2\nWidget text: + More\nFunction: change quantity".into(),
    ])
    .unwrap();
    let mut ex = explorer(&server, 2);
    let d = ex.decide(1, &screen(), &cart());
    assert_eq!(d.widget_id, Some(2));
    assert_eq!(d.answers, 2);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let feedback = &requests[1].last_user_text;
    assert!(
        feedback.starts_with(gui_llm::prompt::FEEDBACK),
        "{feedback}"
    );
    assert!(
        feedback.contains("widget 1 is button \"- Less\" (id less)"),
        "{feedback}"
    );
    // The conversation keeps the rejected answer.
    assert!(requests[1].texts.iter().any(|t| t.contains("Widget id: 1")));
}

#[test]
fn unreadable_answers_are_retried_then_the_step_is_skipped() {
    let server = ScriptedServer::recorded(vec![
        "I would explore the cart.".into(),
        "{\"action\": \"dance\"}".into(),
        "Action: click\nWidget id: 9\nWidget text: Checkout".into(),
    ])
    .unwrap();
    let mut ex = explorer(&server, 2);
    let d = ex.decide(1, &screen(), &cart());
    assert_eq!(
        server.requests().len(),
        3,
        "one answer and two feedback rounds"
    );
    let why = d.fallback.as_deref().unwrap();
    assert!(
        why.contains("no usable answer after 2 feedback rounds"),
        "{why}"
    );
    assert_eq!(ex.failures().len(), 1);
    assert_eq!(ex.failures()[0].step, 1);
    // The explorer still acts, on a widget of the screen, and the step is in the history.
    assert!(d.widget_id.is_some());
    assert_eq!(ex.history().entries().len(), 1);
    // Same seed, same fallback.
    let server2 = ScriptedServer::recorded(vec!["?".into(); 3]).unwrap();
    let mut ex2 = explorer(&server2, 2);
    assert_eq!(ex2.decide(1, &screen(), &cart()).widget_id, d.widget_id);
}

#[test]
fn input_without_text_asks_the_text_input_query() {
    let server = ScriptedServer::recorded(vec![
        "Action: input\nWidget id: 3\nWidget text: Coupon code\nFunction: apply a coupon".into(),
        "Input: SAVE10".into(),
    ])
    .unwrap();
    let mut ex = explorer(&server, 2);
    let d = ex.decide(1, &screen(), &cart());
    assert_eq!(d.operation, Operation::Input);
    assert_eq!(d.input.as_deref(), Some("SAVE10"));
    let a = d.to_action(1.0);
    assert_eq!(a.param, Some(ActionParam::Text("SAVE10".into())));
    let q = &server.requests()[1].last_user_text;
    assert!(q.starts_with(gui_llm::prompt::INPUT_QUERY), "{q}");
    assert!(q.contains("\"apply a coupon\""), "{q}");
}

#[test]
fn a_dead_endpoint_is_not_asked_again_and_again() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"));
    config.retries = 0;
    let mut ex = FunctionAwareExplorer::new(
        Box::new(OpenAiClient::new(config).unwrap()),
        ExplorerConfig::default(),
    );
    for step in 1..=5 {
        let d = ex.decide(step, &screen(), &cart());
        assert!(d.fallback.is_some());
    }
    let calls = ex.accounting().calls;
    assert_eq!(calls, 3, "gives up after `give_up_after` failures in a row");
    assert!(
        ex.failures()[4].reason.contains("not asked"),
        "{:?}",
        ex.failures()
    );
}

#[test]
fn the_explorer_prompt_reads_as_intended() {
    let server = ScriptedServer::recorded(vec![
        "Action: click\nWidget id: 2\nWidget text: + More\nFunction: change quantity\nStatus: ongoing\nBug: none".into(),
        "Action: back\nWidget id: none\nFunction: change quantity\nStatus: completed\nBug: the total is wrong".into(),
    ])
    .unwrap();
    let mut ex = explorer(&server, 2);
    ex.decide(1, &screen(), &cart());
    ex.decide(2, &screen(), &cart());
    let second = &server.requests()[1];
    // The history's picture and the current screenshot.
    assert_eq!(second.images, 2);
    insta::assert_snapshot!("explorer_prompt", second.texts.join("\n----\n"));
    assert_eq!(ex.screen_bugs().len(), 1);
    assert_eq!(ex.screen_bugs()[0].scope, BugScope::IntraPage);
    assert_eq!(ex.screen_bugs()[0].steps, vec![2]);
}

#[test]
fn the_detector_checks_each_cohesive_part_with_retrieved_examples() {
    // Six steps: three on the cart (one function), three in the settings (another).
    let answers: Vec<String> = [
        "change cart quantity",
        "change cart quantity",
        "check out the cart",
        "open settings",
        "toggle dark theme",
        "toggle dark theme",
    ]
    .iter()
    .map(|f| format!("Action: click\nWidget id: 1\nWidget text: - Less\nFunction: {f}"))
    .chain([
        "Bug: yes\nSteps: 3, 99\nCategory: numerical calculation error\nDescription: total wrong\nReasoning: lines add to more".to_owned(),
        "Bug: no\nSteps: none".to_owned(),
    ])
    .collect();
    let server = ScriptedServer::recorded(answers).unwrap();
    let mut ex = explorer(&server, 0);
    for step in 1..=6 {
        let mut ui = cart();
        if step > 3 {
            ui.screen = "#/settings".into();
        }
        ex.decide(step, &screen(), &ui);
    }
    let history = ex.history().clone();
    let detection = detect_bugs(
        ex.client_mut(),
        "Shop",
        &history,
        &ExampleSet::bundled(),
        &DetectorConfig::default(),
    );
    let parts: Vec<Vec<u64>> = detection.segments.iter().map(|s| s.steps.clone()).collect();
    assert_eq!(parts, vec![vec![1, 2, 3], vec![4], vec![5, 6]]);
    assert!(detection.modularity > 0.3, "{}", detection.modularity);
    assert!(
        !detection.segments[1].checked,
        "one step is the explorer's to check"
    );
    assert_eq!(detection.segments[0].examples.len(), 5);
    assert_eq!(detection.bugs.len(), 1);
    let bug = &detection.bugs[0];
    assert_eq!(bug.scope, BugScope::InterPage);
    assert_eq!(bug.steps, vec![3], "a step outside the part is dropped");
    assert_eq!(bug.screens, vec!["#/cart".to_owned()]);
    let prompt = &server.requests()[6];
    assert!(
        prompt
            .last_user_text
            .contains(gui_llm::prompt::DETECT_QUERY)
    );
    assert!(
        prompt.last_user_text.contains("Examples of non-crash bugs"),
        "{}",
        prompt.last_user_text
    );
    assert_eq!(prompt.images, 3, "one picture per step of the part");
}

/// A model in the test process that always gives the same answer and counts the pictures
/// it was sent.
#[derive(Debug, Default)]
struct SameAnswer {
    answer: String,
    images: usize,
    accounting: Accounting,
}

impl LlmClient for SameAnswer {
    fn chat(&mut self, request: &ChatRequest) -> gui_llm::Result<ChatAnswer> {
        self.accounting.calls += 1;
        self.images += request
            .messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter(|p| matches!(p, Part::Image { .. }))
            .count();
        Ok(ChatAnswer {
            text: self.answer.clone(),
            usage: Usage::default(),
            finish_reason: None,
        })
    }
    fn accounting(&self) -> &Accounting {
        &self.accounting
    }
    fn describe(&self) -> String {
        "same answer".into()
    }
}

#[test]
fn a_long_run_keeps_only_the_recent_pictures_in_memory_and_the_detector_sees_all() {
    let steps = 60;
    let config = ExplorerConfig::default();
    let mut ex = FunctionAwareExplorer::new(
        Box::new(SameAnswer {
            answer: "Action: click\nWidget id: 2\nWidget text: + More\nFunction: change quantity\nStatus: ongoing\nBug: none".into(),
            ..SameAnswer::default()
        }),
        config.clone(),
    );
    let mut largest = 0;
    for step in 1..=steps {
        ex.decide(step, &screen(), &cart());
        let in_memory = ex
            .history()
            .entries()
            .iter()
            .filter(|e| matches!(e.image, StepImage::Png(_)))
            .count();
        assert!(
            in_memory <= config.pictures_in_memory,
            "step {step}: {in_memory}"
        );
        largest = largest.max(ex.history().picture_bytes_in_memory());
    }
    let entries = ex.history().entries();
    // Pictures differ a little (each is marked with its step number).
    let sizes: Vec<usize> = entries
        .iter()
        .map(|e| e.image.png().unwrap().len())
        .collect();
    let biggest = sizes.iter().max().unwrap();
    assert!(largest <= config.pictures_in_memory * biggest, "{largest}");
    assert!(
        largest * 5 < sizes.iter().sum::<usize>(),
        "{largest} of {sizes:?}"
    );
    assert!(matches!(entries[0].image, StepImage::File(_)));
    assert!(matches!(
        entries[steps as usize - 1].image,
        StepImage::Png(_)
    ));

    // The pictures on disk still reach the detector: every step of every part it checks
    // comes with its picture.
    let history = ex.history().clone();
    let mut model = SameAnswer {
        answer: "Bug: no\nSteps: none".into(),
        ..SameAnswer::default()
    };
    let detection = detect_bugs(
        &mut model,
        "Shop",
        &history,
        &ExampleSet::bundled(),
        &DetectorConfig {
            max_images: steps as usize,
            ..DetectorConfig::default()
        },
    );
    let checked: Vec<u64> = detection
        .segments
        .iter()
        .filter(|s| s.checked)
        .flat_map(|s| s.steps.iter().copied())
        .collect();
    assert!(checked.contains(&1), "{:?}", detection.segments);
    assert!(checked.len() > config.pictures_in_memory, "{checked:?}");
    assert_eq!(model.images, checked.len());
}

#[test]
fn a_refused_picture_switches_to_the_text_view_and_asks_again() {
    // Like a text-only llama.cpp server: an image part gets HTTP 400.
    let server = ScriptedServer::start(Box::new(|req| {
        if req.images > 0 {
            gui_llm::scripted::Reply::Status(
                400,
                r#"{"error":{"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"}}"#.into(),
            )
        } else {
            gui_llm::scripted::Reply::Answer(
                "Action: click\nWidget id: 1\nWidget text: - Less\nFunction: Change quantity\nStatus: ongoing\nBug: none".into(),
            )
        }
    }))
    .unwrap();
    let mut ex = explorer(&server, 2);
    let d = ex.decide(1, &screen(), &cart());
    assert!(d.fallback.is_none(), "{d:?}");
    assert_eq!(d.answers, 1, "the refusal costs no feedback round");
    assert!(!ex.takes_images());
    assert!(ex.image_refusal().unwrap().contains("not supported"));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].images, 0);
    // The text view: numbered widgets, no screenshot section.
    assert!(requests[1].last_user_text.contains("1. button \"- Less\""));
    assert!(!requests[1].last_user_text.contains("Current screenshot"));
    // Later steps do not offer pictures again.
    ex.decide(2, &screen(), &cart());
    assert_eq!(server.requests().len(), 3);
    assert_eq!(server.requests()[2].images, 0);
}

#[test]
fn an_unknown_id_is_quoted_back_and_an_incomplete_answer_ends_in_a_fallback() {
    let server = ScriptedServer::start(Box::new(|req| {
        let n = req
            .texts
            .iter()
            .filter(|t| t.contains("## Feedback"))
            .count();
        gui_llm::scripted::Reply::Answer(if n == 0 {
            "Action: click\nWidget id: 17\nWidget text: Pay".into()
        } else {
            "Sure! Let me think about which".into()
        })
    }))
    .unwrap();
    let mut ex = explorer(&server, 1);
    let d = ex.decide(1, &screen(), &cart());
    assert!(d.fallback.is_some());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].last_user_text.contains("there is no widget 17"),
        "{}",
        requests[1].last_user_text
    );
    assert_eq!(ex.failures().len(), 1);
    assert_eq!(ex.failures()[0].cause, gui_llm::FallbackCause::Unparseable);
    // The log has both calls, with their tokens and time.
    assert_eq!(ex.accounting().log.len(), 2);
    assert!(ex.accounting().log.iter().all(|c| c.error.is_none()));
}

#[test]
fn without_pictures_from_the_start_no_image_is_sent() {
    let server = ScriptedServer::recorded(vec!["Action: back".into()]).unwrap();
    let client = OpenAiClient::new(OpenAiConfig::new(server.endpoint())).unwrap();
    let mut ex = FunctionAwareExplorer::new(
        Box::new(client),
        ExplorerConfig {
            images: false,
            ..ExplorerConfig::default()
        },
    );
    let d = ex.decide(1, &screen(), &cart());
    assert_eq!(d.operation, Operation::Back);
    assert_eq!(server.requests()[0].images, 0);
    assert_eq!(ex.accounting().images, 0);
}
