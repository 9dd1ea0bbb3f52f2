//! Content a tool's result carries beside its JSON, for MCP clients that show
//! it: text, images, audio and embedded resources, attached during the call
//! in the order they should appear. The host bounds them, with the JSON, by
//! the bundle's output limit; a block past it is refused with the reason.
//! A tool that attaches blocks and has nothing else to say returns `()`:
//! its JSON is `null`, and clients see the blocks alone.

use crate::bindings::cordon::plugin::content::{
    self as host, Block, Embedded, Media, ResourceBody,
};

/// Attach `text`.
pub fn text(text: &str) -> Result<(), String> {
    host::attach(&Block::Text(text.to_owned()))
}

/// Attach an image: its bytes and MIME type, such as `image/png`.
pub fn image(data: &[u8], mime_type: &str) -> Result<(), String> {
    host::attach(&Block::Image(media(data, mime_type)))
}

/// Attach audio: its bytes and MIME type, such as `audio/wav`.
pub fn audio(data: &[u8], mime_type: &str) -> Result<(), String> {
    host::attach(&Block::Audio(media(data, mime_type)))
}

/// Attach a resource holding `text`, named by `uri`.
pub fn resource_text(uri: &str, mime_type: Option<&str>, text: &str) -> Result<(), String> {
    host::attach(&Block::Embedded(Embedded {
        uri: uri.to_owned(),
        mime_type: mime_type.map(str::to_owned),
        body: ResourceBody::Text(text.to_owned()),
    }))
}

/// Attach a resource holding `data`, named by `uri`.
pub fn resource_blob(uri: &str, mime_type: Option<&str>, data: &[u8]) -> Result<(), String> {
    host::attach(&Block::Embedded(Embedded {
        uri: uri.to_owned(),
        mime_type: mime_type.map(str::to_owned),
        body: ResourceBody::Blob(data.to_vec()),
    }))
}

fn media(data: &[u8], mime_type: &str) -> Media {
    Media {
        data: data.to_vec(),
        mime_type: mime_type.to_owned(),
    }
}
