// How the order detail shows a step (src/dashboard/browser/stepView.ts): its badge, its colour, and whether it
// declares an undo, as the API's state record says.
import { describe, expect, it } from "vitest";
import { hasNoUndo, stepLabel, stepState, type ShownStep } from "../../../src/dashboard/browser/stepView";
import { pendingRecord, sampleOrder } from "../../support/domain";
import { FIXTURE_WITHOUT_UNDO } from "../../support/fixtureWorkflows";

describe("a step in the order detail", () => {
  it("is marked when it declares no undo, from the record's own field", () => {
    const steps: ShownStep[] = pendingRecord(sampleOrder(), FIXTURE_WITHOUT_UNDO).steps;
    expect(steps.map(hasNoUndo)).toEqual([false, true, false, true]);
    // A record written before the field: every step of it has an undo.
    expect(hasNoUndo({ status: "Succeeded" })).toBe(false);
  });

  it("shows its undo's progress once one was dispatched, and its own otherwise", () => {
    const cases: Array<[ShownStep, string, string]> = [
      [{ status: "Pending" }, "Not started", "Pending"],
      [{ status: "Dispatched" }, "In doubt / waiting", "Processing"],
      [{ status: "Succeeded", undoable: false }, "Succeeded", "Processed"],
      [{ status: "Failed", undoable: false }, "Failed", "Error"],
      [{ status: "Succeeded", undo: { status: "Dispatched" } }, "Compensating", "Compensated"],
      [{ status: "Succeeded", undo: { status: "Succeeded" } }, "Compensated", "Compensated"],
      [{ status: "Succeeded", undo: { status: "Failed" } }, "Compensation failed", "CompensationFailed"],
    ];
    for (const [step, label, state] of cases)
      expect([stepLabel(step), stepState(step)]).toEqual([label, state]);
  });
});
