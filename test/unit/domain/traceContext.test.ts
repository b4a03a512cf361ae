/** The W3C trace context the app accepts from headers and application properties, and what it refuses. */
import { describe, expect, it } from "vitest";
import { formatTraceparent, messageTraceParent, parseTraceparent } from "../../../src/domain";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("parseTraceparent", () => {
  it("reads a version-00 traceparent: the trace id, the parent span id, the flags", () => {
    expect(parseTraceparent(VALID)).toEqual({
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      flags: 1,
    });
    expect(formatTraceparent(parseTraceparent(VALID)!)).toBe(VALID);
    expect(parseTraceparent(VALID.replace(/-01$/, "-00"))?.flags).toBe(0);
  });

  it.each([
    ["nothing", undefined],
    ["a number", 42],
    ["empty", ""],
    ["upper-case hex", VALID.toUpperCase()],
    ["another version", VALID.replace(/^00/, "01")],
    ["the invalid version ff", VALID.replace(/^00/, "ff")],
    ["an all-zero trace id", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`],
    ["an all-zero span id", `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`],
    ["a short trace id", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"],
    ["trailing data", `${VALID}-extra`],
    ["spaces around it", ` ${VALID} `],
    ["a Request-Id of the old format", "|4bf92f3577b34da6a3ce929d0e0e4736.00f067aa0ba902b7."],
    ["a line break", `${VALID}\n`],
  ])("refuses %s", (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it("keeps a valid tracestate and drops an invalid one without losing the parent", () => {
    expect(parseTraceparent(VALID, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")?.tracestate).toBe(
      "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
    );
    expect(parseTraceparent(VALID, "tenant@vendor=x")?.tracestate).toBe("tenant@vendor=x");
    for (const bad of ["no-equals-sign", "=value", "Upper=case", "k=v,".repeat(40), "x".repeat(600), 7]) {
      const parent = parseTraceparent(VALID, bad);
      expect(parent?.traceId, String(bad)).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
      expect(parent?.tracestate, String(bad)).toBeUndefined();
    }
  });
});

describe("messageTraceParent", () => {
  it("continues traceparent first, then Diagnostic-Id in W3C form, also as @azure/functions names it", () => {
    const other = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    expect(messageTraceParent({ traceparent: VALID, "Diagnostic-Id": other })).toMatchObject({
      verdict: "continued",
      parent: { spanId: "00f067aa0ba902b7" },
    });
    expect(messageTraceParent({ "Diagnostic-Id": other }).parent?.spanId).toBe("b7ad6b7169203331");
    expect(messageTraceParent({ "diagnostic-Id": other }).parent?.spanId).toBe("b7ad6b7169203331");
    expect(messageTraceParent({ traceparent: VALID, tracestate: "a=b" }).parent?.tracestate).toBe("a=b");
  });

  it("says absent for no context and refused for a malformed one: either way a new trace, never an error", () => {
    for (const none of [undefined, null, "text", {}, { other: "x" }, { traceparent: "" }])
      expect(messageTraceParent(none)).toEqual({ parent: undefined, verdict: "absent" });
    for (const bad of [
      { traceparent: "junk" },
      { traceparent: 12 },
      { traceparent: { nested: VALID } },
      { "Diagnostic-Id": "|abc.1." },
    ])
      expect(messageTraceParent(bad)).toEqual({ parent: undefined, verdict: "refused" });
  });
});
