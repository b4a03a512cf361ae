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

/**
 * Characters that can end, hide or reorder a line when text is printed: C0 controls, DEL, C1 controls
 * (U+0080-U+009F; U+0085 is a line break to some readers), the line and paragraph separators U+2028 and U+2029,
 * and the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) that make a line read
 * differently from what it holds. Nothing a person types into a reason or a name; anything a forged log line needs.
 */
export function isControlCharacter(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** True when text holds a control character (isControlCharacter). */
export function hasControlCharacters(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControlCharacter(text.charCodeAt(i))) return true;
  return false;
}

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  8: "\\b",
  9: "\\t",
  10: "\\n",
  12: "\\f",
  13: "\\r",
};
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * Text that came from a message or a request, made safe to put in a reason, a description, a response or a log
 * line: every control character (isControlCharacter), and every lone surrogate, is written as its JSON escape
 * (`\n`, `\u0085`), so the text stays on one line and reads as it is. Printable text, backslashes included, is left
 * as it is: escaping an escaped text changes nothing, so a reason built from escaped parts can be escaped again
 * on its way out. The one escaping function of the app: every sink of message-controlled text goes through it.
 */
export function escapeText(text: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(i + 1))) {
      i++;
      continue;
    }
    if (!isControlCharacter(code) && !isHighSurrogate(code) && !isLowSurrogate(code)) continue;
    out += text.slice(from, i) + (SHORT_ESCAPES[code] ?? `\\u${code.toString(16).padStart(4, "0")}`);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Shortens text to `max` characters, saying how long it was; never between the two halves of a character. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = `... (${text.length} characters)`;
  let end = Math.max(0, max - note.length);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return text.slice(0, end) + note;
}

/** Message-controlled text as every reason, description and log line shows it: escaped, then at most `max` long. */
export function boundedText(text: string, max: number): string {
  return capText(escapeText(text), max);
}

/**
 * Text that leaves the app for people (an alert's reason, a status message's detail): at most `max` long and
 * already escaped (boundedText), so a consumer that prints it prints one line that reads as it is.
 */
export function escapedLine(max: number) {
  return z
    .string()
    .max(max)
    .refine((text) => escapeText(text) === text, {
      error: "expected one line of escaped text (boundedText)",
    });
}

/** Shows a rejected value in a message without letting it grow the message or hide control characters. */
export function quoteValue(value: unknown, max = 80): string {
  const text = typeof value === "string" ? value : String(value);
  const shown = escapeText(JSON.stringify(text.length > max ? text.slice(0, max) : text));
  return text.length > max ? `${shown}... (${text.length} characters)` : shown;
}

/**
 * The issues of a failed parse, each escaped and bounded: a path can hold the input's own keys (a record's, or
 * an unknown field zod names), and a message can quote the input.
 */
export function describeZodError(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path:
      issue.path.length > 0
        ? boundedText(issue.path.map((segment) => String(segment)).join("."), 80)
        : "(root)",
    message: boundedText(issue.message, MAX_ISSUE_LENGTH),
  }));
}

/** The reason of a refusal: the first MAX_ISSUES_SHOWN issues and a count of the rest, one line, bounded. */
export function formatIssues(issues: ValidationIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES_SHOWN).map((i) => `${i.path}: ${i.message}`);
  const more = issues.length - shown.length;
  return boundedText(shown.join("; ") + (more > 0 ? `; and ${more} more problem(s)` : ""), MAX_REASON_LENGTH);
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
