//! The prompts (Fig. 6 for the explorer, Fig. 8 for the detector), in our own words.
//! Every prompt is a list of [`Message`]s: a system message with the role, then one user
//! message of text and image parts. The section headings are stable so that tests (and
//! the scripted test model) can find them.

use gui_core::{UiElement, UiHierarchy};

use crate::annotate::{ActionType, AnnotatedWidget};
use crate::answer::Operation;
use crate::client::{Message, Part};
use crate::history::{HistoryEntry, TestingHistory};
use crate::retrieve::BugExample;

/// Heading of the explorer's question; the scripted test model keys on it.
pub const ACTION_QUERY: &str = "## Query: next action";
/// Heading of the text input question.
pub const INPUT_QUERY: &str = "## Query: text input";
/// Heading of the feedback after a widget id and text that disagree.
pub const FEEDBACK: &str = "## Feedback";
/// Heading of the detector's question.
pub const DETECT_QUERY: &str = "## Query: bug detection";

const SYSTEM: &str = "You test an application the way a careful human tester does: you look at \
its screens, operate its widgets to exercise one function after another, and notice when the \
app does not do what its screens promise. Screenshots come annotated: actionable widgets are \
boxed and numbered. Reply only with the template you are asked for.";

/// One line per numbered widget: number, class, text, hint, id, operations, bounds.
pub fn widget_lines(ui: &UiHierarchy, widgets: &[AnnotatedWidget]) -> String {
    let mut out = String::new();
    for w in widgets {
        let e = &ui.elements[w.element];
        let ops: Vec<&str> = w.types.iter().map(|t| t.verb()).collect();
        out += &format!("{}. {}", w.id, describe_element(e));
        out += &format!(
            " | {} | bounds [{}, {}, {}, {}]",
            ops.join(", "),
            e.bounds.x,
            e.bounds.y,
            e.bounds.width,
            e.bounds.height
        );
        if e.checkable {
            out += if e.checked {
                " | checked"
            } else {
                " | unchecked"
            };
        }
        out.push('\n');
    }
    if out.is_empty() {
        out = "(no actionable widget found)\n".into();
    }
    out
}

/// `button "Cart" (hint "...", id nav-cart)`: how a widget is named in prompts.
pub fn describe_element(e: &UiElement) -> String {
    let mut s = e.class.clone();
    if !e.text.is_empty() {
        s += &format!(" \"{}\"", e.text);
    }
    let mut extra = Vec::new();
    if !e.hint.is_empty() {
        extra.push(format!("hint \"{}\"", e.hint));
    }
    if !e.id.is_empty() {
        extra.push(format!("id {}", e.id));
    }
    if !extra.is_empty() {
        s += &format!(" ({})", extra.join(", "));
    }
    s
}

/// Text shown on the screen by elements that are not actionable, `id: text` where they
/// have an id; at most `limit`.
pub fn screen_texts(ui: &UiHierarchy, limit: usize) -> Vec<String> {
    ui.elements
        .iter()
        .filter(|e| !e.text.is_empty() && !e.actionable())
        .take(limit)
        .map(|e| {
            if e.id.is_empty() {
                format!("\"{}\"", e.text)
            } else {
                format!("{}: \"{}\"", e.id, e.text)
            }
        })
        .collect()
}

fn legend() -> String {
    let colours: Vec<String> = ActionType::ALL
        .iter()
        .map(|t| format!("{} = {}", t.colour_name(), t.verb()))
        .collect();
    format!(
        "Legend of the current screenshot: box colours say what a widget takes ({}). \
Widgets are numbered from 1 in reading order, top to bottom and then left to right; only the \
first widget of each row shows its number, so count along the row for the others.",
        colours.join(", ")
    )
}

/// Everything the explorer prompt needs.
#[derive(Debug)]
pub struct ExplorerView<'a> {
    pub app: &'a str,
    pub screens: &'a [String],
    pub ui: &'a UiHierarchy,
    pub widgets: &'a [AnnotatedWidget],
    pub screen_texts: &'a [String],
    pub history: &'a TestingHistory,
    /// How many recent IMAGE view entries to show (the paper: four).
    pub recent: usize,
    /// The annotated current screenshot, PNG.
    pub screenshot_png: &'a [u8],
    /// Whether to send pictures; without them the prompt is the text view alone.
    pub images: bool,
}

/// The explorer prompt (Fig. 6): GUI text info, legend, explored functions, the recent
/// screenshots, the current screenshot, and the action / function / bug query.
pub fn explorer_prompt(v: &ExplorerView<'_>) -> Vec<Message> {
    if !v.images {
        return text_view_prompt(v);
    }
    let mut parts = Vec::new();
    let mut text = format!(
        "## App\nName: {}\nScreens seen so far: {}\n\n## GUI text of the current screen ({})\n{}",
        v.app,
        if v.screens.is_empty() {
            "(none yet)".to_owned()
        } else {
            v.screens.join(", ")
        },
        v.ui.screen,
        widget_lines(v.ui, v.widgets)
    );
    if !v.screen_texts.is_empty() {
        text += "Other text on the screen:\n";
        for t in v.screen_texts {
            text += &format!("- {t}\n");
        }
    }
    let legend = if v.images {
        legend()
    } else {
        // Text only: no pictures to explain, and each token costs a small model time.
        "The numbers above are the widget ids.".to_owned()
    };
    text += &format!(
        "\n{legend}\n\n## Explored functions\n{}\n",
        v.history.text_view()
    );
    let recent = v.history.recent(v.recent);
    if !v.images && !recent.is_empty() {
        text += "\n## Recent steps\n";
        for e in recent {
            text += &format!(
                "Step {} ({}) on {}: {}\n",
                e.step,
                e.caption(),
                e.screen,
                e.action
            );
        }
    } else if !recent.is_empty() {
        text +=
            "\n## Recently tested screens\nThe acted widget is outlined on each; oldest first.\n";
        parts.push(Part::Text(std::mem::take(&mut text)));
        for e in recent {
            parts.push(Part::Text(format!(
                "Step {} ({}) on {}: {}",
                e.step,
                e.caption(),
                e.screen,
                e.action
            )));
            if let Some(png) = e.image.png() {
                parts.push(Part::Image {
                    png: png.into_owned(),
                });
            }
        }
    }
    if v.images {
        text += "\n## Current screenshot\n";
        parts.push(Part::Text(std::mem::take(&mut text)));
        parts.push(Part::Image {
            png: v.screenshot_png.to_vec(),
        });
    } else {
        parts.push(Part::Text(std::mem::take(&mut text)));
    }
    parts.push(Part::Text(format!(
        "{ACTION_QUERY}\nPick the operation that tests a function of this app most usefully: \
prefer functions visited less often above, finish a function you have started (after filling \
a form, submit it; after adding something, look at where it should appear), and go deeper \
rather than wider. Name the function this step tests and say whether the step completes it. \
Then look hard at the current screen: is anything on it wrong (numbers that do not add up, \
text that contradicts other text, overlapping or cut text, an empty list that should not be \
empty)?\nAnswer exactly in this template:\n\
Action: <{}>\n\
Widget id: <the widget's number; none for scroll and back>\n\
Widget text: <the text or hint of that widget>\n\
Input: <text to type, for input only>\n\
Function: <short name of the function under test>\n\
Status: <ongoing | completed>\n\
Bug: <none, or what is wrong on the current screen>",
        Operation::NAMES.join(" | ")
    )));
    vec![Message::system(SYSTEM), Message::user(parts)]
}

/// At most `limit` characters of `text`, with `...` when cut.
fn clip(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        text.to_owned()
    } else {
        text.chars().take(limit).collect::<String>() + "..."
    }
}

/// The explorer prompt for a model without pictures: the text view of Section III-A (the
/// GUI text with numbered widgets), the explored functions and the last steps in words,
/// and the same template. Shorter than the picture prompt on purpose: a small local model
/// reads about a hundred tokens a second on a CPU, so each line costs time.
pub fn text_view_prompt(v: &ExplorerView<'_>) -> Vec<Message> {
    const WIDGETS: usize = 40;
    const TEXTS: usize = 15;
    let mut text = format!("## App\n{} - screen {}\n\n## Widgets\n", v.app, v.ui.screen);
    for w in v.widgets.iter().take(WIDGETS) {
        let e = &v.ui.elements[w.element];
        let verbs: Vec<&str> = w.types.iter().map(|t| t.verb()).collect();
        let name = [&e.text, &e.hint, &e.id]
            .into_iter()
            .find(|t| !t.is_empty())
            .map_or(String::new(), |t| format!(" \"{}\"", clip(t, 40)));
        text += &format!("{}. {}{name} ({})\n", w.id, e.class, verbs.join(", "));
    }
    if v.widgets.is_empty() {
        text += "(none)\n";
    }
    if !v.screen_texts.is_empty() {
        text += "\n## Text on the screen\n";
        for t in v.screen_texts.iter().take(TEXTS) {
            text += &format!("- {}\n", clip(t, 80));
        }
    }
    text += &format!("\n## Explored functions\n{}\n", v.history.text_view());
    let recent = v.history.recent(v.recent.min(2));
    if !recent.is_empty() {
        text += "\n## Last steps\n";
        for e in recent {
            text += &format!("{} ({}): {}\n", e.step, e.caption(), clip(&e.action, 80));
        }
    }
    text += &format!(
        "\n{ACTION_QUERY}\nChoose the next operation to test a function of the app, prefer \
functions tested less, and say if anything on the screen is wrong. Answer in exactly these \
7 lines:\n\
Action: <{}>\n\
Widget id: <number from the widget list, or none>\n\
Widget text: <its text>\n\
Input: <text to type, or none>\n\
Function: <short name of the function under test>\n\
Status: <ongoing | completed>\n\
Bug: <none, or what is wrong>",
        Operation::NAMES.join(" | ")
    );
    vec![Message::system(SYSTEM_TEXT), Message::user_text(text)]
}

/// The system message of the text view: no screenshots to speak of.
const SYSTEM_TEXT: &str = "You test an application like a careful human tester: you read its \
screen as a numbered list of widgets, operate them to exercise one function after another, and \
notice when the app does not do what it promises. Reply only with the template asked for.";

/// The text input query: what to type into one widget.
pub fn input_prompt(e: &UiElement, id: u32, function: &str) -> Message {
    Message::user_text(format!(
        "{INPUT_QUERY}\nWidget {id}, {}, takes text. Give the text a tester would type there \
to exercise the function \"{function}\" (a valid value unless you mean to test validation).\n\
Answer exactly:\nInput: <text>",
        describe_element(e)
    ))
}

/// The feedback after the model named a widget whose text is not the one it gave.
pub fn feedback_prompt(id: u32, said: &str, actual: Option<&UiElement>) -> Message {
    let fact = match actual {
        Some(e) => format!("widget {id} is {}", describe_element(e)),
        None => format!("there is no widget {id} on this screen"),
    };
    Message::user_text(format!(
        "{FEEDBACK}\nYou named widget {id} with the text \"{said}\", but {fact}. Your reasoning \
about the screen went wrong somewhere: look at the screenshot and the widget list again and \
answer in the same template."
    ))
}

/// Everything the detector prompt needs for one sub-sequence.
#[derive(Debug)]
pub struct DetectorView<'a> {
    pub app: &'a str,
    pub screens: &'a [String],
    pub steps: &'a [&'a HistoryEntry],
    /// How many of the steps (the last ones) carry their picture.
    pub max_images: usize,
    pub examples: &'a [&'a BugExample],
}

/// The detector prompt (Fig. 8): app info, the sub-sequence as screenshots with function
/// names and screen text, retrieved examples, and the bug question.
pub fn detector_prompt(v: &DetectorView<'_>) -> Vec<Message> {
    let mut parts = Vec::new();
    let mut text = format!(
        "## App\nName: {}\nScreens: {}\n\n## Test steps\nA part of a test run, in order. Each \
screenshot is the screen the step's action was taken on, with the acted widget outlined; the \
caption names the function under test and the step's place in it.\n",
        v.app,
        v.screens.join(", ")
    );
    let first_image = v.steps.len().saturating_sub(v.max_images);
    for (i, e) in v.steps.iter().enumerate() {
        text += &format!(
            "\nStep {} ({}) on {}: {}\nText on the screen: {}\n",
            e.step,
            e.caption(),
            e.screen,
            e.action,
            if e.texts.is_empty() {
                "(none)".to_owned()
            } else {
                e.texts.join("; ")
            }
        );
        if let Some(png) = (i >= first_image).then(|| e.image.png()).flatten() {
            parts.push(Part::Text(std::mem::take(&mut text)));
            parts.push(Part::Image {
                png: png.into_owned(),
            });
        }
    }
    if !v.examples.is_empty() {
        text += "\n## Examples of non-crash bugs in similar screens\n";
        for (i, ex) in v.examples.iter().enumerate() {
            text += &format!(
                "{}. [{}] {} (screen {}). Steps: {}\n",
                i + 1,
                ex.category,
                ex.description,
                ex.screen,
                ex.steps.join(" -> ")
            );
        }
    }
    text += &format!(
        "\n{DETECT_QUERY}\nFollow the steps as the user would and check that every screen shows \
what the actions before it should have produced: totals and counts that add up, items added, \
edited or removed as asked (and only those), settings that stick, navigation that lands where \
it should, controls that respond. A crash or an error message the app shows on purpose is not \
what we look for here.\nAnswer exactly:\n\
Bug: <yes | no>\n\
Steps: <the step numbers where the bug shows; none if no bug>\n\
Category: <for example numerical calculation error, data operation failure, setting failure, \
navigation error, display issue>\n\
Description: <what is wrong, in one sentence>\n\
Reasoning: <how the steps show it>"
    );
    parts.push(Part::Text(text));
    vec![Message::system(SYSTEM), Message::user(parts)]
}
