/**
 * The settings the dashboard's "Tuning the timings" view has a slider for: the page's markup has a row for each
 * (src/dashboard/page.ts) and the browser code (tuning.ts) fills the rows and moves the sliders over `choices`.
 */
import type { TimingInputs } from "../../domain/timingBudget.js";

/** A setting the view has a slider for: the formula input it sets, and the values the slider offers. */
export interface TuningKnob {
  input: keyof TimingInputs;
  setting: string;
  label: string;
  /** "seconds" values are shown as durations; a schedule's what-if is the NCRONTAB of that period. */
  unit: "seconds" | "retries" | "records";
  schedule?: true;
  /** The slider's stops, ascending; the running value is added when it is not one of them. */
  choices: number[];
}

// Periods that a schedule can keep evenly (scheduleEvery has one for each): divisors of a minute, then of an hour.
const PERIODS = [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1800, 3600];

/** The three numbers the guide names first (step timeout, Supervisor period, back-off), then the others. */
export const TUNING_KNOBS: readonly TuningKnob[] = [
  {
    input: "stepTimeoutSeconds",
    setting: "STEP_TIMEOUT_SECONDS",
    label: "Step timeout",
    unit: "seconds",
    choices: [5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600],
  },
  {
    input: "supervisorIntervalSeconds",
    setting: "SUPERVISOR_SCHEDULE",
    label: "Supervisor sweep every",
    unit: "seconds",
    schedule: true,
    choices: PERIODS,
  },
  {
    input: "backoffBaseSeconds",
    setting: "SUPERVISOR_BACKOFF_SECONDS",
    label: "First back-off",
    unit: "seconds",
    choices: [1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600],
  },
  {
    input: "starterIntervalSeconds",
    setting: "STARTER_SCHEDULE",
    label: "Starter round every",
    unit: "seconds",
    schedule: true,
    choices: PERIODS.filter((p) => p <= 300),
  },
  {
    input: "maxFailures",
    setting: "SUPERVISOR_MAX_FAILURES",
    label: "Retries before Error",
    unit: "retries",
    choices: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  },
  {
    input: "claimTimeoutSeconds",
    setting: "CLAIM_TIMEOUT_SECONDS",
    label: "Claim timeout",
    unit: "seconds",
    choices: [10, 15, 30, 45, 60, 90, 120, 300],
  },
  {
    input: "pageSize",
    setting: "SUPERVISOR_PAGE_SIZE",
    label: "Sweep page size",
    unit: "records",
    choices: [10, 25, 50, 100, 200, 500, 1000],
  },
];
