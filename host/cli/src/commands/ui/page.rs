//! The page itself: plain HTML, CSS and a little JavaScript, built into the
//! binary. It loads nothing from the network, and its policy forbids it to:
//! scripts, styles and requests come from the inspector alone, and nothing
//! it shows from the store is ever markup.

/// A file of the page: its type and its bytes.
pub(crate) struct Asset {
    pub(crate) kind: &'static str,
    pub(crate) body: &'static str,
}

/// The file at `path`, if it is one of the page's.
pub(crate) fn asset(path: &str) -> Option<Asset> {
    let (kind, body) = match path {
        "/" | "/index.html" => ("text/html; charset=utf-8", include_str!("page/index.html")),
        "/app.js" => (
            "text/javascript; charset=utf-8",
            include_str!("page/app.js"),
        ),
        "/app.css" => ("text/css; charset=utf-8", include_str!("page/app.css")),
        _ => return None,
    };
    Some(Asset { kind, body })
}

/// The policy every answer carries: nothing but the inspector's own
/// scripts, styles and requests, and no framing by another page.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";
