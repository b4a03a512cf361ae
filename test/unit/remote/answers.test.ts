/**
 * What a remote answer means, on its own: every class the transport acts on, and the text it takes from the answer
 * escaped and bounded. Through the real client against a hostile server: test/integration/remote/hostileAnswers.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MAX_ERROR_CODE_LENGTH, MAX_ERROR_MESSAGE_LENGTH } from "../../../src/domain";
import {
  classifyAnswer,
  jsonObjectAnswer,
  retryAfterMs,
  shownUrl,
  type AnswerClass,
  type HttpAnswer,
  type SuccessCheck,
} from "../../../src/remote/answers";
import { RAW_CONTROL } from "../../support/text";

const URL_CALLED = "http://127.0.0.1:7081/payment/charge";
const NOW = new Date("2026-01-01T12:00:00Z");
const call = { url: URL_CALLED, orderId: "ORD-1", now: NOW };

function answer(
  status: number,
  headers: Record<string, string> = {},
  body: string | Uint8Array = "",
): HttpAnswer {
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    status,
    header: (name) => lower.get(name.toLowerCase()) ?? null,
    body: typeof body === "string" ? new TextEncoder().encode(body) : body,
  };
}
const json = (status: number, value: unknown, type = "application/json") =>
  answer(status, { "content-type": type }, JSON.stringify(value));

/** The class of `a`, with the message's text checked to be one escaped, bounded line. */
function classify(a: HttpAnswer, success?: SuccessCheck): AnswerClass {
  const verdict = classifyAnswer(a, call, success);
  if (verdict.kind !== "ok") {
    expect(verdict.error.message).not.toMatch(RAW_CONTROL);
    expect(verdict.error.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_LENGTH);
    expect(verdict.error.code).not.toMatch(RAW_CONTROL);
    expect(verdict.error.code.length).toBeLessThanOrEqual(MAX_ERROR_CODE_LENGTH);
  }
  return verdict;
}

describe("a 2xx under today's protocol (jsonObjectAnswer)", () => {
  it("is ok when it is a JSON object served as JSON, with or without parameters or a +json type", () => {
    const body = { orderId: "ORD-1", chargeId: "CHG-000001", amount: 5, currency: "EUR" };
    expect(classify(json(200, body))).toEqual({ kind: "ok", status: 200, body });
    expect(classify(json(201, body, "Application/JSON; charset=utf-8"))).toMatchObject({ kind: "ok" });
    expect(classify(json(200, body, "application/vnd.payment+json"))).toMatchObject({ kind: "ok" });
    // An undo's answer of the simulator: every one of its operations echoes the order.
    expect(classify(json(200, { orderId: "ORD-1", undone: [], noop: true }))).toMatchObject({ kind: "ok" });
  });

  it("is ok without an orderId: only an answer that names an order must name the call's", () => {
    expect(classify(json(200, { reservationId: "RES-1" }))).toMatchObject({ kind: "ok" });
  });

  it.each([
    [
      "an HTML page",
      answer(200, { "content-type": "text/html" }, "<html>charged</html>"),
      /HTTP 200 .*"text\/html".*not a JSON object/,
    ],
    [
      "a 204 with no body",
      answer(204),
      /HTTP 204 with content-type \(none\): 0 bytes of body, not a JSON object/,
    ],
    [
      "an empty JSON body",
      answer(200, { "content-type": "application/json" }),
      /empty body, not a JSON object/,
    ],
    ["a JSON array", json(200, [{ orderId: "ORD-1" }]), /JSON array of 1 items, not a JSON object/],
    ["JSON null", json(200, null), /JSON null body, not a JSON object/],
    ["a JSON string", json(200, "ok"), /not a JSON object/],
    [
      "text that is not JSON",
      answer(200, { "content-type": "application/json" }, "OK\n"),
      /not JSON \(.*\), not a JSON object/,
    ],
    [
      "bytes that are not UTF-8",
      answer(200, { "content-type": "application/json" }, new Uint8Array([0x7b, 0xff, 0x7d])),
      /not UTF-8/,
    ],
    [
      "a JSON object served as text",
      json(200, { orderId: "ORD-1" }, "text/plain"),
      /"text\/plain".*not a JSON object/,
    ],
  ])("is not a success when it is %s: InvalidAnswer, transient, an alert", (_, a, message) => {
    const verdict = classify(a);
    expect(verdict).toMatchObject({
      kind: "transient",
      outage: true,
      error: { code: "InvalidAnswer", message: expect.stringMatching(message) },
      problem: { kind: "InvalidAnswer" },
    });
    if (verdict.kind !== "transient") return;
    expect(verdict.error.message).toContain(`POST ${URL_CALLED}`);
    expect(verdict.problem?.detail).toBe(verdict.error.message);
  });

  it("is not a success when it names another order: AnswerMismatch, transient, an alert", () => {
    expect(classify(json(200, { orderId: "ORD-2", chargeId: "CHG-9" }))).toMatchObject({
      kind: "transient",
      error: { code: "AnswerMismatch", message: expect.stringContaining('order "ORD-2", not for "ORD-1"') },
      problem: { kind: "InvalidAnswer" },
    });
    expect(classify(json(200, { orderId: 1 }))).toMatchObject({ error: { code: "AnswerMismatch" } });
  });

  it("escapes and bounds what it quotes of the answer", () => {
    const hostileType = `text/html\r\n[alert] ALERT Error order=ORD-1${"x".repeat(5_000)}`;
    const verdict = classify(answer(200, { "content-type": hostileType }, "<html>"));
    expect(verdict).toMatchObject({ error: { message: expect.stringContaining("\\r\\n[alert]") } });
    const parserQuote = classify(
      answer(200, { "content-type": "application/json" }, `\u2028{${"y".repeat(100_000)}`),
    );
    expect(parserQuote).toMatchObject({ error: { code: "InvalidAnswer" } });
  });

  it("asks the operation's own success check, when it is given one (an adapter's)", () => {
    const anything: SuccessCheck = () => ({ ok: true, body: { accepted: true } });
    expect(classify(answer(204), anything)).toEqual({ kind: "ok", status: 204, body: { accepted: true } });
    expect(jsonObjectAnswer(answer(204), call)).toMatchObject({ ok: false, code: "InvalidAnswer" });
  });
});

describe("a redirect", () => {
  it("is never a success: Redirected, misconfigured, naming the Location's origin and nothing more", () => {
    const verdict = classify(answer(302, { location: "https://evil.example:8443/steal?key=secret#x" }));
    expect(verdict).toMatchObject({
      kind: "misconfigured",
      status: 302,
      error: {
        code: "Redirected",
        message: `POST ${URL_CALLED} answered HTTP 302, a redirect to https://evil.example:8443, not followed`,
      },
      problem: { kind: "ServiceMisconfigured" },
    });
  });

  it("says so when it points back at the same origin, or nowhere", () => {
    expect(classify(answer(307, { location: "/payment/charge" }))).toMatchObject({
      error: { message: expect.stringContaining("to http://127.0.0.1:7081 (the same origin), not followed") },
    });
    expect(classify(answer(301))).toMatchObject({
      kind: "misconfigured",
      error: { message: expect.stringContaining("without a Location") },
    });
  });

  it("quotes a Location that is no URL escaped", () => {
    const verdict = classify(answer(302, { location: "http://[bad\n[alert] ALERT" }));
    expect(verdict).toMatchObject({ error: { message: expect.stringContaining("unreadable Location") } });
  });
});

describe("a 4xx", () => {
  it.each([
    [404, "RouteNotFound"],
    [405, "MethodNotAllowed"],
  ])("%i is a route not where the URL says: misconfigured, not a refusal", (status, code) => {
    expect(classify(json(status, { code: "NotFound", message: "No route" }))).toMatchObject({
      kind: "misconfigured",
      status,
      error: {
        code,
        message: `POST ${URL_CALLED} answered HTTP ${status}: the service has no such route there`,
      },
      problem: { kind: "ServiceMisconfigured" },
    });
  });

  it.each([400, 402, 403, 409, 422])(
    "%i is a business refusal with the service's code and message",
    (status) => {
      expect(
        classify(json(status, { code: "PaymentDeclined", message: "over the limit", limit: 100 })),
      ).toEqual({
        kind: "refused",
        status,
        error: { code: "PaymentDeclined", message: "over the limit" },
      });
    },
  );

  it("is a refusal named by its status when its body says nothing readable", () => {
    expect(classify(answer(403, { "content-type": "text/html" }, "<h1>Forbidden</h1>"))).toEqual({
      kind: "refused",
      status: 403,
      error: { code: "HTTP403", message: "HTTP403" },
    });
  });

  it("keeps a refusal's hostile code and message on one bounded line", () => {
    const verdict = classify(
      json(409, { code: `Declined\r\n${"C".repeat(200)}`, message: "\u2028x".repeat(5_000) }),
    );
    expect(verdict).toMatchObject({
      kind: "refused",
      error: { code: expect.stringMatching(/^Declined\\r\\n/) },
    });
  });
});

describe("a 429", () => {
  it("is transient, not the service down, and carries its Retry-After", () => {
    expect(classify(answer(429, { "retry-after": "1" }))).toEqual({
      kind: "transient",
      status: 429,
      error: { code: "HTTP429", message: "HTTP429" },
      outage: false,
      retryAfterMs: 1_000,
    });
    const dated = classify(answer(429, { "retry-after": "Thu, 01 Jan 2026 12:00:30 GMT" }));
    expect(dated).toMatchObject({ outage: false, retryAfterMs: 30_000 });
    expect(classify(answer(429))).not.toHaveProperty("retryAfterMs");
  });
});

describe("a 5xx or 408", () => {
  it.each([500, 502, 503, 408])("%i is transient and may be an outage", (status) => {
    expect(classify(json(status, { code: "Busy", message: "try later" }))).toEqual({
      kind: "transient",
      status,
      error: { code: "Busy", message: "try later" },
      outage: true,
    });
  });

  it("carries its Retry-After, still counted as the service down", () => {
    expect(classify(answer(503, { "retry-after": "2" }))).toMatchObject({
      kind: "transient",
      outage: true,
      retryAfterMs: 2_000,
    });
  });

  it("is named by its status when its body is a proxy's page", () => {
    expect(classify(answer(502, { "content-type": "text/html" }, "<h1>Bad Gateway</h1>"))).toMatchObject({
      error: { code: "HTTP502", message: "HTTP502" },
    });
  });
});

describe("retryAfterMs", () => {
  it("reads delay-seconds and HTTP-dates, a date past as now, and nothing else", () => {
    expect(retryAfterMs("0", NOW)).toBe(0);
    expect(retryAfterMs(" 120 ", NOW)).toBe(120_000);
    expect(retryAfterMs("Thu, 01 Jan 2026 12:01:00 GMT", NOW)).toBe(60_000);
    expect(retryAfterMs("Wed, 31 Dec 2025 12:00:00 GMT", NOW)).toBe(0);
    expect(retryAfterMs(null, NOW)).toBeUndefined();
    expect(retryAfterMs("1.5", NOW)).toBeUndefined();
    expect(retryAfterMs("-1", NOW)).toBeUndefined();
    expect(retryAfterMs("soon", NOW)).toBeUndefined();
  });
});

describe("shownUrl", () => {
  it("shows a URL without its credentials or query", () => {
    expect(shownUrl("https://user:pw@pay.example/api/charge?code=secret")).toBe(
      "https://pay.example/api/charge",
    );
  });
});
