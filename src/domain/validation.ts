import { z } from "zod";

/** One problem with an input, in words an operator can act on: where, and what was expected. */
export interface ValidationIssue {
  /** Dotted path to the offending field, e.g. `items.0.quantity`; `(root)` for the whole value. */
  path: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[]; message: string };

export function describeZodError(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)",
    message: issue.message,
  }));
}

export function formatIssues(issues: ValidationIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join("; ");
}

/** Parses `input` with `schema`; never throws, so adapters can dead-letter or answer 400 with the message. */
export function validate<T>(schema: z.ZodType<T>, input: unknown): Validated<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = describeZodError(parsed.error);
  return { ok: false, issues, message: formatIssues(issues) };
}

/** ISO-8601 UTC timestamp as produced by `Date.prototype.toISOString`. */
export const isoTimestamp = z.iso.datetime({ message: "expected an ISO-8601 UTC timestamp" });
