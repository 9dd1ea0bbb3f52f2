// The `markdown` bundle: Markdown to plain text, and a document's outline.

import { InvalidInput, defineTool, exportTools, schema as s } from "cordon-sdk";

const FENCE = /^\s*(`{3,}|~{3,})/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;

/** The text of one line of inline Markdown. */
function inline(text, keepLinks) {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_, label, url) => (keepLinks ? `${label} (${url})` : label))
    .replace(/<([a-z]+:[^>\s]+)>/gi, "$1")
    .replace(/<\/?[a-z][^>]*>/gi, "")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(\*|_)(?=\S)(.+?)(?<=\S)\1/g, "$2")
    .replace(/~~(.+?)~~/g, "$1")
    .replace(/`([^`]+)`/g, "$1")
    .replace(/\\([\\`*_{}\[\]()#+\-.!])/g, "$1");
}

/** Walk the document's lines: `onLine(kind, text, level)` for each. */
function walk(markdown, onLine) {
  let fence = null;
  for (const raw of markdown.replace(/\r\n?/g, "\n").split("\n")) {
    const opened = raw.match(FENCE);
    if (fence !== null) {
      if (opened && opened[1][0] === fence[0] && opened[1].length >= fence.length) {
        fence = null;
      } else {
        onLine("code", raw, 0);
      }
      continue;
    }
    if (opened) {
      fence = opened[1];
      continue;
    }
    const heading = raw.match(HEADING);
    if (heading) {
      onLine("heading", heading[2], heading[1].length);
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(raw)) {
      onLine("blank", "", 0);
      continue;
    }
    if (/^\s*\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*\|?\s*$/.test(raw)) {
      continue;
    }
    const item = raw.match(/^(\s*)(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$/);
    if (item) {
      onLine("item", `${item[1]}- ${item[2]}`, 0);
      continue;
    }
    const quote = raw.match(/^\s*(?:>\s?)+(.*)$/);
    if (quote) {
      onLine("text", quote[1], 0);
      continue;
    }
    if (raw.includes("|") && /^\s*\|/.test(raw)) {
      const cells = raw.trim().replace(/^\||\|$/g, "").split("|").map((cell) => cell.trim());
      onLine("text", cells.join("\t"), 0);
      continue;
    }
    onLine(raw.trim() === "" ? "blank" : "text", raw.trim(), 0);
  }
}

const plain = defineTool({
  name: "markdown.plain",
  description:
    "Turn Markdown into plain text: markup removed, code kept, list items as `- `, headings as lines; with the word count and the headings.",
  input: s.object({
    markdown: s.string("The Markdown document."),
    keepLinks: s.optional(s.boolean("Write each link as `text (url)` instead of its text alone."), false),
  }),
  output: s.object({
    text: s.string(),
    words: s.integer(),
    headings: s.array(s.string()),
  }),
  annotations: { readOnly: true, idempotent: true },
  call({ markdown, keepLinks = false }) {
    if (markdown.length > 1_000_000) {
      throw new InvalidInput(`the document has ${markdown.length} characters; the limit is 1000000`);
    }
    const lines = [];
    const headings = [];
    walk(markdown, (kind, text) => {
      if (kind === "code") {
        lines.push(text);
      } else if (kind === "blank") {
        if (lines.length > 0 && lines[lines.length - 1] !== "") {
          lines.push("");
        }
      } else {
        const clean = inline(text, keepLinks);
        if (kind === "heading") {
          headings.push(clean);
        }
        lines.push(clean);
      }
    });
    while (lines.length > 0 && lines[lines.length - 1] === "") {
      lines.pop();
    }
    const text = lines.join("\n");
    const words = text.split(/\s+/).filter((word) => /[0-9A-Za-z\u00C0-\uFFFF]/.test(word)).length;
    return { text, words, headings };
  },
});

const outline = defineTool({
  name: "markdown.outline",
  description: "The headings of a Markdown document with their levels, skipping code blocks.",
  input: s.object({
    markdown: s.string("The Markdown document."),
    maxLevel: s.optional(s.integer("The deepest heading level to list, 1 to 6."), 6),
  }),
  annotations: { readOnly: true, idempotent: true },
  call({ markdown, maxLevel = 6 }) {
    if (!Number.isInteger(maxLevel) || maxLevel < 1 || maxLevel > 6) {
      throw new InvalidInput(`maxLevel must be 1 to 6, not ${maxLevel}`);
    }
    const found = [];
    walk(markdown, (kind, text, level) => {
      if (kind === "heading" && level <= maxLevel) {
        found.push({ level, title: inline(text, false) });
      }
    });
    return found;
  },
});

export const tool = exportTools(plain, outline);
