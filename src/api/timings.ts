import type { HttpResponseInit } from "@azure/functions";
import { z } from "zod";
import type { Dependencies } from "../app/dependencies";
import {
  MAX_BACKOFF_SECONDS,
  MAX_PAGES_PER_SWEEP,
  timingBudget,
  timingInputs,
  type TimingInputs,
} from "../domain";
import { json } from "./responses";

const seconds = z.number().nonnegative();
const stepRecoverySchema = z.strictObject({
  failure: z.number().int().positive(),
  backoffSeconds: seconds,
  viaRecoveryQueueSeconds: seconds,
  viaSweepSeconds: seconds,
});

/** The answer of GET /api/timings. With `problem` set (a schedule without a fixed period), no inputs or figures. */
export const timingsSchema = z.strictObject({
  settings: z.strictObject({
    STEP_TIMEOUT_SECONDS: seconds,
    CLAIM_TIMEOUT_SECONDS: seconds,
    SUPERVISOR_SCHEDULE: z.string(),
    SUPERVISOR_BACKOFF_SECONDS: seconds,
    SUPERVISOR_MAX_FAILURES: z.number().int().nonnegative(),
    SUPERVISOR_PAGE_SIZE: z.number().int().positive(),
    STARTER_SCHEDULE: z.string(),
  }),
  limits: z.strictObject({ maxBackoffSeconds: seconds, maxPagesPerSweep: z.number().int().positive() }),
  inputs: z
    .strictObject({
      stepTimeoutSeconds: seconds,
      claimTimeoutSeconds: seconds,
      supervisorIntervalSeconds: seconds,
      starterIntervalSeconds: seconds,
      backoffBaseSeconds: seconds,
      maxFailures: z.number().int().nonnegative(),
      pageSize: z.number().int().positive(),
      steps: z.number().int().positive(),
    })
    .nullable(),
  figures: z
    .strictObject({
      recovery: stepRecoverySchema,
      retries: z.array(stepRecoverySchema),
      giveUpSeconds: seconds,
      longestOrder: z.strictObject({
        attemptSeconds: seconds,
        attempts: z.number().int().positive(),
        largestBackoffSeconds: seconds,
        seconds,
      }),
      load: z.strictObject({
        sweepsPerHour: seconds,
        sweepRecordsPerHour: seconds,
        sweepMaxRecords: z.number().int().nonnegative(),
        starterRoundsPerHour: seconds,
      }),
    })
    .nullable(),
  problem: z.string().nullable(),
});
type Timings = z.infer<typeof timingsSchema>;

/**
 * The timing settings the app runs with, and the figures they imply (src/domain/timingBudget.ts): what the
 * dashboard's "Tuning the timings" view starts from. Read only: the what-if sliders compute in the browser and
 * never come back here. A schedule without a fixed period has no figures; `problem` says which one.
 */
export function timingsRequest(deps: Pick<Dependencies, "config" | "workflows">): HttpResponseInit {
  const { config } = deps;
  const steps = Math.max(...deps.workflows.list().map((w) => w.steps.length));
  const settings = {
    STEP_TIMEOUT_SECONDS: config.stepTimeoutSeconds,
    CLAIM_TIMEOUT_SECONDS: config.claimTimeoutSeconds,
    SUPERVISOR_SCHEDULE: config.supervisorSchedule,
    SUPERVISOR_BACKOFF_SECONDS: config.supervisorBackoffSeconds,
    SUPERVISOR_MAX_FAILURES: config.supervisorMaxFailures,
    SUPERVISOR_PAGE_SIZE: config.supervisorPageSize,
    STARTER_SCHEDULE: config.starterSchedule,
  };
  const limits = { maxBackoffSeconds: MAX_BACKOFF_SECONDS, maxPagesPerSweep: MAX_PAGES_PER_SWEEP };
  let inputs: TimingInputs;
  try {
    inputs = timingInputs(config, steps);
  } catch (error) {
    return json(200, {
      settings,
      limits,
      inputs: null,
      figures: null,
      problem: (error as Error).message,
    } satisfies Timings);
  }
  return json(200, {
    settings,
    limits,
    inputs,
    figures: timingBudget(inputs),
    problem: null,
  } satisfies Timings);
}
