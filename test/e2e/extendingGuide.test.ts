/**
 * docs/extending.md, followed to the letter on a fork of this repository: its "Add a step" walk-through (the
 * warehouse service and its notify step, after the last step) is applied with the code the guide shows, then
 * `npm run docs:update` and the fork's unit tests run, then `npm start` runs the fork: an order goes through
 * every step, the new one included, and an order cancelled once the new step has acted is undone in reverse,
 * the new step first. What the fork had to edit by hand is exactly what the guide names.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeClientPrincipal } from "devhost/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { orderWorkflowV1, type StateRecord, type StepUse } from "../../src/domain";
import { pollUntil } from "../support/wait";
import { E2E_OPERATOR, E2E_SETTINGS, type LedgerEntry } from "../support/e2e";
import { e2eOrder } from "../support/e2eOrders";
import { processedLedger, undoCall, type DeclaredSteps } from "../support/expectedProcess";
import { forkRepository, freePort, startFork, type Fork, type StartedFork } from "../support/fork";
import { EMULATOR_CONFIG_FILE } from "../../tools/emulatorConfig";

const GUIDE = fs.readFileSync(path.join(__dirname, "..", "..", "docs", "extending.md"), "utf8");

/** The guide's section named `heading` (a "### " heading), up to the next heading of any level. */
function section(heading: string): string {
  const start = GUIDE.indexOf(`### ${heading}`);
  if (start < 0) throw new Error(`docs/extending.md has no section "${heading}"`);
  const rest = GUIDE.slice(start + 4);
  const end = rest.search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end);
}

const ADD_A_STEP = section("Add a step");
/** The section's TypeScript blocks, their list indentation removed: the service, then the step. */
const [SERVICE_BLOCK, STEP_BLOCK] = [...ADD_A_STEP.matchAll(/^( *)```ts\n([\s\S]*?)\n *```$/gm)].map(
  ([, indent, code]) =>
    code!
      .split("\n")
      .map((line) => line.slice(indent!.length))
      .join("\n"),
);
/** The simulator behaviour the guide names, inline: `warehouse: () => (...)`. */
const BEHAVIOUR_ENTRY = /`(\w+: \(\) => \(\{[^`]*\}\))`/.exec(ADD_A_STEP)?.[1];
/** The row the guide adds to the table of the test that states the process. */
const TABLE_ROW = /`(\["\w+", "\w+", "\w+", "\w+"\],)`/.exec(ADD_A_STEP)?.[1];
/** The files the guide has a fork edit by hand; docs:update rewrites the rest. */
const BY_HAND = [
  "src/domain/process.ts",
  "tools/simulator/behaviours.ts",
  "test/unit/domain/process.test.ts",
];

/** The new step as the guide declares it: what the expectations need of it. */
function declaredStep(block: string): StepUse {
  const field = (name: string) => {
    const value = new RegExp(`${name}: "(\\w+)"`).exec(block)?.[1];
    if (!value) throw new Error(`the guide's step declares no ${name}`);
    return value;
  };
  return {
    name: field("name"),
    agent: field("agent"),
    doOperation: field("doOperation"),
    undoOperation: field("undoOperation"),
  };
}

/** Puts `insert` in `file` of the fork right before `anchor`, which must be there once. */
function insertBefore(fork: Fork, file: string, anchor: RegExp, insert: string): void {
  const text = fork.read(file);
  const at = text.search(anchor);
  if (at < 0 || text.slice(at + 1).search(anchor) >= 0) {
    throw new Error(`${file} has not exactly one ${anchor}: the guide's instructions no longer match it`);
  }
  fork.write(file, text.slice(0, at) + insert + text.slice(at));
}

const indent = (code: string, spaces: number) =>
  code
    .split("\n")
    .map((line) => (line ? " ".repeat(spaces) + line : line))
    .join("\n");

/**
 * Steps 1, 2 and 4 of the guide: the service and the step in the declaration, the behaviour in the simulator, the
 * row in the test that states the process.
 */
function addTheStep(fork: Fork): void {
  insertBefore(
    fork,
    "src/domain/process.ts",
    /^} as const satisfies Record/m,
    `${indent(SERVICE_BLOCK!, 2)}\n`,
  );
  // The step goes "after shipping", the sample's last step: the end of the list.
  insertBefore(
    fork,
    "src/domain/process.ts",
    /^ {2}\] satisfies StepDefinition\[\]/m,
    `${indent(STEP_BLOCK!, 4)}\n`,
  );
  insertBefore(fork, "tools/simulator/behaviours.ts", /^};\s*$/m, `  ${BEHAVIOUR_ENTRY},\n`);
  insertBefore(
    fork,
    "test/unit/domain/process.test.ts",
    /(?<=const SAMPLE_STEPS = \[[^;]*)^\];/m,
    `  ${TABLE_ROW}\n`,
  );
}

/** Lines of `file` in the fork that the original does not have (the edits here only add lines). */
function addedLines(fork: Fork, file: string): number {
  const original = fs.readFileSync(path.join(__dirname, "..", "..", file), "utf8").split("\n");
  const remaining = new Map<string, number>();
  for (const line of original) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  return fork
    .read(file)
    .split("\n")
    .filter((line) => {
      const left = remaining.get(line) ?? 0;
      remaining.set(line, left - 1);
      return left <= 0;
    }).length;
}

const NEW_STEP = declaredStep(STEP_BLOCK ?? "");
const FOUR_STEPS: DeclaredSteps = { ...orderWorkflowV1, steps: [...orderWorkflowV1.steps, NEW_STEP] };
const names = FOUR_STEPS.steps.map((s) => s.name);

describe("docs/extending.md: add a step", () => {
  let fork: Fork;
  let app: StartedFork;
  let simulator: string;
  let dataDir: string;
  const api = (pathAndQuery: string, init: RequestInit = {}) =>
    fetch(`${app.url}${pathAndQuery}`, {
      ...init,
      headers: { "content-type": "application/json", ...encodeClientPrincipal(E2E_OPERATOR) },
    });
  const state = async (orderId: string): Promise<StateRecord | null> => {
    const res = await api(`/api/orders/${encodeURIComponent(orderId)}`);
    return res.status === 404 ? null : ((await res.json()) as { state: StateRecord | null }).state;
  };
  const waitFor = (orderId: string, what: string, predicate: (r: StateRecord) => boolean) =>
    pollUntil(
      () => state(orderId),
      (r): r is StateRecord => r !== null && predicate(r),
      (last) =>
        `order ${orderId}: ${what} not seen; last ${JSON.stringify(last)}\n${app.output().slice(-3000)}`,
      { timeoutMs: 40_000 },
    );
  const ledger = async (orderId: string): Promise<LedgerEntry[]> => {
    const body = (await (await fetch(`${simulator}/_ledger`)).json()) as { entries: LedgerEntry[] };
    return body.entries.filter((e) => e.orderId === orderId);
  };
  const label = (e: { service: string; operation: string }) => `${e.service}.${e.operation}`;

  beforeAll(async () => {
    expect(SERVICE_BLOCK, "the guide's service declaration").toContain(`${NEW_STEP.agent}: {`);
    expect(BEHAVIOUR_ENTRY, "the guide's simulator behaviour").toBeDefined();
    expect(TABLE_ROW, "the guide's row of the process test").toContain(`"${NEW_STEP.name}"`);
    fork = forkRepository();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fork-data-"));
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    fork?.remove();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("the declaration, the simulator's behaviour and docs:update are all it takes; the unit tests pass", async () => {
    addTheStep(fork);
    await fork.run("npm", ["run", "docs:update"]);
    const changed = fork.changedFiles();
    // What docs:update rewrote is what the guide's step 3 says it rewrites, and the docs. The emulators' queues
    // are not versioned: every build and test run (docs:update's too) writes them from the declaration.
    const rewritten = changed.filter((f) => !BY_HAND.includes(f) && f !== EMULATOR_CONFIG_FILE);
    for (const file of rewritten) {
      expect(
        file.startsWith("docs/") || ADD_A_STEP.includes(`\`${file}\``),
        `${file}, rewritten by docs:update`,
      ).toBe(true);
    }
    expect(changed).toEqual(expect.arrayContaining(BY_HAND));
    // The size of the change a fork makes by hand (the goal: at most 6 files and 120 lines, a test included).
    const lines = BY_HAND.reduce((sum, file) => sum + addedLines(fork, file), 0);
    process.stdout.write(`the guide's step, by hand: ${BY_HAND.length} files, ${lines} lines added\n`);
    expect(lines).toBeLessThanOrEqual(120);
    expect(fork.read("infra/process.json")).toContain(`"${NEW_STEP.agent}"`);
    expect(fork.read(EMULATOR_CONFIG_FILE)).toContain(`"${NEW_STEP.agent}-requests"`);
    // Where the new service is needs no file of its own: REMOTE_SERVICES_URL and SERVICE_URLS cover every service.
    const settingsAndDeploy = /^(local\.settings\.sample\.json|infra\/main\.parameters\.json|\.github\/)/;
    expect(changed.filter((f) => settingsAndDeploy.test(f))).toEqual([]);
    // The unit tests, engine tests included, hold for a four-step process.
    await fork.run("npx", ["vitest", "run", "--project", "app", "test/unit"]);
  }, 240_000);

  it("npm start: an order runs through the four steps", async () => {
    fork.build();
    const ports = { serviceBus: await freePort(), cosmos: await freePort(), simulator: await freePort() };
    simulator = `http://127.0.0.1:${ports.simulator}`;
    const sample = JSON.parse(fork.read("local.settings.sample.json")) as { Values: Record<string, string> };
    const values = Object.fromEntries(
      Object.entries(sample.Values).map(([name, value]) => [
        name,
        value
          .replace("127.0.0.1:5672", `127.0.0.1:${ports.serviceBus}`)
          .replace("127.0.0.1:8081", `127.0.0.1:${ports.cosmos}`)
          .replace("127.0.0.1:7081", `127.0.0.1:${ports.simulator}`),
      ]),
    );
    fork.write(
      "local.settings.json",
      JSON.stringify({ ...sample, Values: { ...values, ...E2E_SETTINGS } }, null, 2),
    );
    app = await startFork(fork, dataDir);

    const order = e2eOrder("FORK");
    expect((await api("/api/orders", { method: "POST", body: JSON.stringify(order) })).status).toBe(202);
    const done = await waitFor(order.orderId, "Processed", (r) => r.processState === "Processed");
    expect(done.steps.map((s) => [s.name, s.status])).toEqual(names.map((n) => [n, "Succeeded"]));
    expect(done.steps.at(-1)!.compensation).toEqual({ noticeId: expect.any(String) });
    const calls = await ledger(order.orderId);
    expect(calls.map((e) => ({ label: label(e), idempotencyKey: e.idempotencyKey }))).toEqual(
      processedLedger(order.orderId, FOUR_STEPS),
    );
    expect(calls.every((e) => e.applied && e.requests === 1)).toBe(true);
  }, 90_000);

  it("a cancel after the new step has acted undoes all four, newest first", async () => {
    const order = e2eOrder("FORKUNDO");
    const id = order.orderId;
    // The warehouse takes the notice but its answer never arrives: the step stays in doubt until the cancel.
    const fault = await fetch(`${simulator}/_faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        service: NEW_STEP.agent,
        operation: NEW_STEP.doOperation,
        orderId: id,
        kind: "drop-response",
      }),
    });
    expect(fault.status).toBe(201);
    expect((await api("/api/orders", { method: "POST", body: JSON.stringify(order) })).status).toBe(202);
    await pollUntil(
      () => ledger(id),
      (calls) => calls.some((e) => label(e) === `${NEW_STEP.agent}.${NEW_STEP.doOperation}` && e.applied),
      () => `the ${NEW_STEP.name} call never reached the simulator\n${app.output().slice(-3000)}`,
      { timeoutMs: 30_000 },
    );
    const cancelled = await api(`/api/orders/${encodeURIComponent(id)}/cancel`, {
      method: "POST",
      body: JSON.stringify({ reason: "the guide's test" }),
    });
    expect(cancelled.status).toBe(202);

    const undone = await waitFor(id, "Compensated", (r) => r.processState === "Compensated");
    expect(undone.steps.map((s) => [s.name, s.undo?.status])).toEqual(names.map((n) => [n, "Succeeded"]));
    const calls = await ledger(id);
    const forward = calls.filter((e) => e.idempotencyKey.endsWith(":do"));
    expect([...new Set(forward.map(label))]).toEqual(processedLedger(id, FOUR_STEPS).map((c) => c.label));
    const undos = calls.filter((e) => e.idempotencyKey.endsWith(":undo"));
    expect(undos.map((e) => ({ label: label(e), idempotencyKey: e.idempotencyKey }))).toEqual(
      names.map((_, i) => undoCall(id, names.length - 1 - i, FOUR_STEPS)),
    );
    // Every effect was real, the warehouse's notice included, and each undo took its effect back.
    expect(calls.every((e) => e.applied)).toBe(true);
  }, 90_000);
});
