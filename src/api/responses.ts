import type { HttpRequest, HttpResponseInit } from "@azure/functions";
import { z } from "zod";
import { boundedText, quoteValue } from "../domain";
import { decodeUtf8 } from "./utf8";

export const json = (
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponseInit => ({
  status,
  jsonBody: body,
  headers: { "cache-control": "no-store", ...headers },
});

/** The body of every refusal the app answers itself: what is wrong, in words, and sometimes more for a program. */
export const problemSchema = z.strictObject({
  error: z.string().describe("What is wrong, naming the field, setting or rule"),
  details: z.unknown().optional().describe("What a program can act on, where the route says what it holds"),
});
export type Problem = z.infer<typeof problemSchema>;

export const problem = (status: number, error: string, details?: unknown): HttpResponseInit =>
  json(status, (details === undefined ? { error } : { error, details }) satisfies Problem);

/**
 * A stored document as the API shows it: without the store's own fields (`_rid`, `_self`, `_ts`, `_etag`,
 * `_attachments`, and any other `_` name Cosmos DB adds), which say nothing to a client and tie it to the store.
 */
export function withoutStoreFields<T extends object>(document: T): WithoutStoreFields<T> {
  return Object.fromEntries(
    Object.entries(document).filter(([key]) => !key.startsWith("_")),
  ) as WithoutStoreFields<T>;
}

/** T without its `_` fields; a key remap rather than Omit, which would drop every named field of a loose type. */
export type WithoutStoreFields<T> = { [K in keyof T as K extends `_${string}` ? never : K]: T[K] };

/** application/json, or a structured `+json` type, in UTF-8 (the only charset JSON may travel in). */
const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9.-]+\+)?json$/;

/**
 * Request bodies are JSON, and say so: a body under another content type (a form, text/plain, none at all) is
 * refused with 415 even when it happens to parse, so that a client learns of its mistake at once rather than
 * when a proxy or a stricter host rejects it later.
 */
export function checkJsonContentType(request: HttpRequest): HttpResponseInit | undefined {
  const header = request.headers.get("content-type");
  if (!header) return problem(415, "content-type: required; expected application/json");
  const [mediaType = "", ...params] = header.split(";").map((p) => p.trim().toLowerCase());
  const charset = params
    .find((p) => p.startsWith("charset="))
    ?.slice("charset=".length)
    .replace(/"/g, "");
  if (!JSON_MEDIA_TYPE.test(mediaType) || (charset !== undefined && charset !== "utf-8")) {
    return problem(415, `content-type: expected application/json (UTF-8), got ${quoteValue(header)}`);
  }
  return undefined;
}

/**
 * Reads a JSON body with a size limit, after checking its content type. Bodies are checked against
 * MAX_REQUEST_BYTES before parsing, so an oversize request costs no parse. The bytes must be UTF-8 (a leading
 * byte order mark is dropped): a body that is not is refused with 400, never stored with U+FFFD in its place.
 */
export async function readJsonBody(
  request: HttpRequest,
  maxBytes: number,
  /** What an empty body stands for, where the body is optional; absent: an empty body is not JSON. */
  options: { emptyAs?: unknown } = {},
): Promise<{ ok: true; body: unknown } | { ok: false; response: HttpResponseInit }> {
  const unsupported = checkJsonContentType(request);
  if (unsupported) return { ok: false, response: unsupported };
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > maxBytes) {
    return { ok: false, response: problem(413, `body: expected at most ${maxBytes} bytes, got ${declared}`) };
  }
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > maxBytes) {
    return { ok: false, response: problem(413, `body: expected at most ${maxBytes} bytes`) };
  }
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    return {
      ok: false,
      response: problem(
        400,
        `body: expected UTF-8, got bytes that are not UTF-8 at byte offset ${decoded.offset}`,
      ),
    };
  }
  const text = decoded.text;
  if (text === "" && "emptyAs" in options) return { ok: true, body: options.emptyAs };
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch (error) {
    // V8's message quotes a piece of the body, so it is escaped like any other input.
    const detail = boundedText((error as Error).message, 200);
    return { ok: false, response: problem(400, `body: expected JSON (${detail})`) };
  }
}
