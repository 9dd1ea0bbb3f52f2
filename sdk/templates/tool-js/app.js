// The `{{name}}` bundle's tools.

import { InvalidInput, defineTool, exportTools, schema as s, state } from "cordon-sdk";

const greet = defineTool({
  name: "{{name}}.greet",
  description: "Greet someone by name, and count the greetings.",
  input: s.object({
    name: s.string("Who to greet."),
    excited: s.optional(s.boolean("End with an exclamation mark."), false),
  }),
  call({ name, excited = false }) {
    if (!name.trim()) {
      throw new InvalidInput("name must not be blank");
    }
    const count = state.increment("{{name}}.greetings");
    return `Hello, ${name}${excited ? "!" : "."} (greeting ${count})`;
  },
});

export const tool = exportTools(greet);
