// The durable client's HTTP API (what durable-functions' DurableClient calls at `rpcBaseUrl`), served from
// the engine. Routes and status codes follow the Durable Functions HTTP API reference; paths are relative to
// the mount point (the devhost mounts it at /durabletask/). It knows the engine only through the operations
// below, which the engine implements, so that the engine can serve it without the two importing each other.
import type http from "node:http";
import { z } from "zod";
import {
  InvalidContinuationToken,
  RUNTIME_STATUSES,
  type InstancePage,
  type InstanceQuery,
  type InstanceStatus,
  type StatusOptions,
} from "./status";
import type { RuntimeStatus } from "./store";
import { DurableRequestError, type EntityIdLike, type StartOptions } from "./types";

/** The durable client operations the HTTP API serves. */
export interface DurableClientOperations {
  startNew(name: string, options?: StartOptions): string;
  getStatus(instanceId: string, opts?: StatusOptions): InstanceStatus | undefined;
  list(query?: InstanceQuery): InstancePage;
  raiseEvent(instanceId: string, eventName: string, data?: unknown): void;
  terminate(instanceId: string, reason?: string): void;
  purge(instanceId: string): { instancesDeleted: number };
  purgeBy(query: Omit<InstanceQuery, "top" | "continuationToken">): { instancesDeleted: number };
  signalEntity(entity: EntityIdLike, operation: string, input?: unknown): void;
  readEntityState(entity: EntityIdLike): { exists: boolean; state: unknown };
  /** The management URLs of an instance (statusQueryGetUri and friends), on `baseUrl`. */
  managementPayload(baseUrl: string, instanceId: string): Record<string, string>;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

const isoDate = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: "expected an ISO 8601 date-time" })
  .transform((s) => new Date(s));
const booleanText = z.enum(["true", "false"]).transform((s) => s === "true");

const listQuerySchema = z.object({
  runtimeStatus: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(RUNTIME_STATUSES as [RuntimeStatus, ...RuntimeStatus[]])))
    .optional(),
  createdTimeFrom: isoDate.optional(),
  createdTimeTo: isoDate.optional(),
  instanceIdPrefix: z.string().min(1).optional(),
  top: z.coerce.number().int().min(1).max(10_000).optional(),
  showInput: booleanText.optional(),
});

const statusQuerySchema = z.object({
  showHistory: booleanText.optional(),
  showHistoryOutput: booleanText.optional(),
  showInput: booleanText.optional(),
  returnInternalServerErrorOnFailure: booleanText.optional(),
});

export async function handleDurableRpc(
  engine: DurableClientOperations,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  pathAfterPrefix: string,
  pageSize: number,
): Promise<void> {
  try {
    const url = new URL(req.url ?? "/", "http://localhost");
    const pathOnly = pathAfterPrefix.split("?")[0] ?? "";
    const segments = pathOnly
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
    const method = (req.method ?? "GET").toUpperCase();
    const query = Object.fromEntries(url.searchParams.entries());
    const baseUrl = `http://${req.headers.host ?? "localhost"}`;
    const [area, a, b, c] = segments;

    if (area === "orchestrators" && method === "POST" && a && segments.length <= 3) {
      const input = parseJsonBody(await readBody(req), "the orchestration input");
      const id = engine.startNew(a, { instanceId: b, input, version: query.version });
      const payload = engine.managementPayload(baseUrl, id);
      return send(res, 202, payload, { Location: payload.statusQueryGetUri ?? "" });
    }

    if (area === "instances" && segments.length === 1) {
      const filter = parseQuery(listQuerySchema, query);
      if (method === "GET") {
        const token = req.headers["x-ms-continuation-token"];
        const page = engine.list({
          ...(filter as InstanceQuery),
          top: filter.top ?? pageSize,
          continuationToken: typeof token === "string" && token ? token : undefined,
        });
        return send(
          res,
          200,
          page.instances,
          page.continuationToken ? { "x-ms-continuation-token": page.continuationToken } : {},
        );
      }
      if (method === "DELETE") {
        const result = engine.purgeBy(filter as InstanceQuery);
        return send(res, result.instancesDeleted > 0 ? 200 : 404, result);
      }
    }

    if (area === "instances" && a) {
      if (segments.length === 2 && method === "GET") {
        const opts = parseQuery(statusQuerySchema, query);
        const status = engine.getStatus(a, opts);
        if (!status) return send(res, 404, { error: `No instance with ID '${a}' exists` });
        const running = ["Pending", "Running", "ContinuedAsNew"].includes(status.runtimeStatus);
        const code = running
          ? 202
          : status.runtimeStatus === "Failed" && opts.returnInternalServerErrorOnFailure
            ? 500
            : 200;
        const location = running
          ? { Location: engine.managementPayload(baseUrl, a).statusQueryGetUri ?? "" }
          : undefined;
        return send(res, code, status, location);
      }
      if (segments.length === 2 && method === "DELETE") return send(res, 200, engine.purge(a));
      if (segments.length === 4 && b === "raiseEvent" && c && method === "POST") {
        const data = parseJsonBody(await readBody(req), `the data of event '${c}'`);
        engine.raiseEvent(a, c, data);
        return send(res, 202);
      }
      if (segments.length === 3 && b === "terminate" && method === "POST") {
        engine.terminate(a, query.reason);
        return send(res, 202);
      }
      if (
        segments.length === 3 &&
        b &&
        ["suspend", "resume", "rewind", "restart"].includes(b) &&
        method === "POST"
      ) {
        return send(res, 501, { error: `${b} is not supported by the devhost durable engine` });
      }
    }

    if (area === "entities" && a && b && segments.length === 3) {
      if (method === "GET") {
        const entity = engine.readEntityState({ name: a, key: b });
        return entity.exists
          ? send(res, 200, entity.state)
          : send(res, 404, { error: `Entity @${a}@${b} does not exist` });
      }
      if (method === "POST") {
        if (!query.op)
          throw new DurableRequestError(400, "the 'op' query parameter (the operation name) is required");
        const input = parseJsonBody(await readBody(req), `the input of operation '${query.op}'`);
        engine.signalEntity({ name: a, key: b }, query.op, input);
        return send(res, 202);
      }
    }

    return send(res, 404, { error: `No durable API route for ${method} /${segments.join("/")}` });
  } catch (err) {
    if (err instanceof DurableRequestError) return send(res, err.status, { error: err.message });
    if (err instanceof InvalidContinuationToken) return send(res, 400, { error: err.message });
    if (err instanceof URIError) return send(res, 400, { error: `Malformed URL path: ${err.message}` });
    return send(res, 500, { error: err instanceof Error ? err.message : String(err) });
  }
}

function parseQuery<T extends z.ZodType>(schema: T, query: Record<string, string>): z.output<T> {
  const parsed = schema.safeParse(query);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i) => `${i.path.join(".") || "query"}: ${i.message}`)
      .join("; ");
    throw new DurableRequestError(400, `Invalid query string: ${problems}`);
  }
  return parsed.data;
}

function parseJsonBody(body: string, what: string): unknown {
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

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new DurableRequestError(413, `request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function send(
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
