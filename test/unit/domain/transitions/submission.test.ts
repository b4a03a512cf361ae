import { describe, expect, it } from "vitest";
import { acceptResubmission, stateRecordSchema } from "../../../../src/domain";
import { pendingRecord, processingRecord, sampleOrder } from "../../../support/domain";
import { workflow, refusal } from "./support";

describe("submit and resubmission", () => {
  it("creates a Pending, unlocked record with every step not started", () => {
    const record = pendingRecord();
    expect(stateRecordSchema.parse(record)).toBeTruthy();
    expect(record).toMatchObject({
      id: "ORD-1001",
      processState: "Pending",
      lockedBy: null,
      completeBy: null,
      failureCount: 0,
      attempt: 0,
      replyTo: "status-demo",
      workflow: { name: workflow.name, version: workflow.version },
    });
    expect(record.steps.map((s) => [s.name, s.agent, s.status])).toEqual(
      workflow.steps.map((s) => [s.name, s.agent, "Pending"]),
    );
    expect(record.history).toHaveLength(1);
  });

  it("accepts the same order again as a no-op, whatever its state", () => {
    const result = acceptResubmission(processingRecord(1), sampleOrder());
    expect(result).toMatchObject({ ok: true, changed: false });
  });

  it("refuses different data for a known orderId as OrderConflict", () => {
    const r = refusal(acceptResubmission(pendingRecord(), sampleOrder({ customerId: "C-99" })));
    expect(r.code).toBe("OrderConflict");
    expect(r.reason).toContain("ORD-1001");
  });
});
