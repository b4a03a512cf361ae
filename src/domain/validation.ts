import { z } from "zod";

/** One problem with an input, in words an operator can act on: where, and what was expected. */
export interface ValidationIssue {
  /** Dotted path to the offending field, e.g. `items.0.quantity`; `(root)` for the whole value. */
  path: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[]; message: string };

/**
 * Bounds on what a refusal repeats of its input. A hostile body can break every field at once (10,000 bad items,
 * 10,000 unknown keys); the message names the first problems and counts the rest, so a 200 KB body yields a
 * reason of about a kilobyte, which fits an alert, a log line and a 400 response alike.
 */
export const MAX_ISSUES_SHOWN = 8;
export const MAX_ISSUE_LENGTH = 160;
export const MAX_REASON_LENGTH = 1_024;

/** True when text holds a C0 control character or DEL: nothing a person types into a reason or a name. */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Shortens text to `max` characters, saying how long it was. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = `... (${text.length} characters)`;
  return text.slice(0, Math.max(0, max - note.length)) + note;
}

export function describeZodError(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.length > 0 ? capText(issue.path.map(String).join("."), 80) : "(root)",
    message: capText(issue.message, MAX_ISSUE_LENGTH),
  }));
}

export function formatIssues(issues: ValidationIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES_SHOWN).map((i) => `${i.path}: ${i.message}`);
  const more = issues.length - shown.length;
  return capText(shown.join("; ") + (more > 0 ? `; and ${more} more problem(s)` : ""), MAX_REASON_LENGTH);
}

/** Parses `input` with `schema`; never throws, so adapters can set a message aside or answer 400 with the reason. */
export function validate<T>(schema: z.ZodType<T>, input: unknown): Validated<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = describeZodError(parsed.error);
  return { ok: false, issues, message: formatIssues(issues) };
}

/**
 * What a message or request body is when it is not a JSON object, in one line ("binary body of 512 bytes,
 * expected a JSON object"), or undefined for an object. Refusals describe such bodies instead of echoing them.
 */
export function describeNonObjectBody(body: unknown): string | undefined {
  const expected = "expected a JSON object";
  if (body instanceof Uint8Array || body instanceof ArrayBuffer)
    return `binary body of ${body.byteLength} bytes, ${expected}`;
  if (typeof body === "string") return `text body of ${body.length} characters, ${expected}`;
  if (Array.isArray(body)) return `JSON array of ${body.length} items, ${expected}`;
  if (body === undefined) return `empty body, ${expected}`;
  if (body === null) return `JSON null body, ${expected}`;
  if (typeof body !== "object") return `JSON ${typeof body} body, ${expected}`;
  return undefined;
}

/** `validate` for a whole message or request body: a body that is not an object is described, not parsed. */
export function validateBody<T>(schema: z.ZodType<T>, body: unknown): Validated<T> {
  const shape = describeNonObjectBody(body);
  if (shape) return { ok: false, issues: [{ path: "(root)", message: shape }], message: `(root): ${shape}` };
  return validate(schema, body);
}

/** ISO-8601 UTC timestamp as produced by `Date.prototype.toISOString`. */
export const isoTimestamp = z.iso.datetime({ message: "expected an ISO-8601 UTC timestamp" });
