//! The wire: W3C WebDriver commands as JSON over blocking HTTP, each bounded by a timeout.

use std::time::Duration;

use serde_json::Value;

use crate::{Error, Result};

/// Bodies larger than this are refused (a 4K screenshot in base64 is about 20 MB).
const BODY_LIMIT: u64 = 256 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    Get,
    Post,
    Delete,
}

impl Verb {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Delete => "DELETE",
        }
    }
}

/// One WebDriver endpoint (`http://host:port` or a grid's `.../wd/hub`).
pub(super) struct Client {
    agent: ureq::Agent,
    endpoint: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Client {
    pub(super) fn new(endpoint: &str) -> Self {
        let agent = ureq::Agent::config_builder()
            // WebDriver reports its errors as JSON bodies with 4xx/5xx statuses.
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            agent,
            endpoint: endpoint.trim_end_matches('/').to_owned(),
        }
    }

    pub(super) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Sends one command and returns its `value`. `what` names the command in errors.
    ///
    /// A connection that fails is a lost device (the endpoint or the session's browser is
    /// gone), a request that outlives `timeout` a [`Error::Timeout`]; both make the loop
    /// restart the device.
    pub(super) fn send(
        &self,
        verb: Verb,
        path: &str,
        body: Option<&Value>,
        what: &str,
        timeout: Duration,
    ) -> Result<Value> {
        let url = format!("{}{path}", self.endpoint);
        let transport = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => Error::Timeout {
                method: what.to_owned(),
                after: timeout,
            },
            e => Error::DeviceLost {
                what: format!("WebDriver endpoint {} unreachable: {e}", self.endpoint),
            },
        };
        let response = match verb {
            Verb::Get => self
                .agent
                .get(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
            Verb::Delete => self
                .agent
                .delete(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
            Verb::Post => self
                .agent
                .post(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .header("content-type", "application/json; charset=utf-8")
                .send(
                    serde_json::to_vec(body.unwrap_or(&Value::Object(Default::default())))
                        .expect("JSON serialises"),
                ),
        };
        let mut response = response.map_err(transport)?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_string()
            .map_err(transport)?;
        let value: Value = serde_json::from_str(&text).map_err(|e| Error::BadReply {
            method: what.to_owned(),
            detail: format!("HTTP {status}, not JSON ({e}): {}", excerpt(&text)),
        })?;
        if (200..300).contains(&status) {
            // W3C answers `{value}`; old JSON-wire endpoints put a non-zero `status` beside it.
            match value.get("status").and_then(Value::as_u64) {
                Some(code) if code != 0 => {
                    return Err(command_error(
                        what,
                        &format!("status {code}"),
                        value["value"]["message"].as_str().unwrap_or(""),
                        timeout,
                    ));
                }
                _ => return Ok(value.get("value").cloned().unwrap_or(value)),
            }
        }
        let error = value["value"]["error"].as_str().unwrap_or("unknown error");
        let message = value["value"]["message"].as_str().unwrap_or(&text);
        Err(command_error(
            what,
            error,
            &format!("HTTP {status}: {message}"),
            timeout,
        ))
    }
}

/// The [`Error`] for a WebDriver error answer: `error` is the W3C error code.
fn command_error(what: &str, error: &str, message: &str, timeout: Duration) -> Error {
    // chromedriver appends "(Session info: ...)" and a native stack; the first line says it.
    let first = message.lines().next().unwrap_or("").trim();
    let lost = matches!(error, "invalid session id" | "no such window")
        || [
            "not reachable",
            "disconnected",
            "session deleted",
            "crashed",
            "no such session",
        ]
        .iter()
        .any(|s| first.contains(s));
    if lost {
        return Error::DeviceLost {
            what: format!("{what}: {error}: {first}"),
        };
    }
    if error == "timeout" || error == "script timeout" {
        return Error::Timeout {
            method: what.to_owned(),
            after: timeout,
        };
    }
    Error::Protocol {
        method: what.to_owned(),
        message: format!("{error}: {first}"),
    }
}

/// At most 300 characters of a body, for error messages.
pub(super) fn excerpt(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= 300 {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(297).collect();
    s.push_str("...");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_answers_map_to_device_errors() {
        let t = Duration::from_secs(1);
        assert!(command_error("x", "invalid session id", "invalid session id", t).is_device_lost());
        assert!(
            command_error(
                "x",
                "unknown error",
                "HTTP 500: unknown error: session deleted as the browser has closed the connection\nfrom disconnected",
                t
            )
            .is_device_lost()
        );
        assert!(matches!(
            command_error("x", "script timeout", "HTTP 500: slow", t),
            Error::Timeout { .. }
        ));
        match command_error(
            "POST …/goog/cdp/execute",
            "unknown command",
            "HTTP 404: unknown command: 'Nope.x' wasn't found\n  (Session info: chrome=156)",
            t,
        ) {
            Error::Protocol { message, .. } => {
                assert_eq!(
                    message,
                    "unknown command: HTTP 404: unknown command: 'Nope.x' wasn't found"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
