// Reading requests and writing responses for the durable HTTP API: bodies, media types, query validation.
import type http from "node:http";
import { z } from "zod";
import { DurableRequestError } from "./types";

const MAX_BODY_BYTES = 8 * 1024 * 1024;

export const isoDate = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: "expected an ISO 8601 date-time" })
  .transform((s) => new Date(s));
/** Booleans as .NET's bool.TryParse reads them: true or false, in any case. */
export const booleanText = z
  .string()
  .transform((s) => s.toLowerCase())
  .pipe(z.enum(["true", "false"], { error: "expected true or false" }))
  .transform((s) => s === "true");
/** Seconds, possibly fractional, as the extension's timeout and pollingInterval parameters take them. */
export const seconds = z.coerce.number({ error: "expected a number of seconds" }).min(0);

export function parseQuery<T extends z.ZodType>(schema: T, query: Record<string, string>): z.output<T> {
  const parsed = schema.safeParse(query);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i) => `${i.path.join(".") || "query"}: ${i.message}`)
      .join("; ");
    throw new DurableRequestError(400, `Invalid query string: ${problems}`);
  }
  return parsed.data;
}

export function parseJsonBody(body: string, what: string): unknown {
  if (body.trim() === "") return undefined;
  try {
    return JSON.parse(body);
  } catch (err) {
    throw new DurableRequestError(
      400,
      `${what} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** The media type of the request's Content-Type, lower-cased, without parameters. */
export function mediaType(req: http.IncomingMessage): string | undefined {
  const type = req.headers["content-type"];
  return type ? type.split(";")[0]?.trim().toLowerCase() : undefined;
}

export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        // Paused, not destroyed: destroying the request would take the socket, and the 413 with it. The 413
        // closes the connection (rpc.ts), so the rest is never read.
        req.off("data", onData);
        req.pause();
        reject(new DurableRequestError(413, `request body over ${MAX_BODY_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export function send(
  res: http.ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    ...(body === undefined ? {} : { "Content-Type": "application/json; charset=utf-8" }),
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
