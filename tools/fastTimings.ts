/**
 * Timings under which recovery takes seconds, not minutes: a step times out after 3 s, the starter and the
 * Supervisor look every second. The app's e2e tests and the recovery benchmark run under them, on top of the
 * shipped settings; the soak too, with a longer back-off (SOAK_TIMINGS).
 */
export const FAST_TIMINGS: Record<string, string> = {
  STARTER_SCHEDULE: "*/1 * * * * *",
  SUPERVISOR_SCHEDULE: "*/1 * * * * *",
  STEP_TIMEOUT_SECONDS: "3",
  CLAIM_TIMEOUT_SECONDS: "5",
  AGENT_ATTEMPT_TIMEOUT_SECONDS: "1",
  AGENT_MAX_ATTEMPTS: "3",
  SUPERVISOR_MAX_FAILURES: "2",
  SUPERVISOR_BACKOFF_SECONDS: "1",
  SUPERVISOR_LEASE_SECONDS: "5",
};
