// The orchestration routes of the durable HTTP API (rpc.ts): start, status, queries, purge, events and the
// instance operations (terminate, suspend, resume, rewind, restart), with the extension's status codes.
import { z } from "zod";
import type { DurableClientOperations, RpcRequest } from "./rpc";
import { booleanText, isoDate, mediaType, parseJsonBody, parseQuery, readBody, seconds, send } from "./rpcIo";
import { IN_PROGRESS, RUNTIME_STATUSES, type InstanceQuery, type InstanceStatus } from "./status";
import type { RuntimeStatus } from "./store";
import { DurableRequestError } from "./types";
import { checkStatusBody } from "./webhooks";

const runtimeStatusList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.enum(RUNTIME_STATUSES as [RuntimeStatus, ...RuntimeStatus[]])));

const listQuerySchema = z.object({
  runtimeStatus: runtimeStatusList.optional(),
  createdTimeFrom: isoDate.optional(),
  createdTimeTo: isoDate.optional(),
  instanceIdPrefix: z.string().min(1).optional(),
  top: z.coerce.number().int().min(1).max(10_000).optional(),
  showInput: booleanText.optional(),
});

const purgeQuerySchema = z.object({
  createdTimeFrom: isoDate.optional(),
  createdTimeTo: isoDate.optional(),
  runtimeStatus: runtimeStatusList.optional(),
});

const statusQuerySchema = z.object({
  showHistory: booleanText.optional(),
  showHistoryOutput: booleanText.optional(),
  showInput: booleanText.optional(),
  returnInternalServerErrorOnFailure: booleanText.optional(),
});

const waitQuerySchema = z.object({
  timeout: seconds.optional(),
  pollingInterval: seconds.optional(),
  returnInternalServerErrorOnFailure: booleanText.optional(),
});

const restartQuerySchema = waitQuerySchema.extend({ restartWithNewInstanceId: booleanText.optional() });

/** POST orchestrators/{functionName}[/{instanceId}][?timeout=&pollingInterval=]: start (and wait). */
export async function handleStart(engine: DurableClientOperations, rpc: RpcRequest): Promise<void> {
  const [, name, instanceId] = rpc.segments as [string, string, string | undefined];
  const wait = parseQuery(waitQuerySchema, rpc.query);
  const input = parseJsonBody(await readBody(rpc.req), "the orchestration input");
  const id = engine.startNew(name, {
    ...(instanceId !== undefined ? { instanceId } : {}),
    input,
    ...(rpc.query.version !== undefined ? { version: rpc.query.version } : {}),
  });
  return respondStarted(engine, rpc, id, wait);
}

/** Handles instances[/...]; false when no instance route matches (the caller answers 404). */
export async function handleInstances(engine: DurableClientOperations, rpc: RpcRequest): Promise<boolean> {
  const { res, method, segments, query } = rpc;
  const [, id, operation, eventName] = segments;
  if (id === undefined || segments.length === 2) {
    if (method === "GET") {
      if (id === undefined) listInstances(engine, rpc);
      else getStatus(engine, rpc, id);
    } else if (method === "DELETE") {
      if (id === undefined) purgeInstances(engine, rpc);
      else send(res, 200, engine.purge(id));
    } else {
      return false;
    }
    return true;
  }
  if (method !== "POST") return false;
  const op = operation?.toLowerCase();
  if (segments.length === 4 && op === "raiseevent" && eventName) {
    await raiseEvent(engine, rpc, id, eventName);
    return true;
  }
  if (segments.length !== 3) return false;
  switch (op) {
    case "terminate":
      engine.terminate(id, query.reason);
      break;
    case "suspend":
      engine.suspend(id, query.reason);
      break;
    case "resume":
      engine.resume(id, query.reason);
      break;
    case "rewind":
      engine.rewind(id, query.reason);
      break;
    case "restart": {
      const options = parseQuery(restartQuerySchema, query);
      const newId = engine.restart(id, { newInstanceId: options.restartWithNewInstanceId ?? true });
      await respondStarted(engine, rpc, newId, options);
      return true;
    }
    default:
      return false;
  }
  send(res, 202);
  return true;
}

function listInstances(engine: DurableClientOperations, rpc: RpcRequest): void {
  const filter = parseQuery(listQuerySchema, rpc.query);
  const token = rpc.req.headers["x-ms-continuation-token"];
  const page = engine.list({
    ...(filter as InstanceQuery),
    top: filter.top ?? rpc.pageSize,
    continuationToken: typeof token === "string" && token ? token : undefined,
  });
  send(
    rpc.res,
    200,
    page.instances,
    page.continuationToken ? { "x-ms-continuation-token": page.continuationToken } : {},
  );
}

function purgeInstances(engine: DurableClientOperations, rpc: RpcRequest): void {
  const filter = parseQuery(purgeQuerySchema, rpc.query);
  if (!filter.createdTimeFrom) {
    throw new DurableRequestError(400, "Please provide value for 'createdTimeFrom' parameter.");
  }
  const result = engine.purgeBy(filter as InstanceQuery);
  send(rpc.res, result.instancesDeleted > 0 ? 200 : 404, result);
}

function getStatus(engine: DurableClientOperations, rpc: RpcRequest, id: string): void {
  const opts = parseQuery(statusQuerySchema, rpc.query);
  const status = engine.getStatus(id, opts);
  if (!status) return send(rpc.res, 404, { error: `No instance with ID '${id}' exists` });
  sendStatus(rpc, status, opts.returnInternalServerErrorOnFailure === true);
}

/** 202 with Location (this very URL) and Retry-After while in progress; 200, or 500 for Failed when asked. */
function sendStatus(rpc: RpcRequest, status: InstanceStatus, failedIs500: boolean): void {
  if (IN_PROGRESS.includes(status.runtimeStatus)) {
    return send(rpc.res, 202, status, { Location: rpc.url, "Retry-After": "5" });
  }
  send(rpc.res, status.runtimeStatus === "Failed" && failedIs500 ? 500 : 200, status);
}

async function raiseEvent(
  engine: DurableClientOperations,
  rpc: RpcRequest,
  id: string,
  eventName: string,
): Promise<void> {
  const status = engine.getStatus(id);
  if (!status) return send(rpc.res, 404, { error: `No instance with ID '${id}' exists` });
  if (["Completed", "Failed", "Terminated"].includes(status.runtimeStatus)) return send(rpc.res, 410);
  if (mediaType(rpc.req) !== "application/json") {
    throw new DurableRequestError(400, "Only application/json request content is supported");
  }
  const data = parseJsonBody(await readBody(rpc.req), `the data of event '${eventName}'`);
  engine.raiseEvent(id, eventName, data);
  send(rpc.res, 202);
}

/**
 * After a start or restart: the check-status 202 (management URLs, Location, Retry-After), or with timeout and
 * pollingInterval, the outcome if the instance finishes in time, as WaitForCompletionOrCreateCheckStatusResponse.
 */
async function respondStarted(
  engine: DurableClientOperations,
  rpc: RpcRequest,
  id: string,
  wait: z.output<typeof waitQuerySchema>,
): Promise<void> {
  const urls = engine.managementPayload(rpc.origin, id);
  const accepted = (): void =>
    send(rpc.res, 202, checkStatusBody(urls), { Location: urls.statusQueryGetUri, "Retry-After": "10" });
  if (wait.timeout === undefined || wait.pollingInterval === undefined) return accepted();
  if (wait.pollingInterval > wait.timeout) {
    throw new DurableRequestError(
      400,
      `Total timeout ${wait.timeout} should be bigger than retry timeout ${wait.pollingInterval}`,
    );
  }
  const done = await waitAtMost(engine.waitForCompletion(id), wait.timeout * 1000);
  if (!done) return accepted();
  if (done.runtimeStatus === "Completed") return send(rpc.res, 200, done.output);
  sendStatus(rpc, engine.getStatus(id) ?? done, wait.returnInternalServerErrorOnFailure === true);
}

/** The value, or undefined after `ms` of real time (a client's wait, not a durable one) or if it fails. */
async function waitAtMost<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
