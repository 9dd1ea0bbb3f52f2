//! A response body as the model reads it: JSON parsed, HTML reduced to
//! readable text with its links numbered, anything else as text.

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

/// Read `body` of type `content_type`; a `truncated` JSON body is text.
pub(crate) fn read(body: &[u8], content_type: Option<&str>, truncated: bool) -> Page {
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
        return html(body);
    }
    Page::Text {
        text: String::from_utf8_lossy(body).into_owned(),
    }
}

/// `body` as text with its links numbered and listed.
fn html(body: &[u8]) -> Page {
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
            Some((number, url))
                if number.starts_with('[') && number[1..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                links.push(url.to_owned());
            }
            _ => text.push(line),
        }
    }
    Page::Html {
        text: text.join("\n").trim_end().to_owned(),
        links,
    }
}
