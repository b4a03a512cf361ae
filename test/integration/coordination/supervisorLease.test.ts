/**
 * Leader leases against the Cosmos DB emulator, as two instances of the app hold them: one holder at a time, a
 * crashed holder's lease taken over once it expires, and the fast paths (renewing or releasing with the etag of
 * the instance's own last write) never letting a stale instance win.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseManager } from "../../../src/coordination/supervisorLease";
import { startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;
let containers: AppStack["containers"];
let n = 0;
const T0 = new Date("2026-12-01T10:00:00.000Z");
const at = (s: number) => new Date(T0.getTime() + s * 1000);

beforeAll(async () => {
  stack = await startAppStack();
  containers = stack.containers;
});
afterAll(() => stack?.stop());

describe("LeaseManager", () => {
  it("has one holder at a time; the holder renews; another takes it only once it has expired", async () => {
    const name = `lease-test-${++n}`;
    const a = new LeaseManager(containers.leases);
    const b = new LeaseManager(containers.leases);
    expect(await a.tryAcquire(name, "a", 10, at(0))).toEqual({
      acquired: true,
      expiresAt: at(10).toISOString(),
    });
    expect(await b.tryAcquire(name, "b", 10, at(1))).toEqual({
      acquired: false,
      holder: "a",
      expiresAt: at(10).toISOString(),
    });
    expect(await a.tryAcquire(name, "a", 10, at(5))).toMatchObject({
      acquired: true,
      expiresAt: at(15).toISOString(),
    });
    expect((await b.tryAcquire(name, "b", 10, at(14))).acquired).toBe(false);
    // a stops renewing (it crashed): b takes over after expiry, and a's renewal with its old etag loses.
    expect(await b.tryAcquire(name, "b", 10, at(16))).toMatchObject({ acquired: true });
    expect(await a.tryAcquire(name, "a", 10, at(17))).toMatchObject({ acquired: false, holder: "b" });
  });

  it("releases only the holder's lease, and a released lease is taken at once", async () => {
    const name = `lease-test-${++n}`;
    const a = new LeaseManager(containers.leases);
    const b = new LeaseManager(containers.leases);
    expect((await a.tryAcquire(name, "a", 10, at(0))).acquired).toBe(true);
    await b.release(name, "b"); // not b's: nothing happens
    expect((await b.tryAcquire(name, "b", 10, at(1))).acquired).toBe(false);
    await a.release(name, "a");
    expect((await b.tryAcquire(name, "b", 10, at(2))).acquired).toBe(true);
    // a's release after b took over (a stale etag) leaves b's lease alone.
    await a.release(name, "a");
    expect(await a.tryAcquire(name, "a", 10, at(3))).toMatchObject({ acquired: false, holder: "b" });
  });

  it("lets exactly one of many concurrent candidates take a free lease", async () => {
    const name = `lease-test-${++n}`;
    const candidates = Array.from({ length: 8 }, () => new LeaseManager(containers.leases));
    const results = await Promise.all(candidates.map((c, i) => c.tryAcquire(name, `c${i}`, 10, at(0))));
    expect(results.filter((r) => r.acquired)).toHaveLength(1);
  });
});
