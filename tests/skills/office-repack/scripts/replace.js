#!/usr/bin/env node
// Replace text in the runs (<w:t>) of an unpacked Word document, in place:
//   node replace.js FOLDER FIND REPLACEMENT
// Prints each part changed with its count of replacements.
const fs = require("fs");
const path = require("path");

function parts(folder) {
  const found = [];
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) found.push(...parts(full));
    else if (entry.name.endsWith(".xml")) found.push(full);
  }
  return found.sort();
}

function main() {
  const [folder, find, replacement] = process.argv.slice(2);
  if (!folder || !find || replacement === undefined) {
    console.error("usage: node replace.js FOLDER FIND REPLACEMENT");
    process.exit(2);
  }
  let total = 0;
  for (const part of parts(folder)) {
    const xml = fs.readFileSync(part, "utf8");
    let count = 0;
    const changed = xml.replace(/(<w:t(?: [^>]*)?>)([^<]*)(<\/w:t>)/g, (_, open, text, close) => {
      const pieces = text.split(find);
      count += pieces.length - 1;
      return open + pieces.join(replacement) + close;
    });
    if (count > 0) {
      fs.writeFileSync(part, changed);
      console.log(`${path.relative(folder, part)}: ${count} replaced`);
      total += count;
    }
  }
  console.log(`${total} replacement(s)`);
}

main();
