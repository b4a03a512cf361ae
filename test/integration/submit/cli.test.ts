import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../../tools/submit";
import { resolveTarget } from "../../../tools/submit/target";

const EMULATOR_CS =
  "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true";

const dirs: string[] = [];
function settingsDir(files: Record<string, Record<string, string>>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "submit-cli-"));
  dirs.push(dir);
  for (const [name, values] of Object.entries(files)) {
    fs.writeFileSync(path.join(dir, name), JSON.stringify({ IsEncrypted: false, Values: values }));
  }
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs main without any settings to fall back on, so a usage error cannot turn into a network attempt. */
async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, {
    log: (l) => out.push(l),
    error: (l) => err.push(l),
    env: {},
    cwd: settingsDir({}),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("submit command line", () => {
  it.each([
    [[], /--count: expected a whole number of orders >= 1.*got nothing/],
    [["--count", "0"], /--count: expected a whole number from 1 to .*got "0"/],
    [["--count", "abc"], /--count: expected a whole number.*got "abc"/],
    [["--count", "1.5"], /--count: expected a whole number.*got "1.5"/],
    [["--count", "-3"], /--count/],
    [["--count"], /--count/],
    [["--count", "2", "--declined", "1.5"], /--declined: expected a fraction from 0 to 1.*got "1.5"/],
    [["--count", "2", "--declined", "lots"], /--declined: .*got "lots"/],
    [["--count", "2", "--prefix", "bad prefix"], /--prefix: .*got "bad prefix"/],
    [["--count", "2", "--prefix", "x".repeat(70)], /--prefix: .*64 characters/],
    [["--count", "2", "--reply-to", "orders"], /--reply-to: .*starting with "status-".*got "orders"/],
    [["--count", "2", "--seed", "x"], /--seed: expected a whole number/],
    [["--count", "2", "--queue", "a b"], /--queue: expected a Service Bus queue name/],
    [["--count", "2", "--bogus"], /--bogus/],
    [["--count", "2", "--connection", "a", "--namespace", "b"], /--connection and --namespace/],
    [["--count", "2", "--connection", "garbage"], /--connection: expected a Service Bus connection string/],
    [["--count", "2", "--connection", "Endpoint=sb://h:1"], /--connection: .*no SharedAccessKeyName/],
    [["--count", "2", "--namespace", "not a host"], /--namespace: expected a fully qualified namespace/],
    [["--count", "2"], /no Service Bus connection: pass --connection or --namespace/],
  ])("%j exits 1 naming the problem", async (argv, expected) => {
    const { code, err, out } = await run(argv);
    expect(code).toBe(1);
    expect(err).toMatch(expected);
    expect(out).toBe("");
  });

  it("--help prints the flags and exits 0", async () => {
    const { code, out, err } = await run(["--help"]);
    expect(code).toBe(0);
    expect(err).toBe("");
    for (const flag of [
      "--count",
      "--connection",
      "--namespace",
      "--queue",
      "--prefix",
      "--reply-to",
      "--declined",
      "--no-batch",
    ]) {
      expect(out).toContain(flag);
    }
  });
});

describe("submit connection precedence", () => {
  const fromFile = EMULATOR_CS.replace("5672", "5001");
  const fromSample = EMULATOR_CS.replace("5672", "5002");
  const fromEnv = EMULATOR_CS.replace("5672", "5003");
  const fromFlag = EMULATOR_CS.replace("5672", "5004");

  it("takes --connection over the environment over local.settings.json over the sample", () => {
    const both = settingsDir({
      "local.settings.json": { ServiceBusConnection: fromFile },
      "local.settings.sample.json": { ServiceBusConnection: fromSample },
    });
    const env = { ServiceBusConnection: fromEnv };
    expect(resolveTarget({ connection: fromFlag }, env, both)).toMatchObject({
      endpoint: "sb://127.0.0.1:5004",
      source: "--connection",
    });
    expect(resolveTarget({}, env, both)).toMatchObject({
      endpoint: "sb://127.0.0.1:5003",
      source: "environment",
    });
    expect(resolveTarget({}, {}, both)).toMatchObject({
      endpoint: "sb://127.0.0.1:5001",
      source: "local.settings.json",
      local: true,
    });
    const sampleOnly = settingsDir({
      "local.settings.json": { COSMOS_DATABASE: "sas" },
      "local.settings.sample.json": { ServiceBusConnection: fromSample },
    });
    expect(resolveTarget({}, {}, sampleOnly)).toMatchObject({
      endpoint: "sb://127.0.0.1:5002",
      source: "local.settings.sample.json",
    });
  });

  it("uses identity for --namespace or ServiceBusConnection__fullyQualifiedNamespace", () => {
    const dir = settingsDir({});
    expect(resolveTarget({ namespace: "sb://myns.servicebus.windows.net/" }, {}, dir)).toEqual({
      kind: "namespace",
      fullyQualifiedNamespace: "myns.servicebus.windows.net",
      endpoint: "sb://myns.servicebus.windows.net",
      local: false,
      source: "--namespace",
    });
    expect(
      resolveTarget(
        {},
        { ServiceBusConnection__fullyQualifiedNamespace: "other.servicebus.windows.net" },
        dir,
      ),
    ).toMatchObject({
      kind: "namespace",
      fullyQualifiedNamespace: "other.servicebus.windows.net",
      source: "environment",
    });
  });

  it("defaults to the project's local.settings.sample.json, which points at the emulator", () => {
    const projectRoot = path.resolve(__dirname, "../../..");
    expect(resolveTarget({}, {}, projectRoot)).toMatchObject({
      kind: "connectionString",
      endpoint: "sb://127.0.0.1:5672",
      local: true,
    });
  });
});
