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
  type ArmTemplate,
} from "../support/infra";

const given = readJson<{ parameters: Record<string, { value: unknown }> }>(
  "infra/main.parameters.json",
).parameters;

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
});
