import { z } from "zod";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) as it travels with an order: the `traceparent` and
 * `tracestate` HTTP headers, and the same two values in every Service Bus message's application properties, with
 * `Diagnostic-Id` beside them because that is the property the Azure Service Bus SDKs read and write. Anyone who
 * can send to a queue can write these, so a value is used only once it parses; anything else starts a new trace
 * and never fails the message.
 */

/** Version 00 only, lower-case hex, neither id all zeros: what the specification lets a receiver trust. */
export const TRACEPARENT_PATTERN = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_SPAN_ID = "0".repeat(16);

/** A tracestate list-member: a key (simple, or tenant@system) and a value of printable ASCII but `,` and `=`. */
const TRACESTATE_MEMBER =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const MAX_TRACESTATE_LENGTH = 512;
const MAX_TRACESTATE_MEMBERS = 32;

/** Is `value` a traceparent a receiver may trust (the pattern, and neither id all zeros)? */
function isTraceparent(value: unknown): value is string {
  return (
    typeof value === "string" &&
    TRACEPARENT_PATTERN.test(value) &&
    !value.includes(`-${ZERO_TRACE_ID}-`) &&
    !value.includes(`-${ZERO_SPAN_ID}-`)
  );
}

/** Is `value` a tracestate: at most 32 comma-separated key=value members, 512 characters in all? */
function isTracestate(value: unknown): value is string {
  if (typeof value !== "string" || value.length > MAX_TRACESTATE_LENGTH) return false;
  const members = value
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m !== "");
  return members.length <= MAX_TRACESTATE_MEMBERS && members.every((m) => TRACESTATE_MEMBER.test(m));
}

export const traceparentSchema = z
  .string()
  .regex(TRACEPARENT_PATTERN, { error: "expected a W3C traceparent: 00-<32 hex>-<16 hex>-<2 hex>" })
  .refine(isTraceparent, {
    error: "expected a traceparent whose trace id and span id are not all zeros",
  });

export const tracestateSchema = z
  .string()
  .max(MAX_TRACESTATE_LENGTH)
  .refine(isTracestate, { error: "expected a W3C tracestate: comma-separated key=value members" });

/** A parent from elsewhere: the ids of its span, whether it was sampled, and its vendors' tracestate. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The trace-flags byte; bit 0 is "sampled". */
  flags: number;
  tracestate?: string;
}

/** The parent a traceparent value names, or undefined when it is absent or not one (a new trace then). */
// Checked without zod: this runs for every span and message, and the schemas' parse cost more than the spans.
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): TraceParent | undefined {
  if (!isTraceparent(traceparent)) return undefined;
  const [, traceId, spanId, flags] = TRACEPARENT_PATTERN.exec(traceparent)!;
  // An unusable tracestate is dropped on its own, as the specification says: the parent still holds.
  return {
    traceId: traceId!,
    spanId: spanId!,
    flags: Number.parseInt(flags!, 16),
    ...(isTracestate(tracestate) && tracestate.trim() !== "" ? { tracestate } : {}),
  };
}

export function formatTraceparent(parent: Pick<TraceParent, "traceId" | "spanId" | "flags">): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.flags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The application properties that carry the context on Service Bus, as the app writes them. */
export const TRACE_PROPERTIES = {
  traceparent: "traceparent",
  tracestate: "tracestate",
  diagnosticId: "Diagnostic-Id",
} as const;

/** What became of a message's trace context: continued, absent (a new trace), or refused as malformed. */
export type TraceContextVerdict = "continued" | "absent" | "refused";

/**
 * The parent a received message's application properties name. `traceparent` wins; `Diagnostic-Id` counts when it
 * holds a W3C traceparent (the SDKs write one), also under `diagnostic-Id`, the key @azure/functions hands it over
 * as (it lower-cases the first letter of every property name).
 */
export function messageTraceParent(applicationProperties: unknown): {
  parent: TraceParent | undefined;
  verdict: TraceContextVerdict;
} {
  const props =
    typeof applicationProperties === "object" && applicationProperties !== null
      ? (applicationProperties as Record<string, unknown>)
      : {};
  const given = props[TRACE_PROPERTIES.traceparent] ?? props["Diagnostic-Id"] ?? props["diagnostic-Id"];
  if (given === undefined || given === null || given === "") return { parent: undefined, verdict: "absent" };
  const parent = parseTraceparent(given, props[TRACE_PROPERTIES.tracestate]);
  return parent ? { parent, verdict: "continued" } : { parent: undefined, verdict: "refused" };
}
