#!/usr/bin/env node
const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const text = Buffer.concat(chunks).toString("utf8");
  console.log(text.split("\n").filter(Boolean).map((line) => line.toUpperCase()).join("|"));
});
