// callHttp, scheduling side: which HTTP request a CallHttp task the SDK opened stands for. The Durable extension
// runs durable HTTP as a built-in activity and implements the 202 pattern itself: while a response is 202 with
// a Location header (and the request allows it), it waits on a durable timer (Retry-After seconds, else the
// host's default) and then GETs the Location. With ReplaySchema V3 and later the SDK mirrors that loop so
// that its task ids match the extension's: after a 202 it opens a timer and a second CallHttp task that
// carries the original request again. That second task is the extension's status poll, so the engine reads
// it as a GET of the previous response's Location, due when the timer is.
import { z } from "zod";
import { ActionType } from "./history";

/** The name the extension records in TaskScheduled for durable HTTP. */
export const HTTP_ACTIVITY_NAME = "BuiltIn::HttpActivity";

/** The request the engine sends, in the extension's DurableHttpRequest field names. */
export interface DurableHttpRequestWire {
  method: string;
  uri: string;
  content?: string;
  headers?: Record<string, string | string[]>;
}

export type HttpTaskPlan = { request: DurableHttpRequestWire; notBefore?: string } | { problem: string };

/** The parts of the SDK's task objects read here (durable-functions 3.5). */
export interface SdkHttpTask {
  readonly actionObj?: unknown;
  result?: unknown;
  parent?: { readonly actionObj?: unknown; children?: SdkHttpTask[] };
}

const isHttpUrl = (text: string): boolean => {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol);
  } catch {
    return false;
  }
};

const requestSchema = z.object({
  method: z.string({ error: "'method' is required" }).regex(/^[A-Za-z]+$/, "'method' must be an HTTP method"),
  uri: z
    .string({ error: "'url' is required" })
    .refine(isHttpUrl, { message: "'url' must be an absolute http or https URL" }),
  content: z.string({ error: "'body' must be a string or JSON-serializable" }).nullish(),
  headers: z
    .record(z.string(), z.union([z.string(), z.array(z.string())]), {
      error: "'headers' must map names to strings",
    })
    .nullish(),
  tokenSource: z.looseObject({ resource: z.string().optional(), kind: z.string().optional() }).nullish(),
});

const responseSchema = z.looseObject({
  statusCode: z.number(),
  headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).nullish(),
});

export function planHttpTask(task: SdkHttpTask): HttpTaskPlan {
  const parsed = requestSchema.safeParse(
    (task.actionObj as { httpRequest?: unknown } | undefined)?.httpRequest,
  );
  if (!parsed.success) {
    return { problem: `callHttp: ${parsed.error.issues.map((i) => i.message).join("; ")}` };
  }
  const { method, uri, content, headers, tokenSource } = parsed.data;
  if (tokenSource) {
    return {
      problem:
        `callHttp to ${uri} asks for a managed identity token (tokenSource ${tokenSource.kind ?? "ManagedIdentityTokenSource"}` +
        `${tokenSource.resource ? ` for '${tokenSource.resource}'` : ""}), which only Azure can issue; the devhost ` +
        `has no managed identity. Locally, pass the token yourself in an Authorization header.`,
    };
  }
  const request: DurableHttpRequestWire = {
    method: method.toUpperCase(),
    uri,
    ...(content != null ? { content } : {}),
    ...(headers ? { headers } : {}),
  };
  const siblings = pollingSiblings(task);
  const at = siblings ? siblings.indexOf(task) : -1;
  if (!siblings || at < 2) return { request };
  return planPoll(request, siblings[at - 2], siblings[at - 1]);
}

/** The children of the SDK's CallHttpWithPollingTask when `task` is one: [request, timer, poll, timer, poll...]. */
function pollingSiblings(task: SdkHttpTask): SdkHttpTask[] | undefined {
  const parent = task.parent;
  const action = parent?.actionObj as { actionType?: number } | undefined;
  return action?.actionType === ActionType.CallHttp && Array.isArray(parent?.children)
    ? parent.children
    : undefined;
}

function planPoll(
  original: DurableHttpRequestWire,
  previous: SdkHttpTask | undefined,
  timer: SdkHttpTask | undefined,
): HttpTaskPlan {
  const response = responseSchema.safeParse(previous?.result);
  const location = response.success ? headerValue(response.data.headers ?? {}, "Location") : undefined;
  const fireAt = (timer?.actionObj as { fireAt?: unknown } | undefined)?.fireAt;
  if (!location || !(fireAt instanceof Date || typeof fireAt === "string")) {
    return { problem: "callHttp: the SDK opened a status poll without a 202 response and timer before it" };
  }
  if (!isHttpUrl(location)) {
    return {
      problem: `callHttp: ${original.uri} answered 202 with Location '${location}', which is not an absolute http(s) URL; the Durable extension polls only absolute URLs`,
    };
  }
  // As the extension does: a GET of the Location with the original headers, except the function key, which
  // is usually a function-level key that the status endpoint does not accept.
  const headers = Object.fromEntries(
    Object.entries(original.headers ?? {}).filter(([name]) => name.toLowerCase() !== "x-functions-key"),
  );
  return {
    request: { method: "GET", uri: location, ...(Object.keys(headers).length ? { headers } : {}) },
    notBefore: new Date(fireAt).toISOString(),
  };
}

export function headerValue(headers: Record<string, string | string[]>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
}
