//! The function-aware explorer (Section III-B): one model query per step that chooses the
//! next operation, names the function it tests and checks the screen for intra-page
//! bugs; a text input query when text must be typed; feedback and a retry when the
//! widget number and the widget text the model gave disagree; and the testing history
//! the next prompts are built from.

use std::path::PathBuf;

use gui_core::{
    Action, ActionKind, ActionParam, Rect, Screenshot, SwipeDirection, UiElement, UiHierarchy,
    Widget, WidgetKind,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::annotate::{
    ActionType, AnnotateConfig, AnnotatedWidget, annotate, downscale_for_prompt, mark_action,
};
use crate::answer::{ActionAnswer, Operation, parse_action_answer, parse_input_answer};
use crate::client::{Accounting, ChatRequest, LlmClient, Message};
use crate::history::{HistoryEntry, StepImage, TestingHistory};
use crate::prompt::{
    ExplorerView, describe_element, explorer_prompt, feedback_prompt, input_prompt, screen_texts,
};
use crate::retrieve::BugScope;

/// Settings of the explorer. Defaults follow the paper where it gives a value.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExplorerConfig {
    /// Seeds the explorer's own choices (when an answer cannot be used).
    pub seed: u64,
    /// The app's name when the hierarchy does not give one.
    pub app: String,
    /// Feedback rounds after an unusable answer before the step is skipped.
    pub retries: u32,
    /// Recently tested screenshots shown in the prompt (the paper: the latest four).
    pub recent: usize,
    /// Steps whose pictures stay in memory (never fewer than `recent`); older pictures
    /// are written to `picture_dir`, where the detector reads them back.
    #[serde(default = "default_pictures_in_memory")]
    pub pictures_in_memory: usize,
    /// The folder for older step pictures, kept after the run; `None` writes them to a
    /// temporary folder removed with the explorer's history.
    #[serde(default)]
    pub picture_dir: Option<PathBuf>,
    /// Longest side of every picture sent, in pixels (pictures cost tokens).
    pub image_max_side: u32,
    /// Texts of the screen kept per history step for the detector.
    pub screen_texts: usize,
    /// Consecutive endpoint failures after which the explorer stops asking the model and
    /// goes on by itself (an endpoint that is down would otherwise cost retries on every
    /// step).
    pub give_up_after: u32,
    pub max_tokens: u32,
    pub temperature: f32,
    /// Text typed when the model gives none.
    pub default_text: String,
    pub annotate: AnnotateConfig,
    /// Whether the model takes pictures. `false` sends the text view only (the GUI text
    /// with numbered widgets, the history in words); a refusal of an image part by the
    /// endpoint switches it off during the run.
    #[serde(default = "default_images")]
    pub images: bool,
}

fn default_images() -> bool {
    true
}

impl Default for ExplorerConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            app: "app".into(),
            retries: 2,
            recent: 4,
            pictures_in_memory: default_pictures_in_memory(),
            picture_dir: None,
            image_max_side: 1024,
            screen_texts: 60,
            give_up_after: 3,
            max_tokens: 400,
            temperature: 0.0,
            default_text: "test".into(),
            annotate: AnnotateConfig::default(),
            images: true,
        }
    }
}

fn default_pictures_in_memory() -> usize {
    TestingHistory::PICTURES_IN_MEMORY
}

/// What the explorer decided for one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub operation: Operation,
    /// The widget number on the annotated screenshot.
    pub widget_id: Option<u32>,
    /// The widget's bounds in screenshot pixels.
    pub bounds: Option<Rect>,
    pub input: Option<String>,
    /// The function the step tests, as recorded in the history.
    pub function: String,
    /// What was done, in words.
    pub described: String,
    /// Set when the model's answer could not be used and the explorer chose by itself.
    pub fallback: Option<String>,
    /// How many answers it took (1 when the first was usable).
    pub answers: u32,
}

impl Decision {
    /// The device action. `scale` is the screenshot's pixels per viewport pixel.
    pub fn to_action(&self, scale: f32) -> Action {
        let scale = if scale > 0.0 { scale } else { 1.0 };
        let widget = |kind: WidgetKind| {
            self.bounds.map(|b| {
                let r = Rect::new(
                    (b.x as f32 / scale).round() as i32,
                    (b.y as f32 / scale).round() as i32,
                    ((b.width as f32 / scale).round() as u32).max(1),
                    ((b.height as f32 / scale).round() as u32).max(1),
                );
                Widget::new(r, kind, 1.0)
            })
        };
        let on = |kind: ActionKind, wk: WidgetKind| match widget(wk) {
            Some(w) => Action::on(kind, w),
            None => Action::new(ActionKind::Return),
        };
        match self.operation {
            Operation::Click => on(ActionKind::Click, WidgetKind::Button),
            Operation::Check => on(ActionKind::Click, WidgetKind::CheckBox),
            Operation::LongClick => on(ActionKind::LongClick, WidgetKind::Button),
            Operation::Input => on(ActionKind::Input, WidgetKind::EditText)
                .with_param(ActionParam::Text(self.input.clone().unwrap_or_default())),
            // A swipe up moves the content up: the page scrolls down.
            Operation::ScrollDown | Operation::ScrollUp => {
                let dir = if self.operation == Operation::ScrollDown {
                    SwipeDirection::Up
                } else {
                    SwipeDirection::Down
                };
                let mut a = match widget(WidgetKind::ListItem) {
                    Some(w) => Action::on(ActionKind::Swipe, w),
                    None => Action::new(ActionKind::Swipe),
                };
                a.param = Some(ActionParam::Direction(dir));
                a
            }
            Operation::Back => Action::new(ActionKind::Return),
        }
    }
}

/// A non-crash bug the model suspects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuspectedBug {
    pub scope: BugScope,
    /// Steps where it shows (history step numbers).
    pub steps: Vec<u64>,
    pub screens: Vec<String>,
    /// Functions of the steps involved.
    pub functions: Vec<String>,
    pub category: Option<String>,
    pub description: String,
    pub reasoning: String,
    /// For inter-page bugs, the sub-sequence it was found in.
    pub segment: Option<usize>,
}

/// A step on which the model's answer could not be used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplorerFailure {
    pub step: u64,
    pub reason: String,
    /// The kind of the last problem, for counting.
    #[serde(default)]
    pub cause: FallbackCause,
}

/// Why a step fell back to the explorer's own random choice.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackCause {
    /// The answer does not follow the template.
    #[default]
    Unparseable,
    /// The answer names a widget number the screen does not have.
    UnknownWidget,
    /// The widget number and the widget text disagree.
    Mismatch,
    /// The answer stopped at the token cap.
    Truncated,
    /// The endpoint failed (after the client's own retries).
    Endpoint,
    /// The endpoint had failed too often in a row to be asked again.
    NotAsked,
}

impl FallbackCause {
    pub const ALL: [FallbackCause; 6] = [
        FallbackCause::Unparseable,
        FallbackCause::UnknownWidget,
        FallbackCause::Mismatch,
        FallbackCause::Truncated,
        FallbackCause::Endpoint,
        FallbackCause::NotAsked,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FallbackCause::Unparseable => "unparseable",
            FallbackCause::UnknownWidget => "unknown widget",
            FallbackCause::Mismatch => "id/text mismatch",
            FallbackCause::Truncated => "truncated",
            FallbackCause::Endpoint => "endpoint error",
            FallbackCause::NotAsked => "not asked",
        }
    }
}

/// Why the model's answer was not used, with the reason told back to it.
struct Unusable {
    cause: FallbackCause,
    reason: String,
}

impl Unusable {
    fn new(cause: FallbackCause, reason: impl Into<String>) -> Self {
        Self {
            cause,
            reason: reason.into(),
        }
    }
}

/// The function-aware explorer. It owns the client and the testing history.
pub struct FunctionAwareExplorer {
    client: Box<dyn LlmClient>,
    config: ExplorerConfig,
    history: TestingHistory,
    screens: Vec<String>,
    app: String,
    rng: ChaCha8Rng,
    screen_bugs: Vec<SuspectedBug>,
    failures: Vec<ExplorerFailure>,
    endpoint_failures: u32,
    images: bool,
    /// Why pictures stopped being sent, when the endpoint refused one.
    image_refusal: Option<String>,
    /// The step and error after which the endpoint counted as dead.
    endpoint_dead: Option<(u64, String)>,
}

impl std::fmt::Debug for FunctionAwareExplorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionAwareExplorer")
            .field("client", &self.client.describe())
            .field("steps", &self.history.entries().len())
            .finish()
    }
}

impl FunctionAwareExplorer {
    pub fn new(client: Box<dyn LlmClient>, config: ExplorerConfig) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            images: config.images,
            app: config.app.clone(),
            history: TestingHistory::with_pictures(
                config.pictures_in_memory.max(config.recent),
                config.picture_dir.clone(),
            ),
            client,
            config,
            screens: Vec::new(),
            screen_bugs: Vec::new(),
            failures: Vec::new(),
            endpoint_failures: 0,
            image_refusal: None,
            endpoint_dead: None,
        }
    }

    pub fn history(&self) -> &TestingHistory {
        &self.history
    }

    /// Intra-page bugs reported during exploration, one per screen and description.
    pub fn screen_bugs(&self) -> &[SuspectedBug] {
        &self.screen_bugs
    }

    pub fn failures(&self) -> &[ExplorerFailure] {
        &self.failures
    }

    /// Whether prompts carry pictures (false from the start with `images: false`, or
    /// since the endpoint refused one).
    pub fn takes_images(&self) -> bool {
        self.images
    }

    /// The endpoint's refusal of a picture that switched to the text view, if any.
    pub fn image_refusal(&self) -> Option<&str> {
        self.image_refusal.as_deref()
    }

    /// The step after which the endpoint failed `give_up_after` times in a row and was
    /// no longer asked, with its last error.
    pub fn endpoint_dead(&self) -> Option<(u64, &str)> {
        self.endpoint_dead.as_ref().map(|(s, e)| (*s, e.as_str()))
    }

    pub fn accounting(&self) -> &Accounting {
        self.client.accounting()
    }

    pub fn app(&self) -> &str {
        &self.app
    }

    /// Screen names seen so far, in order.
    pub fn screens(&self) -> &[String] {
        &self.screens
    }

    /// The client, for the detector that runs after exploration.
    pub fn client_mut(&mut self) -> &mut dyn LlmClient {
        self.client.as_mut()
    }

    /// The app was restarted: the function under test is over.
    pub fn on_restart(&mut self) {
        self.history.interrupt();
    }

    /// Chooses the operation for `step` on the screen `shot` with hierarchy `ui`, and
    /// records the step in the history. Never fails: an answer that cannot be used after
    /// the feedback rounds, or an endpoint that fails, makes the explorer choose by
    /// itself, and the reason is kept in [`failures`](Self::failures).
    pub fn decide(&mut self, step: u64, shot: &Screenshot, ui: &UiHierarchy) -> Decision {
        if !ui.app.is_empty() {
            self.app = ui.app.clone();
        }
        if !self.screens.contains(&ui.screen) {
            self.screens.push(ui.screen.clone());
        }
        let annotation = annotate(shot, ui, &self.config.annotate);
        let texts = screen_texts(ui, self.config.screen_texts);
        let (mut decision, answer) = match self.ask(step, ui, &annotation, &texts) {
            Ok((d, a)) => (d, Some(a)),
            Err(Unusable { cause, reason }) => {
                self.failures.push(ExplorerFailure {
                    step,
                    reason: reason.clone(),
                    cause,
                });
                (self.fallback(ui, &annotation.widgets, reason), None)
            }
        };
        let (function, done) = answer.as_ref().map_or((String::new(), false), |a| {
            (a.function.clone().unwrap_or_default(), a.function_done)
        });
        let marked = match decision.bounds {
            Some(b) => mark_action(shot, b, Some(step as u32)),
            None => shot.pixels().clone(),
        };
        let image_png = png(&downscale_for_prompt(&marked, self.config.image_max_side));
        self.history.record(
            HistoryEntry {
                widget: decision.bounds,
                texts,
                image: StepImage::Png(image_png),
                ..HistoryEntry::new(step, ui.screen.clone(), decision.described.clone())
            },
            &function,
            done,
        );
        decision.function = self
            .history
            .entries()
            .last()
            .map(|e| e.function.clone())
            .unwrap_or_default();
        if let Some(bug) = answer.and_then(|a| a.screen_bug) {
            self.note_screen_bug(step, &ui.screen, &decision.function, bug);
        }
        decision
    }

    fn note_screen_bug(&mut self, step: u64, screen: &str, function: &str, bug: String) {
        let key = bug.trim().to_lowercase();
        let known = self.screen_bugs.iter().any(|b| {
            b.screens.first().is_some_and(|s| s == screen) && b.description.to_lowercase() == key
        });
        if !known {
            self.screen_bugs.push(SuspectedBug {
                scope: BugScope::IntraPage,
                steps: vec![step],
                screens: vec![screen.to_owned()],
                functions: vec![function.to_owned()],
                category: None,
                description: bug.trim().to_owned(),
                reasoning: String::new(),
                segment: None,
            });
        }
    }

    /// The model conversation for one step; `Err` carries why no usable answer came.
    /// Each unusable answer is answered with its reason, quoted back to the model, up to
    /// `retries` times. A refusal of a picture switches to the text view and asks again
    /// without spending a round.
    fn ask(
        &mut self,
        step: u64,
        ui: &UiHierarchy,
        annotation: &crate::annotate::Annotation,
        texts: &[String],
    ) -> std::result::Result<(Decision, ActionAnswer), Unusable> {
        if self.endpoint_failures >= self.config.give_up_after {
            return Err(Unusable::new(
                FallbackCause::NotAsked,
                format!(
                    "model not asked: the endpoint failed {} times in a row",
                    self.endpoint_failures
                ),
            ));
        }
        let shot_png = if self.images {
            png(&downscale_for_prompt(
                &annotation.image,
                self.config.image_max_side,
            ))
        } else {
            Vec::new()
        };
        let recent = self.config.recent;
        let prompt = |images: bool, history: &TestingHistory, app: &str, screens: &[String]| {
            explorer_prompt(&ExplorerView {
                app,
                screens,
                ui,
                widgets: &annotation.widgets,
                screen_texts: texts,
                history,
                recent,
                screenshot_png: &shot_png,
                images,
            })
        };
        let mut messages = prompt(self.images, &self.history, &self.app, &self.screens);
        let mut last = Unusable::new(FallbackCause::Unparseable, "");
        let mut round = 0;
        while round <= self.config.retries {
            let answer = match self.chat(step, &messages, "action") {
                Ok(answer) => answer,
                Err(crate::Error::ImagesUnsupported { message, .. }) if self.images => {
                    tracing::warn!(
                        step,
                        "the model takes no images, sending the text view: {message}"
                    );
                    self.images = false;
                    self.image_refusal = Some(message);
                    messages = prompt(false, &self.history, &self.app, &self.screens);
                    continue;
                }
                Err(e) => return Err(Unusable::new(FallbackCause::Endpoint, e.to_string())),
            };
            round += 1;
            let text = &answer.text;
            let problem = match parse_action_answer(text) {
                Err(e) => {
                    let (cause, reason) = if answer.truncated() {
                        (
                            FallbackCause::Truncated,
                            format!(
                                "your answer was cut off at the length limit before it was complete ({e})"
                            ),
                        )
                    } else {
                        (FallbackCause::Unparseable, e.to_string())
                    };
                    messages.push(Message::assistant(text));
                    messages.push(Message::user_text(format!(
                        "{}\n{reason}. Answer again, exactly in the template and briefly.",
                        crate::prompt::FEEDBACK
                    )));
                    Unusable::new(cause, reason)
                }
                Ok(parsed) => match check_widget(&parsed, ui, &annotation.widgets) {
                    Ok(widget) => {
                        let decision = self
                            .complete(step, ui, parsed.clone(), widget, round)
                            .map_err(|e| Unusable::new(FallbackCause::Endpoint, e))?;
                        return Ok((decision, parsed));
                    }
                    Err((id, said)) => {
                        let actual = annotation.widget(id).map(|w| &ui.elements[w.element]);
                        messages.push(Message::assistant(text));
                        messages.push(feedback_prompt(id, &said, actual));
                        match actual {
                            None => Unusable::new(
                                FallbackCause::UnknownWidget,
                                format!("there is no widget {id} on this screen"),
                            ),
                            Some(_) => Unusable::new(
                                FallbackCause::Mismatch,
                                format!("widget {id} and text \"{said}\" disagree"),
                            ),
                        }
                    }
                },
            };
            tracing::debug!(step, round, "unusable answer: {}", problem.reason);
            last = problem;
        }
        Err(Unusable::new(
            last.cause,
            format!(
                "no usable answer after {} feedback rounds: {}",
                self.config.retries, last.reason
            ),
        ))
    }

    /// Fills in the decision for a usable answer, asking for the text to type if needed.
    fn complete(
        &mut self,
        step: u64,
        ui: &UiHierarchy,
        answer: ActionAnswer,
        widget: Option<&AnnotatedWidget>,
        answers: u32,
    ) -> std::result::Result<Decision, String> {
        let element = widget.map(|w| &ui.elements[w.element]);
        let mut operation = answer.operation;
        // The model's verb and the widget's kind disagree mildly: act as the widget asks.
        if let Some(e) = element {
            operation = match operation {
                Operation::Input if !e.editable => Operation::Click,
                Operation::Click | Operation::Check if e.editable => Operation::Input,
                op => op,
            };
        }
        let mut input = None;
        if operation == Operation::Input {
            let given = answer.input.clone().filter(|t| !t.is_empty());
            input = Some(match given {
                Some(t) => t,
                None => {
                    let e = element.expect("input has a widget");
                    let id = widget.map_or(0, |w| w.id);
                    let function = answer.function.clone().unwrap_or_default();
                    let messages = vec![input_prompt(e, id, &function)];
                    let text = self
                        .chat(step, &messages, "input")
                        .map_err(|e| e.to_string())?
                        .text;
                    parse_input_answer(&text).unwrap_or_else(|e| {
                        tracing::debug!(step, "text input answer unusable: {e}");
                        self.config.default_text.clone()
                    })
                }
            });
        }
        Ok(Decision {
            operation,
            widget_id: widget.map(|w| w.id),
            bounds: element.map(|e| e.bounds),
            described: describe(operation, widget.map(|w| w.id), element, input.as_deref()),
            input,
            function: String::new(),
            fallback: None,
            answers,
        })
    }

    fn chat(
        &mut self,
        step: u64,
        messages: &[Message],
        purpose: &str,
    ) -> crate::Result<crate::ChatAnswer> {
        let request = ChatRequest {
            messages: messages.to_vec(),
            max_tokens: self.config.max_tokens,
            temperature: self.config.temperature,
            purpose: purpose.to_owned(),
            // The templates have no blank line: one ends the answer (a small model that
            // goes on writing after it costs seconds per line).
            stop: vec!["\n\n".to_owned()],
        };
        match self.client.chat(&request) {
            Ok(a) => {
                self.endpoint_failures = 0;
                Ok(a)
            }
            // A refusal of pictures is an answer, not a failure of the endpoint.
            Err(e @ crate::Error::ImagesUnsupported { .. }) => Err(e),
            Err(e) => {
                self.endpoint_failures += 1;
                if self.endpoint_failures >= self.config.give_up_after
                    && self.endpoint_dead.is_none()
                {
                    self.endpoint_dead = Some((step, e.to_string()));
                }
                Err(e)
            }
        }
    }

    /// The explorer's own choice: a random actionable widget (seeded), or back.
    fn fallback(
        &mut self,
        ui: &UiHierarchy,
        widgets: &[AnnotatedWidget],
        reason: String,
    ) -> Decision {
        let pick = (!widgets.is_empty()).then(|| &widgets[self.rng.random_range(0..widgets.len())]);
        let (operation, element) = match pick {
            None => (Operation::Back, None),
            Some(w) => {
                let e = &ui.elements[w.element];
                let op = match w.types.first() {
                    Some(ActionType::Input) => Operation::Input,
                    Some(ActionType::Check) => Operation::Check,
                    Some(ActionType::LongClick) => Operation::LongClick,
                    Some(ActionType::Scroll) => Operation::ScrollDown,
                    _ => Operation::Click,
                };
                (op, Some(e))
            }
        };
        let input = (operation == Operation::Input).then(|| self.config.default_text.clone());
        Decision {
            operation,
            widget_id: pick.map(|w| w.id),
            bounds: element.map(|e| e.bounds),
            described: describe(operation, pick.map(|w| w.id), element, input.as_deref()),
            input,
            function: String::new(),
            fallback: Some(reason),
            answers: 0,
        }
    }
}

/// The widget the answer names, after checking that its number and text agree
/// (Section III-A2's alignment check). `Err((id, text))` when they do not.
fn check_widget<'a>(
    answer: &ActionAnswer,
    ui: &UiHierarchy,
    widgets: &'a [AnnotatedWidget],
) -> std::result::Result<Option<&'a AnnotatedWidget>, (u32, String)> {
    if !answer.operation.needs_widget()
        && answer.operation != Operation::ScrollDown
        && answer.operation != Operation::ScrollUp
    {
        return Ok(None);
    }
    let Some(id) = answer.widget_id else {
        return Ok(None);
    };
    let said = answer.widget_text.clone().unwrap_or_default();
    let Some(w) = widgets.iter().find(|w| w.id == id) else {
        return Err((id, said));
    };
    if said.is_empty() || agrees(&said, &ui.elements[w.element]) {
        Ok(Some(w))
    } else {
        Err((id, said))
    }
}

/// Whether the text a model read for a widget is the widget's: equal or contained either
/// way after normalising case, spaces and punctuation, against its text, hint or id.
fn agrees(said: &str, e: &UiElement) -> bool {
    let norm = |s: &str| -> String {
        s.to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || c.is_whitespace())
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let s = norm(said);
    if s.is_empty() {
        return true;
    }
    [&e.text, &e.hint, &e.id, &e.class].iter().any(|t| {
        let t = norm(t);
        !t.is_empty() && (t == s || t.contains(&s) || s.contains(&t))
    })
}

fn describe(op: Operation, id: Option<u32>, e: Option<&UiElement>, input: Option<&str>) -> String {
    let mut s = op.name().to_owned();
    if let (Some(id), Some(e)) = (id, e) {
        s += &format!(" [{id}] {}", describe_element(e));
    }
    if let Some(t) = input {
        s += &format!(" with \"{t}\"");
    }
    s
}

fn png(img: &image::RgbImage) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    // Encoding an in-memory RGB image to PNG cannot fail.
    img.write_to(&mut out, image::ImageFormat::Png)
        .expect("PNG encoding of an RGB image");
    out.into_inner()
}
