import { describe, expect, it } from "vitest";
import {
  HISTORY_LIMIT,
  claim,
  expire,
  stateRecordSchema,
  stepSucceeded,
  type StateRecord,
} from "../../../../src/domain";
import { copyPlain } from "../../../../src/domain/transitions/result";
import { at, ok, pendingRecord, processingRecord } from "../../../support/domain";
import { expireCtx } from "./support";

/** The answer to step 1 of a record that waits on it. */
const stepOneSucceeded = (record: StateRecord) =>
  stepSucceeded(record, {
    now: at(12),
    lockedBy: record.lockedBy!,
    stepIndex: 1,
    result: 1,
    compensation: 1,
  });

describe("records", () => {
  it("never mutates the record it is given", () => {
    const record = processingRecord(1, true);
    const copy = structuredClone(record);
    stepOneSucceeded(record);
    expect(record).toEqual(copy);
  });

  it("gives the new record a history of its own, sharing only the entries already written, which stay as they were", () => {
    const record = processingRecord(1, true);
    const entries = [...record.history];
    const next = ok(stepOneSucceeded(record));
    expect(next.history).not.toBe(record.history);
    expect(record.history).toEqual(entries);
    expect(next.history.slice(0, -1)).toEqual(entries.slice(-(next.history.length - 1)));
    expect(next.history.at(-1)!.event).toBe("stepSucceeded");
    // Every other field is a copy: changing the new record's steps leaves the old one's alone.
    next.steps[1]!.status = "Failed";
    expect(record.steps[1]!.status).not.toBe("Failed");
  });

  it("copies a record whole: nothing of the copy is shared with it, every field kept (undefined ones too)", () => {
    const record = { ...processingRecord(1, true), note: undefined };
    const copy = copyPlain(record);
    expect(copy).toStrictEqual(record);
    copy.steps[1]!.status = "Failed";
    copy.history[0]!.event = "changed";
    expect(record.steps[1]!.status).not.toBe("Failed");
    expect(record.history[0]!.event).not.toBe("changed");
  });

  it("bounds the audit trail", () => {
    let record = pendingRecord();
    for (let i = 0; i < HISTORY_LIMIT + 10; i++) {
      record = ok(claim(record, { now: at(i * 100), claimTimeoutSeconds: 1 }));
      record = ok(expire(record, expireCtx(record, i * 100 + 2, 1000)));
      record = { ...record, retryAt: null };
    }
    expect(record.history).toHaveLength(HISTORY_LIMIT);
    expect(stateRecordSchema.safeParse(record).success).toBe(true);
  });
});
