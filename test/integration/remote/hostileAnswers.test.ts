/**
 * The agents' remote call through the real RemoteServiceClient against a service that answers what is not its
 * answer: a page in place of JSON, nothing, another order's answer, a redirect elsewhere or to itself, 64 MiB, a
 * trickle, a 429, a missing route. None of them may count as a success, none may make more requests than the
 * retries allow or send anything elsewhere, and none may cost the process more than the bound it reads. The gate
 * below records what the client tells the circuit breaker.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RemoteServiceClient, type CallGate, type RemoteOutcome } from "../../../src/remote/remoteService";
import { MAX_ANSWER_BYTES } from "../../../src/remote/answers";
import {
  hugeAnswer,
  jsonAnswer,
  rawAnswer,
  startHostileService,
  type HostileService,
} from "../../support/hostileService";

let service: HostileService;
/** Another origin: where a redirect points. */
let elsewhere: HostileService;
let n = 0;

beforeAll(async () => {
  [service, elsewhere] = await Promise.all([startHostileService(), startHostileService()]);
  elsewhere.answerWith(jsonAnswer(200, { orderId: "ignored", chargeId: "CHG-EVIL" }));
});
afterAll(async () => {
  await Promise.all([service?.stop(), elsewhere?.stop()]);
});
beforeEach(() => {
  service.reset();
  elsewhere.reset();
});

/** A gate that lets every call through and records what it was told, in order. */
class RecordingGate implements CallGate {
  readonly told: Array<"admit" | "failure" | "success"> = [];
  async admit() {
    this.told.push("admit");
    return { allowed: true as const };
  }
  async onFailure() {
    this.told.push("failure");
  }
  async onSuccess() {
    this.told.push("success");
  }
  count(what: "admit" | "failure" | "success"): number {
    return this.told.filter((t) => t === what).length;
  }
}

const log = { log() {}, warn() {}, error() {} };
const MAX_ATTEMPTS = 3;

async function charge(
  overrides: Partial<ConstructorParameters<typeof RemoteServiceClient>[1]> = {},
  deadlineMs = 5_000,
): Promise<{ outcome: RemoteOutcome; gate: RecordingGate; orderId: string; ms: number }> {
  const gate = new RecordingGate();
  const orderId = `ORD-H${++n}`;
  const client = new RemoteServiceClient(`${service.url}/payment`, {
    maxAttempts: MAX_ATTEMPTS,
    attemptTimeoutMs: 1_000,
    initialBackoffMs: 10,
    maxBackoffMs: 50,
    breaker: gate,
    ...overrides,
  });
  const started = performance.now();
  const outcome = await client.call(
    "charge",
    { orderId, amount: 20, currency: "EUR" },
    {
      idempotencyKey: `${orderId}:chargePayment:do`,
      orderId,
      log,
      deadline: new Date(Date.now() + deadlineMs),
    },
  );
  return { outcome, gate, orderId, ms: performance.now() - started };
}

describe("a 2xx that is not the operation's success", () => {
  it.each([
    [
      "an HTML page answered 200",
      rawAnswer(200, { "content-type": "text/html" }, "<html>Payment done</html>"),
      /HTTP 200 .*text\/html.*not a JSON object/,
    ],
    ["a 204 with no body", rawAnswer(204, {}), /HTTP 204 .*not a JSON object/],
    ["a JSON array", jsonAnswer(200, [{ chargeId: "CHG-1" }]), /JSON array of 1 items, not a JSON object/],
  ])("%s is retried as transient, never ok, and raises InvalidAnswer", async (_, answer, message) => {
    service.answerWith(answer);
    const { outcome, gate } = await charge();
    expect(outcome).toMatchObject({
      outcome: "transient",
      calls: MAX_ATTEMPTS,
      error: { code: "InvalidAnswer", message: expect.stringMatching(message) },
      problems: [{ kind: "InvalidAnswer", detail: expect.stringContaining("/payment/charge") }],
    });
    expect(service.requests).toHaveLength(MAX_ATTEMPTS);
    // Whatever answers there is not the service working: the breaker counts each call as failed.
    expect(gate.count("failure")).toBe(MAX_ATTEMPTS);
    expect(gate.count("success")).toBe(0);
  });

  it("another order's answer is refused: AnswerMismatch, transient", async () => {
    service.answerWith(jsonAnswer(200, { orderId: "ORD-SOMEONE-ELSE", chargeId: "CHG-7", amount: 20 }));
    const { outcome, orderId } = await charge();
    expect(outcome).toMatchObject({
      outcome: "transient",
      error: {
        code: "AnswerMismatch",
        message: expect.stringContaining(`order "ORD-SOMEONE-ELSE", not for "${orderId}"`),
      },
      problems: [{ kind: "InvalidAnswer" }],
    });
  });

  it("the operation's own answer, echoing the order, is ok", async () => {
    service.answerWith((req, res, write) => {
      const { orderId } = JSON.parse(req.body) as { orderId: string };
      return jsonAnswer(200, { orderId, chargeId: "CHG-1", amount: 20, currency: "EUR" })(req, res, write);
    });
    const { outcome, gate } = await charge();
    expect(outcome).toMatchObject({ outcome: "ok", status: 200, calls: 1, body: { chargeId: "CHG-1" } });
    expect(outcome).not.toHaveProperty("problems");
    expect(gate.told).toEqual(["admit", "success"]);
  });
});

describe("a redirect", () => {
  it("to another host is not followed: that host receives nothing, and the outcome is not ok", async () => {
    service.answerWith(
      rawAnswer(302, { location: `${elsewhere.url}/payment/charge?from=redirect` }, "moved"),
    );
    const { outcome } = await charge();
    expect(outcome).toMatchObject({
      outcome: "transient",
      calls: MAX_ATTEMPTS,
      error: {
        code: "Redirected",
        message: expect.stringContaining(`a redirect to ${elsewhere.url}, not followed`),
      },
      problems: [{ kind: "ServiceMisconfigured" }],
    });
    expect(outcome.outcome === "transient" && outcome.error.message).not.toContain("from=redirect");
    await service.settled();
    expect(elsewhere.requests).toEqual([]);
    expect(service.requests).toHaveLength(MAX_ATTEMPTS);
  });

  it("to itself, for ever, makes exactly the requests the retries allow", async () => {
    service.answerWith((req, res) => {
      res.writeHead(307, { location: `${service.url}${req.path}` });
      res.end();
    });
    const { outcome } = await charge({ maxAttempts: 4 });
    expect(outcome).toMatchObject({ outcome: "transient", calls: 4, error: { code: "Redirected" } });
    await service.settled();
    expect(service.requests).toHaveLength(4);
  });
});

describe("an answer too large", () => {
  const megabytes = (bytes: number) => Math.round(bytes / 2 ** 20);
  const inUse = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };

  it("of 64 MiB fails AnswerTooLarge, drops the connection early and costs the process no more than the bound", async () => {
    const total = 64 * 2 ** 20;
    service.answerWith(hugeAnswer(total));
    const before = inUse();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, inUse())), 2);
    const { outcome } = await charge({ maxAttempts: 1, attemptTimeoutMs: 10_000 });
    clearInterval(sampler);
    peak = Math.max(peak, inUse());
    expect(outcome).toMatchObject({
      outcome: "transient",
      calls: 1,
      error: { code: "AnswerTooLarge", message: expect.stringContaining(`passed ${MAX_ANSWER_BYTES} bytes`) },
      problems: [{ kind: "InvalidAnswer" }],
    });
    await service.settled();
    const [written] = service.answers;
    // The client hung up after the bound: what the server got out is the bound and the sockets' buffers.
    expect(written).toMatchObject({ finished: false, closedEarly: true });
    expect(megabytes(written!.bytes), "MiB written before the client hung up").toBeLessThan(16);
    expect(megabytes(peak - before), "MiB of heap and buffers the call took at its peak").toBeLessThan(16);
  }, 30_000);

  it("declared by its content-length is refused before its body is read", async () => {
    service.answerWith(hugeAnswer(64 * 2 ** 20, true));
    const { outcome } = await charge({ maxAttempts: 1 });
    expect(outcome).toMatchObject({
      outcome: "transient",
      error: { code: "AnswerTooLarge", message: expect.stringContaining("declared 67108864 bytes") },
    });
    await service.settled();
    expect(service.answers[0]).toMatchObject({ closedEarly: true });
    expect(megabytes(service.answers[0]!.bytes)).toBeLessThan(16);
  });

  it("up to the bound is read whole", async () => {
    const padding = " ".repeat(MAX_ANSWER_BYTES - 200);
    service.answerWith((req, res, write) => {
      const { orderId } = JSON.parse(req.body) as { orderId: string };
      res.writeHead(200, { "content-type": "application/json" });
      write(`${padding}{"orderId":"${orderId}","chargeId":"CHG-2"}`);
      res.end();
    });
    const { outcome } = await charge();
    expect(outcome).toMatchObject({ outcome: "ok", body: { chargeId: "CHG-2" } });
  });
});

it("a trickling answer is cut at the attempt's timeout and retried within the deadline", async () => {
  service.answerWith((_req, res, write) => {
    res.writeHead(200, { "content-type": "application/json" });
    const timer = setInterval(() => {
      if (res.destroyed) clearInterval(timer);
      else write(" ");
    }, 50);
    res.on("close", () => clearInterval(timer));
  });
  const { outcome, ms } = await charge({ attemptTimeoutMs: 300 }, 2_000);
  expect(outcome).toMatchObject({ outcome: "transient", calls: MAX_ATTEMPTS, error: { code: "Timeout" } });
  expect(ms).toBeLessThan(MAX_ATTEMPTS * 300 + 1_000);
  await service.settled();
  expect(service.answers.every((a) => a.closedEarly)).toBe(true);
});

describe("a 429", () => {
  it("delays the retry by its Retry-After, and is not counted as the service failing", async () => {
    let calls = 0;
    service.answerWith((req, res, write) => {
      if (++calls === 1) return rawAnswer(429, { "retry-after": "1" })(req, res, write);
      const { orderId } = JSON.parse(req.body) as { orderId: string };
      return jsonAnswer(200, { orderId, chargeId: "CHG-3" })(req, res, write);
    });
    const { outcome, gate } = await charge({ attemptTimeoutMs: 500 });
    expect(outcome).toMatchObject({ outcome: "ok", calls: 2, body: { chargeId: "CHG-3" } });
    const [first, second] = service.requests;
    expect(second!.at - first!.at, "ms between the 429 and the retry").toBeGreaterThanOrEqual(950);
    expect(gate.count("failure")).toBe(0);
    expect(gate.told).toEqual(["admit", "success", "admit", "success"]);
  });

  it("whose Retry-After is past the deadline stops the retries: transient, no second call", async () => {
    service.answerWith(
      rawAnswer(429, { "retry-after": "30", "content-type": "application/json" }, '{"code":"Busy"}'),
    );
    const { outcome, gate, ms } = await charge({}, 5_000);
    expect(outcome).toMatchObject({
      outcome: "transient",
      calls: 1,
      error: { code: "Busy", message: expect.stringContaining("Retry-After past the step's deadline") },
    });
    expect(outcome).not.toHaveProperty("problems");
    expect(service.requests).toHaveLength(1);
    expect(ms).toBeLessThan(1_000);
    expect(gate.count("failure")).toBe(0);
  });
});

describe("a 503 with Retry-After", () => {
  it("delays the retry by it, and is counted as the service failing", async () => {
    let calls = 0;
    service.answerWith((req, res, write) => {
      if (++calls === 1) return rawAnswer(503, { "retry-after": "1" })(req, res, write);
      const { orderId } = JSON.parse(req.body) as { orderId: string };
      return jsonAnswer(200, { orderId, chargeId: "CHG-4" })(req, res, write);
    });
    const { outcome, gate } = await charge({ attemptTimeoutMs: 500 });
    expect(outcome).toMatchObject({ outcome: "ok", calls: 2, body: { chargeId: "CHG-4" } });
    const [first, second] = service.requests;
    expect(second!.at - first!.at, "ms between the 503 and the retry").toBeGreaterThanOrEqual(950);
    expect(gate.told).toEqual(["admit", "failure", "admit", "success"]);
  });
});

describe("a missing route", () => {
  it.each([
    [404, "RouteNotFound"],
    [405, "MethodNotAllowed"],
  ])("%i is transient and misconfigured, never a permanent refusal", async (status, code) => {
    service.answerWith(jsonAnswer(status, { code: "NotFound", message: "No route POST /payment/charge" }));
    const { outcome } = await charge();
    expect(outcome).toMatchObject({
      outcome: "transient",
      calls: MAX_ATTEMPTS,
      error: {
        code,
        message: expect.stringContaining(`${service.url}/payment/charge answered HTTP ${status}`),
      },
      problems: [{ kind: "ServiceMisconfigured" }],
    });
  });
});
