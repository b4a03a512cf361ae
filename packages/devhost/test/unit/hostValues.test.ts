import { describe, expect, it } from "vitest";
import { dotnetDateTime, dotnetDateTimeOffset, jsonSafe } from "../../src/triggers/hostValues";

describe("values of trigger metadata as the host writes them", () => {
  it("writes a DateTime as Newtonsoft.Json does: no zone, trailing zeros of the fraction cut", () => {
    expect(dotnetDateTime(new Date("2026-12-03T09:48:57.120Z"))).toBe("2026-12-03T09:48:57.12");
    expect(dotnetDateTime(new Date("2026-12-03T09:48:57.000Z"))).toBe("2026-12-03T09:48:57");
    expect(dotnetDateTime("2026-12-03T09:48:57.123Z")).toBe("2026-12-03T09:48:57.123");
  });

  it("writes a DateTimeOffset at UTC with its +00:00 offset", () => {
    expect(dotnetDateTimeOffset(new Date("2026-12-03T09:48:57.100Z"))).toBe("2026-12-03T09:48:57.1+00:00");
    expect(dotnetDateTimeOffset(Date.UTC(2026, 11, 3))).toBe("2026-12-03T00:00:00+00:00");
  });

  it("leaves out a time that is not there or not a time", () => {
    expect(dotnetDateTime(undefined)).toBeUndefined();
    expect(dotnetDateTimeOffset("not a time")).toBeUndefined();
  });

  it("carries an AMQP long (bigint) as its decimal text", () => {
    expect(jsonSafe({ n: 2n ** 60n, s: "x" })).toEqual({ n: "1152921504606846976", s: "x" });
  });
});
