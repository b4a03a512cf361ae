// Sample app for the devhost's start-up lines: one HTTP function, written exactly as for Azure (v4 programming
// model), plain CommonJS so that it needs no build step. What the test checks is the host's output around it.
"use strict";
const { app } = require("@azure/functions");

app.http("ping", {
  methods: ["GET"],
  authLevel: "anonymous",
  handler: async () => ({ body: "pong" }),
});
