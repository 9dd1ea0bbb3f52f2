// Cordon's SDK for tools written in JavaScript.
//
// A tool is an object with a name (`BUNDLE.tool`), a description, a declared
// JSON Schema for its arguments and a `call` function; `exportTools` turns a
// list of them into the component's `tool` export:
//
//     import { defineTool, exportTools, schema as s, InvalidInput } from "cordon-sdk";
//
//     const shout = defineTool({
//       name: "text.shout",
//       description: "Upper-case a text.",
//       input: s.object({ text: s.string("The text.") }),
//       annotations: { readOnly: true, idempotent: true },
//       call: ({ text }) => text.toUpperCase(),
//     });
//
//     export const tool = exportTools(shout);
//
// Build it with componentize-js against Cordon's `tool-plugin` world (`cordon
// build` does that from the bundle's `[build]` table). The host validates the
// arguments against the schema before `call` runs; whatever `call` returns is
// sent back as JSON. Throw `InvalidInput`, `Denied`, `Failed` or `Timeout`
// for a typed tool error; anything else thrown becomes `failed`.

import * as hostState from "cordon:plugin/state@0.1.0";
import * as hostLog from "cordon:plugin/log@0.1.0";
import * as hostConfig from "cordon:plugin/config@0.1.0";
import * as hostTools from "cordon:plugin/tools@0.1.0";
import { Denied, Failed, InvalidInput, StateError, Timeout } from "./core.js";

export * from "./core.js";

// The engine the component runs on, which a QuickJS build sets with esbuild's
// `--define:CORDON_JS_ENGINE='"quickjs"'`: QuickJS's bindings take 64-bit
// integers as Numbers, StarlingMonkey's as BigInts.
/* global CORDON_JS_ENGINE */
const QUICKJS = typeof CORDON_JS_ENGINE !== "undefined" && CORDON_JS_ENGINE === "quickjs";

/** `value` as the engine's bindings take a WIT `s64` or `u64`. */
function int64(value) {
  return QUICKJS ? Number(value) : BigInt(value);
}

function hostCall(operation) {
  try {
    return operation();
  } catch (error) {
    const payload = error?.payload ?? error;
    if (payload && typeof payload.tag === "string") {
      throw new StateError(payload.tag, payload.val);
    }
    throw error;
  }
}

/** The agent's typed state, as the bundle's manifest grants it. Values are JSON. */
export const state = {
  get(key, fallback = undefined) {
    const value = hostCall(() => hostState.get(key));
    return value === undefined || value === null ? fallback : JSON.parse(value);
  },
  set: (key, value) => hostCall(() => hostState.set(key, JSON.stringify(value))),
  remove: (key) => hostCall(() => hostState.remove(key)),
  increment: (key, delta = 1) => Number(hostCall(() => hostState.increment(key, int64(delta)))),
  append: (key, item) => hostCall(() => hostState.append(key, JSON.stringify(item))),
  insert: (key, item) => hostCall(() => hostState.insert(key, JSON.stringify(item))),
  setField: (key, field, value) => hostCall(() => hostState.setField(key, field, JSON.stringify(value))),
  removeField: (key, field) => hostCall(() => hostState.removeField(key, field)),
};

/** Messages and progress for the operator. */
export const log = {
  trace: (message) => hostLog.log("trace", String(message)),
  debug: (message) => hostLog.log("debug", String(message)),
  info: (message) => hostLog.log("info", String(message)),
  warn: (message) => hostLog.log("warn", String(message)),
  error: (message) => hostLog.log("error", String(message)),
  progress: (done, total, message = "") =>
    hostLog.progress(int64(done), total === undefined ? undefined : int64(total), String(message)),
};

/** The bundle's `[config]` table as an object. */
export const config = {
  get: () => JSON.parse(hostConfig.get()),
};

/** Calls to other tools, for bundles granted `tools`; returns the decoded output. */
export const tools = {
  call(name, args) {
    try {
      return JSON.parse(hostTools.call(name, JSON.stringify(args)).content);
    } catch (error) {
      const payload = error?.payload ?? error;
      if (payload && typeof payload.tag === "string") {
        const kinds = { "invalid-input": InvalidInput, denied: Denied, timeout: Timeout };
        throw new (kinds[payload.tag] ?? Failed)(payload.val);
      }
      throw error;
    }
  },
};
