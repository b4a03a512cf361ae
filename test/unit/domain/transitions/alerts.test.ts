import { describe, expect, it } from "vitest";
import { alertSent, expire, operatorRetry } from "../../../../src/domain";
import { at, claimedRecord, ok } from "../../../support/domain";
import { expireCtx, refusal } from "./support";

describe("alertSent", () => {
  it("marks a decided alert sent once; an operator retry drops one a crash left unsent", () => {
    let record = claimedRecord(at(1));
    record = ok(expire(record, { ...expireCtx(record, 100), maxFailures: 0 }));
    const messageId = record.alert!.messageId;
    expect(refusal(alertSent(record, { now: at(101), messageId: "other", by: "supervisor" })).code).toBe(
      "WrongState",
    );
    const sent = ok(alertSent(record, { now: at(101), messageId, by: "scheduler" }));
    expect(sent.alert).toMatchObject({ messageId, sentAt: at(101).toISOString() });
    expect(sent.history.at(-1)).toMatchObject({
      event: "alertSent",
      by: "scheduler",
      from: "Error",
      to: "Error",
    });
    expect(alertSent(sent, { now: at(102), messageId, by: "supervisor" })).toMatchObject({
      ok: true,
      changed: false,
    });
    const retried = ok(operatorRetry(record, { now: at(103), operator: "ada" }));
    expect(retried.alert).toBeNull();
  });
});
