// The warmup trigger (`app.warmup`), as the host serves it. Microsoft Learn, "Azure Functions warmup trigger": it
// runs when a new instance of the app starts, before the instance gets traffic; there is at most one per app and
// its function must be named "warmup" (case-insensitive). The host only treats a function as the warmup function
// when both hold (IsWarmupFunction in azure-functions-host src/WebJobs.Script/Host/ScriptJobHostExtensions.cs), and
// maps it, not under the route prefix, but to `admin/warmup` (src/WebJobs.Script.WebHost/
// WebScriptHostHttpRoutesManager.cs), which the platform calls on the new instance. The call needs no key
// (FunctionInvocationMiddleware.RequiresAuthz), hands the function a new WarmupContext
// (src/WebJobs.Script.WebHost/Features/FunctionExecutionFeature.cs), which reaches the worker as the JSON of an
// object without properties, "{}" (ToRpcDefault in src/WebJobs.Script.Grpc/MessageExtensions/
// GrpcMessageConversionExtensions.cs), and answers 200 with no body once it ran (OkResult), 404 when there is no
// such function or it is disabled. The devhost is a new instance each time it starts: it runs the function once
// then, and serves /admin/warmup for running it again.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registration } from "../functionsCore";
import type { InvocationResult, InvokeRequest } from "../invocation";

export const WARMUP_FUNCTION_NAME = "warmup";
export const WARMUP_PATH = "/admin/warmup";

export function isWarmupTrigger(registration: Registration): boolean {
  return registration.trigger.type.toLowerCase() === "warmuptrigger";
}

/** The host's condition: a warmup trigger in the function named "warmup", in any case. */
export function isWarmupFunction(registration: Registration): boolean {
  return isWarmupTrigger(registration) && registration.name.toLowerCase() === WARMUP_FUNCTION_NAME;
}

export interface WarmupTriggerOptions {
  registration: Registration;
  invoke: (registration: Registration, request: InvokeRequest) => Promise<InvocationResult>;
}

export class WarmupTrigger {
  readonly #options: WarmupTriggerOptions;

  constructor(options: WarmupTriggerOptions) {
    this.#options = options;
  }

  get name(): string {
    return this.#options.registration.name;
  }

  /** One invocation with the WarmupContext the host sends; the invoker logs its outcome. */
  run(): Promise<InvocationResult> {
    return this.#options.invoke(this.#options.registration, {
      triggerData: { json: "{}" },
      reason: "This function was programmatically called via the host APIs.",
    });
  }
}

/** GET or POST /admin/warmup (any method, as the host's route has no constraint): runs the warmup function. */
export function warmupEndpoint(
  trigger: WarmupTrigger | undefined,
): (req: IncomingMessage, res: ServerResponse, rest: string) => Promise<void> {
  return async (req, res, rest) => {
    req.resume(); // the body is not read; drain it so the connection can carry the next request
    const path = rest.split("?")[0];
    // ASP.NET routing takes the path with or without a trailing slash.
    if ((path !== "" && path !== "/") || !trigger) {
      res.writeHead(404).end();
      return;
    }
    const result = await trigger.run();
    res.writeHead(result.succeeded ? 200 : 500, { "content-length": 0 }).end();
  };
}
