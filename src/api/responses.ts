import type { HttpRequest, HttpResponseInit } from "@azure/functions";

export const json = (
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponseInit => ({
  status,
  jsonBody: body,
  headers: { "cache-control": "no-store", ...headers },
});

export const problem = (status: number, error: string, details?: unknown): HttpResponseInit =>
  json(status, details === undefined ? { error } : { error, details });

/**
 * Reads a JSON body with a size limit. Bodies are checked against MAX_REQUEST_BYTES before parsing, so an
 * oversize request costs no parse.
 */
export async function readJsonBody(
  request: HttpRequest,
  maxBytes: number,
): Promise<{ ok: true; body: unknown } | { ok: false; response: HttpResponseInit }> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > maxBytes) {
    return { ok: false, response: problem(413, `body: expected at most ${maxBytes} bytes, got ${declared}`) };
  }
  const text = await request.text();
  if (Buffer.byteLength(text) > maxBytes) {
    return { ok: false, response: problem(413, `body: expected at most ${maxBytes} bytes`) };
  }
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, response: problem(400, `body: expected JSON (${(error as Error).message})`) };
  }
}
