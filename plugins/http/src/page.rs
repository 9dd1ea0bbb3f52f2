//! A response body as the model reads it: JSON parsed, HTML reduced to
//! readable text with its links numbered and made absolute against the
//! page's URL (so the model can fetch one as it is), anything else as text.

use serde::Serialize;
use serde_json::Value;

/// Width the HTML text is wrapped to.
const HTML_WIDTH: usize = 100;

/// The readable form of a body.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Page {
    /// A JSON body, parsed.
    Json {
        /// The value.
        json: Value,
    },
    /// An HTML body as text, its links listed.
    Html {
        /// The page's text, each link marked `[N]`.
        text: String,
        /// The links, numbered as the text marks them.
        links: Vec<String>,
    },
    /// Any other body, as text.
    Text {
        /// The body, invalid UTF-8 replaced.
        text: String,
    },
}

/// Read `body` of type `content_type`, fetched from `url`; a `truncated`
/// JSON body is text.
pub(crate) fn read(body: &[u8], content_type: Option<&str>, truncated: bool, url: &str) -> Page {
    let kind = content_type
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if !truncated
        && (kind == "application/json" || kind.ends_with("+json"))
        && let Ok(json) = serde_json::from_slice(body)
    {
        return Page::Json { json };
    }
    if kind == "text/html" || kind == "application/xhtml+xml" {
        return html(body, url);
    }
    Page::Text {
        text: String::from_utf8_lossy(body).into_owned(),
    }
}

/// `body` as text with its links numbered and listed, each resolved
/// against `url`.
fn html(body: &[u8], url: &str) -> Page {
    let base = url::Url::parse(url).ok();
    let rendered = html2text::config::plain()
        .link_footnotes(true)
        .string_from_read(body, HTML_WIDTH);
    let Ok(rendered) = rendered else {
        return Page::Text {
            text: String::from_utf8_lossy(body).into_owned(),
        };
    };
    // The footnotes come last, one `[N]: URL` per line.
    let mut text = Vec::new();
    let mut links = Vec::new();
    for line in rendered.lines() {
        match line.split_once("]: ") {
            Some((number, link))
                if number.starts_with('[') && number[1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                let absolute = base.as_ref().and_then(|base| base.join(link).ok());
                links.push(absolute.map_or_else(|| link.to_owned(), String::from));
            }
            _ => text.push(line),
        }
    }
    Page::Html {
        text: text.join("\n").trim_end().to_owned(),
        links,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_links_are_numbered_and_made_absolute() {
        let body = br#"<p>See <a href="/data.json">the data</a> and <a href="https://other.test/x">more</a>.</p>"#;
        let Page::Html { text, links } = read(
            body,
            Some("text/html; charset=utf-8"),
            false,
            "http://site.test/docs/page.html",
        ) else {
            panic!("an HTML page");
        };
        assert_eq!(
            links,
            ["http://site.test/data.json", "https://other.test/x"]
        );
        assert!(
            text.contains("[the data][1]") && !text.contains("]: "),
            "{text}"
        );
    }

    #[test]
    fn json_is_parsed_unless_truncated_and_anything_else_is_text() {
        let body = br#"{"a": 1}"#;
        assert!(matches!(
            read(body, Some("application/json"), false, "http://x.test/"),
            Page::Json { .. }
        ));
        assert!(matches!(
            read(
                body,
                Some("application/problem+json"),
                false,
                "http://x.test/"
            ),
            Page::Json { .. }
        ));
        assert!(matches!(
            read(body, Some("application/json"), true, "http://x.test/"),
            Page::Text { .. }
        ));
        assert!(matches!(
            read(b"plain", None, false, "http://x.test/"),
            Page::Text { .. }
        ));
    }
}
