/**
 * GET /api/health is anonymous: it names a dependency that does not answer, and nothing of the error itself, which
 * can hold endpoints, account names or token details. The error goes to the log.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { healthRequest } from "../../../src/api/stats";
import { startAppStack, type AppStack } from "../../support/appStack";

let healthy: AppStack;
let broken: AppStack;
beforeAll(async () => {
  healthy = await startAppStack();
  // A Cosmos DB endpoint that answers, but not as Cosmos DB: every store call fails at once.
  broken = await startAppStack({
    CosmosConnection: `AccountEndpoint=${healthy.emulators.simulatorUrl}/;AccountKey=${Buffer.from("k").toString("base64")};`,
  });
});
afterAll(async () => {
  await broken?.stop();
  await healthy?.stop();
});

it("answers 200 when the store and the bus answer", async () => {
  const res = await healthRequest(healthy.deps, healthy.context());
  expect(res.status).toBe(200);
  expect(res.jsonBody).toEqual({
    status: "healthy",
    checks: [
      { what: "store", ok: true },
      { what: "bus", ok: true },
    ],
  });
});

it("answers 503 naming the store, without the error's text, which goes to the log", async () => {
  const logged: string[] = [];
  const context = broken.context();
  context.warn = (...args: unknown[]) => void logged.push(args.map(String).join(" "));
  const res = await healthRequest(broken.deps, context);
  expect(res.status).toBe(503);
  expect(res.jsonBody).toEqual({
    status: "unhealthy",
    checks: [
      { what: "store", ok: false, error: "Cosmos DB does not answer" },
      { what: "bus", ok: true },
    ],
  });
  expect(JSON.stringify(res.jsonBody)).not.toContain("127.0.0.1");
  expect(logged).toEqual([expect.stringMatching(/^health: store does not answer: .+/)]);
}, 60_000);
