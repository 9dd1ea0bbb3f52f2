// An ES module: imports of built-ins and siblings, import.meta.url,
// top-level await, and the order Node runs microtasks, timers and
// immediates in.
import fs from "node:fs";
import { writeFile, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import parse, { total } from "../lib/sum.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const rows = parse(fs.readFileSync(path.join(here, "..", "input.csv"), "utf8"));
const order = [];
setTimeout(() => order.push("timeout"), 0);
setImmediate(() => order.push("immediate"));
Promise.resolve().then(() => order.push("microtask"));
process.nextTick(() => order.push("tick"));
order.push("sync");
await new Promise((resolve) => setTimeout(resolve, 20));
await writeFile("summary.json", JSON.stringify({ units: total(rows, "units"), rows: rows.length }, null, 2) + "\n");
const back = JSON.parse(await readFile("summary.json", "utf8"));
console.log(path.basename(here), back, order.includes("timeout"), order.slice(0, 2));
class Shape {
  #sides;
  constructor(sides) {
    this.#sides = sides;
  }
  get sides() {
    return this.#sides;
  }
}
const shapes = [3, 4, 6].map((n) => new Shape(n));
console.log(shapes.map((s) => s.sides).join(","), [..."abc"].reverse().join(""), 2n ** 64n, Object.entries({ a: 1 }).flat());
