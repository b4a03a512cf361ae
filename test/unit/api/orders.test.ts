import { describe, expect, it } from "vitest";
import { operatorActionBody } from "../../../src/api/orders";
import { validateBody } from "../../../src/domain";

describe("the body of retry and cancel", () => {
  it.each([
    ["a C1 next line", "payment fixed\u0085ALERT Error"],
    ["a C1 control sequence introducer", "ok \u009b31m red"],
    ["a line separator", "ok\u2028ALERT Error"],
    ["a right-to-left override", "refund \u202edenied"],
    ["a newline", "ok\nALERT Error"],
  ])("refuses a reason with %s", (_name, reason) => {
    const result = validateBody(operatorActionBody, { reason });
    expect(result.ok ? "accepted" : result.message).toBe("reason: expected no control characters");
  });

  it("takes a reason in any script", () => {
    for (const reason of ["payment service fixed", "Zahlung repariert, Müller", "支付已修复", "תוקן"])
      expect(validateBody(operatorActionBody, { reason }).ok, reason).toBe(true);
  });
});
