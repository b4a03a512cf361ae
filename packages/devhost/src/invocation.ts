// One invocation, run the way the Node.js worker runs it: the host hands over RPC-shaped input data
// (RpcInvocationRequest), and @azure/functions' own programming model turns it into the HttpRequest, timer
// object, message body and InvocationContext the handler receives, then turns the handler's result and
// extraOutputs back into RPC output data. Hooks run in the worker's order. The devhost only adds what the
// Functions host adds around that: input bindings it fills, output bindings it flushes, and the log lines.
import { randomUUID } from "node:crypto";
import { format } from "node:util";
import {
  getProgrammingModel,
  type CoreInvocationContext,
  type FunctionCallback,
  type HookName,
  type LoadedApp,
  type Registration,
  type RpcBindingInfo,
  type RpcInvocationRequest,
  type RpcInvocationResponse,
  type RpcLogCategory,
  type RpcLogLevel,
  type RpcParameterBinding,
  type RpcTypedData,
} from "./functionsCore";
import type { HostLogger, LogLevel } from "./logger";

/** Fills an input binding (e.g. durableClient) for one invocation. */
export type InputProvider = (binding: RpcBindingInfo, registration: Registration) => RpcTypedData | undefined;

/** Delivers an output binding's value (e.g. serviceBus) after the handler returned. */
export type OutputHandler = (
  binding: RpcBindingInfo,
  value: RpcTypedData,
  registration: Registration,
) => Promise<void>;

export interface InvokeRequest {
  /** The trigger's data; input bindings are added by the invoker. */
  triggerData: RpcTypedData;
  triggerMetadata?: Record<string, RpcTypedData>;
  /** Shown in the "Executing" line, as the host's Reason. */
  reason: string;
  /** An extra line the host prints for some triggers (Service Bus: message id, delivery count, ...). */
  details?: string;
  retryContext?: RpcInvocationRequest["retryContext"];
  /**
   * The invocation's id, when the caller must know it before the invocation starts: a streamed HTTP request is
   * forwarded to the worker under it (triggers/httpStream.ts). Default: a new one.
   */
  invocationId?: string;
}

export interface InvocationResult {
  invocationId: string;
  succeeded: boolean;
  error?: Error;
  /** The RPC response; for HTTP triggers `returnValue.http` is the response to send. */
  response?: RpcInvocationResponse;
  /**
   * Whether the handler gave an HTTP output a value (its return value or an http extra output). With HTTP
   * streaming the library sends that response over its own HTTP server, leaving the RPC response empty either way,
   * so this is how the host knows whether one is coming.
   */
  httpResponseGiven?: boolean;
  durationMs: number;
}

const TRIGGER = /trigger$/i;

/** A promise that fails when `fail` is called, and does not count as unhandled before (or without) a listener. */
function workerCrash(): { failed: Promise<never>; fail(error: Error): void } {
  let fail!: (error: Error) => void;
  const failed = new Promise<never>((_resolve, reject) => (fail = reject));
  failed.catch(() => undefined);
  return { failed, fail };
}

/**
 * The result and error a postInvocation hook sees before the handler settles them. The Node.js worker builds its
 * PostInvocationContext with `result: null, error: null` and only assigns `error` when the handler throws
 * (azure-functions-nodejs-worker src/eventHandlers/InvocationHandler.ts), so a hook sees `context.error === null`
 * after a success, and `result === null` after a failure.
 */
function postInvocationState(): { result: unknown; error: unknown } {
  return { result: null, error: null };
}

/**
 * Whether what the postInvocation hooks left in `error` fails the invocation: anything but null and undefined, as
 * the worker's isError (azure-functions-nodejs-worker src/errors.ts). A handler that throws null or undefined
 * therefore succeeds there, and here.
 */
function isError(value: unknown): boolean {
  return value !== null && value !== undefined;
}

function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === "string" ? value : format("%o", value));
}

/** An orchestrator failure arrives as the durable SDK's OrchestrationFailureError, whose message carries the
 *  whole replay state after "$OutOfProcData$:"; the user's own error message is what is worth printing. */
function describeFailure(error: Error): string {
  const marker = "$OutOfProcData$:";
  const at = error.message.indexOf(marker);
  if (at >= 0) {
    try {
      const state = JSON.parse(error.message.slice(at + marker.length)) as { error?: unknown };
      if (typeof state.error === "string") return `Orchestrator function failed: ${state.error}`;
    } catch {
      // Not the SDK's format after all: fall through to the stack.
    }
  }
  return error.stack ?? error.message;
}

/** True when an HTTP output binding of the function has a value: the handler's result or an http extra output. */
function givesHttpResponse(registration: Registration, result: unknown, context: unknown): boolean {
  const extraOutputs = (context as { extraOutputs?: { get(name: string): unknown } }).extraOutputs;
  return Object.entries(registration.metadata.bindings).some(([name, binding]) => {
    if (binding.direction !== "out" || binding.type.toLowerCase() !== "http") return false;
    const value = name === "$return" ? result : extraOutputs?.get(name);
    return value !== undefined && value !== null;
  });
}

function toLogLevel(level: RpcLogLevel): LogLevel {
  return level === "none" ? "trace" : level;
}

export interface InvokerOptions {
  app: LoadedApp;
  logger: HostLogger;
  inputs?: Record<string, InputProvider>;
  outputs?: Record<string, OutputHandler>;
  /** Runs an invocation in the app's time (a time-skipping host's clock, timeSkipping.ts); default as is. */
  appTime?: <T>(run: () => T) => T;
}

export class Invoker {
  readonly #app: LoadedApp;
  readonly #logger: HostLogger;
  readonly #inputs: Map<string, InputProvider>;
  readonly #outputs: Map<string, OutputHandler>;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #appTime: <T>(run: () => T) => T;
  /** Settles (failing) when the worker crashes; invocations started before then fail with it. */
  #crash = workerCrash();

  constructor(options: InvokerOptions) {
    this.#app = options.app;
    this.#logger = options.logger;
    this.#appTime = options.appTime ?? ((run) => run());
    this.#inputs = new Map(Object.entries(options.inputs ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    this.#outputs = new Map(Object.entries(options.outputs ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  }

  /** Binding types of `registration` the devhost cannot fill or deliver (reported once at start-up). */
  unsupportedBindings(registration: Registration): string[] {
    const missing: string[] = [];
    for (const [name, binding] of Object.entries(registration.metadata.bindings)) {
      if (TRIGGER.test(binding.type)) continue;
      const type = binding.type.toLowerCase();
      if (name === "$return" && type === "http") continue;
      const known = binding.direction === "in" ? this.#inputs.has(type) : this.#outputs.has(type);
      if (!known) missing.push(`${binding.direction === "in" ? "input" : "output"} ${binding.type}`);
    }
    return missing;
  }

  /** Resolves when every invocation started so far has finished (or after `timeoutMs`). */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#inFlight.size > 0) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.#inFlight]),
        new Promise((resolve) => (timer = setTimeout(resolve, remaining))),
      ]);
      clearTimeout(timer);
    }
    return true;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * The worker crashed (an exception no invocation caught): every invocation in progress fails with `error`, as
   * the host fails them when the worker process dies. Invocations started later are not affected.
   */
  failInFlight(error: Error): void {
    const crash = this.#crash;
    this.#crash = workerCrash();
    crash.fail(error);
  }

  /** The registration a trigger holds, as the app has it now: a restarted worker registered its functions anew. */
  #current(registration: Registration): Registration {
    return this.#app.functions.get(registration.name) ?? registration;
  }

  invoke(held: Registration, request: InvokeRequest): Promise<InvocationResult> {
    const registration = this.#current(held);
    return this.#track(
      this.#appTime(() =>
        this.#logged(
          registration.name,
          request.reason,
          request.details,
          request.invocationId ?? randomUUID(),
          async (invocationId) => {
            const outcome = await this.#invokeThroughModel(registration, request, invocationId);
            await this.#deliverOutputs(registration, outcome.response);
            return outcome;
          },
        ),
      ),
    ).then(({ invocationId, durationMs, error, value }) =>
      error
        ? { invocationId, succeeded: false, error, durationMs }
        : {
            invocationId,
            succeeded: true,
            ...(value ? { response: value.response, httpResponseGiven: value.httpResponseGiven } : {}),
            durationMs,
          },
    );
  }

  /**
   * Runs a handler the caller prepared its own context for (the durable engine builds the orchestration,
   * activity and entity contexts it reads back): hooks and log lines as for any invocation. Its extra inputs
   * (an activity's durable client, say) are filled as for any other trigger. Rejects with the handler's error.
   */
  async invokeDirect(
    held: Registration,
    context: { invocationId?: string },
    inputs: unknown[],
    reason: string,
  ): Promise<unknown> {
    const registration = this.#current(held);
    this.#fillExtraInputs(registration, context);
    const invocationId = context.invocationId ?? randomUUID();
    const outcome = await this.#track(
      this.#appTime(() =>
        this.#logged(registration.name, reason, undefined, invocationId, async () => {
          const hookData: Record<string, unknown> = {};
          const pre: Record<string, unknown> = {
            hookData,
            appHookData: this.#app.appHookData,
            invocationContext: context,
            inputs,
            functionCallback: registration.handler,
          };
          await this.#runHooks("preInvocation", pre);
          const finalInputs = pre.inputs as unknown[];
          // null, not undefined, until set: what the worker's postInvocation context starts with (postInvocationState).
          let { result, error } = postInvocationState();
          try {
            result = await (pre.functionCallback as FunctionCallback)(...finalInputs, context);
          } catch (thrown) {
            error = thrown;
          }
          const post: Record<string, unknown> = {
            hookData,
            appHookData: this.#app.appHookData,
            invocationContext: context,
            inputs: finalInputs,
            result,
            error,
          };
          await this.#runHooks("postInvocation", post);
          if (isError(post.error)) throw post.error;
          return post.result;
        }),
      ),
    );
    if (outcome.error) throw outcome.rawError;
    return outcome.value;
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work)).catch(() => undefined);
    return work;
  }

  /** Wraps one invocation in the host's "Executing"/"Executed" lines; never rejects. */
  async #logged<T>(
    name: string,
    reason: string,
    details: string | undefined,
    invocationId: string,
    run: (invocationId: string) => Promise<T>,
  ): Promise<{ invocationId: string; durationMs: number; value?: T; error?: Error; rawError?: unknown }> {
    const started = performance.now();
    this.#logger.write({
      level: "information",
      category: "host",
      functionName: name,
      invocationId,
      message: `Executing 'Functions.${name}' (Reason='${reason}', Id=${invocationId})`,
    });
    if (details)
      this.#logger.write({
        level: "information",
        category: "host",
        functionName: name,
        invocationId,
        message: details,
      });
    let value: T | undefined;
    let rawError: unknown;
    let failure: Error | undefined;
    try {
      value = await Promise.race([run(invocationId), this.#crash.failed]);
    } catch (error) {
      rawError = error;
      failure = toError(error);
    }
    const durationMs = Math.round(performance.now() - started);
    if (failure) {
      this.#logger.write({
        level: "error",
        category: "host",
        functionName: name,
        invocationId,
        message: `Exception while executing function: Functions.${name}. ${describeFailure(failure)}`,
      });
    }
    this.#logger.write({
      level: failure ? "error" : "information",
      category: "host",
      functionName: name,
      invocationId,
      message: `Executed 'Functions.${name}' (${failure ? "Failed" : "Succeeded"}, Id=${invocationId}, Duration=${durationMs}ms)`,
    });
    return failure
      ? { invocationId, durationMs, error: failure, rawError }
      : { invocationId, durationMs, ...(value !== undefined ? { value } : {}) };
  }

  /**
   * Gives a context the durable engine built the input bindings its function registered, as the host does for
   * every function: listed in `options.extraInputs`, their values in `extraInputs`.
   */
  #fillExtraInputs(registration: Registration, context: unknown): void {
    const ctx = context as {
      options?: { extraInputs?: Array<{ name: string; type: string }> };
      extraInputs?: { set(name: string, value: unknown): void };
    };
    if (!ctx.options?.extraInputs || !ctx.extraInputs) return;
    for (const [bindingName, binding] of Object.entries(registration.metadata.bindings)) {
      if (binding.direction !== "in" || TRIGGER.test(binding.type)) continue;
      const data = this.#inputs.get(binding.type.toLowerCase())?.(binding, registration);
      if (data === undefined) continue;
      const text = data.json ?? data.string;
      let value: unknown = text;
      try {
        value = typeof text === "string" ? JSON.parse(text) : text;
      } catch {
        // Not JSON: the text itself, as the worker passes a string input.
      }
      if (!ctx.options.extraInputs.some((i) => i.name === bindingName))
        ctx.options.extraInputs.push({ ...binding, name: bindingName, type: binding.type });
      ctx.extraInputs.set(bindingName, value);
    }
  }

  #inputData(registration: Registration, triggerData: RpcTypedData): RpcParameterBinding[] {
    const inputData: RpcParameterBinding[] = [{ name: registration.triggerName, data: triggerData }];
    for (const [bindingName, binding] of Object.entries(registration.metadata.bindings)) {
      if (binding.direction !== "in" || TRIGGER.test(binding.type)) continue;
      const provide = this.#inputs.get(binding.type.toLowerCase());
      const data = provide?.(binding, registration);
      if (data !== undefined) inputData.push({ name: bindingName, data });
    }
    return inputData;
  }

  async #invokeThroughModel(
    registration: Registration,
    request: InvokeRequest,
    invocationId: string,
  ): Promise<{ response: RpcInvocationResponse; httpResponseGiven: boolean }> {
    const app = this.#app;
    // The library creates the context in getArguments; log calls made after that carry it to log hooks.
    const created: { context?: unknown } = {};
    const coreContext: CoreInvocationContext = {
      invocationId,
      request: {
        invocationId,
        functionId: registration.metadata.functionId ?? registration.name,
        inputData: this.#inputData(registration, request.triggerData),
        ...(request.triggerMetadata ? { triggerMetadata: request.triggerMetadata } : {}),
        ...(request.retryContext ? { retryContext: request.retryContext } : {}),
      },
      metadata: registration.metadata,
      log: (level, category, message) =>
        this.#userLog(registration, invocationId, level, category, message, created.context),
    };
    const model = await getProgrammingModel().getInvocationModel(coreContext);
    const args = await model.getArguments();
    const context = args.context;
    created.context = context;

    // Hook contexts are plain objects: the library wraps them and reads changes back from the same object.
    const hookData: Record<string, unknown> = {};
    const pre: Record<string, unknown> = {
      hookData,
      appHookData: app.appHookData,
      invocationContext: context,
      inputs: args.inputs,
      functionCallback: registration.handler,
    };
    coreContext.state = "preInvocationHooks";
    await this.#runHooks("preInvocation", pre);
    const inputs = pre.inputs as unknown[];
    const callback = pre.functionCallback as FunctionCallback;

    coreContext.state = "invocation";
    let { result, error } = postInvocationState();
    try {
      result = await model.invokeFunction(context, inputs, callback);
    } catch (thrown) {
      error = thrown;
    }

    const post: Record<string, unknown> = {
      hookData,
      appHookData: app.appHookData,
      invocationContext: context,
      inputs,
      result,
      error,
    };
    coreContext.state = "postInvocationHooks";
    await this.#runHooks("postInvocation", post);
    coreContext.state = undefined;
    if (isError(post.error)) throw post.error;
    const httpResponseGiven = givesHttpResponse(registration, post.result, context);
    return { response: await model.getResponse(context, post.result), httpResponseGiven };
  }

  async #runHooks(name: HookName, context: Record<string, unknown>): Promise<void> {
    for (const hook of [...this.#app.hooks[name]]) await hook(context);
  }

  #userLog(
    registration: Registration,
    invocationId: string,
    level: RpcLogLevel,
    category: RpcLogCategory,
    message: string,
    invocationContext: unknown,
  ): void {
    let finalLevel = level;
    let finalMessage = message;
    if (category === "user" && this.#app.hooks.log.length > 0) {
      const hookContext: Record<string, unknown> = {
        level,
        message,
        category,
        invocationContext,
        hookData: {},
        appHookData: this.#app.appHookData,
      };
      for (const hook of this.#app.hooks.log) {
        try {
          hook(hookContext);
        } catch (error) {
          this.#logger.warn(`A log hook threw: ${toError(error).message}`);
        }
      }
      finalLevel = hookContext.level as RpcLogLevel;
      finalMessage = String(hookContext.message);
    }
    if (finalLevel === "none") return;
    this.#logger.write({
      level: toLogLevel(finalLevel),
      category: category === "user" ? "user" : "system",
      functionName: registration.name,
      invocationId,
      message: finalMessage,
    });
  }

  async #deliverOutputs(registration: Registration, response: RpcInvocationResponse): Promise<void> {
    const values: [RpcBindingInfo, RpcTypedData][] = [];
    for (const output of response.outputData ?? []) {
      const binding = registration.metadata.bindings[output.name];
      if (binding && output.data !== undefined && output.data !== null) values.push([binding, output.data]);
    }
    const returnBinding = registration.metadata.bindings["$return"];
    if (returnBinding && returnBinding.type.toLowerCase() !== "http") {
      const value = response.returnValue;
      if (value !== undefined && value !== null) values.push([returnBinding, value]);
    }
    for (const [binding, value] of values) {
      const deliver = this.#outputs.get(binding.type.toLowerCase());
      if (deliver) await deliver(binding, value, registration);
    }
  }
}
