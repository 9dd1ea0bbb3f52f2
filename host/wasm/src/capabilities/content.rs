//! The content capability, which every tool call has: blocks a tool attaches
//! to its result beside the JSON (text, image, audio, an embedded resource).
//! They are bounded by the bundle's output limit; a block past it is refused
//! with the reason and the tool carries on. Only a tool call's result carries
//! content: a hook or a backend that imports the interface anyway is refused
//! at every attach. Bytes are kept as base64, as they travel.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use cordon_kernel::{ContentBlock, ResourceBody};
use wasmtime::component::{HasData, Linker};

use crate::bindings::cordon::plugin::content;
use crate::capabilities::unit::Imports;

/// One call's attached blocks and what they may still take.
pub(crate) struct ContentOutput {
    blocks: Vec<ContentBlock>,
    /// The bytes the blocks may take, or `None` for a call whose result
    /// carries no content.
    limit: Option<usize>,
    used: usize,
}

impl ContentOutput {
    /// A tool call's blocks, bounded by `limit` bytes in all.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            blocks: Vec::new(),
            limit: Some(limit),
            used: 0,
        }
    }

    /// For a call that is not a tool's: every attach is refused.
    pub(crate) fn refused() -> Self {
        Self {
            blocks: Vec::new(),
            limit: None,
            used: 0,
        }
    }

    /// The bytes the blocks take.
    pub(crate) fn size(&self) -> usize {
        self.used
    }

    /// Take out the blocks, in the order they were attached.
    pub(crate) fn take_blocks(&mut self) -> Vec<ContentBlock> {
        std::mem::take(&mut self.blocks)
    }

    fn attach(&mut self, block: ContentBlock) -> Result<(), String> {
        let Some(limit) = self.limit else {
            return Err("only a tool call's result carries content blocks".to_owned());
        };
        let size = block.size();
        if self.used + size > limit {
            return Err(format!(
                "the block ({size} bytes) would take the result's content past the bundle's output limit of {limit} bytes ({} used)",
                self.used
            ));
        }
        self.used += size;
        self.blocks.push(block);
        Ok(())
    }
}

/// `block` as the kernel keeps it.
fn kernel_block(block: content::Block) -> ContentBlock {
    match block {
        content::Block::Text(text) => ContentBlock::Text { text },
        content::Block::Image(media) => ContentBlock::Image {
            mime_type: media.mime_type,
            data: STANDARD.encode(media.data),
        },
        content::Block::Audio(media) => ContentBlock::Audio {
            mime_type: media.mime_type,
            data: STANDARD.encode(media.data),
        },
        content::Block::Embedded(resource) => ContentBlock::Resource {
            uri: resource.uri,
            mime_type: resource.mime_type,
            body: match resource.body {
                content::ResourceBody::Text(text) => ResourceBody::Text(text),
                content::ResourceBody::Blob(bytes) => ResourceBody::Blob(STANDARD.encode(bytes)),
            },
        },
    }
}

/// The content capability: blocks a tool attaches to its result.
pub(crate) struct Content;

impl HasData for Content {
    type Data<'a> = &'a mut ContentOutput;
}

impl Imports for Content {
    fn add_to_linker<T: Send + 'static>(
        linker: &mut Linker<T>,
        get: fn(&mut T) -> Self::Data<'_>,
    ) -> wasmtime::Result<()> {
        content::add_to_linker::<T, Self>(linker, get)?;
        Ok(())
    }
}

impl content::Host for &mut ContentOutput {
    async fn attach(&mut self, block: content::Block) -> wasmtime::Result<Result<(), String>> {
        Ok(ContentOutput::attach(self, kernel_block(block)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_order_and_stop_at_the_limit() {
        let mut output = ContentOutput::new(10);
        assert!(
            output
                .attach(ContentBlock::Text {
                    text: "hello".into()
                })
                .is_ok()
        );
        let refused = output
            .attach(ContentBlock::Text {
                text: "world!".into(),
            })
            .unwrap_err();
        assert!(refused.contains("output limit of 10 bytes"), "{refused}");
        assert!(
            output
                .attach(ContentBlock::Text { text: "abc".into() })
                .is_ok()
        );
        assert_eq!(output.size(), 8);
        let blocks = output.take_blocks();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[1], ContentBlock::Text { text: "abc".into() });
    }

    #[test]
    fn a_call_that_is_not_a_tools_attaches_nothing() {
        let mut output = ContentOutput::refused();
        let refused = output
            .attach(ContentBlock::Text { text: "x".into() })
            .unwrap_err();
        assert!(refused.contains("only a tool call"), "{refused}");
        assert!(output.take_blocks().is_empty());
    }

    #[test]
    fn bytes_travel_as_base64() {
        let block = kernel_block(content::Block::Image(content::Media {
            data: vec![0x89, b'P', b'N', b'G'],
            mime_type: "image/png".into(),
        }));
        assert_eq!(
            block,
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: "iVBORw==".into()
            }
        );
    }
}
