/**
 * The timing formulas: from the settings alone, how soon a stuck step is retried, how long an order may take,
 * the Supervisor's back-off between attempts, and how often the Supervisor and the starter query the state store.
 * Everything that states one of these figures computes it here: the Supervisor's decision (the back-off), the
 * sweep (its page limit), the soak's bound (tools/soak/invariants.ts), the recovery benchmark, the worked example
 * in docs/operations.md#tuning, the operator API's GET /api/timings and the dashboard's what-if sliders.
 *
 * The dashboard's browser code imports this module as it is, compiled to an ES module with the page's own code
 * (src/dashboard/browser/tsconfig.json lists it), so the sliders compute with this very code rather than a copy.
 * That is why it imports nothing: whatever it imported would have to load in a browser too. Plain arithmetic on
 * numbers: the browser and Node.js compute the same figures.
 */

/** What the formulas read: the timing settings, the schedules as their periods in seconds. */
export interface TimingInputs {
  /** STEP_TIMEOUT_SECONDS: a step's deadline from its dispatch. */
  stepTimeoutSeconds: number;
  /** CLAIM_TIMEOUT_SECONDS: a claimed attempt's deadline for its first dispatch. */
  claimTimeoutSeconds: number;
  /** The period of SUPERVISOR_SCHEDULE: how often the Supervisor sweeps. */
  supervisorIntervalSeconds: number;
  /** The period of STARTER_SCHEDULE: how often the starter claims due orders. */
  starterIntervalSeconds: number;
  /** SUPERVISOR_BACKOFF_SECONDS: the back-off before the first retry, doubling for each further one. */
  backoffBaseSeconds: number;
  /** SUPERVISOR_MAX_FAILURES: failed attempts retried; the next failure is final. */
  maxFailures: number;
  /** SUPERVISOR_PAGE_SIZE: records one page of the sweep's query reads. */
  pageSize: number;
  /** Steps of the longest workflow: each may use its whole timeout in one attempt. */
  steps: number;
}

/** What a stuck step's recovery depends on. */
export type RecoveryInputs = Pick<
  TimingInputs,
  "stepTimeoutSeconds" | "supervisorIntervalSeconds" | "starterIntervalSeconds" | "backoffBaseSeconds"
>;

/** How soon a step that never answers is retried, after the attempt's `failure`-th failure. */
export interface StepRecovery {
  failure: number;
  /** The Supervisor's back-off before this retry. */
  backoffSeconds: number;
  /** From the step's dispatch to the retry's claim, when its deadline notice reached the recovery queue. */
  viaRecoveryQueueSeconds: number;
  /** The same when no notice came (the orchestration never ran to its deadline): the sweep's period more. */
  viaSweepSeconds: number;
}

export interface LongestOrder {
  /** The longest one attempt lasts until the next is claimed: claim timeout, every step's, both periods, back-off. */
  attemptSeconds: number;
  /** Forward attempts (SUPERVISOR_MAX_FAILURES + 1); compensation gets as many again. */
  attempts: number;
  /** The largest back-off: the one before the last retry. */
  largestBackoffSeconds: number;
  /** From the first claim to a terminal state, without process kills or outages. */
  seconds: number;
}

export interface StoreLoad {
  /** Sweeps per hour, each a query that fans out to every partition of the state store. */
  sweepsPerHour: number;
  /** Records the sweeps read per hour at most while no more than a page is due at a time (one page each). */
  sweepRecordsPerHour: number;
  /** Records one sweep reads at most when many attempts expired at once (MAX_PAGES_PER_SWEEP pages). */
  sweepMaxRecords: number;
  /** Claim rounds of the starter's timer per hour (each new submission and operator action adds one). */
  starterRoundsPerHour: number;
}

export interface TimingBudget {
  /** A stuck step's first retry: the figure to compare with how long a customer may wait. */
  recovery: StepRecovery;
  /** Every retry in turn, failure 1 to SUPERVISOR_MAX_FAILURES; failure SUPERVISOR_MAX_FAILURES + 1 is Error. */
  retries: StepRecovery[];
  /** From the first dispatch of a step that never answers to the order's Error, at the latest. */
  giveUpSeconds: number;
  longestOrder: LongestOrder;
  load: StoreLoad;
}

/** Upper bound of the Supervisor's growing back-off between attempts. */
export const MAX_BACKOFF_SECONDS = 3600;
/** A sweep reads at most this many pages; what is left waits for the next sweep. */
export const MAX_PAGES_PER_SWEEP = 50;
const HOUR = 3600;

/** Delay before retry number `failureCount` (1-based): base × 2^(n−1), capped. */
export function backoffSeconds(base: number, failureCount: number): number {
  return Math.min(base * 2 ** Math.max(0, failureCount - 1), MAX_BACKOFF_SECONDS);
}

/**
 * Seconds between occurrences of a six-field NCRONTAB schedule of the forms a fixed period has: "*\/n * * * * *"
 * (every n seconds) and "s *\/n * * * *" (every n minutes). Throws for any other, whose period varies.
 */
export function scheduleIntervalSeconds(schedule: string): number {
  const fields = schedule.trim().split(/\s+/);
  if (fields.length !== 6) throw new Error(`schedule "${schedule}": expected six NCRONTAB fields`);
  const [second = "", minute = "", ...rest] = fields;
  const every = (field: string): number | undefined =>
    field === "*" ? 1 : /^\*\/(\d+)$/.test(field) ? Number(field.slice(2)) : undefined;
  const allStars = rest.every((f) => f === "*");
  const seconds = every(second);
  const minutes = every(minute);
  if (allStars && minute === "*" && seconds !== undefined) return seconds;
  if (allStars && /^\d+$/.test(second) && minutes !== undefined) return minutes * 60;
  throw new Error(`schedule "${schedule}": cannot derive a fixed interval (expected */n seconds or minutes)`);
}

/** The schedule that fires every `seconds`, evenly: a divisor of a minute in seconds, or of an hour in minutes. */
export function scheduleEvery(seconds: number): string | undefined {
  if (seconds >= 1 && seconds < 60 && 60 % seconds === 0) return `*/${seconds} * * * * *`;
  const minutes = seconds / 60;
  if (Number.isInteger(minutes) && minutes >= 1 && minutes <= 60 && 60 % minutes === 0)
    return `0 */${minutes} * * * *`;
  return undefined;
}

/**
 * A step that never answers, after the attempt's `failure`-th failure: its deadline passes STEP_TIMEOUT after
 * its dispatch; the recovery queue delivers the deadline notice then (the sweep, for an attempt that sent none,
 * within one period more); the order waits out the back-off in Pending; the starter claims it at its next round.
 */
export function stepRecovery(t: RecoveryInputs, failure: number): StepRecovery {
  const backoff = backoffSeconds(t.backoffBaseSeconds, failure);
  const viaRecoveryQueueSeconds = t.stepTimeoutSeconds + backoff + t.starterIntervalSeconds;
  return {
    failure,
    backoffSeconds: backoff,
    viaRecoveryQueueSeconds,
    viaSweepSeconds: viaRecoveryQueueSeconds + t.supervisorIntervalSeconds,
  };
}

/** Each retry the Supervisor grants, in turn: failures 1 to SUPERVISOR_MAX_FAILURES. */
function retries(t: TimingInputs): StepRecovery[] {
  return Array.from({ length: Math.max(0, t.maxFailures) }, (_, i) => stepRecovery(t, i + 1));
}

/**
 * The longest an order may take from its first claim to a terminal state. One attempt lasts at most the claim
 * timeout plus every step's timeout; the Supervisor notices its end within one sweep period, waits at most the
 * largest back-off, and the starter claims the retry within one starter period. Forward work gets
 * SUPERVISOR_MAX_FAILURES + 1 attempts, and compensation as many again (it keeps its own count).
 */
export function longestOrder(t: Omit<TimingInputs, "pageSize">): LongestOrder {
  const largestBackoffSeconds = backoffSeconds(t.backoffBaseSeconds, t.maxFailures);
  const attemptSeconds =
    t.claimTimeoutSeconds +
    t.steps * t.stepTimeoutSeconds +
    t.supervisorIntervalSeconds +
    largestBackoffSeconds +
    t.starterIntervalSeconds;
  const attempts = t.maxFailures + 1;
  return { attemptSeconds, attempts, largestBackoffSeconds, seconds: 2 * attempts * attemptSeconds };
}

/** What the two timers ask of the state store, per hour. */
export function storeLoad(t: TimingInputs): StoreLoad {
  const sweepsPerHour = HOUR / t.supervisorIntervalSeconds;
  return {
    sweepsPerHour,
    sweepRecordsPerHour: sweepsPerHour * t.pageSize,
    sweepMaxRecords: MAX_PAGES_PER_SWEEP * t.pageSize,
    starterRoundsPerHour: HOUR / t.starterIntervalSeconds,
  };
}

/** Every figure at once, as GET /api/timings and the dashboard show them. */
export function timingBudget(t: TimingInputs): TimingBudget {
  const all = retries(t);
  // Every retry's wait, then the last attempt's deadline and the sweep (or notice) that decides it is final.
  const giveUpSeconds =
    all.reduce((sum, r) => sum + r.viaSweepSeconds, 0) + t.stepTimeoutSeconds + t.supervisorIntervalSeconds;
  return {
    recovery: stepRecovery(t, 1),
    retries: all,
    giveUpSeconds,
    longestOrder: longestOrder(t),
    load: storeLoad(t),
  };
}

/** The settings the formulas read, as the app's configuration names them (AppConfig has them all). */
export interface TimingSettings {
  stepTimeoutSeconds: number;
  claimTimeoutSeconds: number;
  supervisorSchedule: string;
  starterSchedule: string;
  supervisorBackoffSeconds: number;
  supervisorMaxFailures: number;
  supervisorPageSize: number;
}

/** The formulas' inputs from the settings; throws, naming the setting, for a schedule without a fixed period. */
export function timingInputs(settings: TimingSettings, steps: number): TimingInputs {
  const period = (name: string, schedule: string): number => {
    try {
      return scheduleIntervalSeconds(schedule);
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
    }
  };
  return {
    stepTimeoutSeconds: settings.stepTimeoutSeconds,
    claimTimeoutSeconds: settings.claimTimeoutSeconds,
    supervisorIntervalSeconds: period("SUPERVISOR_SCHEDULE", settings.supervisorSchedule),
    starterIntervalSeconds: period("STARTER_SCHEDULE", settings.starterSchedule),
    backoffBaseSeconds: settings.supervisorBackoffSeconds,
    maxFailures: settings.supervisorMaxFailures,
    pageSize: settings.supervisorPageSize,
    steps,
  };
}
