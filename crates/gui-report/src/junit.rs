use std::fmt::Write as _;

use crate::RunFolder;
use crate::escape::escape;
use crate::html::{kind_label, replay_command};

/// Test names are one line; long first lines of messages are cut here.
const NAME_CHARS: usize = 160;

/// JUnit XML in the common schema CI servers read: one `<testsuite>` per run (named
/// "strategy seed N"), with one `<testcase>` per distinct signal, failing with its message
/// and stack, and one `exploration` test case that fails when the run found a bug or did
/// not end normally (no `summary.json`).
pub fn junit_xml(runs: &[RunFolder]) -> String {
    let mut suites = String::new();
    let (mut tests, mut failures, mut time) = (0, 0, 0.0);
    for run in runs {
        let secs = run.duration_ms() as f64 / 1000.0;
        let classname = escape(&format!("gui-testing.{}", run.name().replace(' ', "_")));
        let mut cases = String::new();
        let mut suite_failures = 0;

        let problem = match (run.is_complete(), run.signals.len()) {
            (false, _) => Some(format!(
                "the run did not end normally: {} has no summary.json",
                run.dir.display()
            )),
            (true, 0) => None,
            (true, n) => Some(format!("{n} distinct signal(s) found")),
        };
        let _ = write!(
            cases,
            "    <testcase classname=\"{classname}\" name=\"exploration\" time=\"{secs:.3}\""
        );
        match problem {
            None => cases.push_str("/>\n"),
            Some(message) => {
                suite_failures += 1;
                let coverage = run.coverage().map_or(String::new(), |c| {
                    format!(
                        ", {} of {} functions covered",
                        c.functions_covered, c.functions_total
                    )
                });
                let detail = format!(
                    "{message}\n{} steps in {:.1} s{coverage}\nrun folder: {}",
                    run.step_count(),
                    secs,
                    run.dir.display()
                );
                let _ = write!(
                    cases,
                    ">\n      <failure message=\"{}\" type=\"exploration\">{}</failure>\n    </testcase>\n",
                    escape(&message),
                    escape(&detail)
                );
            }
        }

        for bug in &run.signals {
            suite_failures += 1;
            let first_line = bug.message.lines().next().unwrap_or("");
            let short: String = first_line.chars().take(NAME_CHARS).collect();
            let name = format!(
                "{}: {short} (step {})",
                kind_label(bug.kind),
                bug.first_step
            );
            let mut detail = bug.message.clone();
            detail.push('\n');
            for frame in &bug.stack {
                let _ = writeln!(detail, "    {frame}");
            }
            let _ = write!(
                detail,
                "first step: {}\nscreenshot: {}\nreplay: {}",
                bug.first_step,
                run.dir.join(&bug.screenshot).display(),
                replay_command(run, bug)
            );
            let _ = write!(
                cases,
                "    <testcase classname=\"{classname}\" name=\"{}\" time=\"0\">\n      \
                 <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                escape(&name),
                escape(first_line),
                kind_label(bug.kind).replace(' ', "_"),
                escape(&detail)
            );
        }

        let suite_tests = 1 + run.signals.len();
        let _ = write!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{suite_tests}\" failures=\"{suite_failures}\" \
             errors=\"0\" skipped=\"0\" time=\"{secs:.3}\">\n    <properties>\n      \
             <property name=\"run_dir\" value=\"{}\"/>\n      \
             <property name=\"strategy\" value=\"{}\"/>\n    </properties>\n{cases}  </testsuite>\n",
            escape(&run.name()),
            escape(&run.dir.display().to_string()),
            escape(run.strategy()),
        );
        tests += suite_tests;
        failures += suite_failures;
        time += secs;
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"gui-testing\" \
         tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" time=\"{time:.3}\">\n\
         {suites}</testsuites>\n"
    )
}
