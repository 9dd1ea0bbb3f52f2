// The JavaScript SDK's pure part: declarations, schemas, and how a call's
// outcome maps to the tool contract. Runs under Node: `node --test sdk/js/tests`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Denied, InvalidInput, StateError, defineTool, exportTools, run, schema as s } from "../core.js";

const echo = defineTool({
  name: "demo.echo",
  description: "Echo a text.",
  input: s.object({ text: s.string("The text."), times: s.optional(s.integer(), 1) }),
  annotations: { readOnly: true },
  call: ({ text, times = 1 }) => text.repeat(times),
});

test("object schemas list required properties and keep defaults of optional ones", () => {
  assert.deepEqual(echo.input, {
    type: "object",
    properties: { text: { type: "string", description: "The text." }, times: { type: "integer", default: 1 } },
    required: ["text"],
    additionalProperties: false,
  });
  assert.deepEqual(s.oneOf(["a", "b"]), { enum: ["a", "b"] });
  assert.deepEqual(s.array(s.number()), { type: "array", items: { type: "number" } });
});

test("describe reports each tool with its schema as JSON text and its annotations", () => {
  const [spec] = exportTools(echo).describe();
  assert.equal(spec.name, "demo.echo");
  assert.deepEqual(JSON.parse(spec.inputSchema), echo.input);
  assert.equal(spec.outputSchema, undefined);
  assert.deepEqual(spec.annotations, { readOnly: true, destructive: false, idempotent: false, openWorld: false });
});

test("names, descriptions and call functions are checked", () => {
  assert.throws(() => defineTool({ name: "echo", description: "x", call() {} }), /must be `bundle.tool`/);
  assert.throws(() => defineTool({ name: "Demo.echo", description: "x", call() {} }), /must be `bundle.tool`/);
  assert.throws(() => defineTool({ name: "demo.echo", description: " ", call() {} }), /needs a description/);
  assert.throws(() => defineTool({ name: "demo.echo", description: "x" }), /needs a `call` function/);
  assert.throws(() => exportTools(echo, echo), /exported twice/);
});

test("a call returns JSON, and thrown errors keep their kind", () => {
  assert.deepEqual(run(echo, "demo.echo", '{"text":"ab","times":2}'), ["ok", '"abab"']);
  const refusing = defineTool({ name: "demo.no", description: "No.", call: () => { throw new Denied("not today"); } });
  assert.deepEqual(run(refusing, "demo.no", "{}"), ["denied", "not today"]);
  const picky = defineTool({ name: "demo.picky", description: "Picky.", call: () => { throw new InvalidInput("bad"); } });
  assert.deepEqual(run(picky, "demo.picky", "{}"), ["invalid-input", "bad"]);
});

test("bugs fail, uncaught state errors are denied or failed, unknown tools and bad JSON are invalid input", () => {
  const buggy = defineTool({ name: "demo.bug", description: "Bug.", call: () => null.x });
  const [kind, message] = run(buggy, "demo.bug", "{}");
  assert.equal(kind, "failed");
  assert.match(message, /TypeError/);
  const nosy = defineTool({ name: "demo.nosy", description: "Nosy.", call: () => { throw new StateError("undeclared", "x"); } });
  assert.equal(run(nosy, "demo.nosy", "{}")[0], "denied");
  const clash = defineTool({ name: "demo.clash", description: "Clash.", call: () => { throw new StateError("conflict", "x"); } });
  assert.equal(run(clash, "demo.clash", "{}")[0], "failed");
  assert.deepEqual(run(undefined, "demo.none", "{}"), ["invalid-input", "unknown tool demo.none"]);
  assert.equal(run(echo, "demo.echo", "not json")[0], "invalid-input");
  const unserialisable = defineTool({ name: "demo.fn", description: "Fn.", call: () => () => 1 });
  assert.deepEqual(run(unserialisable, "demo.fn", "{}"), ["failed", "output of demo.fn is not JSON"]);
});

test("the component export throws tool errors as the contract's variant", () => {
  const exported = exportTools(echo);
  assert.deepEqual(exported.call("demo.echo", '{"text":"x"}'), { content: '"x"' });
  assert.throws(() => exported.call("demo.none", "{}"), (thrown) => thrown.tag === "invalid-input");
});

test("an async tool's promise settles to the same outcomes, and the export hands it on", async () => {
  const later = defineTool({ name: "demo.later", description: "Later.", call: async ({ text }) => text + "!" });
  assert.deepEqual(await run(later, "demo.later", '{"text":"hi"}'), ["ok", '"hi!"']);
  const refusing = defineTool({ name: "demo.nolater", description: "No.", call: async () => { throw new Denied("not today"); } });
  assert.deepEqual(await run(refusing, "demo.nolater", "{}"), ["denied", "not today"]);
  const failing = defineTool({ name: "demo.broken", description: "Broken.", call: () => Promise.reject(new TypeError("fetch failed")) });
  assert.deepEqual(await run(failing, "demo.broken", "{}"), ["failed", "TypeError: fetch failed"]);
  const exported = exportTools(later, refusing);
  assert.deepEqual(await exported.call("demo.later", '{"text":"a"}'), { content: '"a!"' });
  await assert.rejects(exported.call("demo.nolater", "{}"), (thrown) => {
    assert.deepEqual(thrown, { tag: "denied", val: "not today" });
    return true;
  });
});
