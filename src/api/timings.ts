import type { HttpResponseInit } from "@azure/functions";
import type { Dependencies } from "../app/dependencies";
import {
  MAX_BACKOFF_SECONDS,
  MAX_PAGES_PER_SWEEP,
  timingBudget,
  timingInputs,
  type TimingInputs,
} from "../domain";
import { json } from "./responses";

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
    return json(200, { settings, limits, inputs: null, figures: null, problem: (error as Error).message });
  }
  return json(200, { settings, limits, inputs, figures: timingBudget(inputs), problem: null });
}
