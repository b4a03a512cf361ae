import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../../src/durable";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";
import { eventually } from "../../support/servicebus";

interface Tick {
  isPastDue: boolean;
  scheduleStatus: { last: string; next: string; lastUpdated: string } | null;
  schedule: { adjustForDST: boolean };
}
interface Report {
  ticks: Tick[];
  startups: { isPastDue: boolean }[];
  flaky: Array<{ retryCount: number; maxRetryCount: number; exception?: { message?: string } } | null>;
}

const T0 = new Date("2024-03-01T10:00:00.000Z");

describe("devhost timer trigger", () => {
  const hosts: TestDevHost[] = [];
  const dirs: string[] = [];

  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  const report = async (host: TestDevHost): Promise<Report> =>
    (await (await fetch(`${host.url}/api/ticks`)).json()) as Report;

  async function start(schedule: string, clock?: VirtualClock, dataDir?: string): Promise<TestDevHost> {
    const host = await startTestDevHost("timer-app", {
      settings: { TICK_SCHEDULE: schedule },
      ...(clock ? { clock } : {}),
      ...(dataDir ? { dataDir } : {}),
    });
    hosts.push(host);
    if (!dataDir) dirs.push(host.dataDir);
    return host;
  }

  it("fires on a fast real-time schedule and runs runOnStartup functions once at start", async () => {
    const host = await start("*/1 * * * * *");
    expect(host.functions.find((f) => f.name === "tick")?.description).toBe("timerTrigger (*/1 * * * * *)");
    const seen = await eventually(
      async () => {
        const r = await report(host);
        return r.ticks.length >= 2 ? r : undefined;
      },
      { timeoutMs: 5_000, what: "two ticks" },
    );
    expect(seen.startups).toEqual([{ isPastDue: false }]);
    // Sub-minute schedules are not monitored by the host: no schedule status.
    expect(seen.ticks[0]).toEqual({
      isPastDue: false,
      scheduleStatus: null,
      schedule: { adjustForDST: true },
    });
  });

  it("follows the schedule on a virtual clock, with the schedule status the host reports", async () => {
    const clock = new VirtualClock(T0);
    const host = await start("0 */1 * * * *", clock);
    await clock.advance(3.5 * 60_000);
    const { ticks } = await report(host);
    expect(ticks.map((t) => t.scheduleStatus?.next)).toEqual([
      "2024-03-01T10:01:00.000+00:00",
      "2024-03-01T10:02:00.000+00:00",
      "2024-03-01T10:03:00.000+00:00",
    ]);
    expect(ticks[0]?.scheduleStatus?.last).toBe("0001-01-01T00:00:00+00:00");
    expect(ticks[2]?.scheduleStatus?.last).toBe("2024-03-01T10:02:00.000+00:00");
    expect(ticks.every((t) => !t.isPastDue)).toBe(true);
    expect(host.lines()).toContainEqual(
      expect.stringMatching(
        /^Executing 'Functions\.tick' \(Reason='Timer fired at 2024-03-01T10:03:00\.000\+00:00', Id=/,
      ),
    );
  });

  it("runs a timer function on demand through the admin API, as func start does", async () => {
    const host = await start("0 0 0 1 1 *", new VirtualClock(T0));
    const response = await fetch(`${host.url}/admin/functions/tick`, { method: "POST", body: "{}" });
    expect(response.status).toBe(202);
    const { ticks } = await eventually(async () => {
      const r = await report(host);
      return r.ticks.length > 0 ? r : undefined;
    });
    expect(ticks).toEqual([{ isPastDue: false, scheduleStatus: null, schedule: { adjustForDST: true } }]);
    expect((await fetch(`${host.url}/admin/functions/ticks`, { method: "POST" })).status).toBe(400);
    expect((await fetch(`${host.url}/admin/functions/nope`, { method: "POST" })).status).toBe(404);
  });

  it("runs a function under its retry policy, with a retry context on every attempt, scheduled or on demand", async () => {
    const clock = new VirtualClock(new Date("2024-03-01T11:59:59.000Z"));
    const host = await start("0 0 0 1 1 *", clock);
    const attempts = (r: Report) => r.flaky.map((c) => c && [c.retryCount, c.maxRetryCount]);
    // The 12:00 occurrence: attempt 1, then one fixed delay of 1 s before each retry; the third attempt passes.
    await clock.advance(1_000);
    await clock.advance(1_000);
    await clock.advance(1_000);
    const scheduled = await report(host);
    expect(attempts(scheduled)).toEqual([
      [0, 4],
      [1, 4],
      [2, 4],
    ]);
    expect(scheduled.flaky[1]?.exception?.message).toContain("attempt 1 fails");
    // On demand through the admin API, the same policy: three attempts again, a second apart (real time here).
    const res = await fetch(`${host.url}/admin/functions/flaky`, { method: "POST", body: "{}" });
    expect(res.status).toBe(202);
    await clock.advance(1_000);
    await clock.advance(1_000);
    const both = await eventually(
      async () => {
        const r = await report(host);
        return r.flaky.length >= 6 ? r : undefined;
      },
      { timeoutMs: 5_000, what: "three attempts on demand" },
    );
    expect(attempts(both).slice(3)).toEqual([
      [0, 4],
      [1, 4],
      [2, 4],
    ]);
  });

  it("runs an occurrence missed while the app was down at start-up, with isPastDue", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "devhost-timer-"));
    dirs.push(dataDir);
    const first = new VirtualClock(T0);
    const before = await start("0 */5 * * * *", first, dataDir);
    await first.advance(6 * 60_000);
    expect((await report(before)).ticks).toHaveLength(1);
    await before.stop();

    // Back 20 minutes later: the 10:10 occurrence was missed.
    const later = new VirtualClock(new Date(T0.getTime() + 20 * 60_000));
    const after = await start("0 */5 * * * *", later, dataDir);
    const { ticks } = await eventually(
      async () => {
        const r = await report(after);
        return r.ticks.length > 0 ? r : undefined;
      },
      { what: "the past-due tick" },
    );
    expect(ticks).toHaveLength(1);
    expect(ticks[0]?.isPastDue).toBe(true);
    expect(ticks[0]?.scheduleStatus?.last).toBe("2024-03-01T10:05:00.000+00:00");
  });
});
