//! A scripted stand-in for a competent multimodal model testing the bundled demo app.
//!
//! It reads only the text of the prompts (it cannot see the pictures): the numbered widget
//! list, the screen's text, and the detector's step legend. It follows a tester's plan
//! (open the cart, add notebooks, check out, go back, open the todo list, remove the last
//! item), names the function each step tests, and checks arithmetic the way a careful
//! reader of the screen would: the cart's line totals must add up to its total. It does
//! not know where the bugs are; it finds the wrong total because the numbers disagree.

use std::collections::{BTreeMap, HashSet, VecDeque};

use gui_llm::prompt::{ACTION_QUERY, DETECT_QUERY, FEEDBACK, INPUT_QUERY};
use gui_llm::scripted::{ReceivedRequest, Reply};

/// One numbered widget of the prompt's list.
#[derive(Debug, Clone)]
pub struct ListedWidget {
    pub number: u32,
    pub text: String,
    pub id: String,
}

/// The tester's plan: DOM ids to act on, with the function each one tests and whether
/// it completes it.
const PLAN: &[(&str, &str, bool)] = &[
    ("nav-cart", "Open the cart", true),
    ("cart-inc-2", "Change cart quantity", false),
    ("cart-inc-2", "Change cart quantity", true),
    ("cart-checkout", "Check out the cart", true),
    ("@back", "Return home", true),
    ("nav-list", "Open the todo list", true),
    ("list-remove-5", "Remove a todo item", false),
    ("confirm-yes", "Remove a todo item", true),
];

#[derive(Debug, Default)]
pub struct CompetentModel {
    plan: VecDeque<(&'static str, &'static str, bool)>,
    acted: HashSet<String>,
    /// Every kind of query answered, in order ("action", "input", "feedback", "detect").
    pub answered: Vec<&'static str>,
}

impl CompetentModel {
    pub fn new() -> Self {
        Self {
            plan: PLAN.iter().copied().collect(),
            ..Self::default()
        }
    }

    pub fn respond(&mut self, req: &ReceivedRequest) -> Reply {
        let last = &req.last_user_text;
        let all = req.texts.join("\n");
        let kind = if last.contains(DETECT_QUERY) {
            "detect"
        } else if last.contains(INPUT_QUERY) {
            "input"
        } else if last.contains(FEEDBACK) {
            "feedback"
        } else if last.contains(ACTION_QUERY) {
            "action"
        } else {
            return Reply::Status(400, "not a VisionDroid prompt".into());
        };
        self.answered.push(kind);
        Reply::Answer(match kind {
            "detect" => detect(&all),
            "input" => "Input: ann@example.com".into(),
            _ => self.act(&all),
        })
    }

    fn act(&mut self, prompt: &str) -> String {
        let widgets = listed_widgets(prompt);
        let texts = screen_texts(prompt);
        let bug = cart_mismatch(&texts).unwrap_or_else(|| "none".into());
        let at_home = widgets.iter().any(|w| w.id.starts_with("nav-"));
        while let Some(&(target, function, done)) = self.plan.front() {
            if target == "@back" {
                self.plan.pop_front();
                return answer_back(function, &bug);
            }
            if let Some(w) = widgets.iter().find(|w| w.id == target) {
                self.plan.pop_front();
                self.acted.insert(w.id.clone());
                return answer_click(w, function, done, &bug);
            }
            if at_home {
                // The plan's next widget is nowhere: skip it.
                self.plan.pop_front();
            } else {
                return answer_back("Return home", &bug);
            }
        }
        // The plan is done: try what has not been tried yet, else go back.
        match widgets
            .iter()
            .find(|w| !self.acted.contains(&w.id) && !w.id.is_empty())
        {
            Some(w) => {
                self.acted.insert(w.id.clone());
                answer_click(w, &format!("Try {}", w.text), true, &bug)
            }
            None => answer_back("Return home", &bug),
        }
    }
}

fn answer_click(w: &ListedWidget, function: &str, done: bool, bug: &str) -> String {
    format!(
        "Action: click\nWidget id: {}\nWidget text: {}\nFunction: {function}\nStatus: {}\nBug: {bug}",
        w.number,
        if w.text.is_empty() { &w.id } else { &w.text },
        if done { "completed" } else { "ongoing" }
    )
}

fn answer_back(function: &str, bug: &str) -> String {
    format!("Action: back\nWidget id: none\nFunction: {function}\nStatus: completed\nBug: {bug}")
}

/// The numbered widget list of the last screen in the prompt.
pub fn listed_widgets(prompt: &str) -> Vec<ListedWidget> {
    let Some(start) = prompt.rfind("## GUI text of the current screen") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in prompt[start..].lines().skip(1) {
        let Some((n, rest)) = line.split_once(". ") else {
            break;
        };
        let Ok(number) = n.trim().parse() else { break };
        let head = rest.split(" | ").next().unwrap_or("");
        let text = head
            .split_once('"')
            .and_then(|(_, r)| r.split_once('"'))
            .map_or("", |(t, _)| t)
            .to_owned();
        let id = head
            .rsplit_once("id ")
            .map_or("", |(_, r)| r.trim_end_matches(')'))
            .to_owned();
        out.push(ListedWidget { number, text, id });
    }
    out
}

/// `id: "text"` lines of the current screen's "Other text" list.
fn screen_texts(prompt: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(start) = prompt.rfind("Other text on the screen:") else {
        return out;
    };
    for line in prompt[start..].lines().skip(1) {
        let Some(item) = line.strip_prefix("- ") else {
            break;
        };
        if let Some((id, text)) = item.split_once(": ") {
            out.insert(id.to_owned(), text.trim_matches('"').to_owned());
        }
    }
    out
}

fn money(s: &str) -> Option<f64> {
    s.trim().trim_start_matches('$').parse().ok()
}

/// Whether the cart's line totals disagree with its total, in words.
fn cart_mismatch(texts: &BTreeMap<String, String>) -> Option<String> {
    let total = money(texts.get("cart-total")?)?;
    let lines: Vec<f64> = (1..=3)
        .map(|i| texts.get(&format!("cart-line-{i}")).and_then(|t| money(t)))
        .collect::<Option<_>>()?;
    let sum: f64 = lines.iter().sum();
    ((sum - total).abs() > 0.005).then(|| {
        format!(
            "the cart total ${total:.2} is not the sum of its lines {} = ${sum:.2}",
            lines
                .iter()
                .map(|l| format!("${l:.2}"))
                .collect::<Vec<_>>()
                .join(" + ")
        )
    })
}

/// The detector's question: walk the step legend and check every cart screen.
fn detect(prompt: &str) -> String {
    for block in prompt.split("\nStep ").skip(1) {
        let step: u64 = match block.split_whitespace().next().and_then(|s| s.parse().ok()) {
            Some(s) => s,
            None => continue,
        };
        let Some(texts) = block
            .lines()
            .find_map(|l| l.strip_prefix("Text on the screen: "))
        else {
            continue;
        };
        let map: BTreeMap<String, String> = texts
            .split("; ")
            .filter_map(|t| t.split_once(": "))
            .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
            .collect();
        if let Some(what) = cart_mismatch(&map) {
            return format!(
                "Bug: yes\nSteps: {step}\nCategory: numerical calculation error\n\
                 Description: after changing a quantity, {what}\n\
                 Reasoning: each line is quantity times price and is right; the total that is \
                 charged should be their sum."
            );
        }
    }
    "Bug: no\nSteps: none\nReasoning: every screen shows what the steps before it should give."
        .into()
}
