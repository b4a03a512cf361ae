// The lines `func start` prints once the host is up, which harnesses wait for before their first request
// (Microsoft's Node.js end-to-end suite, azure-functions-nodejs-e2e-tests src/global.test.ts, waits for the lock
// line). Expectations: the host logs "Worker process started and initialized." once the worker answered its init
// (azure-functions-host, RpcFunctionInvocationDispatcher.cs) and "Host lock lease acquired by instance ID '{id}'."
// when it holds the primary-host blob lease in AzureWebJobsStorage (PrimaryHostCoordinator.cs); Core Tools prints
// both whatever its log level (azure-functions-core-tools, ColoredConsoleLogger.cs, allowedLogsPrefixes).
import { afterEach, describe, expect, it } from "vitest";
import { localInstanceId } from "../../../src/startup/readySignals";
import { startTestDevHost, type TestDevHost } from "../../support/devhost";

const APP = "ready-signals-app";

describe("start-up lines of func start", () => {
  let host: TestDevHost | undefined;
  afterEach(async () => {
    await host?.stop();
    host = undefined;
  });

  it("prints the worker line, then the host lock line when a storage account is set, before Host started", async () => {
    host = await startTestDevHost(APP, { settings: { AzureWebJobsStorage: "UseDevelopmentStorage=true" } });
    const lines = host.lines();
    const at = (pattern: RegExp): number => lines.findIndex((line) => pattern.test(line));
    const functions = at(/^Functions:/);
    const worker = at(/^Worker process started and initialized\.$/);
    const lock = at(/^Host lock lease acquired by instance ID '[0-9A-F]{32}'\.$/);
    const started = at(/^Host started: /);
    expect(functions).toBeGreaterThanOrEqual(0);
    expect(worker).toBeGreaterThan(functions);
    expect(lock).toBeGreaterThan(worker);
    expect(started).toBeGreaterThan(lock);
    expect(await (await fetch(`${host.url}/api/ping`)).text()).toBe("pong");
  });

  it("prints no host lock line without AzureWebJobsStorage: the host then takes no lease", async () => {
    host = await startTestDevHost(APP, { settings: { AzureWebJobsStorage: "" } });
    expect(host.lines()).toContain("Worker process started and initialized.");
    expect(host.lines().some((line) => line.startsWith("Host lock lease acquired"))).toBe(false);
  });

  it("gives one machine one instance id, in func start's shape", () => {
    expect(localInstanceId("build-agent-7")).toBe(localInstanceId("build-agent-7"));
    expect(localInstanceId("build-agent-7")).toMatch(/^0{24}[0-9A-F]{8}$/);
  });
});
