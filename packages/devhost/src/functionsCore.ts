// The stand-in for `@azure/functions-core`, the module the Node.js worker provides to apps at run time.
// `@azure/functions` registers every `app.*` function, hook and its programming model through that module;
// when it cannot be required the library drops registrations ("test mode"). Answering `require` for it
// with this object lets the devhost capture what an unmodified app registers, exactly as the worker does.
// Several apps may be loaded one after another in one process (tests do): registrations go to whichever app
// is loading at that moment.
import fs from "node:fs";
import Module from "node:module";
import path from "node:path";
import { expandAppEntry } from "./appEntries";
import { pathToFileURL } from "node:url";

// ---- The RPC shapes the worker and the library exchange (types-core/index.d.ts, trimmed to what we use) ----

export type RpcLogLevel = "trace" | "debug" | "information" | "warning" | "error" | "critical" | "none";
export type RpcLogCategory = "user" | "system" | "customMetric";

export interface RpcBindingInfo {
  type: string;
  direction: "in" | "out" | "inout";
  dataType?: string | null;
  properties?: Record<string, unknown> | null;
  /** Everything the app passed when it declared the binding (route, methods, queueName, schedule, ...). */
  [property: string]: unknown;
}

export interface FunctionMetadata {
  name: string;
  functionId?: string;
  bindings: Record<string, RpcBindingInfo>;
  retryOptions?: unknown;
}

export interface RpcTypedData {
  string?: string | null;
  json?: string | null;
  bytes?: Uint8Array | null;
  http?: RpcHttpData | null;
  int?: number | null;
  double?: number | null;
  collectionString?: { string?: string[] | null } | null;
  collectionBytes?: { bytes?: Uint8Array[] | null } | null;
  collectionSint64?: { sint64?: number[] | null } | null;
}

export interface RpcNullableValue<T> {
  value?: T | null;
}

export interface RpcHttpCookie {
  name?: string | null;
  value?: string | null;
  domain?: RpcNullableValue<string> | null;
  path?: RpcNullableValue<string> | null;
  expires?: RpcNullableValue<{ seconds?: number | null }> | null;
  secure?: RpcNullableValue<boolean> | null;
  httpOnly?: RpcNullableValue<boolean> | null;
  sameSite?: "none" | "lax" | "strict" | "explicitNone" | null;
  maxAge?: RpcNullableValue<number> | null;
}

export interface RpcHttpData {
  method?: string | null;
  url?: string | null;
  headers?: Record<string, string> | null;
  body?: RpcTypedData | null;
  params?: Record<string, string> | null;
  statusCode?: string | null;
  query?: Record<string, string> | null;
  cookies?: RpcHttpCookie[] | null;
  enableContentNegotiation?: boolean | null;
}

export interface RpcParameterBinding {
  name: string;
  data: RpcTypedData | null | undefined;
}

export interface RpcInvocationRequest {
  invocationId: string;
  functionId: string;
  inputData: RpcParameterBinding[];
  triggerMetadata?: Record<string, RpcTypedData>;
  retryContext?: { retryCount: number; maxRetryCount: number; exception?: { message?: string } };
}

export interface RpcInvocationResponse {
  invocationId?: string;
  outputData?: RpcParameterBinding[];
  returnValue?: RpcTypedData | null;
}

export type InvocationState = "preInvocationHooks" | "postInvocationHooks" | "invocation";

export interface CoreInvocationContext {
  invocationId: string;
  request: RpcInvocationRequest;
  metadata: FunctionMetadata;
  state?: InvocationState;
  log(level: RpcLogLevel, category: RpcLogCategory, message: string): void;
}

export interface InvocationModel {
  getArguments(): Promise<{ context: unknown; inputs: unknown[] }>;
  invokeFunction(context: unknown, inputs: unknown[], callback: FunctionCallback): Promise<unknown>;
  getResponse(context: unknown, result: unknown): Promise<RpcInvocationResponse>;
}

export interface ProgrammingModel {
  name: string;
  version: string;
  getInvocationModel(coreContext: CoreInvocationContext): InvocationModel | Promise<InvocationModel>;
  getCapabilities?(
    defaults: Record<string, string>,
  ): Record<string, string> | Promise<Record<string, string>>;
}

export type FunctionCallback = (...args: unknown[]) => unknown;

export const HOOK_NAMES = ["preInvocation", "postInvocation", "appStart", "appTerminate", "log"] as const;
export type HookName = (typeof HOOK_NAMES)[number];
export type HookCallback = (context: Record<string, unknown>) => unknown;

// ---- What the devhost keeps per loaded app ----

export interface Registration {
  name: string;
  metadata: FunctionMetadata;
  handler: FunctionCallback;
  /** The binding whose type ends in "Trigger", with its name (the key in metadata.bindings). */
  triggerName: string;
  trigger: RpcBindingInfo;
}

export interface LoadedApp {
  /** The entry as given: a file, or a glob such as dist/src/functions/*.js. */
  entry: string;
  /** The files it named, loaded in this order. */
  files: string[];
  /** How many times the files were run (1 after loading; more after worker restarts). */
  loads: number;
  functions: Map<string, Registration>;
  hooks: Record<HookName, HookCallback[]>;
  /** Shared by every hook of the app, as the worker's `appHookData`. */
  appHookData: Record<string, unknown>;
  /**
   * The `hookData` of the app-level hooks: one object that appStart and appTerminate hooks share (and invocation
   * hooks do not see), as the worker's `appLevelOnlyHookData` (azure-functions-nodejs-worker src/startApp.ts and
   * src/eventHandlers/terminateWorker.ts both hand out the same object).
   */
  appLevelOnlyHookData: Record<string, unknown>;
  /** Modules first loaded by this app (its own code, not node_modules), dropped from the cache on unload. */
  ownModules: string[];
}

class Disposable {
  static from(...likes: { dispose: () => unknown }[]): Disposable {
    return new Disposable(() => likes.forEach((like) => like.dispose()));
  }
  #callOnDispose: (() => unknown) | undefined;
  constructor(callOnDispose: () => unknown) {
    this.#callOnDispose = callOnDispose;
  }
  dispose(): unknown {
    const call = this.#callOnDispose;
    this.#callOnDispose = undefined;
    return call?.();
  }
}

type SystemLogSink = (level: RpcLogLevel, message: string) => void;

/** State shared by every copy of this module in the process (a test run may load both src and dist). */
interface SharedState {
  core: typeof functionsCore;
  loading: LoadedApp | undefined;
  programmingModel: ProgrammingModel | undefined;
  systemLog: SystemLogSink;
}

const marker = Symbol.for("devhost.functionsCore");
const processSlots = process as unknown as Record<symbol, SharedState | undefined>;
const triggerPattern = /trigger$/i;

function shared(): SharedState {
  const state = processSlots[marker];
  if (!state) throw new Error("The @azure/functions-core stand-in is not installed.");
  return state;
}

function registerFunction(metadata: FunctionMetadata, handler: FunctionCallback): Disposable {
  const app = shared().loading;
  if (!app) {
    // The worker refuses late registrations the same way: functions are indexed once, when the entry has loaded.
    throw new Error(
      `Function "${metadata.name}" was registered after the app finished loading. Register every function ` +
        `while the entry module loads (top level of the module or code it calls synchronously).`,
    );
  }
  if (app.functions.has(metadata.name)) {
    throw new Error(
      `A function named "${metadata.name}" is already registered; function names must be unique.`,
    );
  }
  const triggerEntry = Object.entries(metadata.bindings).find(([, b]) => triggerPattern.test(b.type));
  if (!triggerEntry) throw new Error(`Function "${metadata.name}" has no trigger binding.`);
  const [triggerName, trigger] = triggerEntry;
  app.functions.set(metadata.name, { name: metadata.name, metadata, handler, triggerName, trigger });
  return new Disposable(() => app.functions.delete(metadata.name));
}

function registerHook(hookName: string, callback: HookCallback): Disposable {
  const app = shared().loading;
  if (!app) throw new Error(`Hook "${hookName}" was registered after the app finished loading.`);
  if (!(HOOK_NAMES as readonly string[]).includes(hookName)) {
    // The worker raises a RangeError for hook names it does not know (the library relies on it for "log").
    throw new RangeError(`Unrecognized hook "${hookName}".`);
  }
  const list = app.hooks[hookName as HookName];
  list.push(callback);
  return new Disposable(() => {
    const at = list.indexOf(callback);
    if (at >= 0) list.splice(at, 1);
  });
}

/** The object `require("@azure/functions-core")` returns inside the devhost. */
export const functionsCore = {
  version: "4.0.0-devhost",
  hostVersion: "4.0.0-devhost",
  Disposable,
  registerFunction,
  registerHook,
  setProgrammingModel(model: ProgrammingModel): void {
    shared().programmingModel = model;
  },
  getProgrammingModel(): ProgrammingModel | undefined {
    return shared().programmingModel;
  },
  log(level: RpcLogLevel, _category: RpcLogCategory, message: string): void {
    shared().systemLog(level, message);
  },
};

// `@azure/functions` looks the core module up once and caches the answer (null = test mode) for the life of
// the process, so the hook goes in when this file is first imported, before anything can ask.
if (!processSlots[marker]) {
  processSlots[marker] = {
    core: functionsCore,
    loading: undefined,
    programmingModel: undefined,
    systemLog: (level, message) => {
      if (level === "warning" || level === "error" || level === "critical") console.warn(message);
    },
  };
  type ModuleLoad = (request: string, parent: unknown, isMain: boolean) => unknown;
  const moduleWithLoad = Module as unknown as { _load: ModuleLoad };
  const originalLoad = moduleWithLoad._load;
  moduleWithLoad._load = function load(this: unknown, request: string, parent: unknown, isMain: boolean) {
    if (request === "@azure/functions-core") return shared().core;
    return originalLoad.call(this, request, parent, isMain);
  };
}

/** Where system messages of the library (and the stand-in) go; the host points it at its logger. */
export function setSystemLogSink(sink: SystemLogSink): void {
  shared().systemLog = sink;
}

/** The programming model, if the app registered anything through @azure/functions. */
export function findProgrammingModel(): ProgrammingModel | undefined {
  return shared().programmingModel;
}

/** The programming model `@azure/functions` handed over when the first function was registered. */
export function getProgrammingModel(): ProgrammingModel {
  const model = shared().programmingModel;
  if (!model) {
    throw new Error(
      "The app registered no function through @azure/functions (v4 programming model), so there is no " +
        "programming model to invoke it with.",
    );
  }
  return model;
}

function isEsmEntry(entry: string): boolean {
  if (entry.endsWith(".mjs")) return true;
  if (entry.endsWith(".cjs")) return false;
  // The nearest package.json decides, as Node does.
  for (let dir = path.dirname(entry); ; dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, "utf8")) as { type?: unknown };
      return pkg.type === "module";
    }
    if (path.dirname(dir) === dir) return false;
  }
}

/**
 * Loads an app's entry module and returns everything it registered. The entry runs as under the worker:
 * `require` for CommonJS, `import()` for ES modules.
 */
export async function loadApp(entry: string): Promise<LoadedApp> {
  const absolute = path.resolve(entry);
  // Every file a glob "main" names, in the worker's order; each registers its functions in the same app.
  const app: LoadedApp = {
    entry: absolute,
    files: expandAppEntry(absolute),
    functions: new Map(),
    hooks: { preInvocation: [], postInvocation: [], appStart: [], appTerminate: [], log: [] },
    appHookData: {},
    appLevelOnlyHookData: {},
    ownModules: [],
    loads: 0,
  };
  await runEntryFiles(app);
  return app;
}

/**
 * Runs the app's entry files into `app`, as a worker does when it starts. ES modules cannot leave Node's module
 * cache, so a later load imports them under a new URL query to run them again.
 */
async function runEntryFiles(app: LoadedApp): Promise<void> {
  const state = shared();
  if (state.loading)
    throw new Error(`Another app (${state.loading.entry}) is loading; load apps one at a time.`);
  const moduleCache = Module.createRequire(app.files[0]!).cache;
  const cacheBefore = new Set(Object.keys(moduleCache));
  const load = app.loads++;
  state.loading = app;
  try {
    for (const file of app.files) {
      if (isEsmEntry(file)) await import(pathToFileURL(file).href + (load > 0 ? `?worker=${load}` : ""));
      else Module.createRequire(file)(file);
    }
  } finally {
    state.loading = undefined;
    app.ownModules = Object.keys(moduleCache).filter(
      (key) => !cacheBefore.has(key) && !key.split(path.sep).includes("node_modules"),
    );
  }
}

/**
 * Loads the app again into the same object, as a new worker process would: its own modules run afresh (module
 * state is gone), and its functions and hooks are what it registers this time. Triggers that hold a function's
 * registration find the new one by name.
 */
export async function reloadApp(app: LoadedApp): Promise<void> {
  unloadApp(app);
  for (const hooks of Object.values(app.hooks)) hooks.length = 0;
  // A new worker process starts with empty hook data.
  for (const data of [app.appHookData, app.appLevelOnlyHookData])
    for (const key of Object.keys(data)) delete data[key];
  await runEntryFiles(app);
}

/** Forgets an app's own modules so that loading the same entry again runs it (and registers) afresh. */
export function unloadApp(app: LoadedApp): void {
  const moduleCache = Module.createRequire(app.files[0] ?? app.entry).cache;
  for (const key of app.ownModules) delete moduleCache[key];
  app.functions.clear();
}
