/**
 * The shared record of the app's own infrastructure faults (src/resilience/infraFaultLog.ts) against the embedded
 * Cosmos DB and Service Bus emulators: what one instance notes, another's Supervisor sees; a lasting episode
 * raises one alert.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceBusError } from "@azure/service-bus";
import { INFRA_FAULTS } from "../../../src/domain";
import { at } from "../../support/domain";
import { drain, startAppStack, type AppStack } from "../../support/appStack";

let stack: AppStack;
beforeAll(async () => {
  stack = await startAppStack();
});
afterAll(() => stack?.stop());

describe("InfraFaults", () => {
  it("shares what one instance noted with another, and raises one InfrastructureUnavailable for a lasting episode", async () => {
    const noting = stack.dependencies({});
    const supervising = stack.dependencies({});
    let clock = at(0);
    noting.now = () => clock;
    supervising.now = () => clock;
    const busy = new ServiceBusError("no answer in 10 s", "ServiceTimeout");

    noting.infraFaults.note("bus", busy);
    await noting.infraFaults.flush();
    expect(await supervising.infraFaults.faultSince(at(0))).toEqual({
      part: "bus",
      detail: "ServiceTimeout: no answer in 10 s",
    });
    expect(await supervising.infraFaults.faultSince(at(1))).toBeUndefined();

    // Faults keep coming for the alert's time: one episode, one alert, however many sweeps look at it.
    for (let s = 10; s <= INFRA_FAULTS.alertAfterSeconds; s += 10) {
      clock = at(s);
      noting.infraFaults.note("bus", busy);
    }
    await noting.infraFaults.flush();
    clock = at(INFRA_FAULTS.alertAfterSeconds + 1);
    const log = stack.context("supervisor");
    expect(await supervising.infraFaults.alertIfLasting(log, supervising.notifications)).toBe(1);
    expect(await supervising.infraFaults.alertIfLasting(log, supervising.notifications)).toBe(0);
    const alerts = await drain(stack.bus, "alerts");
    expect(alerts).toEqual([
      expect.objectContaining({
        kind: "InfrastructureUnavailable",
        orderId: null,
        reason: expect.stringContaining(
          `bus (Service Bus) has been failing for ${INFRA_FAULTS.alertAfterSeconds} s`,
        ),
      }),
    ]);
  });
});
