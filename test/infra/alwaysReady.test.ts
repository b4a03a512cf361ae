/**
 * Always-ready instances (docs/deployment.md, "Always-ready instances"): the function groups a step waits on keep
 * warm instances, and every per-function entry names a function the app registers, since a misspelt one would
 * silently keep nothing warm.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, expect, it } from "vitest";
import {
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  describeWithBicep,
  predicted,
  processServices,
  ROOT,
  type CompiledInfra,
  type Snapshot,
} from "../support/infra";

/**
 * The names of the functions src/functions registers, from their registration calls, app.<trigger>("name"), and an
 * agent per declared service where agents.ts registers them by agentFunctionName
 * (test/unit/functions/agents.test.ts checks that it registers exactly those).
 */
function registeredFunctionNames(): Set<string> {
  const names = new Set<string>();
  const dir = path.join(ROOT, "src/functions");
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    for (const m of text.matchAll(/\bapp\.\w+\(\s*"([A-Za-z][\w-]*)"/g)) names.add(m[1]!);
    if (text.includes("agentFunctionName(")) for (const s of processServices) names.add(s.agentFunction);
  }
  return names;
}

interface AlwaysReady {
  name: string;
  instanceCount: unknown;
}

function alwaysReadyOf(snapshot: Snapshot): AlwaysReady[] {
  const site = predicted(snapshot, "Microsoft.Web/sites")[0] as
    | { properties?: { functionAppConfig?: { scaleAndConcurrency?: { alwaysReady?: AlwaysReady[] } } } }
    | undefined;
  return site?.properties?.functionAppConfig?.scaleAndConcurrency?.alwaysReady ?? [];
}

describeWithBicep("always-ready instances", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  it.each(DEPLOYMENT_NAMES)(
    "keep the durable group, every agent and agentReplies warm, at least one instance each (%s)",
    (name) => {
      const alwaysReady = alwaysReadyOf(infra.snapshots[name]);
      expect(alwaysReady.map((a) => a.name)).toEqual(
        expect.arrayContaining([
          "durable",
          ...processServices.map((s) => `function:${s.agentFunction}`),
          "function:agentReplies",
        ]),
      );
      for (const entry of alwaysReady) {
        expect(
          Number.isInteger(entry.instanceCount) && (entry.instanceCount as number) >= 1,
          entry.name,
        ).toBe(true);
      }
    },
  );

  it.each(DEPLOYMENT_NAMES)("name only functions src/functions registers (%s)", (name) => {
    const registered = registeredFunctionNames();
    const unknown = alwaysReadyOf(infra.snapshots[name])
      .map((a) => a.name)
      .filter((n) => n.startsWith("function:") && !registered.has(n.slice("function:".length)));
    expect(unknown, `registered: ${[...registered].join(", ")}`).toEqual([]);
  });
});
