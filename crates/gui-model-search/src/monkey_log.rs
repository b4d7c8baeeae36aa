//! Android Monkey's console output (`adb shell monkey -p pkg -v ... N`) read back into
//! events.
//!
//! Monkey only reports what it did on standard output, as text: the paper captured it
//! from a sub-process and picked the events out with regular expressions. This module does
//! the same with plain string handling, so that a log from any Monkey version is read as
//! far as it can be: a `:Sending ...` or `:Switch:` line that cannot be understood is kept
//! in [`MonkeyLog::malformed`] with the reason, and the rest of the log is still used.
//! Comment lines this reader does not know are ignored, because Monkey's comments vary
//! between Android releases and carry nothing the mapping needs.
//!
//! The raw events are low level (a tap is a DOWN and an UP); [`MonkeyLog::gestures`]
//! groups them into what a user would call one action, which is what gets mapped onto
//! the app model.

use serde::{Deserialize, Serialize};

/// How far (in pixels) a touch may wander between DOWN and UP and still be a tap. Android's
/// own touch slop is 8 dp, about this on a phone.
pub const DEFAULT_TAP_SLOP_PX: f64 = 10.0;

/// Everything read from one Monkey run's output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonkeyLog {
    /// The random seed (`:Monkey: seed=...`): with it the run can be repeated.
    pub seed: Option<u64>,
    /// The number of events asked for.
    pub count: Option<u64>,
    /// Packages Monkey was allowed to touch (`:AllowPackage:`).
    pub packages: Vec<String>,
    /// `// Event percentages:`, as (event type number, percent).
    pub percentages: Vec<(u32, f64)>,
    /// The events Monkey sent, in order.
    pub events: Vec<MonkeyEvent>,
    /// `Events injected: N`.
    pub injected: Option<u64>,
    /// `:Dropped: ...`: events the system refused.
    pub dropped: Option<Dropped>,
    /// From `## Network stats: elapsed time=...ms`.
    pub elapsed_ms: Option<u64>,
    /// `// Monkey finished` was seen: the run was not cut short.
    pub finished: bool,
    /// `** Monkey aborted ...` or `** System appears to have crashed ...` was seen.
    pub aborted: bool,
    /// Crashes and ANRs Monkey reported.
    pub crashes: Vec<MonkeyCrash>,
    /// Event lines that could not be read.
    pub malformed: Vec<Malformed>,
}

/// The `:Dropped:` statistics line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub keys: u64,
    pub pointers: u64,
    pub trackballs: u64,
    pub flips: u64,
    pub rotations: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrashKind {
    /// `// CRASH:`: an uncaught exception.
    Crash,
    /// `// NOT RESPONDING:`: an application not responding.
    Anr,
}

/// A crash or ANR report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonkeyCrash {
    pub kind: CrashKind,
    pub package: String,
    pub pid: Option<u32>,
    /// The `// Long Msg:` of a crash (its `// Short Msg:` if there is no long one), the
    /// `Reason:` of an ANR; empty when the report has none.
    pub message: String,
}

/// A line that looked like an event but could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Malformed {
    /// 1-based line number in the log.
    pub line: usize,
    pub text: String,
    pub reason: String,
}

/// The action of a touch or trackball event, as Monkey names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MotionAction {
    Down,
    Up,
    Move,
    Cancel,
    /// A second finger down (pinch zoom).
    PointerDown,
    PointerUp,
    /// Anything else (a hover, or a raw action number).
    Other(String),
}

/// One event line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MonkeyEvent {
    /// `:Switch:`: Monkey starts one of the allowed apps' launcher activities.
    /// `component` is the intent's `component=` (`pkg/.Activity`).
    Switch {
        component: Option<String>,
    },
    /// A touch screen event. For a multi-finger event this is the finger the action is
    /// about (the one going down or up), else the first one listed.
    Touch {
        action: MotionAction,
        pointer: u32,
        x: f64,
        y: f64,
    },
    /// A trackball movement (relative).
    Trackball {
        action: MotionAction,
        dx: f64,
        dy: f64,
    },
    /// A key press (`down`) or release; `name` is the `// KEYCODE_...` comment.
    Key {
        down: bool,
        code: u32,
        name: Option<String>,
    },
    Rotation {
        degree: u32,
        persist: bool,
    },
    /// The hardware keyboard opened or closed.
    Flip {
        open: bool,
    },
}

/// A user-level action made of one or more events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gesture {
    /// A touch that went down and up within the slop: a click where it went down.
    Tap {
        x: f64,
        y: f64,
    },
    /// A touch that moved further: a scroll or swipe, which clicks nothing.
    Drag {
        from: (f64, f64),
        to: (f64, f64),
    },
    /// A key pressed.
    Key {
        code: u32,
        name: Option<String>,
    },
    Switch {
        component: Option<String>,
    },
    /// Trackball motion, rotation, keyboard flip, multi-finger touch, cancelled touch.
    Other(String),
}

/// The Android key code of BACK.
pub const KEYCODE_BACK: u32 = 4;
/// The Android key code of HOME.
pub const KEYCODE_HOME: u32 = 3;

/// Reads Monkey's output. Never fails: what cannot be read is listed in
/// [`MonkeyLog::malformed`] (event lines) or ignored (anything else).
pub fn parse_monkey_log(text: &str) -> MonkeyLog {
    let mut log = MonkeyLog::default();
    let mut in_percentages = false;
    // The crash or ANR report being read, as an index into `log.crashes`.
    let mut open_report: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let mut bad = |reason: String| {
            log.malformed.push(Malformed {
                line: line_no,
                text: raw.to_string(),
                reason,
            })
        };

        if in_percentages {
            if let Some(p) = percentage(line) {
                log.percentages.push(p);
                continue;
            }
            in_percentages = false;
        }

        if let Some(rest) = line.strip_prefix(":Sending ") {
            open_report = None;
            match sending(rest) {
                Ok(e) => log.events.push(e),
                Err(reason) => bad(reason),
            }
        } else if let Some(rest) = line.strip_prefix(":Switch:") {
            open_report = None;
            match switch(rest.trim()) {
                Ok(e) => log.events.push(e),
                Err(reason) => bad(reason),
            }
        } else if line.starts_with(":Sending") {
            open_report = None;
            bad("no event after `:Sending`".into());
        } else if let Some(rest) = line.strip_prefix(":Monkey:") {
            for (k, v) in key_values(rest) {
                let slot = match k {
                    "seed" => &mut log.seed,
                    "count" => &mut log.count,
                    _ => continue,
                };
                match v.parse() {
                    Ok(n) => *slot = Some(n),
                    Err(_) => bad(format!("`{k}={v}` is not a whole number")),
                }
            }
        } else if let Some(rest) = line.strip_prefix(":AllowPackage:") {
            let p = rest.trim();
            if !p.is_empty() && !log.packages.iter().any(|q| q == p) {
                log.packages.push(p.to_string());
            }
        } else if let Some(rest) = line.strip_prefix(":Dropped:") {
            match dropped(rest) {
                Ok(d) => log.dropped = Some(d),
                Err(reason) => bad(reason),
            }
        } else if let Some(rest) = line.strip_prefix("Events injected:") {
            match rest.trim().parse() {
                Ok(n) => log.injected = Some(n),
                Err(_) => bad(format!("`{}` is not a count", rest.trim())),
            }
        } else if let Some(rest) = line.strip_prefix("## Network stats:") {
            log.elapsed_ms = rest
                .split_once("elapsed time=")
                .and_then(|(_, t)| t.split_once("ms"))
                .and_then(|(n, _)| n.trim().parse().ok());
        } else if line.starts_with("** Monkey aborted") || line.starts_with("** System appears") {
            log.aborted = true;
        } else if let Some(rest) = line.strip_prefix("//") {
            let c = rest.trim();
            if c == "Monkey finished" {
                log.finished = true;
            } else if c.starts_with("Event percentages") {
                in_percentages = true;
            } else if let Some(r) = c.strip_prefix("CRASH:") {
                log.crashes.push(report(CrashKind::Crash, r));
                open_report = Some(log.crashes.len() - 1);
            } else if let Some(r) = c.strip_prefix("NOT RESPONDING:") {
                log.crashes.push(report(CrashKind::Anr, r));
                open_report = Some(log.crashes.len() - 1);
            } else if let Some(at) = open_report {
                let crash = &mut log.crashes[at];
                if let Some(m) = c.strip_prefix("Long Msg:") {
                    crash.message = m.trim().to_string();
                } else if let Some(m) = c.strip_prefix("Short Msg:")
                    && crash.message.is_empty()
                {
                    crash.message = m.trim().to_string();
                }
            }
        } else if let (Some(at), Some(reason)) = (open_report, line.strip_prefix("Reason:")) {
            // An ANR report is followed by the activity manager's own lines.
            let crash = &mut log.crashes[at];
            if crash.kind == CrashKind::Anr && crash.message.is_empty() {
                crash.message = reason.trim().to_string();
            }
        }
    }
    log
}

/// `//   3: 15.0%`: one line under `// Event percentages:` (event type, percent).
fn percentage(line: &str) -> Option<(u32, f64)> {
    let rest = line.strip_prefix("//")?.trim();
    let (n, p) = rest.split_once(':')?;
    let p = p.trim().strip_suffix('%')?;
    Some((n.trim().parse().ok()?, p.trim().parse().ok()?))
}

/// `key=value` pairs separated by spaces or commas.
fn key_values(s: &str) -> impl Iterator<Item = (&str, &str)> {
    s.split([' ', ','])
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
}

fn dropped(s: &str) -> Result<Dropped, String> {
    let mut d = Dropped::default();
    let mut seen = 0;
    for (k, v) in key_values(s) {
        let slot = match k {
            "keys" => &mut d.keys,
            "pointers" => &mut d.pointers,
            "trackballs" => &mut d.trackballs,
            "flips" => &mut d.flips,
            "rotations" => &mut d.rotations,
            _ => continue,
        };
        *slot = v
            .parse()
            .map_err(|_| format!("`{k}={v}` is not a whole number"))?;
        seen += 1;
    }
    if seen == 0 {
        return Err("no counts in `:Dropped:`".into());
    }
    Ok(d)
}

/// `com.x (pid 1234)`.
fn report(kind: CrashKind, s: &str) -> MonkeyCrash {
    let s = s.trim();
    let (package, pid) = match s.split_once("(pid") {
        Some((p, rest)) => (
            p.trim(),
            rest.trim().trim_end_matches(')').trim().parse().ok(),
        ),
        None => (s, None),
    };
    MonkeyCrash {
        kind,
        package: package.to_string(),
        pid,
        message: String::new(),
    }
}

/// `#Intent;action=...;component=pkg/.Activity;end`
fn switch(s: &str) -> Result<MonkeyEvent, String> {
    let body = s
        .strip_prefix("#Intent;")
        .ok_or_else(|| "the switch is not an intent URI (`#Intent;...;end`)".to_string())?;
    let body = body
        .strip_suffix(";end")
        .or_else(|| (body == "end").then_some(""))
        .ok_or_else(|| "the intent URI does not end with `;end` (truncated?)".to_string())?;
    let component = body
        .split(';')
        .find_map(|kv| kv.strip_prefix("component="))
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok(MonkeyEvent::Switch { component })
}

/// What follows `:Sending `.
fn sending(s: &str) -> Result<MonkeyEvent, String> {
    if let Some(rest) = s.strip_prefix("Touch ") {
        let (action, pointers) = motion(rest)?;
        let want = match &action {
            MotionAction::Other(a) => a
                .strip_prefix("ACTION_POINTER_DOWN ")
                .or_else(|| a.strip_prefix("ACTION_POINTER_UP "))
                .and_then(|n| n.parse::<u32>().ok()),
            _ => None,
        };
        let &(pointer, x, y) = want
            .and_then(|id| pointers.iter().find(|p| p.0 == id))
            .unwrap_or(&pointers[0]);
        let action = match action {
            MotionAction::Other(a) if a.starts_with("ACTION_POINTER_DOWN") => {
                MotionAction::PointerDown
            }
            MotionAction::Other(a) if a.starts_with("ACTION_POINTER_UP") => MotionAction::PointerUp,
            a => a,
        };
        Ok(MonkeyEvent::Touch {
            action,
            pointer,
            x,
            y,
        })
    } else if let Some(rest) = s.strip_prefix("Trackball ") {
        let (action, pointers) = motion(rest)?;
        let (_, dx, dy) = pointers[0];
        Ok(MonkeyEvent::Trackball { action, dx, dy })
    } else if let Some(rest) = s.strip_prefix("Key ") {
        key(rest)
    } else if let Some(rest) = s.strip_prefix("rotation ") {
        let mut degree = None;
        let mut persist = None;
        for (k, v) in key_values(rest) {
            match k {
                "degree" => {
                    degree = Some(v.parse().map_err(|_| format!("bad rotation `{v}`"))?);
                }
                "persist" => persist = Some(boolean(v)?),
                _ => {}
            }
        }
        Ok(MonkeyEvent::Rotation {
            degree: degree.ok_or("rotation without `degree=`")?,
            persist: persist.unwrap_or(false),
        })
    } else if let Some(rest) = s.strip_prefix("Flip ") {
        let open = key_values(rest)
            .find(|(k, _)| *k == "keyboardOpen")
            .ok_or("flip without `keyboardOpen=`")?
            .1;
        Ok(MonkeyEvent::Flip {
            open: boolean(open)?,
        })
    } else {
        let kind = s.split_whitespace().next().unwrap_or("");
        Err(format!("unknown event type `{kind}`"))
    }
}

fn boolean(v: &str) -> Result<bool, String> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("`{v}` is not true or false")),
    }
}

/// A finger (or the trackball) in a motion line: its id and coordinates.
type Pointer = (u32, f64, f64);

/// `(ACTION_DOWN): 0:(540.0,960.0) 1:(...)` — the action and the pointers.
fn motion(s: &str) -> Result<(MotionAction, Vec<Pointer>), String> {
    let s = s
        .strip_prefix('(')
        .ok_or("no `(ACTION_...)` after the event type")?;
    let (action, pointers) = s
        .split_once("):")
        .ok_or("the action is not closed by `):`")?;
    let action = match action.trim() {
        "ACTION_DOWN" => MotionAction::Down,
        "ACTION_UP" => MotionAction::Up,
        "ACTION_MOVE" => MotionAction::Move,
        "ACTION_CANCEL" => MotionAction::Cancel,
        "" => return Err("empty action".into()),
        other => MotionAction::Other(other.to_string()),
    };
    let mut out = Vec::new();
    for p in pointers.split_whitespace() {
        let bad = || format!("pointer `{p}` is not `id:(x,y)`");
        let (id, xy) = p.split_once(':').ok_or_else(bad)?;
        let xy = xy
            .strip_prefix('(')
            .and_then(|xy| xy.strip_suffix(')'))
            .ok_or_else(bad)?;
        let (x, y) = xy.split_once(',').ok_or_else(bad)?;
        let id: u32 = id.parse().map_err(|_| bad())?;
        let x: f64 = x.trim().parse().map_err(|_| bad())?;
        let y: f64 = y.trim().parse().map_err(|_| bad())?;
        if !x.is_finite() || !y.is_finite() {
            return Err(bad());
        }
        out.push((id, x, y));
    }
    if out.is_empty() {
        return Err("no pointer coordinates".into());
    }
    Ok((action, out))
}

/// `(ACTION_DOWN): 4    // KEYCODE_BACK`
fn key(s: &str) -> Result<MonkeyEvent, String> {
    let (head, name) = match s.split_once("//") {
        Some((h, n)) => (h, Some(n.trim().to_string()).filter(|n| !n.is_empty())),
        None => (s, None),
    };
    let (action, code) = head
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.split_once("):"))
        .ok_or("no `(ACTION_...):` after `Key`")?;
    let down = match action.trim() {
        "ACTION_DOWN" => true,
        "ACTION_UP" => false,
        a => return Err(format!("unknown key action `{a}`")),
    };
    let code = code.trim();
    let code = code
        .parse()
        .map_err(|_| format!("key code `{code}` is not a number"))?;
    Ok(MonkeyEvent::Key { down, code, name })
}

/// A touch in progress while grouping.
struct Pending {
    from: (f64, f64),
    last: (f64, f64),
    furthest: f64,
    fingers: bool,
}

impl Pending {
    fn new(x: f64, y: f64) -> Pending {
        Pending {
            from: (x, y),
            last: (x, y),
            furthest: 0.0,
            fingers: false,
        }
    }

    fn moved(&mut self, x: f64, y: f64) {
        self.last = (x, y);
        let d = ((x - self.from.0).powi(2) + (y - self.from.1).powi(2)).sqrt();
        self.furthest = self.furthest.max(d);
    }

    fn end(self, slop: f64) -> Gesture {
        if self.fingers {
            Gesture::Other("multi-finger touch".into())
        } else if self.furthest < slop {
            Gesture::Tap {
                x: self.from.0,
                y: self.from.1,
            }
        } else {
            Gesture::Drag {
                from: self.from,
                to: self.last,
            }
        }
    }
}

impl MonkeyLog {
    /// The events grouped into gestures with the default tap slop
    /// ([`DEFAULT_TAP_SLOP_PX`]).
    pub fn gestures(&self) -> Vec<Gesture> {
        self.gestures_with_slop(DEFAULT_TAP_SLOP_PX)
    }

    /// The events grouped into gestures: a touch from DOWN to UP is a tap if it never
    /// went `slop` pixels from where it went down, else a drag; a touch still down when
    /// something else happens (or the log ends) is closed there, because the finger must
    /// have lifted for Monkey to go on; a key counts once, when pressed; a run of
    /// trackball events is one gesture. A MOVE or UP without a DOWN (the DOWN was
    /// dropped or malformed) is left out.
    pub fn gestures_with_slop(&self, slop: f64) -> Vec<Gesture> {
        let mut out = Vec::new();
        let mut touch: Option<Pending> = None;
        let mut trackball = 0usize;
        for e in &self.events {
            if !matches!(e, MonkeyEvent::Touch { .. })
                && let Some(t) = touch.take()
            {
                out.push(t.end(slop));
            }
            if !matches!(e, MonkeyEvent::Trackball { .. }) && trackball > 0 {
                out.push(Gesture::Other(format!("trackball ({trackball} events)")));
                trackball = 0;
            }
            match e {
                MonkeyEvent::Touch { action, x, y, .. } => match action {
                    MotionAction::Down => {
                        if let Some(t) = touch.replace(Pending::new(*x, *y)) {
                            out.push(t.end(slop));
                        }
                    }
                    MotionAction::Move => {
                        if let Some(t) = &mut touch {
                            t.moved(*x, *y);
                        }
                    }
                    MotionAction::Up => {
                        if let Some(mut t) = touch.take() {
                            t.moved(*x, *y);
                            out.push(t.end(slop));
                        }
                    }
                    MotionAction::Cancel => {
                        if touch.take().is_some() {
                            out.push(Gesture::Other("cancelled touch".into()));
                        }
                    }
                    MotionAction::PointerDown | MotionAction::PointerUp => {
                        if let Some(t) = &mut touch {
                            t.fingers = true;
                        }
                    }
                    MotionAction::Other(_) => {}
                },
                MonkeyEvent::Trackball { .. } => trackball += 1,
                MonkeyEvent::Key { down, code, name } => {
                    if *down {
                        out.push(Gesture::Key {
                            code: *code,
                            name: name.clone(),
                        });
                    }
                }
                MonkeyEvent::Switch { component } => out.push(Gesture::Switch {
                    component: component.clone(),
                }),
                MonkeyEvent::Rotation { degree, .. } => {
                    out.push(Gesture::Other(format!("rotation {degree}")));
                }
                MonkeyEvent::Flip { open } => out.push(Gesture::Other(if *open {
                    "keyboard opened".into()
                } else {
                    "keyboard closed".into()
                })),
            }
        }
        if let Some(t) = touch {
            out.push(t.end(slop));
        }
        if trackball > 0 {
            out.push(Gesture::Other(format!("trackball ({trackball} events)")));
        }
        out
    }
}
