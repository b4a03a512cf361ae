/**
 * The timing formulas, on figures a reader can check by hand from docs/operations.md#tuning. That the dashboard's
 * browser computes the same: test/unit/dashboard/page.test.ts and test/browser/tuning.test.ts.
 */
import { describe, expect, it } from "vitest";
import { loadConfig, SETTINGS } from "../../../src/config";
import {
  backoffSeconds,
  longestOrder,
  MAX_BACKOFF_SECONDS,
  orderWorkflowV1,
  scheduleEvery,
  scheduleIntervalSeconds,
  stepRecovery,
  storeLoad,
  timingBudget,
  timingInputs,
  type TimingInputs,
} from "../../../src/domain";
import { deriveBound } from "../../../tools/soak/invariants";
import { SOAK_TIMINGS } from "../../../tools/soak/soak";
import { TUNING_KNOBS } from "../../../src/dashboard/browser/tuningKnobs";
import { TEST_PAGING_KEY } from "../../support/domain";

/** The steps of the declared process (src/domain/process.ts): the figures below that depend on them say so. */
const STEPS = orderWorkflowV1.steps.length;

/**
 * The shipped defaults (src/config.ts): step 30 s, sweep every 15 s, back-off 10 s, starter every 5 s, 3 retries,
 * on the declared process's steps.
 */
const DEFAULTS: TimingInputs = {
  stepTimeoutSeconds: 30,
  claimTimeoutSeconds: 60,
  supervisorIntervalSeconds: 15,
  starterIntervalSeconds: 5,
  backoffBaseSeconds: 10,
  maxFailures: 3,
  pageSize: 100,
  steps: STEPS,
};

const connections = {
  ServiceBusConnection: "Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v",
  CosmosConnection: "AccountEndpoint=https://localhost:8081/;AccountKey=a2V5;",
  PAGING_TOKEN_KEY: TEST_PAGING_KEY,
};

describe("timing formulas", () => {
  it("retry a stuck step after STEP_TIMEOUT + back-off + one starter period, one Supervisor period more without a notice", () => {
    // 30 + 10 + 5 = 45 s from the notice; + 15 = 60 s when only the sweep finds it.
    expect(stepRecovery(DEFAULTS, 1)).toEqual({
      failure: 1,
      backoffSeconds: 10,
      viaRecoveryQueueSeconds: 45,
      viaSweepSeconds: 60,
    });
    // The Azure defaults: a 60 s step (infra/main.bicep): 60 + 15 + 10 + 5.
    expect(stepRecovery({ ...DEFAULTS, stepTimeoutSeconds: 60 }, 1).viaSweepSeconds).toBe(90);
  });

  it("double the back-off for each failure up to SUPERVISOR_MAX_FAILURES, capped at an hour, as the Supervisor waits", () => {
    expect(timingBudget(DEFAULTS).retries.map((r) => r.backoffSeconds)).toEqual([10, 20, 40]);
    expect(timingBudget(DEFAULTS).retries.map((r) => r.viaSweepSeconds)).toEqual([60, 70, 90]);
    expect(timingBudget({ ...DEFAULTS, maxFailures: 5 }).retries.map((r) => r.backoffSeconds)).toEqual([
      10, 20, 40, 80, 160,
    ]);
    expect(backoffSeconds(10, 30)).toBe(MAX_BACKOFF_SECONDS);
    expect(MAX_BACKOFF_SECONDS).toBe(3600);
    // The Supervisor's decision (expire) waits these very back-offs: transitions/expiry.test.ts sees 10, 20, 40 s.
  });

  it("give up on a step that never answers after every retry's wait, its last deadline and one sweep", () => {
    // 60 + 70 + 90 (the three retries) + 30 (the last attempt's deadline) + 15 (the sweep that makes it Error).
    expect(timingBudget(DEFAULTS).giveUpSeconds).toBe(265);
  });

  it("bound an order by 2 × (retries + 1) attempts of claim + steps × step + both periods + the largest back-off", () => {
    // 60 + steps × 30 + 15 + 40 + 5 s an attempt (210 s for three steps); 2 × 4 attempts of it (1680 s).
    const attemptSeconds = 60 + STEPS * 30 + 15 + 40 + 5;
    expect(longestOrder(DEFAULTS)).toEqual({
      attemptSeconds,
      attempts: 4,
      largestBackoffSeconds: 40,
      seconds: 2 * 4 * attemptSeconds,
    });
    expect(longestOrder({ ...DEFAULTS, steps: 3 })).toMatchObject({ attemptSeconds: 210, seconds: 1680 });
    // The soak's bound is this figure: 2 × 3 × (5 + steps × 3 + 1 + 4·2 + 1) s (144 s for three steps).
    const soakSeconds = 2 * 3 * (5 + STEPS * 3 + 1 + 4 * 2 + 1);
    const soak = deriveBound(SOAK_TIMINGS);
    expect(soak.seconds).toBe(soakSeconds);
    expect(deriveBound(SOAK_TIMINGS, 3).seconds).toBe(144);
    expect(soak.explanation).toContain(
      `2 (forward, compensation) × (SUPERVISOR_MAX_FAILURES 2 + 1) × (CLAIM_TIMEOUT 5 + ${STEPS} steps × STEP_TIMEOUT 3` +
        ` + supervisor interval 1 + max back-off 8 + starter interval 1) = ${soakSeconds} s;`,
    );
  });

  it("count the store's load per hour from the two schedules and the page size", () => {
    expect(storeLoad(DEFAULTS)).toEqual({
      sweepsPerHour: 240, // 3600 / 15
      sweepRecordsPerHour: 24_000, // 240 × 100
      sweepMaxRecords: 5_000, // 50 pages × 100
      starterRoundsPerHour: 720, // 3600 / 5
    });
    expect(storeLoad({ ...DEFAULTS, supervisorIntervalSeconds: 60 }).sweepsPerHour).toBe(60);
  });

  it("read a schedule's period, and write the schedule of a period, for every period a slider offers", () => {
    expect(scheduleIntervalSeconds("*/5 * * * * *")).toBe(5);
    expect(scheduleIntervalSeconds("0 */2 * * * *")).toBe(120);
    expect(() => scheduleIntervalSeconds("0 0 9 * * MON")).toThrow(/cannot derive a fixed interval/);
    expect(scheduleEvery(15)).toBe("*/15 * * * * *");
    expect(scheduleEvery(300)).toBe("0 */5 * * * *");
    expect(scheduleEvery(7)).toBeUndefined(); // */7 fires at :56 and again at :00
    for (const knob of TUNING_KNOBS.filter((k) => k.schedule)) {
      for (const seconds of knob.choices)
        expect(scheduleIntervalSeconds(scheduleEvery(seconds)!)).toBe(seconds);
    }
  });

  it("take their inputs from the app's configuration, naming a schedule without a fixed period", () => {
    const config = loadConfig(connections);
    expect(timingInputs(config, STEPS)).toEqual(DEFAULTS);
    expect(SETTINGS.SUPERVISOR_SCHEDULE.default).toBe("*/15 * * * * *");
    const weekly = loadConfig({ ...connections, SUPERVISOR_SCHEDULE: "0 0 9 * * MON" });
    expect(() => timingInputs(weekly, STEPS)).toThrow(/^SUPERVISOR_SCHEDULE: schedule "0 0 9 \* \* MON"/);
  });
});
