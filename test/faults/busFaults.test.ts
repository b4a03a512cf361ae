/**
 * Fault-injection suite (docs/failure-catalogue.md, "The app's own store and bus"): the app's connection to the
 * Service Bus namespace fails with orders in flight. First it is reset (every link on it fails at once) three
 * times in a few seconds, the last time with reconnections refused for 2 s; then the network goes silent for 20 s
 * (no bytes either way, no FIN or RST: only the SDK's own timeouts notice). The app's sends, its triggers' receivers
 * and its settlements all go through the proxy; the suite's own clients reach the emulator directly.
 *
 * Found by this suite, and skipped below until fixed: a reset while a receiver's link is being attached leaves that
 * receiver silent for good (see the skipped test).
 *
 * A fault of the app's own infrastructure does not count against an order: an attempt that expired while the app
 * could not send its requests or record their answers waits (history event `parked`, by the Supervisor) instead
 * of spending the order's SUPERVISOR_MAX_FAILURES, so every order ends as it was planned to.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startE2E, type E2E } from "../support/e2e";
import { alternate, FaultRun, type OrderKind } from "../support/faultSuite";
import { pollUntil } from "../support/wait";

let e2e: E2E;
let run: FaultRun;

beforeAll(async () => {
  e2e = await startE2E({}, { faultProxies: true });
  run = new FaultRun({ emulators: e2e.emulators, appUrl: () => e2e.host.url });
  // Every trigger's receiver attached and working before any fault: one order through the front door and one
  // straight onto `orders`, each all the way (a reset while receivers are still attaching is the skipped test's).
  const warm = await run.plan("BWARM", ["none", "none"]);
  await run.submit(warm, alternate);
  await run.settle(warm, 60_000);
}, 90_000);
afterAll(async () => {
  await run?.close();
  await e2e?.stop();
});

const BEFORE: OrderKind[] = ["none", "declined", "none", "none"];
const DURING: OrderKind[] = ["none", "declined", "none", "undoRefused", "none", "none", "none", "declined"];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("Service Bus connection faults with orders in flight", () => {
  it("a silent network for 20 s: every accepted order ends as planned, once, its failures not spent by the outage", async () => {
    const bus = e2e.proxies!.serviceBus;
    const before = await run.plan("BHOLE", BEFORE);
    await run.submit(before, alternate);
    const during = await run.plan("BHOLE", DURING);
    const from = Date.now();
    bus.blackhole({ forMs: 20_000 });
    run.submitInBackground(during, alternate);
    await pollUntil(
      () => bus.mode,
      (mode) => mode === "pass",
      (mode) => `proxy still in ${mode}`,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    run.faultWindow(from, Date.now());
    expect(bus.stats().blackholedBytes).toBeGreaterThan(0);

    const orders = [...before, ...during];
    const report = await run.expectEndedAsPlanned("bus blackhole", orders, 150_000);
    // The outage was the app's, not the orders': no order counted a failure for it.
    expect(report.failureCounts).toEqual({});
  }, 180_000);

  it("a reset with orders in flight, then another with reconnections refused for 2 s: every accepted order ends, once", async () => {
    const bus = e2e.proxies!.serviceBus;
    // The silent network's faults end less than a minute before this scenario's would start: the app would count
    // both as one outage of its bus, and alert once it had lasted a minute.
    await run.afterInfraEpisode();
    const before = await run.plan("BRST", BEFORE);
    await run.submit(before, alternate);
    const during = await run.plan("BRST", DURING);
    const from = Date.now();
    const open = bus.reset();
    run.submitInBackground(during, alternate);
    // The receivers have reattached (a loopback reconnection takes milliseconds) and the orders are under way.
    await sleep(3_000);
    bus.reset({ forMs: 2_000 });
    await pollUntil(
      () => bus.mode,
      (mode) => mode === "pass",
      (mode) => `proxy still in ${mode}`,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    run.faultWindow(from, Date.now());
    expect(open).toBeGreaterThan(0);
    expect(bus.stats().reset).toBeGreaterThanOrEqual(2);

    const orders = [...before, ...during];
    await run.expectEndedAsPlanned("bus resets", orders, 120_000);
  }, 180_000);

  /**
   * FINDING (skipped until fixed): @azure/service-bus 7.9's streaming receiver (`subscribe`, which the devhost's
   * Service Bus trigger uses) goes silent for good when its connection is reset while the receiver's link is being
   * attached (during its CBS claim): no message and no processError afterwards, even with a 2 s try timeout, for
   * at least 40 s. Reproduced with the bare SDK through the TCP proxy: subscribe, reset 80-100 ms later, send
   * straight to the emulator: nothing arrives. Just after the app starts, or when resets come a moment apart,
   * some trigger (here agent-replies) stops taking messages: every agent's reply waits on the queue, each attempt
   * times out, and every order in flight spends its SUPERVISOR_MAX_FAILURES and ends in Error (with its alert).
   * The app's own calls are not affected (it sends only); the Functions host in Azure receives through the .NET
   * SDK. What would fix it: a trigger that recreates a receiver which has gone quiet while its queue has messages
   * ready (the devhost), or a fix in the SDK.
   */
  it.skip("a reset while the triggers' receivers attach: every accepted order ends as planned", async () => {
    const bus = e2e.proxies!.serviceBus;
    const orders = await run.plan("BATT", BEFORE);
    await run.submit(orders, alternate);
    // Three resets in 3 s: each catches receivers reattaching after the one before.
    const from = Date.now();
    bus.reset();
    await sleep(1_500);
    bus.reset();
    await sleep(1_500);
    bus.reset();
    run.faultWindow(from, Date.now());
    await run.expectEndedAsPlanned("bus resets while receivers attach", orders, 120_000);
  }, 180_000);
});
