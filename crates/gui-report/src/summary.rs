use serde_json::{Value, json};

use crate::RunFolder;
use crate::html::{json_name, replay_command};

/// Exit code of a report over runs that found no bug.
pub const EXIT_CLEAN: i32 = 0;
/// Exit code of a report over runs of which at least one found a bug.
pub const EXIT_BUGS: i32 = 1;

/// The CI verdict: [`EXIT_BUGS`] when any run has a distinct signal of any kind (uncaught
/// exception, console error, crash, functional bug), else [`EXIT_CLEAN`]. A run that was
/// killed is not a bug by itself; it shows as `"complete": false` and as a failing
/// `exploration` test case in JUnit.
pub fn exit_code(runs: &[RunFolder]) -> i32 {
    if runs.iter().any(RunFolder::has_bugs) {
        EXIT_BUGS
    } else {
        EXIT_CLEAN
    }
}

/// A machine-readable digest of the runs: per run its settings, totals, how often the
/// device handled each kind of device event (`device_events`, every kind named by
/// `DeviceEventKind::name`) and bugs (each with the replay command), plus the exit code.
pub fn json_summary(runs: &[RunFolder]) -> Value {
    let runs_json: Vec<Value> = runs
        .iter()
        .map(|run| {
            let bugs: Vec<Value> = run
                .signals
                .iter()
                .map(|b| {
                    json!({
                        "key": b.key,
                        "kind": b.kind,
                        "message": b.message,
                        "stack": b.stack,
                        "first_step": b.first_step,
                        "occurrences": run.occurrences(&b.key),
                        "screenshot": run.dir.join(&b.screenshot),
                        "replay": replay_command(run, b),
                    })
                })
                .collect();
            json!({
                "dir": run.dir,
                "name": run.name(),
                "strategy": run.strategy(),
                "seed": run.seed(),
                "complete": run.is_complete(),
                "steps": run.step_count(),
                "duration_ms": run.duration_ms(),
                "stopped_because": run.summary.as_ref().map(|s| json_name(&s.stopped_because)),
                "coverage": run.coverage(),
                "unique_signals": run.signals.len(),
                "failed_actions": run.summary.as_ref().map(|s| s.failed_actions),
                "device_restarts": run.summary.as_ref().map(|s| s.device_restarts),
                // Handled for the app, not bugs: no part of the verdict.
                "device_events": run
                    .device_event_counts()
                    .into_iter()
                    .map(|(kind, n)| (kind.name().to_owned(), Value::from(n)))
                    .collect::<serde_json::Map<_, _>>(),
                "pages": run.pages(),
                "bugs": bugs,
            })
        })
        .collect();
    json!({
        "format": "gui-testing-report",
        "format_version": 1,
        "exit_code": exit_code(runs),
        "unique_signals": runs.iter().map(|r| r.signals.len()).sum::<usize>(),
        "runs": runs_json,
    })
}
