/**
 * src/functions/agents.ts registers one agent function per declared service (src/domain/process.ts), on the
 * service's request queue, and no other: the registrations are captured as the Functions host captures them (the
 * devhost's @azure/functions-core stand-in), from the transpiled module the host would load.
 */
import path from "node:path";
import { afterAll, expect, inject, it } from "vitest";
import { loadApp, unloadApp, type LoadedApp } from "../../../packages/devhost/src/functionsCore";
import { AGENT_NAMES, agentFunctionName, agentRequestQueue } from "../../../src/domain";

let app: LoadedApp | undefined;
afterAll(() => app && unloadApp(app));

it("registers an agent on its request queue for every declared service, and nothing else", async () => {
  app = await loadApp(path.join(inject("appBuildDir"), "src", "functions", "agents.js"));
  const registered = [...app.functions.values()].map((r) => ({
    name: r.name,
    trigger: r.trigger.type,
    queue: r.trigger.queueName,
    connection: r.trigger.connection,
  }));
  const declared = AGENT_NAMES.map((s) => ({
    name: agentFunctionName(s),
    trigger: "serviceBusTrigger",
    queue: agentRequestQueue(s),
    connection: "ServiceBusConnection",
  }));
  expect(
    registered,
    "src/functions/agents.ts must register one agent per service of src/domain/process.ts (registerAgent)",
  ).toEqual(declared);
});
