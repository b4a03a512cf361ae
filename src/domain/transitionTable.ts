import type { Actor, ProcessState } from "./stateRecord";

export interface TransitionSpec {
  transition: string;
  /** Who applies it; `policy` is any automated rule that asks for undo. */
  actor: Actor | "policy";
  /** Applies only while lockedBy equals the caller's instance id. */
  fenced: boolean;
  /** Every (from, to) the transition can produce; `null` from = a new record. */
  edges: ReadonlyArray<readonly [ProcessState | null, ProcessState]>;
  summary: string;
  /**
   * It can move compensation past steps without undo (it begins compensation, or finishes the undo above one):
   * its write then also records a `compensationStepSkipped` entry for each (stepsPassedWithoutUndo).
   */
  passesStepsWithoutUndo?: true;
}

/**
 * The state machine as data: the documentation (docs/architecture.md) is generated from it, and the property
 * tests check that every transition they observe is listed here, so neither can drift from the code.
 */
export const TRANSITIONS: readonly TransitionSpec[] = [
  {
    transition: "submit",
    actor: "submission",
    fenced: false,
    edges: [[null, "Pending"]],
    summary: "new order: record created Pending, unlocked, failureCount 0",
  },
  {
    transition: "claim",
    actor: "starter",
    fenced: false,
    edges: [
      ["Pending", "Processing"],
      ["CompensationPending", "Compensating"],
    ],
    summary:
      "unlocked and due: attempt+1, lockedBy = `${orderId}:${attempt}`, completeBy = now + CLAIM_TIMEOUT_SECONDS",
  },
  {
    transition: "stepDispatched",
    actor: "scheduler",
    fenced: true,
    edges: [["Processing", "Processing"]],
    summary:
      "next step Dispatched, completeBy = now + STEP_TIMEOUT_SECONDS (a same-attempt repeat is a no-op)",
  },
  {
    transition: "stepSucceeded",
    actor: "scheduler",
    fenced: true,
    edges: [["Processing", "Processing"]],
    summary: "agent replied ok: step Succeeded with its result and compensation data",
  },
  {
    transition: "stepFailedTransient",
    actor: "scheduler",
    fenced: true,
    edges: [["Processing", "Processing"]],
    summary: "agent replied transient: attempt ended early (completeBy = now) for the Supervisor to decide",
  },
  {
    transition: "stepFailedPermanent",
    actor: "scheduler",
    fenced: true,
    edges: [
      ["Processing", "Compensating"],
      ["Processing", "Compensated"],
    ],
    summary:
      "agent replied permanent: step Failed; the same attempt undoes the earlier steps (none: Compensated)",
    passesStepsWithoutUndo: true,
  },
  {
    transition: "processed",
    actor: "scheduler",
    fenced: true,
    edges: [["Processing", "Processed"]],
    summary: "every step Succeeded: lock released",
  },
  {
    transition: "compensationStepDispatched",
    actor: "scheduler",
    fenced: true,
    edges: [["Compensating", "Compensating"]],
    summary:
      "next undo (highest step that may have had an effect and declares an undo) Dispatched with its deadline",
  },
  {
    transition: "compensationStepDone",
    actor: "scheduler",
    fenced: true,
    edges: [["Compensating", "Compensating"]],
    summary: "agent confirmed the undo",
    passesStepsWithoutUndo: true,
  },
  {
    transition: "compensationStepFailed",
    actor: "scheduler",
    fenced: true,
    edges: [
      ["Compensating", "Compensating"],
      ["Compensating", "CompensationFailed"],
    ],
    summary: "undo failed: transient ends the attempt early; permanent → CompensationFailed + alert",
  },
  {
    transition: "compensated",
    actor: "scheduler",
    fenced: true,
    edges: [["Compensating", "Compensated"]],
    summary: "every step that may have had an effect and declares an undo is undone, in reverse order",
  },
  {
    transition: "expire",
    actor: "supervisor",
    fenced: false,
    edges: [
      ["Processing", "Pending"],
      ["Processing", "Error"],
      ["Compensating", "CompensationPending"],
      ["Compensating", "CompensationFailed"],
    ],
    summary:
      "completeBy passed and lockedBy as read: failures+1; retryAt = now + backoff, or past SUPERVISOR_MAX_FAILURES Error / CompensationFailed + alert; if the app's own store or bus failed during the attempt, no count (retryAt = now + the first backoff, parkedSince kept) until OUTAGE_MAX_SECONDS",
  },
  {
    transition: "parkForOutage",
    actor: "scheduler",
    fenced: true,
    edges: [
      ["Processing", "Pending"],
      ["Compensating", "CompensationPending"],
    ],
    summary:
      "the agent made no call, the service's breaker being open: lock released, retryAt = the probe time + jitter, failure counts unchanged, parkedSince kept",
  },
  {
    transition: "deferForOutage",
    actor: "starter",
    fenced: false,
    edges: [
      ["Pending", "Pending"],
      ["CompensationPending", "CompensationPending"],
    ],
    summary:
      "due, but the next step's service is sure to refuse: not claimed, retryAt = the probe time + jitter",
  },
  {
    transition: "requestCompensation",
    actor: "policy",
    fenced: false,
    edges: [
      ["Pending", "CompensationPending"],
      ["Processing", "CompensationPending"],
      ["Pending", "Compensated"],
      ["Processing", "Compensated"],
    ],
    summary:
      "policy asks for undo: lock released (fencing off the running attempt); nothing to undo → Compensated",
    passesStepsWithoutUndo: true,
  },
  {
    transition: "operatorRetry",
    actor: "operator",
    fenced: false,
    edges: [
      ["Error", "Pending"],
      ["CompensationFailed", "CompensationPending"],
    ],
    summary: "operator sends the order back to work; the Supervisor's count is reset",
  },
  {
    transition: "operatorCancel",
    actor: "operator",
    fenced: false,
    edges: [
      ["Pending", "CompensationPending"],
      ["Processing", "CompensationPending"],
      ["Error", "CompensationPending"],
      ["Pending", "Compensated"],
      ["Processing", "Compensated"],
      ["Error", "Compensated"],
    ],
    summary: "operator cancels an unfinished order: completed and in-doubt steps are undone in reverse",
    passesStepsWithoutUndo: true,
  },
  {
    transition: "alertSent",
    actor: "supervisor",
    fenced: false,
    edges: [
      ["Error", "Error"],
      ["CompensationFailed", "CompensationFailed"],
    ],
    summary:
      "the alert decided with Error / CompensationFailed is on the alerts queue: alert.sentAt set (by its writer, or by the Supervisor's sweep when that writer died first)",
  },
];

/** Whether the table says the transition may record compensationStepSkipped entries. */
export function mayPassStepsWithoutUndo(transition: string): boolean {
  return TRANSITIONS.find((t) => t.transition === transition)?.passesStepsWithoutUndo === true;
}

export function isDocumentedEdge(transition: string, from: ProcessState | null, to: ProcessState): boolean {
  const spec = TRANSITIONS.find((t) => t.transition === transition);
  return spec?.edges.some(([f, t]) => f === from && t === to) ?? false;
}

/** Mermaid state diagram of every documented edge, labelled with the transitions that produce it. */
export function renderStateDiagram(): string {
  const labels = new Map<string, string[]>();
  for (const spec of TRANSITIONS) {
    for (const [from, to] of spec.edges) {
      if (from === to) continue;
      const key = `${from ?? "[*]"} --> ${to}`;
      labels.set(key, [...(labels.get(key) ?? []), spec.transition]);
    }
  }
  const lines = ["stateDiagram-v2"];
  for (const [edge, names] of labels) lines.push(`    ${edge} : ${names.join(", ")}`);
  for (const terminal of ["Processed", "Compensated"]) lines.push(`    ${terminal} --> [*]`);
  return lines.join("\n");
}

/** Markdown table of the transitions: who applies each, whether it is fenced, and its edges. */
export function renderTransitionTable(): string {
  const rows = TRANSITIONS.map((t) => {
    const edges = t.edges.map(([from, to]) => `${from ?? "(new)"} → ${to}`).join("<br>");
    const skips = t.passesStepsWithoutUndo
      ? "; records `compensationStepSkipped` for each step without undo it moves compensation past"
      : "";
    return `| \`${t.transition}\` | ${t.actor} | ${t.fenced ? "yes" : "no"} | ${edges} | ${t.summary}${skips} |`;
  });
  return [
    "| Transition | Actor | Fenced | From → To | What it does |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}
