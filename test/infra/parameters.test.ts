/**
 * infra/main.parameters.json, which azd fills from the environment and passes to infra/main.bicep: a parameter
 * main.bicep does not declare fails the deployment, and one it needs but nobody sets fails it too, after azd has
 * asked for nothing.
 */
import { beforeAll, expect, it } from "vitest";
import {
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  describeWithBicep,
  readJson,
  readText,
  type ArmTemplate,
} from "../support/infra";

const given = readJson<{ parameters: Record<string, { value: unknown }> }>(
  "infra/main.parameters.json",
).parameters;

/** `${VARIABLE=fallback}`: what azd passes when the environment does not set VARIABLE. */
const FALLBACK = /^\$\{(\w+)=(.*)\}$/;
const fallbacks = Object.entries(given).flatMap(([parameter, { value }]) => {
  const match = typeof value === "string" ? FALLBACK.exec(value) : null;
  return match ? [{ parameter, variable: match[1]!, fallback: match[2]! }] : [];
});

describeWithBicep("infra/main.parameters.json against the compiled main.bicep", () => {
  let template: ArmTemplate;
  beforeAll(async () => {
    ({ template } = await compiledInfra());
  }, COMPILE_TIMEOUT_MS);

  it("sets only parameters main.bicep declares", () => {
    const undeclared = Object.keys(given).filter((name) => !(name in template.parameters));
    expect(undeclared).toEqual([]);
  });

  it("sets every parameter main.bicep gives no default", () => {
    const required = Object.entries(template.parameters)
      .filter(([, definition]) => !("defaultValue" in definition))
      .map(([name]) => name);
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !(name in given))).toEqual([]);
  });

  it("names status queues that start with STATUS_QUEUE_PREFIX, which is how the app tells them apart", () => {
    const prefix = template.parameters.statusQueuePrefix?.defaultValue;
    expect(prefix).toEqual(expect.any(String));
    const statusQueues = (given.statusQueues?.value ??
      template.parameters.statusQueues?.defaultValue ??
      []) as string[];
    for (const queue of statusQueues) expect(queue.startsWith(prefix as string), queue).toBe(true);
  });

  // A default written in three places (the Bicep, azd's fallback, the pipeline's) is one fact only while they
  // agree: a fork that changes one and not the others would deploy something else from azd than from the Bicep.
  it("falls back, where the environment is silent, to main.bicep's own defaults", () => {
    const differing = fallbacks
      .filter(({ parameter }) => template.parameters[parameter]?.defaultValue !== undefined)
      .filter(({ parameter, fallback }) => String(template.parameters[parameter]!.defaultValue) !== fallback)
      .map(
        ({ parameter, fallback }) =>
          `${parameter}: ${fallback} here, ${String(template.parameters[parameter]!.defaultValue)} in main.bicep`,
      );
    expect(fallbacks.map((f) => f.parameter)).toContain("cosmosCapacityMode");
    expect(differing).toEqual([]);
  });

  it("has the deployment pipeline fall back to the same defaults as azd", () => {
    const workflow = readText(".github/workflows/azure-dev.yml");
    const pipelineFallbacks = [...workflow.matchAll(/^\s*(\w+): \$\{\{ vars\.(\w+) \|\| '([^']*)' \}\}/gm)];
    expect(pipelineFallbacks.length).toBeGreaterThan(0);
    for (const [, variable, , fallback] of pipelineFallbacks) {
      const azd = fallbacks.find((f) => f.variable === variable);
      expect(azd, `${variable} in main.parameters.json`).toBeDefined();
      expect(fallback, variable).toBe(azd!.fallback);
    }
  });
});
