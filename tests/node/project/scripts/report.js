// CommonJS: sibling modules, JSON, fs, path, Buffer, argv and exitCode.
const fs = require("fs");
const path = require("path");
const { table, money } = require("../lib");
const meta = require("../data.json");

const [input, outDir] = process.argv.slice(2);
const rows = fs.readFileSync(input, "utf8").trim().split("\n").map((line) => line.split(","));
const [header, ...body] = rows;
const byRegion = {};
for (const [region, , units, price] of body) {
  byRegion[region] = (byRegion[region] || 0) + Number(units) * Number(price);
}
fs.mkdirSync(path.join(outDir, "deep"), { recursive: true });
const lines = [`# ${meta.title}`, "", table([["region", "revenue"], ...Object.entries(byRegion).map(([r, v]) => [r, money(v, meta.currency)])])];
fs.writeFileSync(path.join(outDir, "deep", "report.md"), lines.join("\n") + "\n");
fs.appendFileSync(path.join(outDir, "log.txt"), `rows=${body.length}\n`);
console.log(lines.join("\n"));
console.log(header, byRegion, { nested: { list: [1, "two", null, undefined, true] } });
console.log("%s has %d rows (%i%%)", path.basename(input, path.extname(input)), body.length, 99.5);
const encoded = Buffer.from("héllo wörld").toString("base64");
console.log(encoded, Buffer.from(encoded, "base64").toString(), Buffer.from("hi").toString("hex"));
console.log(path.relative("/a/b/c", "/a/d"), path.resolve("/x", "y", "../z"), path.parse("/p/q.tar.gz").name);
console.log(fs.readdirSync(outDir), fs.statSync(input).isFile(), fs.existsSync("missing"));
try {
  fs.readFileSync("missing.txt");
} catch (error) {
  console.log(error.code, error.syscall);
}
process.exitCode = body.length > 3 ? 2 : 0;
