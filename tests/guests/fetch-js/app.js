// A JavaScript tool that fetches a URL with the standard `fetch` API and
// answers with the status, the content length and the body text. An async tool:
// componentize-js runs the event loop until its promise settles.

import { defineTool, exportTools, schema as s } from "cordon-sdk";

const get = defineTool({
  name: "fetch-js.get",
  description: "GET a URL and answer with its status, content length and body.",
  input: s.object({ url: s.string() }),
  call: async ({ url }) => {
    const response = await fetch(url);
    return {
      status: response.status,
      length: response.headers.get("content-length"),
      body: await response.text(),
    };
  },
});

export const tool = exportTools(get);
