/// Makes any text safe inside HTML or XML, both as element content and as a quoted
/// attribute value (either quote). Every piece of text that comes from the app or the run
/// folder goes through here, and only here.
///
/// Besides the five markup characters, control characters that XML 1.0 forbids (and HTML
/// calls parse errors) become U+FFFD, so an app that logs terminal colour codes still
/// yields a well-formed JUnit file.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_characters_are_escaped() {
        assert_eq!(
            escape(r#"<script>alert("x" + 'y' & 1)</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; + &#39;y&#39; &amp; 1)&lt;/script&gt;"
        );
        // Already escaped text is escaped again, not trusted.
        assert_eq!(escape("&lt;"), "&amp;lt;");
    }

    #[test]
    fn forbidden_control_characters_are_replaced_and_whitespace_kept() {
        assert_eq!(
            escape("a\u{1b}[31mb\0\t\n\r"),
            "a\u{FFFD}[31mb\u{FFFD}\t\n\r"
        );
        assert_eq!(escape("ü → 😀"), "ü → 😀");
    }
}
