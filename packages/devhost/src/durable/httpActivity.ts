// callHttp, running side: the extension's built-in HTTP activity. It sends the request the way the extension's
// HttpClient does (a body without a Content-Type goes as text/plain, redirects are followed, 240 s timeout) and
// answers with its DurableHttpResponse: {statusCode, headers, content}, where headers are the response headers
// proper (.NET keeps Content-Type, Content-Length and the other content headers apart, so they are not among
// them), one string per name or an array when it repeats. Any status code is an answer; only a request that
// gets no response fails the task.
import http from "node:http";
import https from "node:https";
import { deliverActivityResult } from "./activityRunner";
import { EventType, newEvent, type HistoryEvent } from "./history";
import type { DurableHttpRequestWire } from "./httpTask";
import type { ActivityWork, EngineServices } from "./types";

export interface DurableHttpResponseWire {
  statusCode: number;
  headers: Record<string, string | string[]>;
  content: string;
}

const TIMEOUT_MS = 240_000;
const MAX_REDIRECTS = 50;
const CONTENT_HEADERS = new Set([
  "allow",
  "content-disposition",
  "content-encoding",
  "content-language",
  "content-length",
  "content-location",
  "content-md5",
  "content-range",
  "content-type",
  "expires",
  "last-modified",
]);

export async function runHttpActivity(s: EngineServices, w: ActivityWork): Promise<void> {
  const request = JSON.parse(w.input ?? "{}") as DurableHttpRequestWire;
  let event: HistoryEvent;
  try {
    const response = await sendDurableHttp(request);
    event = newEvent(EventType.TaskCompleted, s.clock.now(), {
      TaskScheduledId: w.taskId,
      Result: JSON.stringify(response),
    });
  } catch (err) {
    event = newEvent(EventType.TaskFailed, s.clock.now(), {
      TaskScheduledId: w.taskId,
      Reason: `${request.method} ${request.uri} failed: ${err instanceof Error ? err.message : String(err)}`,
      Details: "",
    });
  }
  deliverActivityResult(s, w, event);
}

export async function sendDurableHttp(request: DurableHttpRequestWire): Promise<DurableHttpResponseWire> {
  const headers: Record<string, string | string[]> = { ...(request.headers ?? {}) };
  let body: Buffer | undefined;
  if (request.content != null) {
    const typeName = Object.keys(headers).find((k) => k.toLowerCase() === "content-type");
    const type = typeName ? String(headers[typeName]) : "text/plain";
    if (type.includes("multipart")) throw new Error("Multipart content is not supported with CallHttpAsync.");
    if (!typeName) headers["Content-Type"] = type;
    body = Buffer.from(request.content, "utf8");
  }
  let method = request.method;
  let url = new URL(request.uri);
  for (let redirects = 0; ; redirects++) {
    const response = await send(method, url, headers, body);
    const location = response.headers.location;
    if (
      ![301, 302, 303, 307, 308].includes(response.statusCode) ||
      !location ||
      redirects === MAX_REDIRECTS
    ) {
      return toDurableResponse(response);
    }
    const next = new URL(Array.isArray(location) ? location[0]! : location, url);
    // HttpClient does not follow a redirect from https to http.
    if (url.protocol === "https:" && next.protocol === "http:") return toDurableResponse(response);
    if (response.statusCode === 303 || ([301, 302].includes(response.statusCode) && method === "POST")) {
      method = "GET";
      body = undefined;
      for (const name of Object.keys(headers))
        if (name.toLowerCase() === "content-type") delete headers[name];
    }
    url = next;
  }
}

interface RawResponse {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  content: string;
}

function send(
  method: string,
  url: URL,
  headers: Record<string, string | string[]>,
  body: Buffer | undefined,
): Promise<RawResponse> {
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method, headers, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () =>
        resolve({
          statusCode: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          content: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    req.on("timeout", () => req.destroy(new Error(`no response within ${TIMEOUT_MS / 1000} s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Header names as the server spelled them (HttpClient keeps them), grouped case-insensitively. */
function toDurableResponse(response: RawResponse): DurableHttpResponseWire {
  const grouped = new Map<string, { name: string; values: string[] }>();
  for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
    const name = response.rawHeaders[i] as string;
    const key = name.toLowerCase();
    if (CONTENT_HEADERS.has(key)) continue;
    const entry = grouped.get(key) ?? { name, values: [] };
    entry.values.push(response.rawHeaders[i + 1] as string);
    grouped.set(key, entry);
  }
  const headers: Record<string, string | string[]> = {};
  for (const { name, values } of grouped.values())
    headers[name] = values.length === 1 ? (values[0] as string) : values;
  return { statusCode: response.statusCode, headers, content: response.content };
}
