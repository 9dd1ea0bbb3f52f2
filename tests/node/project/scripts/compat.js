// Habits of real scripts and packages: promisified timers, inspect's
// depth, classes, old-style inheritance, encodings, packages, asserts.
const util = require("util");
const fs = require("fs");
const assert = require("assert");
const EventEmitter = require("events");
const tabulate = require("tabulate");
const units = require("@acme/units");

function Legacy() {
  EventEmitter.call(this);
  this.name = "legacy";
}
util.inherits(Legacy, EventEmitter);
const legacy = new Legacy();
legacy.on("ping", (n) => console.log("pong", n, legacy.name));
legacy.emit("ping", 1);

class Shape {}
class Square extends Shape {}
console.log(Shape, Square, [Square]);
console.log(util.inspect({ a: { b: { c: {} } } }), util.inspect({ a: { b: { c: {} } } }, { depth: null }));
console.log("50%%", util.format("%s=%d", "n", 4), util.format("%j", { ok: true }));
console.log(tabulate([["a", 1], ["b", 2]]), units.kind, units.km(1500));
fs.writeFileSync("encoded.txt", Buffer.from("base64 text").toString("base64"), "utf8");
fs.writeFileSync("decoded.txt", fs.readFileSync("encoded.txt", "utf8"), "base64");
try {
  fs.renameSync("nothing-here", "elsewhere");
} catch (error) {
  console.log(error.message, error.code);
}
assert.throws(() => {
  throw new TypeError("wrong");
}, TypeError);
assert.throws(() => assert.strict.equal(1, "1"), assert.AssertionError);
const template = `
import React from "react";
export default function App() {}
`;
console.log(template.split("\n").length, "x\uD83Dy");
setTimeout(() => console.log("never: unref'd"), 100000).unref();
setTimeout(() => console.log("clamped"), Infinity);
const sleep = util.promisify(setTimeout);
sleep(5).then(() => console.log("slept"));
require("timers/promises").setTimeout(1, "value").then((v) => console.log("timers/promises", v));
