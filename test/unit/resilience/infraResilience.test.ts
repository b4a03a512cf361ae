import { ServiceBusError } from "@azure/service-bus";
import { RestError } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import {
  describeInfraError,
  isTransientInfraError,
  STORE_CALLS,
} from "../../../src/resilience/infraResilience";
import { storeBackoffMs } from "../../../src/store/storeHttpClient";
import { RESCHEDULE, rescheduleDelaySeconds } from "../../../src/functions/rescheduled";

/** An error as @azure/cosmos raises it for an answer with this status. */
const storeError = (code: number) => Object.assign(new Error(`status ${code}`), { code });

describe("isTransientInfraError", () => {
  it.each([408, 429, 449, 500, 503])("takes the store's %i for a fault a later try may not meet", (code) => {
    expect(isTransientInfraError(storeError(code))).toBe(true);
  });

  it.each([400, 401, 403, 404, 409, 412, 413])(
    "takes the store's %i for an answer that stays the same",
    (code) => {
      expect(isTransientInfraError(storeError(code))).toBe(false);
    },
  );

  it("takes a reset or refused connection, the SDK's timeout and the bus's busy or timeout for transient", () => {
    expect(isTransientInfraError(new RestError("socket hang up", { code: "ECONNRESET" }))).toBe(true);
    expect(isTransientInfraError(Object.assign(new Error("refused"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isTransientInfraError(Object.assign(new Error("Timeout Error!"), { code: "TimeoutError" }))).toBe(
      true,
    );
    expect(isTransientInfraError(new ServiceBusError("busy", "ServiceBusy"))).toBe(true);
    expect(isTransientInfraError(new ServiceBusError("timeout", "ServiceTimeout"))).toBe(true);
  });

  it("does not retry a missing entity, a refused credential or a bug", () => {
    expect(isTransientInfraError(new ServiceBusError("no such queue", "MessagingEntityNotFound"))).toBe(
      false,
    );
    expect(isTransientInfraError(new ServiceBusError("no", "UnauthorizedAccess"))).toBe(false);
    expect(isTransientInfraError(new TypeError("undefined is not a function"))).toBe(false);
  });

  it("describes a fault in one short line", () => {
    expect(describeInfraError(storeError(503))).toBe("store 503: status 503");
    const long = describeInfraError(
      new RestError(`first line ${"x".repeat(500)}\nsecond`, { code: "ECONNRESET" }),
    );
    expect(long).toMatch(/^ECONNRESET: first line x+$/);
    expect(long.length).toBeLessThanOrEqual(220);
  });
});

describe("back-off", () => {
  it("spaces a store request's tries from the first delay up to the cap, within the budget", () => {
    expect(storeBackoffMs(1, () => 0)).toBe(STORE_CALLS.firstBackoffMs / 2);
    expect(storeBackoffMs(1, () => 1)).toBe(STORE_CALLS.firstBackoffMs);
    expect(storeBackoffMs(30, () => 1)).toBe(STORE_CALLS.maxBackoffMs);
    let waited = 0;
    let tries = 1;
    while (waited + storeBackoffMs(tries, () => 1) < STORE_CALLS.retryBudgetMs)
      waited += storeBackoffMs(tries++, () => 1);
    // Even at the longest waits a request gets several tries before its caller hears of the fault.
    expect(tries).toBeGreaterThanOrEqual(8);
  });

  it("puts a message back after 2 s, doubling to a minute, each within a quarter either way", () => {
    expect(rescheduleDelaySeconds(1, () => 0.5)).toBe(RESCHEDULE.firstDelaySeconds);
    expect(rescheduleDelaySeconds(2, () => 0.5)).toBe(2 * RESCHEDULE.firstDelaySeconds);
    expect(rescheduleDelaySeconds(20, () => 0.5)).toBe(RESCHEDULE.maxDelaySeconds);
    expect(rescheduleDelaySeconds(20, () => 0)).toBe(0.75 * RESCHEDULE.maxDelaySeconds);
    expect(rescheduleDelaySeconds(20, () => 1)).toBe(1.25 * RESCHEDULE.maxDelaySeconds);
  });
});
