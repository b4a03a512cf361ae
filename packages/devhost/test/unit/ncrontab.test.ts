import { describe, expect, it } from "vitest";
import { parseSchedule, shortestInterval } from "../../src/triggers/ncrontab";

const at = (iso: string): Date => new Date(iso);
const nextAfter = (expression: string, iso: string): string =>
  parseSchedule(expression).next(at(iso)).toISOString();

function occurrences(expression: string, fromIso: string, count: number): string[] {
  const schedule = parseSchedule(expression);
  const out: string[] = [];
  let t = at(fromIso);
  for (let i = 0; i < count; i++) {
    t = schedule.next(t);
    out.push(t.toISOString());
  }
  return out;
}

describe("NCRONTAB schedules", () => {
  it("reads six fields, seconds first", () => {
    expect(nextAfter("0 */5 * * * *", "2024-03-01T10:02:30Z")).toBe("2024-03-01T10:05:00.000Z");
    expect(occurrences("*/15 * * * * *", "2024-03-01T10:00:00Z", 3)).toEqual([
      "2024-03-01T10:00:15.000Z",
      "2024-03-01T10:00:30.000Z",
      "2024-03-01T10:00:45.000Z",
    ]);
  });

  it("returns the first occurrence strictly after the given time", () => {
    expect(nextAfter("0 0 * * * *", "2024-03-01T10:00:00Z")).toBe("2024-03-01T11:00:00.000Z");
    expect(nextAfter("0 0 * * * *", "2024-03-01T09:59:59.999Z")).toBe("2024-03-01T10:00:00.000Z");
  });

  it("supports ranges with steps, value/step and lists", () => {
    expect(occurrences("0 0 9-17/2 * * *", "2024-03-01T00:00:00Z", 6).map((s) => s.slice(11, 13))).toEqual([
      "09",
      "11",
      "13",
      "15",
      "17",
      "09",
    ]);
    expect(occurrences("5/20 * * * * *", "2024-03-01T10:00:00Z", 3).map((s) => s.slice(17, 19))).toEqual([
      "05",
      "25",
      "45",
    ]);
    expect(occurrences("0 0 12 1,15 * *", "2024-03-02T00:00:00Z", 2)).toEqual([
      "2024-03-15T12:00:00.000Z",
      "2024-04-01T12:00:00.000Z",
    ]);
  });

  it("accepts month and day names in any case", () => {
    // 2024-03-02 is a Saturday.
    expect(nextAfter("0 30 9 * * MON-FRI", "2024-03-02T08:00:00Z")).toBe("2024-03-04T09:30:00.000Z");
    expect(occurrences("0 0 0 1 jan,Jul *", "2024-03-01T00:00:00Z", 2)).toEqual([
      "2024-07-01T00:00:00.000Z",
      "2025-01-01T00:00:00.000Z",
    ]);
  });

  it("requires both day of month and day of week to match, as NCrontab does", () => {
    // The next Friday the 13th after March 2024 is in September 2024.
    expect(nextAfter("0 0 0 13 * FRI", "2024-03-01T00:00:00Z")).toBe("2024-09-13T00:00:00.000Z");
  });

  it("handles month lengths and leap days", () => {
    expect(nextAfter("0 0 0 31 * *", "2024-04-01T00:00:00Z")).toBe("2024-05-31T00:00:00.000Z");
    expect(nextAfter("0 0 0 29 2 *", "2024-03-01T00:00:00Z")).toBe("2028-02-29T00:00:00.000Z");
  });

  it("reads five fields as minute-precision cron and hh:mm:ss as a constant interval", () => {
    expect(nextAfter("*/10 * * * *", "2024-03-01T10:01:00Z")).toBe("2024-03-01T10:10:00.000Z");
    expect(nextAfter("00:00:30", "2024-03-01T10:00:00Z")).toBe("2024-03-01T10:00:30.000Z");
    expect(nextAfter("1.00:00:00", "2024-03-01T10:00:00Z")).toBe("2024-03-02T10:00:00.000Z");
  });

  it("rejects malformed schedules with a message naming the problem", () => {
    expect(() => parseSchedule("* * * *")).toThrow(/expected six fields .* found 4/);
    expect(() => parseSchedule("60 * * * * *")).toThrow(/second 60 is outside 0-59/);
    expect(() => parseSchedule("0 0 0 * * 7")).toThrow(/day-of-week 7 is outside 0-6/);
    expect(() => parseSchedule("*/0 * * * * *")).toThrow(/step "0" in the second field/);
    expect(() => parseSchedule("0 0 5-1 * * *")).toThrow(/range 5-1 in the hour field runs backwards/);
    expect(() => parseSchedule("0 0 0 * FOO *")).toThrow(/"FOO" is not a valid month/);
    expect(() => parseSchedule("0 0 0 30 2 *")).toThrow(/never occurs/);
    expect(() => parseSchedule("00:00:00")).toThrow(/longer than zero/);
  });

  it("measures the shortest interval (the host monitors schedules of a minute or more)", () => {
    expect(shortestInterval(parseSchedule("*/10 * * * * *"), at("2024-03-01T00:00:00Z"))).toBe(10_000);
    expect(shortestInterval(parseSchedule("0 0 9,10 * * *"), at("2024-03-01T00:00:00Z"))).toBe(3_600_000);
  });
});
