/**
 * @azure/functions-opentelemetry-instrumentation, as src/telemetry/azureMonitor.ts registers it in Azure, with the
 * @azure/functions this app ships: it patches the library when an app loads it, and its preInvocation hook runs
 * each function in the context of the host's span for the invocation (InvocationContext.traceContext), so the
 * app's spans sit under the host's request. The devhost sends no trace context of its own, so the test hands the
 * hook one, as the Functions host does.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { context, propagation, trace } from "@opentelemetry/api";
import { startDevHost, type DevHost } from "devhost";
import { afterAll, beforeAll, expect, inject, it } from "vitest";

const REPO = path.resolve(__dirname, "..", "..", "..");
const HOST_SPAN = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let host: DevHost;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "functions-instrumentation-"));
  const registration = path.join(inject("appBuildDir"), "src", "telemetry", "azureMonitor.js");
  fs.writeFileSync(path.join(dir, "host.json"), JSON.stringify({ version: "2.0" }));
  // The app as a deployed one is written: the provider, then the instrumentation, then @azure/functions.
  fs.writeFileSync(
    path.join(dir, "index.js"),
    `"use strict";
const repo = require("node:module").createRequire(${JSON.stringify(path.join(REPO, "package.json"))});
new (repo("@opentelemetry/sdk-trace-node").NodeTracerProvider)().register();
require(${JSON.stringify(registration)}).registerFunctionsInstrumentation();
const { app } = repo("@azure/functions");
const { trace } = repo("@opentelemetry/api");
app.http("whoAmI", {
  authLevel: "anonymous",
  handler: async () => ({ jsonBody: { active: trace.getActiveSpan()?.spanContext() ?? null } }),
});
`,
  );
  host = await startDevHost({
    appEntry: path.join(dir, "index.js"),
    dataDir: path.join(dir, "data"),
    port: 0,
    settings: { FUNCTIONS_WORKER_RUNTIME: "node" },
    log: () => undefined,
  });
});

afterAll(async () => {
  await host?.stop();
  trace.disable();
  context.disable();
  propagation.disable();
  fs.rmSync(dir, { recursive: true, force: true });
});

it("registers its hooks with @azure/functions 4.16 and runs a function in the host's span", async () => {
  expect(host.app.hooks.preInvocation).toHaveLength(1);
  expect(host.app.hooks.log).toHaveLength(1);
  // No trace context from the devhost: the function runs outside any span.
  expect(await (await fetch(`${host.url}/api/whoAmI`)).json()).toEqual({ active: null });

  // As the host calls it: the invocation's context, with its traceContext, and the function it is about to run.
  const coreContext = {
    invocationContext: { traceContext: { traceParent: HOST_SPAN, traceState: "", attributes: {} } },
    inputs: [],
    hookData: {},
    functionCallback: () => trace.getActiveSpan()?.spanContext(),
  };
  await host.app.hooks.preInvocation[0]!(coreContext);
  expect(coreContext.functionCallback()).toMatchObject({
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    isRemote: true,
  });
});
