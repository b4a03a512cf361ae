/**
 * How the order detail shows one step of a state record: its badge and colour, and whether it has an undo. Apart
 * from main.ts, which draws it, so that the rules can be tested without a browser.
 */

/** What these read of a step, as GET /api/orders/{orderId} answers it. */
export interface ShownStep {
  status: "Pending" | "Dispatched" | "Succeeded" | "Failed";
  /** False for a step that declares no undo; absent from records written before steps could lack one. */
  undoable?: boolean;
  undo?: { status: ShownStep["status"] } | null;
}

/** Shown beside a step that declares no undo, where an undoable step's undo shows once compensation reaches it. */
export const NO_UNDO = "no undo";
export const NO_UNDO_TITLE =
  "This step declares no undo: compensation passes it, and the audit trail says so.";

export const hasNoUndo = (step: ShownStep): boolean => step.undoable === false;

/** The step's badge: its undo's progress once one was dispatched, else how far its forward action got. */
export function stepLabel(step: ShownStep): string {
  if (step.undo)
    return step.undo.status === "Succeeded"
      ? "Compensated"
      : step.undo.status === "Failed"
        ? "Compensation failed"
        : "Compensating";
  return step.status === "Pending"
    ? "Not started"
    : step.status === "Dispatched"
      ? "In doubt / waiting"
      : step.status;
}

/** The process state whose colour the step takes. */
export function stepState(step: ShownStep): string {
  if (step.undo) return step.undo.status === "Failed" ? "CompensationFailed" : "Compensated";
  return step.status === "Succeeded"
    ? "Processed"
    : step.status === "Failed"
      ? "Error"
      : step.status === "Dispatched"
        ? "Processing"
        : "Pending";
}
