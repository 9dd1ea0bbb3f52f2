//! Content a tool's result carries beside its JSON: text, images, audio and
//! embedded resources, which MCP clients show. The JSON stays what the model
//! observes and hooks judge; blocks travel with the call's record and reach
//! a client only when no after-tool-call hook is in force, since a hook sees
//! the JSON alone and cannot vouch for what it did not see.

use serde::{Deserialize, Serialize};

/// One block of content. Bytes travel as standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its MIME type, such as `image/png`.
        mime_type: String,
        /// Its bytes, base64.
        data: String,
    },
    /// Audio.
    Audio {
        /// Its MIME type, such as `audio/wav`.
        mime_type: String,
        /// Its bytes, base64.
        data: String,
    },
    /// An embedded resource.
    Resource {
        /// Its URI.
        uri: String,
        /// Its MIME type, when known.
        mime_type: Option<String>,
        /// Its text or its bytes.
        body: ResourceBody,
    },
}

/// What an embedded resource holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes, base64.
    Blob(String),
}

impl ContentBlock {
    /// The bytes the block takes, counted against a bundle's output limit.
    pub fn size(&self) -> usize {
        match self {
            Self::Text { text } => text.len(),
            Self::Image { mime_type, data } | Self::Audio { mime_type, data } => {
                mime_type.len() + data.len()
            }
            Self::Resource {
                uri,
                mime_type,
                body,
            } => {
                uri.len()
                    + mime_type.as_ref().map_or(0, String::len)
                    + match body {
                        ResourceBody::Text(text) | ResourceBody::Blob(text) => text.len(),
                    }
            }
        }
    }
}
