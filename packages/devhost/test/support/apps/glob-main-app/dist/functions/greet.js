// One of the files "main" names by a glob, as the func templates lay an app out: one function per file.
// It reads a file by a path relative to the app root, which works only if the worker runs there.
const fs = require("node:fs");
const { app } = require("@azure/functions");

app.http("greet", {
  methods: ["GET"],
  authLevel: "anonymous",
  handler: async () => ({ body: fs.readFileSync("data/greeting.txt", "utf8").trim() }),
});
