// Test-only stand-in for `@azure/functions-core` (the module the Functions worker provides): with it,
// `df.app.orchestration/activity/entity/client.*` in an unmodified sample app really register, and the
// registrations land here. The devhost uses src/functionsCore.ts for the same job; this shim stays
// minimal so the durable engine's tests do not depend on it.
//
// The hook must be installed before the first registration: @azure/functions caches a failed
// `require("@azure/functions-core")` forever ("test mode"). Importing this module installs it.
import Module from "node:module";
import { InvocationContext, type HttpRequest, type HttpResponse } from "@azure/functions";
import type { DurableFunctionRegistration } from "../../src/durable";

export interface CapturedBinding {
  type: string;
  direction: string;
  [property: string]: unknown;
}

export interface CapturedFunction {
  name: string;
  bindings: Record<string, CapturedBinding>;
  handler: (triggerInput: unknown, context: InvocationContext) => unknown;
}

const captured = new Map<string, CapturedFunction>();
let programmingModel: unknown;

const fakeCore = {
  version: "0.0.0-test",
  hostVersion: "0.0.0-test",
  registerFunction(
    metadata: { name: string; bindings: Record<string, CapturedBinding> },
    handler: CapturedFunction["handler"],
  ) {
    // The worker rejects two functions with one name; so do we, to catch sample apps colliding.
    if (captured.has(metadata.name))
      throw new Error(`A function named '${metadata.name}' is already registered`);
    captured.set(metadata.name, { name: metadata.name, bindings: metadata.bindings, handler });
    return { dispose: () => captured.delete(metadata.name) };
  },
  setProgrammingModel(model: unknown) {
    programmingModel = model;
  },
  getProgrammingModel() {
    return programmingModel;
  },
  registerHook() {
    return { dispose() {} };
  },
  log() {},
};

type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;
let installed = false;

export function installDurableCapture(): void {
  if (installed) return;
  installed = true;
  const mod = Module as unknown as { _load: Loader };
  const original = mod._load;
  mod._load = function (this: unknown, request, parent, isMain) {
    return request === "@azure/functions-core" ? fakeCore : original.call(this, request, parent, isMain);
  };
}

installDurableCapture();

export function capturedFunction(name: string): CapturedFunction {
  const fn = captured.get(name);
  if (!fn)
    throw new Error(`No function named '${name}' was registered (have: ${[...captured.keys()].join(", ")})`);
  return fn;
}

const KINDS: Record<string, DurableFunctionRegistration["kind"]> = {
  orchestrationTrigger: "orchestration",
  activityTrigger: "activity",
  entityTrigger: "entity",
};

/** Every orchestration, activity and entity registered so far, as the engine takes them. */
export function durableRegistrations(): DurableFunctionRegistration[] {
  const out: DurableFunctionRegistration[] = [];
  for (const fn of captured.values()) {
    const trigger = Object.values(fn.bindings).find((b) => b.type in KINDS);
    if (trigger)
      out.push({
        name: fn.name,
        kind: KINDS[trigger.type] as DurableFunctionRegistration["kind"],
        handler: fn.handler,
      });
  }
  return out;
}

/**
 * Calls a captured client function (df.app.client.http and friends) the way the worker does: the
 * durableClient input binding carries `clientData`, so `df.getClient(context)` inside the app works.
 */
export async function invokeClientFunction(
  name: string,
  trigger: HttpRequest,
  clientData: unknown,
): Promise<HttpResponse> {
  const fn = capturedFunction(name);
  const extraInputs = Object.entries(fn.bindings)
    .filter(([, b]) => b.direction === "in" && !/Trigger$/.test(b.type))
    .map(([bindingName, b]) => ({ ...b, name: bindingName }));
  const context = new InvocationContext({
    functionName: name,
    options: { trigger: { type: "httpTrigger", name: "httpTrigger" }, extraInputs, extraOutputs: [] },
    logHandler: () => {},
  });
  for (const b of extraInputs) if (b.type === "durableClient") context.extraInputs.set(b.name, clientData);
  return (await fn.handler(trigger, context)) as HttpResponse;
}
