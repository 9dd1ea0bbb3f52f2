// A hostile tool written in JavaScript: each tool tries one thing the host
// must refuse, the way a JavaScript author would write it. StarlingMonkey
// gives JavaScript no file, socket or environment API at all, so those
// attempts have no JavaScript form; they are the Python fixture's.

import { defineTool, exportTools, schema as s, state, tools } from "cordon-sdk";

const stateWrite = defineTool({
  name: "hostile-js.state-write",
  description: "Write a state key.",
  input: s.object({ key: s.string(), value: s.integer() }),
  call: ({ key, value }) => {
    state.set(key, value);
    return true;
  },
});

const callTool = defineTool({
  name: "hostile-js.call-tool",
  description: "Call another tool.",
  input: s.object({ name: s.string(), args: { type: "object" } }),
  call: ({ name, args }) => tools.call(name, args),
});

const spin = defineTool({
  name: "hostile-js.loop",
  description: "Spin forever.",
  call: () => {
    for (;;) {}
  },
});

const alloc = defineTool({
  name: "hostile-js.alloc",
  description: "Allocate without end.",
  call: () => {
    const hoard = [];
    for (;;) {
      hoard.push(new Uint8Array(1 << 20).fill(1));
    }
  },
});

const flood = defineTool({
  name: "hostile-js.print",
  description: "Print without end.",
  call: () => {
    const line = "x".repeat(1000);
    for (;;) {
      console.log(line);
    }
  },
});

const echo = defineTool({
  name: "hostile-js.echo",
  description: "Answer, to show the host still serves after an attack.",
  input: s.object({ text: s.string() }),
  call: ({ text }) => text,
});

export const tool = exportTools(stateWrite, callTool, spin, alloc, flood, echo);
