/**
 * Property-based tests of the state machine: random interleavings of every actor (starter, two orchestration
 * copies that may be stale, Supervisor, operator), each acting on its own possibly outdated copy and writing it
 * back the way the adapters do, with a conditional replace on the etag. The rules of the state record
 * (docs/architecture.md) must hold after every committed write, whatever the order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  COMPENSATION_STEP_SKIPPED,
  HISTORY_LIMIT,
  TERMINAL_STATES,
  claim,
  compensated,
  compensationStepDispatched,
  compensationStepDone,
  compensationStepFailed,
  expire,
  hasUndo,
  isDocumentedEdge,
  isLocked,
  mayPassStepsWithoutUndo,
  nextStepIndex,
  nextUndoIndex,
  operatorCancel,
  operatorRetry,
  processed,
  requestCompensation,
  stateRecordSchema,
  stepDispatched,
  stepFailedPermanent,
  stepFailedTransient,
  stepSucceeded,
  type ProcessState,
  type StateRecord,
  type TransitionResult,
  type WorkflowDefinition,
} from "../../../src/domain";
import { T0, pendingRecord, sampleOrder } from "../../support/domain";
import { FIXTURE_WORKFLOWS } from "../../support/fixtureWorkflows";

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
const SETTINGS = { claimTimeoutSeconds: 60, stepTimeoutSeconds: 30, maxFailures: 1, backoffSeconds: 10 };
const OPERATOR_EVENTS = new Set(["operatorRetry", "operatorCancel"]);

type ActorName = "starter" | "schedulerA" | "schedulerB" | "supervisor" | "operator";
const SCHEDULERS = ["schedulerA", "schedulerB"] as const;

type Event =
  | { type: "read"; actor: ActorName }
  | { type: "advance"; seconds: number }
  | { type: "claim" }
  | { type: "dispatch"; actor: (typeof SCHEDULERS)[number]; stale: number; skew: number }
  | {
      type: "reply";
      actor: (typeof SCHEDULERS)[number];
      outcome: "ok" | "transient" | "permanent";
      stale: number;
      skew: number;
    }
  | { type: "finish"; actor: (typeof SCHEDULERS)[number]; stale: number }
  | { type: "expire" }
  | { type: "operatorRetry" }
  | { type: "operatorCancel" }
  | { type: "requestCompensation" };

interface Commit {
  event: string;
  prev: StateRecord;
  next: StateRecord;
}

/** The store holds one record and an etag; each actor holds the copy it last read. */
class World {
  etag = 0;
  now = 0;
  readonly copies = new Map<ActorName, { record: StateRecord; etag: number }>();
  readonly commits: Commit[] = [];
  readonly lockHolders: string[] = [];
  conflicts = 0;

  constructor(public record: StateRecord) {
    for (const a of ["starter", "schedulerA", "schedulerB", "supervisor", "operator"] as const) this.read(a);
  }

  date(): Date {
    return new Date(T0.getTime() + this.now * 1000);
  }

  read(actor: ActorName): void {
    this.copies.set(actor, { record: this.record, etag: this.etag });
  }

  copy(actor: ActorName): StateRecord {
    return this.copies.get(actor)!.record;
  }

  /** A conditional replace: only a writer holding the current etag wins; everyone else gets a 412. */
  write(actor: ActorName, event: string, result: TransitionResult): void {
    if (!result.ok || !result.changed) return;
    const held = this.copies.get(actor)!;
    if (held.etag !== this.etag) {
      this.conflicts++;
      return;
    }
    this.commits.push({ event, prev: this.record, next: result.record });
    this.record = result.record;
    this.etag++;
    this.read(actor);
    if (result.record.lockedBy && !this.lockHolders.includes(result.record.lockedBy)) {
      this.lockHolders.push(result.record.lockedBy);
    }
  }

  /** The lock an orchestration copy writes with: its own, or (stale > 0) an older attempt's. */
  lockFor(actor: ActorName, stale: number): string {
    const own = this.copy(actor).lockedBy;
    if (stale === 0 && own) return own;
    return this.lockHolders[Math.max(0, this.lockHolders.length - 1 - stale)] ?? "ORD-1001:0";
  }
}

const ACTOR_OF: Partial<Record<Event["type"], ActorName>> = {
  claim: "starter",
  expire: "supervisor",
  operatorRetry: "operator",
  operatorCancel: "operator",
  requestCompensation: "operator",
};

/** Most actions start from a fresh read, as the adapters do; the rest act on whatever copy the actor holds. */
function act(world: World, e: Event, fresh: boolean): void {
  const actor = "actor" in e && e.type !== "read" ? e.actor : ACTOR_OF[e.type];
  if (fresh && actor) world.read(actor);
  apply(world, e);
}

function apply(world: World, e: Event): void {
  const now = world.date();
  switch (e.type) {
    case "read":
      return world.read(e.actor);
    case "advance":
      world.now += e.seconds;
      return;
    case "claim":
      return world.write("starter", "claim", claim(world.copy("starter"), { now, ...SETTINGS }));
    case "dispatch": {
      const r = world.copy(e.actor);
      const lockedBy = world.lockFor(e.actor, e.stale);
      const ctx = { now, lockedBy, stepTimeoutSeconds: SETTINGS.stepTimeoutSeconds };
      if (r.processState === "Compensating") {
        const stepIndex = Math.max(0, nextUndoIndex(r) + e.skew);
        return world.write(
          e.actor,
          "compensationStepDispatched",
          compensationStepDispatched(r, { ...ctx, stepIndex }),
        );
      }
      const stepIndex = Math.max(0, nextStepIndex(r) + e.skew);
      return world.write(e.actor, "stepDispatched", stepDispatched(r, { ...ctx, stepIndex }));
    }
    case "reply": {
      const r = world.copy(e.actor);
      const lockedBy = world.lockFor(e.actor, e.stale);
      const error = { code: e.outcome, message: "injected" };
      if (r.processState === "Compensating") {
        const stepIndex = Math.max(0, nextUndoIndex(r) + e.skew);
        if (e.outcome === "ok") {
          return world.write(
            e.actor,
            "compensationStepDone",
            compensationStepDone(r, { now, lockedBy, stepIndex, result: { undone: stepIndex } }),
          );
        }
        return world.write(
          e.actor,
          "compensationStepFailed",
          compensationStepFailed(r, { now, lockedBy, stepIndex, outcome: e.outcome, error }),
        );
      }
      const stepIndex = Math.max(0, nextStepIndex(r) + e.skew);
      if (e.outcome === "ok") {
        return world.write(
          e.actor,
          "stepSucceeded",
          stepSucceeded(r, {
            now,
            lockedBy,
            stepIndex,
            result: { done: stepIndex },
            compensation: { stepIndex },
          }),
        );
      }
      if (e.outcome === "transient") {
        return world.write(
          e.actor,
          "stepFailedTransient",
          stepFailedTransient(r, { now, lockedBy, stepIndex, error }),
        );
      }
      return world.write(
        e.actor,
        "stepFailedPermanent",
        stepFailedPermanent(r, { now, lockedBy, stepIndex, error }),
      );
    }
    case "finish": {
      const r = world.copy(e.actor);
      const lockedBy = world.lockFor(e.actor, e.stale);
      if (r.processState === "Compensating") {
        return world.write(e.actor, "compensated", compensated(r, { now, lockedBy }));
      }
      return world.write(e.actor, "processed", processed(r, { now, lockedBy }));
    }
    case "expire": {
      const r = world.copy("supervisor");
      return world.write(
        "supervisor",
        "expire",
        expire(r, { now, expectedLockedBy: r.lockedBy ?? "none", ...SETTINGS }),
      );
    }
    case "operatorRetry":
      return world.write(
        "operator",
        "operatorRetry",
        operatorRetry(world.copy("operator"), { now, operator: "ana" }),
      );
    case "operatorCancel":
      return world.write(
        "operator",
        "operatorCancel",
        operatorCancel(world.copy("operator"), { now, operator: "ana" }),
      );
    case "requestCompensation":
      return world.write(
        "operator",
        "requestCompensation",
        requestCompensation(world.copy("operator"), { now, reason: "policy", requestedBy: "policy" }),
      );
  }
}

const schedulerArb = fc.constantFrom(...SCHEDULERS);
const staleArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
);
const skewArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: -1, max: 1 }) },
);

const actionArb: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant("read" as const),
      actor: fc.constantFrom<ActorName>("starter", "schedulerA", "schedulerB", "supervisor", "operator"),
    }),
  },
  {
    weight: 9,
    arbitrary: fc.record({
      type: fc.constant("advance" as const),
      seconds: fc.integer({ min: 1, max: 120 }),
    }),
  },
  { weight: 9, arbitrary: fc.record({ type: fc.constant("claim" as const) }) },
  {
    weight: 15,
    arbitrary: fc.record({
      type: fc.constant("dispatch" as const),
      actor: schedulerArb,
      stale: staleArb,
      skew: skewArb,
    }),
  },
  {
    weight: 15,
    arbitrary: fc.record({
      type: fc.constant("reply" as const),
      actor: schedulerArb,
      outcome: fc.constantFrom(
        "ok" as const,
        "ok" as const,
        "ok" as const,
        "transient" as const,
        "permanent" as const,
      ),
      stale: staleArb,
      skew: skewArb,
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ type: fc.constant("finish" as const), actor: schedulerArb, stale: staleArb }),
  },
  { weight: 6, arbitrary: fc.record({ type: fc.constant("expire" as const) }) },
  { weight: 6, arbitrary: fc.record({ type: fc.constant("operatorRetry" as const) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("operatorCancel" as const) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("requestCompensation" as const) }) },
);
const stepArb = fc.record({ event: actionArb, fresh: fc.boolean() });

/** The history entries a commit added (entries are written once and shared, so the new ones are new objects). */
function addedEntries({ prev, next }: Commit) {
  const before = new Set(prev.history);
  return next.history.filter((entry) => !before.has(entry));
}

/** The steps a commit recorded as passed without undo, by index. */
function skippedIn(commit: Commit): number[] {
  return addedEntries(commit)
    .filter((entry) => entry.event === COMPENSATION_STEP_SKIPPED)
    .map((entry) => commit.next.steps.findIndex((s) => entry.detail === `${s.name}: no undo declared`));
}

/** Compensation bookkeeping derived from the commit log, to check the undo plan and its order. */
function checkCompensation(commits: Commit[], workflow: WorkflowDefinition): void {
  const undoable = (i: number) => hasUndo(workflow.steps[i]!);
  const forwardOrder: number[] = [];
  let plan: Set<number> | null = null;
  let undone: number[] = [];
  // Every step compensation dealt with, in the order it did: undone, or passed for having no undo.
  let walked: number[] = [];
  for (const commit of commits) {
    const { event, prev, next } = commit;
    if (event === "stepDispatched") {
      const index = next.steps.findIndex((s, i) => s.dispatchedAt !== prev.steps[i]!.dispatchedAt);
      if (!forwardOrder.includes(index)) forwardOrder.push(index);
    }
    const entering =
      ["CompensationPending", "Compensating", "Compensated"].includes(next.processState) &&
      !["CompensationPending", "Compensating", "CompensationFailed"].includes(prev.processState);
    if (entering) {
      // The plan, computed here rather than by the code under test: every step that succeeded or is in doubt
      // (dispatched, never decisively answered) and whose definition declares an undo, and nothing else.
      plan = new Set(
        next.steps.flatMap((s, i) =>
          (s.status === "Succeeded" || s.status === "Dispatched") && undoable(i) ? [i] : [],
        ),
      );
      undone = [];
      walked = [];
    }
    if (event === "compensationStepDispatched") {
      const index = next.steps.findIndex(
        (s, i) => s.undo !== prev.steps[i]!.undo && s.undo?.status === "Dispatched",
      );
      expect(plan?.has(index), `undo dispatched for step ${index} outside the plan`).toBe(true);
      const remaining = [...plan!].filter((i) => !undone.includes(i));
      expect(index, "undo must start from the last step that may have had an effect").toBe(
        Math.max(...remaining),
      );
    }
    if (event === "compensationStepDone") {
      const index = next.steps.findIndex(
        (s, i) => s.undo?.status === "Succeeded" && prev.steps[i]!.undo?.status !== "Succeeded",
      );
      undone.push(index);
      walked.push(index);
    }
    // Written after the transition's own entry: the steps it moved past once its own move was made.
    walked.push(...skippedIn(commit));
    if (next.processState === "Compensated" && prev.processState !== "Compensated") {
      expect(new Set(undone), "Compensated must undo exactly the steps that may have had an effect").toEqual(
        plan,
      );
      const expectedOrder = forwardOrder.filter((i) => plan!.has(i)).reverse();
      expect(undone, "undo must run in reverse completion order").toEqual(expectedOrder);
      expect(
        next.steps.every(
          (s, i) =>
            s.status === "Pending" || s.status === "Failed" || s.undo?.status === "Succeeded" || !undoable(i),
        ),
      ).toBe(true);
      // The trail reads every step compensation reached, from the last down: each undone, or passed (a step
      // without undo that succeeded, was refused or is in doubt) in the write that moved past it.
      const reached = next.steps.flatMap((s, i) => (s.status !== "Pending" ? [i] : []));
      const expectedWalk = reached.filter((i) => !undoable(i) || plan!.has(i)).reverse();
      expect(walked, "compensation must undo or pass each step it reaches, once, from the last down").toEqual(
        expectedWalk,
      );
    }
  }
}

function checkCommit(commit: Commit, workflow: WorkflowDefinition): void {
  const { event, prev, next } = commit;
  // No write loses or rewrites the order: identity, workflow and shape survive every transition.
  expect(stateRecordSchema.safeParse(next).success).toBe(true);
  expect(next.orderId).toBe(prev.orderId);
  expect(next.fingerprint).toBe(prev.fingerprint);
  expect(next.workflow).toEqual(prev.workflow);
  expect(next.createdAt).toBe(prev.createdAt);
  expect(next.steps).toHaveLength(prev.steps.length);
  expect(next.history.length).toBeLessThanOrEqual(HISTORY_LIMIT);

  // Every transition that happens is documented (docs/architecture.md is generated from the same table).
  expect(
    isDocumentedEdge(event, prev.processState, next.processState),
    `${event}: ${prev.processState} → ${next.processState}`,
  ).toBe(true);

  // Each step says whether its definition declares an undo, and no undo is ever dispatched for one that does not.
  expect(next.steps.map((s) => s.undoable)).toEqual(workflow.steps.map(hasUndo));
  expect(next.steps.filter((s) => !s.undoable && s.undo !== null)).toEqual([]);
  // Only the transitions the table says pass steps without undo record doing so, and only for such steps.
  const skipped = skippedIn(commit);
  if (skipped.length > 0) {
    expect(mayPassStepsWithoutUndo(event), `${event} recorded ${COMPENSATION_STEP_SKIPPED}`).toBe(true);
    expect(skipped.every((i) => i >= 0 && !hasUndo(workflow.steps[i]!))).toBe(true);
  }

  // A terminal state is left only by an operator action; Processed and Compensated are never left.
  if (TERMINAL_STATES.includes(prev.processState) && next.processState !== prev.processState) {
    expect(OPERATOR_EVENTS.has(event), `${event} left terminal ${prev.processState}`).toBe(true);
    expect(["Processed", "Compensated"]).not.toContain(prev.processState);
  }

  // Failure counts never go down except by an operator retry.
  if (
    next.failureCount < prev.failureCount ||
    next.compensationFailureCount < prev.compensationFailureCount
  ) {
    expect(event).toBe("operatorRetry");
  }

  // lockedBy and completeBy are set exactly in Processing and Compensating.
  expect(next.lockedBy !== null, `lockedBy in ${next.processState}`).toBe(isLocked(next.processState));
  expect(next.completeBy !== null, `completeBy in ${next.processState}`).toBe(isLocked(next.processState));

  if (next.processState === "Processed") {
    expect(next.steps.every((s) => s.status === "Succeeded" && s.undo === null)).toBe(true);
  }
}

/**
 * From wherever the random run left it, well-behaved actors must be able to finish the order: a non-terminal
 * record is always either claimable or expirable, so no sequence strands an order.
 */
function drainToTerminal(world: World): ProcessState {
  const start = world.record.processState;
  const expected: ProcessState = TERMINAL_STATES.includes(start)
    ? start
    : start === "Pending" || start === "Processing"
      ? "Processed"
      : "Compensated";
  const finish = (state: ProcessState): ProcessState => {
    // With every remote call answering ok, an unfinished order must finish the way it was heading.
    expect(state, `drain from ${start}`).toBe(expected);
    return state;
  };
  for (let i = 0; i < 200; i++) {
    for (const a of ["starter", "schedulerA", "supervisor"] as const) world.read(a);
    const r = world.record;
    if (TERMINAL_STATES.includes(r.processState)) return finish(r.processState);
    if (r.processState === "Pending" || r.processState === "CompensationPending") {
      if (r.retryAt) world.now = Math.max(world.now, (Date.parse(r.retryAt) - T0.getTime()) / 1000);
      apply(world, { type: "claim" });
    } else if (isLocked(r.processState)) {
      const before = world.etag;
      apply(world, { type: "dispatch", actor: "schedulerA", stale: 0, skew: 0 });
      world.read("schedulerA");
      apply(world, { type: "reply", actor: "schedulerA", outcome: "ok", stale: 0, skew: 0 });
      world.read("schedulerA");
      apply(world, { type: "finish", actor: "schedulerA", stale: 0 });
      if (world.etag === before) {
        // Nothing moved: the attempt is stuck (e.g. expired early); the Supervisor recovers it.
        world.now = Math.max(world.now, (Date.parse(r.completeBy!) - T0.getTime()) / 1000 + 1);
        world.read("supervisor");
        apply(world, { type: "expire" });
      }
    }
  }
  throw new Error(`order stuck in ${world.record.processState}`);
}

// On fixture workflows of several lengths, one with steps without undo (test/support/fixtureWorkflows.ts): the
// rules hold whatever the steps.
describe.each(FIXTURE_WORKFLOWS.map((workflow) => ({ workflow, name: workflow.name })))(
  "state machine under random interleavings, $name",
  ({ workflow }) => {
    it(`keeps every invariant over ${NUM_RUNS} random event sequences`, () => {
      const reached = new Set<string>();
      fc.assert(
        fc.property(fc.array(stepArb, { minLength: 1, maxLength: 80, size: "max" }), (steps) => {
          const world = new World(pendingRecord(sampleOrder(), workflow));
          for (const { event, fresh } of steps) act(world, event, fresh);
          const drained = drainToTerminal(world);
          for (const c of world.commits) {
            checkCommit(c, workflow);
            reached.add(c.next.processState);
          }
          checkCompensation(world.commits, workflow);
          expect(TERMINAL_STATES).toContain(drained);
        }),
        { numRuns: NUM_RUNS },
      );
      // The generator must actually reach every state, or the properties above prove little.
      expect([...reached].sort()).toEqual(
        [
          "Compensated",
          "Compensating",
          "CompensationFailed",
          "CompensationPending",
          "Error",
          "Pending",
          "Processed",
          "Processing",
        ].sort(),
      );
    });

    it("lets exactly one of two racing writers from the same copy win", () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 5 }), (readers) => {
          const world = new World(pendingRecord(sampleOrder(), workflow));
          for (let i = 0; i < readers; i++) apply(world, { type: "claim" });
          // Only the first claim commits; the others held a stale etag or found the record Processing.
          expect(world.commits.filter((c) => c.event === "claim")).toHaveLength(1);
        }),
        { numRuns: 20 },
      );
    });
  },
);
