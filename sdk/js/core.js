// The pure part of Cordon's JavaScript SDK: tool definitions, the JSON Schema
// helpers, the errors, and how one call runs. It touches no host import, so it
// runs (and is tested) under Node as well as inside a component.

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}\.[a-z0-9_.-]+$/;

/** Why a tool call did not produce an output. */
export class ToolError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/** The arguments do not make sense for this tool. */
export class InvalidInput extends ToolError {
  constructor(message) {
    super("invalid-input", message);
  }
}

/** The tool refused, or the host refused it something. */
export class Denied extends ToolError {
  constructor(message) {
    super("denied", message);
  }
}

/** The tool ran and could not do what was asked. */
export class Failed extends ToolError {
  constructor(message) {
    super("failed", message);
  }
}

/** The tool gave up waiting for something. */
export class Timeout extends ToolError {
  constructor(message) {
    super("timeout", message);
  }
}

/** A state operation the host refused: `kind` is `undeclared`, `read-only`, `schema` or `conflict`. */
export class StateError extends Error {
  constructor(kind, message) {
    super(`${kind}: ${message}`);
    this.kind = kind;
  }
}

/** Check a tool's declaration and return it. */
export function defineTool(definition) {
  const { name, description, input, output, annotations = {}, call } = definition;
  if (typeof name !== "string" || name.length > 128 || !NAME.test(name)) {
    throw new Error(
      `tool name ${JSON.stringify(name)} must be \`bundle.tool\`: lowercase letters, digits, \`-\`, \`_\` and \`.\`, starting with the bundle's name and a dot`,
    );
  }
  if (typeof description !== "string" || !description.trim()) {
    throw new Error(`tool ${name} needs a description`);
  }
  if (typeof call !== "function") {
    throw new Error(`tool ${name} needs a \`call\` function`);
  }
  return {
    name,
    description,
    input: input ?? schema.object({}),
    output,
    annotations: {
      readOnly: Boolean(annotations.readOnly),
      destructive: Boolean(annotations.destructive),
      idempotent: Boolean(annotations.idempotent),
      openWorld: Boolean(annotations.openWorld),
    },
    call,
  };
}

/** The component's `tool` export over `tools`. */
export function exportTools(...tools) {
  const byName = new Map();
  for (const tool of tools) {
    if (byName.has(tool.name)) {
      throw new Error(`tool ${tool.name} is exported twice`);
    }
    byName.set(tool.name, tool);
  }
  return {
    describe() {
      return [...byName.values()].map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: JSON.stringify(tool.input),
        outputSchema: tool.output === undefined ? undefined : JSON.stringify(tool.output),
        annotations: tool.annotations,
      }));
    },
    call(name, args) {
      const outcome = run(byName.get(name), name, args);
      return isPromise(outcome) ? outcome.then(settle) : settle(outcome);
    },
  };
}

/** Run one call; `["ok", json]` or `[kind, message]`, or a promise of one for an async tool. */
export function run(tool, name, argsJson) {
  if (tool === undefined) {
    return ["invalid-input", `unknown tool ${name}`];
  }
  let args;
  try {
    args = JSON.parse(argsJson);
  } catch (error) {
    return ["invalid-input", `arguments for ${name} are not JSON: ${error.message}`];
  }
  let output;
  try {
    output = tool.call(args);
  } catch (error) {
    return failure(error);
  }
  if (isPromise(output)) {
    return output.then((value) => encode(name, value), failure);
  }
  return encode(name, output);
}

/** The component's answer for one outcome of `run`. */
function settle([kind, text]) {
  if (kind === "ok") {
    return { content: text };
  }
  throw { tag: kind, val: text };
}

/** Whether `value` is a promise: an async tool's answer. */
function isPromise(value) {
  return typeof value?.then === "function";
}

/** `["ok", json]` for a tool's output. */
function encode(name, output) {
  const text = JSON.stringify(output === undefined ? null : output);
  if (text === undefined) {
    return ["failed", `output of ${name} is not JSON`];
  }
  return ["ok", text];
}

/** `[kind, message]` for what a tool threw. */
function failure(error) {
  if (error instanceof ToolError) {
    return [error.kind, error.message];
  }
  if (error instanceof StateError) {
    const kind = error.kind === "undeclared" || error.kind === "read-only" ? "denied" : "failed";
    return [kind, error.message];
  }
  return ["failed", `${error?.name ?? "Error"}: ${error?.message ?? String(error)}`];
}

/** Helpers that build JSON Schemas. */
export const schema = {
  string: (description) => described({ type: "string" }, description),
  integer: (description) => described({ type: "integer" }, description),
  number: (description) => described({ type: "number" }, description),
  boolean: (description) => described({ type: "boolean" }, description),
  array: (items, description) => described({ type: "array", items }, description),
  oneOf: (values, description) => described({ enum: [...values] }, description),
  /** An optional property with a default value. */
  optional: (inner, fallback) => ({ ...inner, [OPTIONAL]: true, ...(fallback === undefined ? {} : { default: fallback }) }),
  /** An object of `properties`; each is required unless wrapped in `optional`. */
  object(properties, description) {
    const clean = {};
    const required = [];
    for (const [key, value] of Object.entries(properties)) {
      const { [OPTIONAL]: optional, ...rest } = value;
      clean[key] = rest;
      if (!optional) {
        required.push(key);
      }
    }
    return described({ type: "object", properties: clean, required, additionalProperties: false }, description);
  },
};

const OPTIONAL = Symbol("optional");

function described(schema, description) {
  return description === undefined ? schema : { ...schema, description };
}

