// A function whose callback throws outside any promise the host awaits: it ends the worker process in Azure.
// `count` is module state, which a restarted worker starts from scratch.
const { app } = require("@azure/functions");

let count = 0;

app.http("count", {
  methods: ["GET"],
  authLevel: "anonymous",
  handler: async () => ({ jsonBody: { count: ++count } }),
});

app.http("crash", {
  methods: ["GET"],
  authLevel: "anonymous",
  handler: () => {
    setTimeout(() => {
      throw new Error("boom: thrown from a timer callback");
    }, 0);
    return new Promise(() => undefined);
  },
});
