// The Scheduler orchestration with stub activities (test/support/schedulerHarness.ts). The devhost loads an app
// from a file, as the worker does; this one runs the harness's registrations, so that the orchestration comes
// from its TypeScript source as the test imports it and each stub is the test's own function.
"use strict";

const register = globalThis[Symbol.for("schedulerHarness.register")];
if (typeof register !== "function") throw new Error("start this app with startSchedulerHarness()");
register();
