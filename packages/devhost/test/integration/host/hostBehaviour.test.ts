// What the devhost does where an app can see it, matched to the real Functions host and Node.js worker, driven
// through the sample app test/support/apps/host-behaviour-app as a user would (HTTP, the emulator, the log). Each
// expectation names where the behaviour it checks comes from.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ServiceBusClient } from "@azure/service-bus";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulators } from "../../../src/emulators";
import { APPS_DIR, startTestDevHost, type TestDevHost } from "../../support/devhost";
import { eventually, sleep } from "../../support/servicebus";

const APP = "host-behaviour-app";
const APP_ROOT = path.join(APPS_DIR, APP);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const emulatorConnection = (port: number): string =>
  `Endpoint=sb://127.0.0.1:${port};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;`;

interface Observed {
  postInvocation: Array<{
    functionName: string;
    error: string;
    result: string;
    invocationHookData: string[];
  }>;
  warmups: Array<{ warmupContext?: unknown; functionName: string }>;
  timerRuns: number;
  pausedWorkRuns: number;
}

async function observed(host: TestDevHost): Promise<Observed> {
  return (await (await fetch(`${host.url}/api/observed`)).json()) as Observed;
}

const executions = (host: TestDevHost, name: string): number =>
  host.lines().filter((line) => line.startsWith(`Executing 'Functions.${name}'`)).length;

describe("host behaviour an app can see", () => {
  let host: TestDevHost;
  let connection: string;
  let hookReport: string;
  let stopped = false;

  beforeAll(async () => {
    connection = emulatorConnection(await freePort());
    hookReport = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "devhost-hooks-")), "terminate.json");
    host = await startTestDevHost(APP, {
      emulators: true,
      startEmulators,
      settings: {
        ServiceBusConnection: connection,
        DEVHOST_SERVICEBUS_CONFIG: "emulator-queues.json",
        HOOK_REPORT_FILE: hookReport,
        FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: "64",
        "AzureWebJobs.disabledHttp.Disabled": "true",
        AzureWebJobs_disabledTimer_Disabled: "1",
        "AzureWebJobs.PAUSEDWORK.Disabled": "True",
        AzureWebJobs__stillEnabled__Disabled: "true",
      },
    });
  });

  afterAll(async () => {
    if (!stopped) await host?.stop();
    if (host) fs.rmSync(host.dataDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(hookReport), { recursive: true, force: true });
  });

  it("gives postInvocation hooks error null after a success and result null after a failure", async () => {
    expect((await fetch(`${host.url}/api/succeeds`)).status).toBe(200);
    expect((await fetch(`${host.url}/api/fails`)).status).toBe(500);
    // azure-functions-nodejs-worker src/eventHandlers/InvocationHandler.ts: the PostInvocationContext starts as
    // { result: null, error: null }, and only a throw assigns error (the result stays null).
    expect((await observed(host)).postInvocation).toEqual([
      { functionName: "succeeds", error: "null", result: "object", invocationHookData: [] },
      { functionName: "fails", error: "Error: boom", result: "null", invocationHookData: [] },
    ]);
  });

  it("writes cookies as ASP.NET Core does for the host: lower-case attributes, path=/ by default", async () => {
    const response = await fetch(`${host.url}/api/login`, { method: "POST" });
    expect(response.status).toBe(204);
    // azure-functions-host src/WebJobs.Script.Grpc/MessageExtensions/GrpcMessageExtensionUtilities.cs
    // (RpcHttpCookieConverter: CookieOptions, whose Path defaults to "/"; sameSite "none" from the library means
    // unspecified, "explicitNone" means None; maxAge as TimeSpan.FromSeconds) written by dotnet/aspnetcore
    // ResponseCookies.Append (value through Uri.EscapeDataString) and SetCookieHeaderValue.ToString (expires in
    // RFC 1123, max-age in whole seconds, then domain, path, secure, samesite, httponly).
    expect(response.headers.getSetCookie()).toEqual([
      "session=a%20b%3Dc%3Bd; max-age=3600; path=/; secure; samesite=lax; httponly",
      "prefs=dark; expires=Wed, 02 Jan 2030 03:04:05 GMT; domain=example.test; path=/api; samesite=strict",
      "tracker=1; path=/; secure; samesite=none",
      "plain=x; path=/",
    ]);
  });

  it("honours FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: a larger body gets 413, the function never runs", async () => {
    // Microsoft Learn, "App settings reference for Azure Functions", FUNCTIONS_REQUEST_BODY_SIZE_LIMIT; applied by
    // azure-functions-host src/WebJobs.Script.WebHost/Middleware/HttpRequestBodySizeMiddleware.cs to Kestrel's
    // MaxRequestBodySize, whose refusal is 413 Payload Too Large.
    const atLimit = await fetch(`${host.url}/api/echo`, { method: "POST", body: "x".repeat(64) });
    expect(atLimit.status).toBe(200);
    expect(await atLimit.text()).toBe("64 bytes");
    const before = executions(host, "echo");
    const over = await fetch(`${host.url}/api/echo`, { method: "POST", body: "x".repeat(65) });
    expect(over.status).toBe(413);
    expect(executions(host, "echo")).toBe(before);
  });

  it("does not trigger a function its AzureWebJobs.<name>.Disabled setting disables, and says so at start", async () => {
    // azure-webjobs-sdk src/Microsoft.Azure.WebJobs.Host/Listeners/HostListenerFactory.cs: the settings
    // AzureWebJobs.<name>.Disabled and AzureWebJobs_<name>_Disabled, "1" or "true" in any case, names in any case;
    // no listener, and the line "Function '<name>' is disabled".
    const lines = host.lines();
    for (const name of ["disabledHttp", "disabledTimer", "pausedWork"]) {
      expect(lines).toContain(`Function '${name}' is disabled`);
      expect(host.functions.find((f) => f.name === name)?.disabled).toBe(true);
    }
    // azure-functions-host src/WebJobs.Script.WebHost/Middleware/FunctionInvocationMiddleware.cs: a disabled
    // function's route answers 404 (without the master key, which the devhost has not).
    expect((await fetch(`${host.url}/api/disabled-http`)).status).toBe(404);
    expect(executions(host, "disabledHttp")).toBe(0);

    // Service Bus: no receiver, so the message stays in the queue.
    const client = new ServiceBusClient(connection);
    try {
      await client.createSender("paused-items").sendMessages({ body: "wait" });
      await sleep(1_500);
      const peeked = await client.createReceiver("paused-items").peekMessages(5);
      expect(peeked.map((m) => m.body)).toEqual(["wait"]);
    } finally {
      await client.close();
    }
    // The timer (runOnStartup, every second) has not run either.
    expect(await observed(host)).toMatchObject({ timerRuns: 0, pausedWorkRuns: 0 });
  });

  it("leaves a function enabled whose setting has the AzureWebJobs__<name>__Disabled form, and warns", async () => {
    // .NET configuration reads "__" as the section separator ":", so the key the SDK looks up is not this one.
    expect((await fetch(`${host.url}/api/still-enabled`)).status).toBe(200);
    expect(host.lines()).toContain(
      "The setting AzureWebJobs__stillEnabled__Disabled does not disable stillEnabled: the host reads " +
        "AzureWebJobs.stillEnabled.Disabled or AzureWebJobs_stillEnabled_Disabled.",
    );
  });

  it("runs the warmup function once at start with the context the worker gives; it is no HTTP route", async () => {
    // Microsoft Learn, "Azure Functions warmup trigger": runs when a new instance starts; the function must be
    // named "warmup". azure-functions-host: the host hands it a new WarmupContext (FunctionExecutionFeature.cs),
    // JSON "{}" on the wire (ToRpcDefault), and maps it to admin/warmup only (WebScriptHostHttpRoutesManager.cs).
    const first = await observed(host);
    expect(first.warmups).toEqual([{ warmupContext: {}, functionName: "warmup" }]);
    expect(executions(host, "warmup")).toBe(1);
    expect((await fetch(`${host.url}/api/warmup`)).status).toBe(404);
    // The platform's call on a new instance; OkResult once the function ran.
    const again = await fetch(`${host.url}/admin/warmup`);
    expect(again.status).toBe(200);
    expect((await observed(host)).warmups).toHaveLength(2);
    // ScriptJobHostExtensions.IsWarmupFunction: a warmup trigger in a function of another name is not one.
    expect(executions(host, "preload")).toBe(0);
    expect(host.lines()).toContain(
      "preload: a warmup trigger runs only in the function named 'warmup', as in the host; this one never runs.",
    );
  });

  it("names at start every queue the app uses that the emulator's config does not declare, with the file", () => {
    const config = path.join(APP_ROOT, "emulator-queues.json");
    const warnings = host.lines().filter((line) => line.startsWith("Service Bus: queue "));
    expect(warnings).toEqual([
      `Service Bus: queue "notifications" (output of work) is not declared in ${config}, so the emulator does not serve it: add it to a namespace's Queues there.`,
      `Service Bus: queue "audit-log" (trigger of audit) is not declared in ${config}, so the emulator does not serve it: add it to a namespace's Queues there.`,
    ]);
  });

  it("gives appTerminate hooks the hookData appStart set", async () => {
    await host.stop();
    stopped = true;
    // azure-functions-nodejs-worker src/startApp.ts and src/eventHandlers/terminateWorker.ts: both contexts'
    // hookData is the worker's one appLevelOnlyHookData object (which invocation hooks do not see: above, their
    // hookData was empty).
    expect(JSON.parse(fs.readFileSync(hookReport, "utf8"))).toEqual({ hookData: { openedBy: "appStart" } });
  });
});

describe("undeclared queues without an emulator config", () => {
  it("names each queue and the config file beside host.json that would declare it", async () => {
    const host = await startTestDevHost(APP, {
      emulators: true,
      startEmulators,
      settings: { ServiceBusConnection: emulatorConnection(await freePort()) },
    });
    try {
      const file = path.join(APP_ROOT, "servicebus-emulator.config.json");
      const tail = `the emulator has no config. Declare it in ${file} (or in the file the DEVHOST_SERVICEBUS_CONFIG setting names).`;
      await eventually(() => host.lines().some((line) => line.startsWith("Host started")));
      expect(host.lines().filter((line) => line.startsWith("Service Bus: queue "))).toEqual([
        `Service Bus: queue "paused-items" (trigger of pausedWork) is not declared: ${tail}`,
        `Service Bus: queue "work-items" (trigger of work) is not declared: ${tail}`,
        `Service Bus: queue "notifications" (output of work) is not declared: ${tail}`,
        `Service Bus: queue "audit-log" (trigger of audit) is not declared: ${tail}`,
      ]);
    } finally {
      await host.stop();
      fs.rmSync(host.dataDir, { recursive: true, force: true });
    }
  });
});
