// CORS on the simulator's admin routes, so that the devhost's dashboard (another port) can drive /_faults: a
// loopback Origin is allowed, with a preflight for JSON posts; other origins and the service routes get nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../../tools/simulator";
import { startTestSimulator } from "../../support/simulator";

let sim: Simulator;
beforeAll(async () => {
  sim = await startTestSimulator();
});
afterAll(async () => {
  await sim?.stop();
});

const DASHBOARD = "http://127.0.0.1:7071";

describe("CORS on the admin routes", () => {
  it("answers a preflight for POST /_faults from a loopback origin", async () => {
    const res = await fetch(`${sim.url}/_faults`, {
      method: "OPTIONS",
      headers: {
        origin: DASHBOARD,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    expect(res.headers.get("access-control-allow-methods")).toContain("DELETE");
    expect(res.headers.get("access-control-allow-headers")).toContain("content-type");
  });

  it("lets a loopback page arm, list and delete faults, and read the ledger and health", async () => {
    const armed = await fetch(`${sim.url}/_faults`, {
      method: "POST",
      headers: { origin: "http://localhost:5173", "content-type": "application/json" },
      body: JSON.stringify({ service: "payment", kind: "transient", count: 1 }),
    });
    expect(armed.status).toBe(201);
    expect(armed.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    const { id } = (await armed.json()) as { id: string };

    for (const path of ["/_faults", "/_ledger", "/_health"]) {
      const res = await fetch(`${sim.url}${path}`, { headers: { origin: DASHBOARD } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("access-control-allow-origin"), path).toBe(DASHBOARD);
    }
    const removed = await fetch(`${sim.url}/_faults/${id}`, {
      method: "DELETE",
      headers: { origin: DASHBOARD },
    });
    expect(removed.status).toBe(204);
    expect(removed.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
    // An error answer carries the header too, so the page can show the simulator's message.
    const refused = await fetch(`${sim.url}/_faults`, {
      method: "POST",
      headers: { origin: DASHBOARD, "content-type": "application/json" },
      body: JSON.stringify({ service: "nowhere", kind: "transient" }),
    });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
  });

  it("allows no other origin, and no origin at all on the service routes", async () => {
    const foreign = await fetch(`${sim.url}/_faults`, {
      method: "OPTIONS",
      headers: { origin: "https://example.com", "access-control-request-method": "POST" },
    });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    const listed = await fetch(`${sim.url}/_faults`, { headers: { origin: "https://example.com" } });
    expect(listed.headers.get("access-control-allow-origin")).toBeNull();

    const charge = await fetch(`${sim.url}/payment/charge`, {
      method: "POST",
      headers: {
        origin: DASHBOARD,
        "content-type": "application/json",
        "idempotency-key": "CORS-1:payment:do",
      },
      body: JSON.stringify({ orderId: "CORS-1", amount: 10, currency: "EUR" }),
    });
    expect(charge.status).toBe(200);
    expect(charge.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${sim.url}/payment/charge`, {
      method: "OPTIONS",
      headers: { origin: DASHBOARD, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(404);
  });
});
