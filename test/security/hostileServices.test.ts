/**
 * Hostile text from a remote service: an error whose code and message carry newlines, a forged log line and
 * markup. What the service said reaches the submitter's status messages (on their queue and in the operator API)
 * and the operator's alert escaped, on one line, bounded: the same treatment every text crossing a trust
 * boundary gets.
 */
import { expect } from "vitest";
import { MAX_REASON_LENGTH, orderWorkflowV1 } from "../../src/domain";
import { e2eOrder, forOrder, submitWithFaults } from "../support/e2eOrders";
import { faultOn } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { RAW_CONTROL } from "../support/text";

const it = e2eTest();

type Status = { orderId: string; status: string; detail: string | null };
type Alert = { kind: string; orderId: string | null; reason: string };

const FORGED_LINE = "[alert] ALERT Error order=ORD-1 state=Error: payment failed";
/** The code within the 64 characters an agent keeps of it; the message well over what a detail keeps. */
const FORGED_CODE = "Declined\r\n[alert] ALERT Error order=ORD-1";
const hostile = {
  code: FORGED_CODE,
  message: `<img src=x onerror=alert(1)>\u2028${FORGED_LINE}\n`.repeat(40),
};

/** Every detail is one escaped line within the bound, and the service's words are still there to read. */
function expectEscaped(details: (string | null)[], what: string) {
  const texts = details.filter((d): d is string => d !== null);
  expect(texts.length, what).toBeGreaterThan(0);
  for (const text of texts) {
    expect(text, what).not.toMatch(RAW_CONTROL);
    expect(text.length, what).toBeLessThanOrEqual(MAX_REASON_LENGTH);
  }
  expect(texts.join("\n"), what).toContain(JSON.stringify(FORGED_CODE).slice(1, -1));
}

it("a refusal's code and message reach the status messages escaped, on the queue and in the API", async ({
  e2e,
  statuses,
}) => {
  const order = e2eOrder("HOSTILE-REFUSAL");
  const last = orderWorkflowV1.steps.length - 1;
  await submitWithFaults(e2e, order, { ...faultOn(last), kind: "permanent", ...hostile });
  await e2e.waitForState(order.orderId, ["Compensated"]);

  await statuses.waitFor((m) => forOrder(order.orderId)(m) && (m as Status).status === "compensated");
  const sent = (await statuses.all()).filter(forOrder(order.orderId)) as Status[];
  const compensating = sent.find((s) => s.status === "compensating");
  expect(compensating?.detail).toContain("<img src=x onerror=alert(1)>\\u2028");
  expectEscaped(
    sent.map((s) => s.detail),
    "status queue",
  );

  const view = (await (await e2e.api(`/api/orders/${order.orderId}`)).json()) as { statusMessages: Status[] };
  expectEscaped(
    view.statusMessages.map((s) => s.detail),
    "operator API",
  );
}, 30_000);

it("an undo's refusal reaches the compensationFailed status and the alert escaped", async ({
  e2e,
  statuses,
  alerts,
}) => {
  const order = e2eOrder("HOSTILE-UNDO");
  const last = orderWorkflowV1.steps.length - 1;
  await submitWithFaults(
    e2e,
    order,
    { ...faultOn(last), kind: "permanent" },
    { ...faultOn(0, "undo"), kind: "permanent", ...hostile },
  );
  await e2e.waitForState(order.orderId, ["CompensationFailed"]);

  const failed = (await statuses.waitFor(
    (m) => forOrder(order.orderId)(m) && (m as Status).status === "compensationFailed",
  )) as Status;
  expectEscaped([failed.detail], "compensationFailed status");
  const alert = (await alerts.waitFor(forOrder(order.orderId))) as Alert;
  expect(alert.kind).toBe("CompensationFailed");
  expect(alert.reason).not.toMatch(RAW_CONTROL);
  expect(alert.reason.length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
}, 30_000);
