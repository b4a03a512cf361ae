// The request body size limit of the HTTP front. The host caps request bodies at 104857600 bytes (100 MB) unless
// the app setting FUNCTIONS_REQUEST_BODY_SIZE_LIMIT gives another number of bytes ("App settings reference for
// Azure Functions", FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "Overrides the default limit on the body size of requests
// sent to HTTP endpoints. The value is given in bytes, with a default maximum request size of 104857600 bytes.").
// Kestrel, which enforces it, answers 413 as soon as a declared Content-Length is over the limit, without reading
// the body, and stops reading a chunked body once it passes the limit; either way it closes the connection after
// the response, since the rest of the body would otherwise have to be read to find the next request.
import type http from "node:http";

export const BODY_SIZE_LIMIT_SETTING = "FUNCTIONS_REQUEST_BODY_SIZE_LIMIT";
export const DEFAULT_BODY_SIZE_LIMIT = 104_857_600;

/** long.TryParse's range. */
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * The limit in bytes from the settings, read as the host reads it (HttpRequestBodySizeMiddleware in
 * azure-functions-host src/WebJobs.Script.WebHost/Middleware): `long.TryParse`, so surrounding white space and a
 * sign are allowed, and 0 is a limit (every body is too large). A value that does not parse is ignored there, so
 * the default stays; the devhost says so through `warn`. A negative number the host takes, and then fails every
 * request setting it on Kestrel (MaxRequestBodySize must be 0 or more); the devhost stops the start instead.
 */
export function requestBodyLimit(
  env: NodeJS.ProcessEnv = process.env,
  warn: (message: string) => void = () => undefined,
): number {
  const text = env[BODY_SIZE_LIMIT_SETTING];
  if (text === undefined || text === "") return DEFAULT_BODY_SIZE_LIMIT;
  const limit = /^\s*[+-]?\d+\s*$/.test(text) ? BigInt(text.trim()) : undefined;
  if (limit === undefined || limit > INT64_MAX || limit < INT64_MIN) {
    warn(
      `${BODY_SIZE_LIMIT_SETTING}: "${text}" is not a whole number of bytes, so the host ignores it; ` +
        `the limit stays ${DEFAULT_BODY_SIZE_LIMIT} bytes.`,
    );
    return DEFAULT_BODY_SIZE_LIMIT;
  }
  if (limit < 0n) {
    throw new Error(
      `${BODY_SIZE_LIMIT_SETTING}: "${text}" is negative; in Azure every HTTP request would then fail.`,
    );
  }
  // Beyond 2^53 no body can reach the limit anyway.
  return limit > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(limit);
}

/** True when the headers alone say the body is over the limit. */
export function declaresTooLarge(req: http.IncomingMessage, limit: number): boolean {
  const declared = req.headers["content-length"];
  // Node has already refused a Content-Length that is not a number, or that conflicts with chunked encoding.
  return declared !== undefined && Number(declared) > limit;
}

/**
 * The body, or "too-large" as soon as more than `limit` bytes came. Reading stops there (the stream is paused, not
 * destroyed: destroying it would take the socket, and the 413 with it).
 */
export function readLimitedBody(req: http.IncomingMessage, limit: number): Promise<Buffer | "too-large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off("data", onData);
      req.pause();
      resolve("too-large");
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

/** 413 with Connection: close: node ends the socket once it is written, leaving the rest of the body unread. */
export function sendTooLarge(res: http.ServerResponse, limit: number): void {
  if (res.headersSent) return;
  const text = `Request body too large: the limit is ${limit} bytes (${BODY_SIZE_LIMIT_SETTING}).`;
  res
    .writeHead(413, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(text),
      connection: "close",
    })
    .end(text);
}
