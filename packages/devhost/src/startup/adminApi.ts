// func start's admin API: POST /admin/functions/<name> {"input": "..."} runs a timer or Service Bus function
// right away, with the input as its trigger data (a message body) or a timer object that is not past due. A timer
// function runs under its retry policy, as every execution the host starts does.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registration } from "../functionsCore";
import type { TimerTrigger } from "../triggers/timer";
import type { Invoke } from "./runtime";

const RUNNABLE = new Set(["timertrigger", "servicebustrigger"]);

export function adminFunctionsApi(
  registrations: readonly Registration[],
  timers: readonly TimerTrigger[],
  invoke: Invoke,
): (req: IncomingMessage, res: ServerResponse, rest: string) => Promise<void> {
  return async (req, res, rest) => {
    const name = decodeURIComponent(rest.split("?")[0] ?? "").toLowerCase();
    const registration = registrations.find((r) => r.name.toLowerCase() === name);
    const type = registration?.trigger.type.toLowerCase();
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    if (!registration || !type) {
      res.writeHead(404).end();
      return;
    }
    if (!RUNNABLE.has(type)) {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end(`${registration.name} (${type}) cannot be run this way.`);
      return;
    }
    const input = await readInput(req);
    if (input === undefined) {
      res.writeHead(400, { "content-type": "text/plain" }).end('Expected a JSON body like {"input": "..."}.');
      return;
    }
    const reason = "This function was programmatically called via the host APIs.";
    const timer = timers.find((t) => t.name === registration.name);
    if (timer) void timer.runNow(reason);
    else void invoke(registration, { triggerData: { string: input }, reason });
    res.writeHead(202).end();
  };
}

/** The body's `input` ("" when absent or not a string); undefined when the body is not JSON. */
async function readInput(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return "";
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input?: unknown };
    return typeof body.input === "string" ? body.input : "";
  } catch {
    return undefined;
  }
}
