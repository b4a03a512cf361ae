import { SETTINGS } from "../../src/config";

/**
 * The timing settings at their shipped defaults (src/config.ts), over the e2e harness's fast ones: the tuning
 * view's tests and its screenshot show the figures a reader of docs/operations.md#tuning finds there.
 */
export const SHIPPED_TIMINGS: Record<string, string> = Object.fromEntries(
  (
    [
      "STEP_TIMEOUT_SECONDS",
      "CLAIM_TIMEOUT_SECONDS",
      "SUPERVISOR_SCHEDULE",
      "SUPERVISOR_BACKOFF_SECONDS",
      "SUPERVISOR_MAX_FAILURES",
      "SUPERVISOR_PAGE_SIZE",
      "STARTER_SCHEDULE",
    ] as const
  ).map((name) => [name, SETTINGS[name].default]),
);
