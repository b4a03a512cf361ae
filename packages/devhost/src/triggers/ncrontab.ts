// Timer schedules as the Functions timer trigger reads them (NCrontab): six fields
// `second minute hour day month day-of-week`, or five (no seconds, fires at second 0), or a constant
// interval written as a TimeSpan `hh:mm:ss`. Each field takes `*`, values, ranges `a-b`, steps `*/n`, `a-b/n`
// and `a/n` (a to the end), comma lists, and names for months (JAN-DEC) and days (SUN-SAT).
// NCrontab requires BOTH the day-of-month and the day-of-week field to match (classic cron takes either);
// we follow NCrontab. Times are UTC, as in Azure unless WEBSITE_TIME_ZONE is set.

export interface Schedule {
  /** The expression as written. */
  readonly expression: string;
  /** The first occurrence strictly after `after`. */
  next(after: Date): Date;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const SECOND: FieldSpec = { name: "second", min: 0, max: 59 };
const MINUTE: FieldSpec = { name: "minute", min: 0, max: 59 };
const HOUR: FieldSpec = { name: "hour", min: 0, max: 23 };
const DAY: FieldSpec = { name: "day", min: 1, max: 31 };
const MONTH: FieldSpec = {
  name: "month",
  min: 1,
  max: 12,
  names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"],
};
const DAY_OF_WEEK: FieldSpec = {
  name: "day-of-week",
  min: 0,
  max: 6,
  names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
};

function parseValue(text: string, field: FieldSpec, expression: string): number {
  const upper = text.toUpperCase();
  const named = field.names?.indexOf(upper.slice(0, 3)) ?? -1;
  if (field.names && named >= 0 && /^[A-Z]+$/.test(upper)) return field.min + named;
  if (!/^\d+$/.test(text)) {
    throw new Error(`Invalid schedule "${expression}": "${text}" is not a valid ${field.name}.`);
  }
  const value = Number(text);
  if (value < field.min || value > field.max) {
    throw new Error(
      `Invalid schedule "${expression}": ${field.name} ${value} is outside ${field.min}-${field.max}.`,
    );
  }
  return value;
}

/** The set of values one field allows, as a boolean table indexed by value. */
function parseField(text: string, field: FieldSpec, expression: string): boolean[] {
  const allowed = new Array<boolean>(field.max + 1).fill(false);
  for (const item of text.split(",")) {
    if (item.length === 0)
      throw new Error(`Invalid schedule "${expression}": empty item in the ${field.name} field.`);
    const [rangeText = "", stepText, extra] = item.split("/");
    if (extra !== undefined)
      throw new Error(`Invalid schedule "${expression}": "${item}" has more than one "/".`);
    let step = 1;
    if (stepText !== undefined) {
      if (!/^\d+$/.test(stepText) || Number(stepText) === 0) {
        throw new Error(
          `Invalid schedule "${expression}": step "${stepText}" in the ${field.name} field must be a positive integer.`,
        );
      }
      step = Number(stepText);
    }
    let from: number;
    let to: number;
    if (rangeText === "*") {
      from = field.min;
      to = field.max;
    } else if (rangeText.includes("-")) {
      const [a = "", b = ""] = rangeText.split("-");
      from = parseValue(a, field, expression);
      to = parseValue(b, field, expression);
      if (from > to) {
        throw new Error(
          `Invalid schedule "${expression}": range ${rangeText} in the ${field.name} field runs backwards.`,
        );
      }
    } else {
      from = parseValue(rangeText, field, expression);
      to = stepText !== undefined ? field.max : from;
    }
    for (let v = from; v <= to; v += step) allowed[v] = true;
  }
  return allowed;
}

const DAY_MS = 86_400_000;

class CronSchedule implements Schedule {
  readonly expression: string;
  readonly #seconds: boolean[];
  readonly #minutes: boolean[];
  readonly #hours: boolean[];
  readonly #days: boolean[];
  readonly #months: boolean[];
  readonly #daysOfWeek: boolean[];

  constructor(expression: string, fields: string[]) {
    this.expression = expression;
    const withSeconds = fields.length === 6 ? fields : ["0", ...fields];
    const [s = "", mi = "", h = "", d = "", mo = "", dw = ""] = withSeconds;
    this.#seconds = parseField(s, SECOND, expression);
    this.#minutes = parseField(mi, MINUTE, expression);
    this.#hours = parseField(h, HOUR, expression);
    this.#days = parseField(d, DAY, expression);
    this.#months = parseField(mo, MONTH, expression);
    this.#daysOfWeek = parseField(dw, DAY_OF_WEEK, expression);
    // Fail now rather than at the first tick for schedules that can never fire (e.g. 30 February).
    this.next(new Date(Date.UTC(2000, 0, 1)));
  }

  next(after: Date): Date {
    // Whole seconds, strictly after `after`.
    let t = Math.floor(after.getTime() / 1000) * 1000 + 1000;
    const limit = t + 29 * 366 * DAY_MS; // a 29 February on a given weekday recurs within 28 years
    while (t <= limit) {
      const d = new Date(t);
      const year = d.getUTCFullYear();
      const month0 = d.getUTCMonth();
      if (!this.#months[month0 + 1]) {
        t = Date.UTC(year, month0 + 1, 1);
        continue;
      }
      const day = d.getUTCDate();
      if (!this.#days[day] || !this.#daysOfWeek[d.getUTCDay()]) {
        t = Date.UTC(year, month0, day + 1);
        continue;
      }
      const hour = d.getUTCHours();
      if (!this.#hours[hour]) {
        t = Date.UTC(year, month0, day, hour + 1);
        continue;
      }
      const minute = d.getUTCMinutes();
      if (!this.#minutes[minute]) {
        t = Date.UTC(year, month0, day, hour, minute + 1);
        continue;
      }
      if (!this.#seconds[d.getUTCSeconds()]) {
        t += 1000;
        continue;
      }
      return d;
    }
    throw new Error(`Invalid schedule "${this.expression}": it never occurs.`);
  }
}

class ConstantSchedule implements Schedule {
  readonly expression: string;
  readonly #intervalMs: number;
  constructor(expression: string, intervalMs: number) {
    this.expression = expression;
    this.#intervalMs = intervalMs;
  }
  next(after: Date): Date {
    return new Date(after.getTime() + this.#intervalMs);
  }
}

/** Parses a timer trigger schedule; throws an error naming the expression and the bad part. */
export function parseSchedule(expression: string): Schedule {
  const trimmed = expression.trim();
  const timeSpan = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})$/.exec(trimmed);
  if (timeSpan) {
    const [, days, hours, minutes, seconds] = timeSpan;
    const ms =
      (((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000;
    if (ms <= 0) throw new Error(`Invalid schedule "${expression}": the interval must be longer than zero.`);
    return new ConstantSchedule(expression, ms);
  }
  const fields = trimmed.split(/\s+/);
  if (fields.length !== 6 && fields.length !== 5) {
    throw new Error(
      `Invalid schedule "${expression}": expected six fields "{second} {minute} {hour} {day} {month} {day-of-week}" ` +
        `(or five without seconds, or a time span hh:mm:ss), found ${trimmed.length === 0 ? 0 : fields.length}.`,
    );
  }
  return new CronSchedule(expression, fields);
}

/** The shortest gap between the next few occurrences: the host persists schedule status when it is ≥ 1 min. */
export function shortestInterval(schedule: Schedule, from: Date): number {
  let previous = schedule.next(from);
  let shortest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 5; i++) {
    const next = schedule.next(previous);
    shortest = Math.min(shortest, next.getTime() - previous.getTime());
    previous = next;
  }
  return shortest;
}
