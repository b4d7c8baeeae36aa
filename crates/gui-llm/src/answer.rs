//! Reading the model's answers. Each prompt asks for a small `Key: value` template
//! (Fig. 6's output templates); models also answer in JSON or wrap the template in a
//! code fence or prose, so the readers look for the keys anywhere in the text and accept
//! a JSON object with the same keys.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The operation the model asks for, one of the paper's five action types plus the two
/// moves every tester needs (scrolling the page without a scrollable widget, going back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    Click,
    LongClick,
    Input,
    Check,
    ScrollUp,
    ScrollDown,
    Back,
}

impl Operation {
    /// The names the prompt offers, in the order it lists them.
    pub const NAMES: [&'static str; 7] = [
        "click",
        "long click",
        "input",
        "check",
        "scroll up",
        "scroll down",
        "back",
    ];

    pub fn name(self) -> &'static str {
        match self {
            Operation::Click => "click",
            Operation::LongClick => "long click",
            Operation::Input => "input",
            Operation::Check => "check",
            Operation::ScrollUp => "scroll up",
            Operation::ScrollDown => "scroll down",
            Operation::Back => "back",
        }
    }

    /// Whether the operation is aimed at one widget.
    pub fn needs_widget(self) -> bool {
        matches!(
            self,
            Operation::Click | Operation::LongClick | Operation::Input | Operation::Check
        )
    }

    fn parse(s: &str) -> Option<Self> {
        let s: String = s
            .to_lowercase()
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { ' ' })
            .collect();
        let words: Vec<&str> = s.split_whitespace().collect();
        let has = |w: &str| words.contains(&w);
        Some(if has("back") || has("return") {
            Operation::Back
        } else if has("long") || has("longclick") || has("longpress") {
            Operation::LongClick
        } else if has("input") || has("type") || has("enter") || has("fill") {
            Operation::Input
        } else if has("check") || has("uncheck") || has("toggle") || has("tick") {
            Operation::Check
        } else if has("scroll") || has("swipe") {
            if has("up") {
                Operation::ScrollUp
            } else {
                Operation::ScrollDown
            }
        } else if has("click") || has("tap") || has("press") || has("open") || has("select") {
            Operation::Click
        } else {
            return None;
        })
    }
}

/// The answer to the explorer prompt: the next operation, the function under test and
/// what, if anything, looks wrong on the current screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionAnswer {
    pub operation: Operation,
    /// The widget number on the annotated screenshot.
    pub widget_id: Option<u32>,
    /// The widget's text as the model read it, checked against the hierarchy.
    pub widget_text: Option<String>,
    /// Text to type, for `input`.
    pub input: Option<String>,
    /// The function the model says this step tests ("function inquiry").
    pub function: Option<String>,
    /// Whether that function is finished with this step.
    pub function_done: bool,
    /// An intra-page bug the model sees on the current screen ("bug detect").
    pub screen_bug: Option<String>,
}

/// The answer to the text input query.
pub fn parse_input_answer(text: &str) -> Result<String> {
    let fields = Fields::read(text);
    let value = fields
        .get(&["input", "text", "input text", "value"])
        .map(str::to_owned)
        .or_else(|| {
            // A bare answer ("ann@example.com") is the text itself.
            let t = strip_fences(text).trim();
            (!t.is_empty() && !t.contains('\n')).then(|| unquote(t).to_owned())
        })
        .ok_or_else(|| Error::Answer {
            what: "text input",
            message: format!("no `Input:` line in {}", excerpt(text)),
        })?;
    Ok(value)
}

/// Reads the explorer answer.
pub fn parse_action_answer(text: &str) -> Result<ActionAnswer> {
    let fields = Fields::read(text);
    let bad = |message: String| Error::Answer {
        what: "action",
        message,
    };
    let op_text = fields
        .get(&["action", "operation", "action type"])
        .ok_or_else(|| bad(format!("no `Action:` line in {}", excerpt(text))))?;
    let operation = Operation::parse(op_text).ok_or_else(|| {
        bad(format!(
            "`{op_text}` is none of {}",
            Operation::NAMES.join(", ")
        ))
    })?;
    let widget_id = match fields.get(&["widget id", "widget", "id", "widget number"]) {
        None => None,
        Some(v) if is_none(v) || v.trim() == "-" => None,
        Some(v) => {
            Some(first_number(v).ok_or_else(|| bad(format!("widget id `{v}` is not a number")))?)
        }
    };
    if operation.needs_widget() && widget_id.is_none() {
        return Err(bad(format!(
            "`{}` needs a widget id; none in {}",
            operation.name(),
            excerpt(text)
        )));
    }
    let function = fields
        .get(&["function", "function name", "tested function"])
        .map(str::to_owned)
        .filter(|f| !f.is_empty());
    let status = fields
        .get(&["status", "function status"])
        .unwrap_or("")
        .to_lowercase();
    let screen_bug = fields
        .get(&["bug", "screen bug", "bugs"])
        .filter(|b| !is_none(b))
        .map(str::to_owned);
    Ok(ActionAnswer {
        operation,
        widget_id,
        widget_text: fields
            .get(&["widget text", "text"])
            .map(str::to_owned)
            .filter(|t| !is_none(t)),
        input: fields
            .get(&["input", "input text", "value"])
            .map(str::to_owned),
        function,
        function_done: status.contains("done")
            || status.contains("complete")
            || status.contains("finish"),
        screen_bug,
    })
}

/// The answer to the bug detection prompt for one sub-sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectAnswer {
    pub bug: bool,
    /// The step ids (as numbered in the prompt) where the bug shows.
    pub steps: Vec<u64>,
    pub category: Option<String>,
    pub description: String,
    pub reasoning: String,
}

pub fn parse_detect_answer(text: &str) -> Result<DetectAnswer> {
    let fields = Fields::read(text);
    let verdict = fields
        .get(&["bug", "has bug", "bug found", "verdict"])
        .ok_or_else(|| Error::Answer {
            what: "bug detection",
            message: format!("no `Bug:` line in {}", excerpt(text)),
        })?;
    let v = verdict.to_lowercase();
    let bug = !(v.starts_with("no") || v.starts_with("false") || v.starts_with("none"));
    let steps = fields
        .get(&["steps", "step", "bug step", "bug steps"])
        .map(numbers)
        .unwrap_or_default();
    Ok(DetectAnswer {
        bug,
        steps,
        category: fields.get(&["category", "type"]).map(str::to_owned),
        description: fields
            .get(&["description", "bug description"])
            .map(str::to_owned)
            .unwrap_or_else(|| {
                if bug {
                    verdict.to_owned()
                } else {
                    String::new()
                }
            }),
        reasoning: fields
            .get(&["reasoning", "reason", "explanation"])
            .map(str::to_owned)
            .unwrap_or_default(),
    })
}

/// `Key: value` lines (keys lowercased, `_`/`-` read as spaces, list bullets and
/// markdown emphasis dropped), or the members of a JSON object.
struct Fields(Vec<(String, String)>);

impl Fields {
    fn read(text: &str) -> Self {
        let body = strip_fences(text);
        if let Some(obj) = json_object(body) {
            let fields = obj
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::String(s) => s,
                        serde_json::Value::Null => String::new(),
                        serde_json::Value::Array(a) => a
                            .iter()
                            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                            .collect::<Vec<_>>()
                            .join(", "),
                        other => other.to_string(),
                    };
                    (norm_key(&k), v.trim().to_owned())
                })
                .collect();
            return Fields(fields);
        }
        let mut fields = Vec::new();
        for line in body.lines() {
            let line = line
                .trim()
                .trim_start_matches(['-', '*', '•', '>'])
                .trim()
                .replace("**", "");
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let key = norm_key(k);
            if key.is_empty() || key.split_whitespace().count() > 4 {
                continue;
            }
            fields.push((key, unquote(v.trim()).to_owned()));
        }
        Fields(fields)
    }

    /// The first field whose key is one of `keys`, in the order of `keys`.
    fn get(&self, keys: &[&str]) -> Option<&str> {
        keys.iter().find_map(|k| {
            self.0
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        })
    }
}

fn norm_key(k: &str) -> String {
    k.trim()
        .trim_matches(['"', '\'', '`', '*'])
        .to_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn json_object(text: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    match serde_json::from_str::<serde_json::Value>(text.get(start..=end)?) {
        Ok(serde_json::Value::Object(m)) => Some(m),
        _ => None,
    }
}

fn strip_fences(text: &str) -> &str {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let rest = rest.split_once('\n').map_or("", |(_, r)| r);
        return rest.trim_end().trim_end_matches("```");
    }
    t
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    for (a, b) in [('"', '"'), ('\'', '\''), ('`', '`'), ('“', '”')] {
        if let Some(inner) = s.strip_prefix(a).and_then(|r| r.strip_suffix(b)) {
            return inner;
        }
    }
    s
}

fn is_none(s: &str) -> bool {
    let s = s.trim().trim_end_matches('.').to_lowercase();
    s.is_empty() || ["none", "no", "n/a", "null", "nothing", "no bug"].contains(&s.as_str())
}

fn first_number(s: &str) -> Option<u32> {
    numbers(s).first().and_then(|&n| u32::try_from(n).ok())
}

fn numbers(s: &str) -> Vec<u64> {
    s.split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.parse().ok())
        .collect()
}

pub(crate) fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(160).collect();
    let more = if text.chars().count() > 160 {
        "..."
    } else {
        ""
    };
    format!("\"{}{more}\"", t.replace('\n', "\\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_answers_are_read() {
        let a = parse_action_answer(
            "Action: click\nWidget id: 7\nWidget text: \"Cart\"\nFunction: open the cart\nStatus: ongoing\nBug: none",
        )
        .unwrap();
        assert_eq!(a.operation, Operation::Click);
        assert_eq!(a.widget_id, Some(7));
        assert_eq!(a.widget_text.as_deref(), Some("Cart"));
        assert_eq!(a.function.as_deref(), Some("open the cart"));
        assert!(!a.function_done);
        assert_eq!(a.screen_bug, None);
    }

    #[test]
    fn json_fenced_and_prose_answers_are_read() {
        let a = parse_action_answer(
            "Sure! ```json\n{\"action\": \"input\", \"widget_id\": \"3\", \"widget_text\": \"Email\", \"input\": \"ann@example.com\", \"status\": \"completed\"}\n```",
        );
        // Prose before the fence: the JSON object is still found.
        let a = a.unwrap();
        assert_eq!(a.operation, Operation::Input);
        assert_eq!(a.input.as_deref(), Some("ann@example.com"));
        assert!(a.function_done);
        let b = parse_action_answer("I think we should go on.\n- **Action**: Scroll up\n").unwrap();
        assert_eq!(b.operation, Operation::ScrollUp);
        let c = parse_action_answer("Action: press the back button\nWidget id: none").unwrap();
        assert_eq!(c.operation, Operation::Back);
        assert_eq!(c.widget_id, None);
    }

    #[test]
    fn malformed_answers_say_what_is_missing() {
        let e = parse_action_answer("I would like to explore the settings.").unwrap_err();
        assert!(e.to_string().contains("no `Action:` line"), "{e}");
        let e = parse_action_answer("Action: click").unwrap_err();
        assert!(e.to_string().contains("needs a widget id"), "{e}");
        let e = parse_action_answer("Action: dance\nWidget id: 2").unwrap_err();
        assert!(e.to_string().contains("none of click"), "{e}");
        let e = parse_action_answer("Action: click\nWidget id: seven").unwrap_err();
        assert!(e.to_string().contains("not a number"), "{e}");
    }

    #[test]
    fn detection_answers() {
        let d = parse_detect_answer(
            "Bug: yes\nSteps: 4, 5\nCategory: numerical calculation error\nDescription: the total is $17.75 but the lines add up to $21.75\nReasoning: 2.50 + 12.00 + 7.25 = 21.75",
        )
        .unwrap();
        assert!(d.bug);
        assert_eq!(d.steps, vec![4, 5]);
        assert!(d.description.contains("17.75"));
        let n = parse_detect_answer("Bug: no\nReasoning: every step does what it says").unwrap();
        assert!(!n.bug);
        assert!(parse_detect_answer("Looks fine to me").is_err());
    }

    #[test]
    fn input_answers() {
        assert_eq!(parse_input_answer("Input: save10").unwrap(), "save10");
        assert_eq!(parse_input_answer("\"Buy milk\"").unwrap(), "Buy milk");
        assert!(parse_input_answer("").is_err());
    }
}
