/**
 * docs/extending.md, followed to the letter on forks of this repository. Its "Add a step" walk-through (the
 * warehouse service and its notify step, after the last step) is applied with the code the guide shows, then
 * `npm run docs:update` and the fork's unit tests run, then `npm start` runs the fork: an order goes through
 * every step, the new one included, and an order cancelled once the new step has acted is undone in reverse,
 * the new step first. Its "A step without undo" walk-through (a fraud screen between inventory and payment) is
 * followed the same way on a fork of its own: an order the screen refuses has its reservation released and is
 * never charged, one it passes is processed with no undo ever dispatched for the screen, and one whose payment is
 * declined is compensated past the screen. What each fork had to edit by hand is exactly what the guide names.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeClientPrincipal } from "devhost/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPENSATION_STEP_SKIPPED, orderWorkflowV1, type StateRecord, type StepUse } from "../../src/domain";
import { pollUntil } from "../support/wait";
import { E2E_OPERATOR, E2E_SETTINGS, type LedgerEntry } from "../support/e2e";
import { e2eOrder } from "../support/e2eOrders";
import {
  compensatedLedger,
  processedLedger,
  stepIndex,
  undoCall,
  type DeclaredSteps,
} from "../support/expectedProcess";
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

/** A section's TypeScript blocks, in order, their list indentation removed. */
const tsBlocks = (text: string): string[] =>
  [...text.matchAll(/^( *)```ts\n([\s\S]*?)\n *```$/gm)].map(([, indent, code]) =>
    code!
      .split("\n")
      .map((line) => line.slice(indent!.length))
      .join("\n"),
  );

const ADD_A_STEP = section("Add a step");
/** The section's TypeScript blocks: the service, then the step. */
const [SERVICE_BLOCK, STEP_BLOCK] = tsBlocks(ADD_A_STEP);
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

/** The new step as the guide declares it: what the expectations need of it (its undo, if it declares one). */
function declaredStep(block: string): StepUse {
  const field = (name: string) => new RegExp(`${name}: "(\\w+)"`).exec(block)?.[1];
  const required = (name: string) => {
    const value = field(name);
    if (!value) throw new Error(`the guide's step declares no ${name}`);
    return value;
  };
  const undoOperation = field("undoOperation");
  return {
    name: required("name"),
    agent: required("agent"),
    doOperation: required("doOperation"),
    ...(undoOperation ? { undoOperation } : {}),
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

/** Lines of `file` in the fork that the original does not have (the edits here only add lines, or files). */
function addedLines(fork: Fork, file: string): number {
  const originalFile = path.join(__dirname, "..", "..", file);
  const original = fs.existsSync(originalFile) ? fs.readFileSync(originalFile, "utf8").split("\n") : [];
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

/**
 * What docs:update rewrote in `fork` is what `guide` says it rewrites, and the docs; what the fork edited by hand
 * is `byHand`, within the goal of at most 120 lines (a test included). The emulators' queues are not versioned:
 * every build and test run (docs:update's too) writes them from the declaration.
 */
function expectOnlyTheGuidesEdits(fork: Fork, guide: string, byHand: readonly string[], agent: string): void {
  const changed = fork.changedFiles();
  const rewritten = changed.filter((f) => !byHand.includes(f) && f !== EMULATOR_CONFIG_FILE);
  for (const file of rewritten) {
    expect(
      file.startsWith("docs/") || guide.includes(`\`${file}\``),
      `${file}, rewritten by docs:update`,
    ).toBe(true);
  }
  expect(changed).toEqual(expect.arrayContaining([...byHand]));
  const lines = byHand.reduce((sum, file) => sum + addedLines(fork, file), 0);
  process.stdout.write(`the guide's step, by hand: ${byHand.length} files, ${lines} lines added\n`);
  expect(lines).toBeLessThanOrEqual(120);
  expect(fork.read("infra/process.json")).toContain(`"${agent}"`);
  expect(fork.read(EMULATOR_CONFIG_FILE)).toContain(`"${agent}-requests"`);
  // Where the new service is needs no file of its own: REMOTE_SERVICES_URL and SERVICE_URLS cover every service.
  const settingsAndDeploy = /^(local\.settings\.sample\.json|infra\/main\.parameters\.json|\.github\/)/;
  expect(changed.filter((f) => settingsAndDeploy.test(f))).toEqual([]);
}

/** A fork under test: made before its describe's tests, started by one of them, removed after them. */
interface ForkUnderTest {
  fork: Fork;
  /** `npm start` in the fork, on ports of its own; resolves once the host has started. */
  start(): Promise<void>;
  api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  submit(order: { orderId: string }): Promise<Response>;
  waitFor(orderId: string, what: string, predicate: (r: StateRecord) => boolean): Promise<StateRecord>;
  /** The simulator's ledger for the order. */
  ledger(orderId: string): Promise<LedgerEntry[]>;
  simulatorUrl(): string;
}

/** Registers the hooks that make a fork before a describe's tests and remove it, stopped, after them. */
function forkForTests(): ForkUnderTest {
  let fork: Fork | undefined;
  let app: StartedFork | undefined;
  let simulator = "";
  let dataDir = "";
  const started = () => {
    if (!app) throw new Error("the fork is not started");
    return app;
  };
  const api = (pathAndQuery: string, init: RequestInit = {}) =>
    fetch(`${started().url}${pathAndQuery}`, {
      ...init,
      headers: { "content-type": "application/json", ...encodeClientPrincipal(E2E_OPERATOR) },
    });
  const state = async (orderId: string): Promise<StateRecord | null> => {
    const res = await api(`/api/orders/${encodeURIComponent(orderId)}`);
    return res.status === 404 ? null : ((await res.json()) as { state: StateRecord | null }).state;
  };
  beforeAll(() => {
    fork = forkRepository();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "fork-data-"));
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    fork?.remove();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    get fork() {
      if (!fork) throw new Error("the fork is not made yet");
      return fork;
    },
    async start() {
      const made = this.fork;
      made.build();
      const ports = { serviceBus: await freePort(), cosmos: await freePort(), simulator: await freePort() };
      simulator = `http://127.0.0.1:${ports.simulator}`;
      const sample = JSON.parse(made.read("local.settings.sample.json")) as {
        Values: Record<string, string>;
      };
      const values = Object.fromEntries(
        Object.entries(sample.Values).map(([name, value]) => [
          name,
          value
            .replace("127.0.0.1:5672", `127.0.0.1:${ports.serviceBus}`)
            .replace("127.0.0.1:8081", `127.0.0.1:${ports.cosmos}`)
            .replace("127.0.0.1:7081", `127.0.0.1:${ports.simulator}`),
        ]),
      );
      made.write(
        "local.settings.json",
        JSON.stringify({ ...sample, Values: { ...values, ...E2E_SETTINGS } }, null, 2),
      );
      app = await startFork(made, dataDir);
    },
    api,
    submit: (order) => api("/api/orders", { method: "POST", body: JSON.stringify(order) }),
    waitFor: (orderId, what, predicate) =>
      pollUntil(
        () => state(orderId),
        (r): r is StateRecord => r !== null && predicate(r),
        (last) =>
          `order ${orderId}: ${what} not seen; last ${JSON.stringify(last)}\n${started().output().slice(-3000)}`,
        { timeoutMs: 40_000 },
      ),
    async ledger(orderId) {
      const body = (await (await fetch(`${simulator}/_ledger`)).json()) as { entries: LedgerEntry[] };
      return body.entries.filter((e) => e.orderId === orderId);
    },
    simulatorUrl: () => simulator,
  };
}

const label = (e: { service: string; operation: string }) => `${e.service}.${e.operation}`;

const NEW_STEP = declaredStep(STEP_BLOCK ?? "");
const FOUR_STEPS: DeclaredSteps = { ...orderWorkflowV1, steps: [...orderWorkflowV1.steps, NEW_STEP] };
const names = FOUR_STEPS.steps.map((s) => s.name);

describe("docs/extending.md: add a step", () => {
  const under = forkForTests();

  beforeAll(() => {
    expect(SERVICE_BLOCK, "the guide's service declaration").toContain(`${NEW_STEP.agent}: {`);
    expect(BEHAVIOUR_ENTRY, "the guide's simulator behaviour").toBeDefined();
    expect(TABLE_ROW, "the guide's row of the process test").toContain(`"${NEW_STEP.name}"`);
  });

  it("the declaration, the simulator's behaviour and docs:update are all it takes; the unit tests pass", async () => {
    const { fork } = under;
    addTheStep(fork);
    await fork.run("npm", ["run", "docs:update"]);
    expectOnlyTheGuidesEdits(fork, ADD_A_STEP, BY_HAND, NEW_STEP.agent);
    // The unit tests, engine tests included, hold for a four-step process.
    await fork.run("npx", ["vitest", "run", "--project", "app", "test/unit"]);
  }, 240_000);

  it("npm start: an order runs through the four steps", async () => {
    await under.start();
    const order = e2eOrder("FORK");
    expect((await under.submit(order)).status).toBe(202);
    const done = await under.waitFor(order.orderId, "Processed", (r) => r.processState === "Processed");
    expect(done.steps.map((s) => [s.name, s.status])).toEqual(names.map((n) => [n, "Succeeded"]));
    expect(done.steps.at(-1)!.compensation).toEqual({ noticeId: expect.any(String) });
    const calls = await under.ledger(order.orderId);
    expect(calls.map((e) => ({ label: label(e), idempotencyKey: e.idempotencyKey }))).toEqual(
      processedLedger(order.orderId, FOUR_STEPS),
    );
    expect(calls.every((e) => e.applied && e.requests === 1)).toBe(true);
  }, 90_000);

  it("a cancel after the new step has acted undoes all four, newest first", async () => {
    const order = e2eOrder("FORKUNDO");
    const id = order.orderId;
    // The warehouse takes the notice but its answer never arrives: the step stays in doubt until the cancel.
    const fault = await fetch(`${under.simulatorUrl()}/_faults`, {
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
    expect((await under.submit(order)).status).toBe(202);
    await pollUntil(
      () => under.ledger(id),
      (calls) => calls.some((e) => label(e) === `${NEW_STEP.agent}.${NEW_STEP.doOperation}` && e.applied),
      () => `the ${NEW_STEP.name} call never reached the simulator`,
      { timeoutMs: 30_000 },
    );
    const cancelled = await under.api(`/api/orders/${encodeURIComponent(id)}/cancel`, {
      method: "POST",
      body: JSON.stringify({ reason: "the guide's test" }),
    });
    expect(cancelled.status).toBe(202);

    const undone = await under.waitFor(id, "Compensated", (r) => r.processState === "Compensated");
    expect(undone.steps.map((s) => [s.name, s.undo?.status])).toEqual(names.map((n) => [n, "Succeeded"]));
    const calls = await under.ledger(id);
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

const WITHOUT_UNDO = section("A step without undo");
/** The section's TypeScript blocks: the service, the step, the simulator's behaviour, the test file. */
const [SCREEN_SERVICE_BLOCK, SCREEN_STEP_BLOCK, SCREEN_BEHAVIOUR_BLOCK, SCREEN_TEST_BLOCK] =
  tsBlocks(WITHOUT_UNDO);
/** The BEHAVIOURS entry the guide names, inline: `fraud: screening,`. */
const SCREEN_BEHAVIOUR_ENTRY = /`(\w+: \w+,)`/.exec(WITHOUT_UNDO)?.[1];
/** The row of the process test, with null for the undo. */
const SCREEN_TABLE_ROW = /`(\["\w+", "\w+", "\w+", null\],)`/.exec(WITHOUT_UNDO)?.[1];
/** The test file the guide adds beside the process test (named apart from its folder: it is the fork's alone). */
const SCREEN_TEST_NAME = /`(test\/unit\/domain)`,\s+`(\w+\.test\.ts)`/.exec(WITHOUT_UNDO);
const SCREEN_TEST_FILE = SCREEN_TEST_NAME ? `${SCREEN_TEST_NAME[1]}/${SCREEN_TEST_NAME[2]}` : undefined;
const SCREEN_BY_HAND = [
  "src/domain/process.ts",
  "tools/simulator/behaviours.ts",
  "test/unit/domain/process.test.ts",
  SCREEN_TEST_FILE ?? "the guide's test file",
];
const SCREEN = declaredStep(SCREEN_STEP_BLOCK ?? "");
/** The step the guide puts the screen before: the sample's payment. */
const SCREENED_BEFORE = "chargePayment";
const SCREENED: DeclaredSteps = {
  ...orderWorkflowV1,
  steps: orderWorkflowV1.steps.flatMap((s) => (s.name === SCREENED_BEFORE ? [SCREEN, s] : [s])),
};

/** Steps 1, 2 and 4 of the walk-through: the service and the step, the simulator's behaviour, the tests. */
function addTheScreen(fork: Fork): void {
  // The services are declared in the order the steps first call them: the screen's before the payment's.
  const paymentService = orderWorkflowV1.steps.find((s) => s.name === SCREENED_BEFORE)!.agent;
  insertBefore(
    fork,
    "src/domain/process.ts",
    new RegExp(`^ {2}${paymentService}: \\{`, "m"),
    `${indent(SCREEN_SERVICE_BLOCK!, 2)}\n`,
  );
  insertBefore(
    fork,
    "src/domain/process.ts",
    new RegExp(`^ {4}\\{\\n {6}name: "${SCREENED_BEFORE}",`, "m"),
    `${indent(SCREEN_STEP_BLOCK!, 4)}\n`,
  );
  insertBefore(
    fork,
    "tools/simulator/behaviours.ts",
    /^\/\*\* The behaviour of each service that has one/m,
    `${SCREEN_BEHAVIOUR_BLOCK}\n\n`,
  );
  insertBefore(fork, "tools/simulator/behaviours.ts", /^};\s*$/m, `  ${SCREEN_BEHAVIOUR_ENTRY}\n`);
  insertBefore(
    fork,
    "test/unit/domain/process.test.ts",
    new RegExp(`(?<=const SAMPLE_STEPS = \\[[^;]*)^ {2}\\["${SCREENED_BEFORE}"`, "m"),
    `  ${SCREEN_TABLE_ROW}\n`,
  );
  fork.write(SCREEN_TEST_FILE!, `${SCREEN_TEST_BLOCK}\n`);
}

describe("docs/extending.md: a step without undo", () => {
  const under = forkForTests();
  const screen = stepIndex(SCREEN.name, SCREENED);
  const skips = (r: StateRecord) =>
    r.history.filter((h) => h.event === COMPENSATION_STEP_SKIPPED).map((h) => h.detail);

  beforeAll(() => {
    expect(SCREEN.undoOperation, "the guide's screen declares no undo").toBeUndefined();
    expect(SCREEN_SERVICE_BLOCK, "the guide's service declaration").toContain(`${SCREEN.agent}: {`);
    expect(SCREEN_BEHAVIOUR_BLOCK, "the guide's simulator behaviour").toContain("function ");
    expect(SCREEN_BEHAVIOUR_ENTRY, "the guide's BEHAVIOURS entry").toContain(`${SCREEN.agent}: `);
    expect(SCREEN_TABLE_ROW, "the guide's row of the process test").toContain(`"${SCREEN.name}"`);
    expect(SCREEN_TEST_BLOCK, "the guide's test").toContain(SCREEN.name);
  });

  it("the declaration, the behaviour, a test and docs:update are all it takes; the unit tests pass", async () => {
    const { fork } = under;
    addTheScreen(fork);
    await fork.run("npm", ["run", "docs:update"]);
    expectOnlyTheGuidesEdits(fork, WITHOUT_UNDO, SCREEN_BY_HAND, SCREEN.agent);
    // The generated step table shows the screen without an undo.
    expect(fork.read("docs/architecture.md")).toContain(
      `| ${screen + 1} | \`${SCREEN.name}\` | \`${SCREEN.agent}\` | \`${SCREEN.agent}/${SCREEN.doOperation}\` | — (no undo) |`,
    );
    // The unit tests hold with a step without undo in the sample's process, the guide's own test among them.
    const run = await fork.run("npx", ["vitest", "run", "--project", "app", "test/unit"]);
    expect(run).toContain(SCREEN_TEST_FILE);
  }, 240_000);

  it("npm start: an order the screen refuses has its reservation released and is never charged", async () => {
    await under.start();
    const order = e2eOrder("SCREENED", { customerId: "C-FLAGGED" });
    expect((await under.submit(order)).status).toBe(202);
    const done = await under.waitFor(order.orderId, "Compensated", (r) => r.processState === "Compensated");
    expect(done.steps.map((s) => [s.name, s.status, s.undoable, s.undo?.status ?? null])).toEqual(
      SCREENED.steps.map((s, i) => [
        s.name,
        i < screen ? "Succeeded" : i === screen ? "Failed" : "Pending",
        i !== screen,
        i < screen ? "Succeeded" : null,
      ]),
    );
    expect(done.steps[screen]!.lastError).toMatchObject({ code: "FraudSuspected" });
    const calls = await under.ledger(order.orderId);
    expect(calls.map((e) => ({ label: label(e), idempotencyKey: e.idempotencyKey }))).toEqual(
      compensatedLedger(order.orderId, screen, { workflow: SCREENED }),
    );
    // The reservation was taken back; the payment service never heard of the order.
    const release = calls.find((e) => e.idempotencyKey.endsWith(":undo"))!;
    expect(release).toMatchObject({ applied: true, effect: { undone: [expect.stringMatching(/^RES-/)] } });
    expect(calls.filter((e) => e.service === "payment")).toEqual([]);
    expect(skips(done)).toEqual([`${SCREEN.name}: no undo declared`]);
  }, 90_000);

  it("an order the screen passes is processed, with no undo ever dispatched for the screen", async () => {
    const order = e2eOrder("SCREENOK");
    expect((await under.submit(order)).status).toBe(202);
    const done = await under.waitFor(order.orderId, "Processed", (r) => r.processState === "Processed");
    expect(done.steps.map((s) => [s.name, s.status, s.undoable, s.undo])).toEqual(
      SCREENED.steps.map((s, i) => [s.name, "Succeeded", i !== screen, null]),
    );
    // The screen's answer is kept, and nothing is kept for an undo it does not have.
    expect(done.steps[screen]).toMatchObject({ result: { orderId: order.orderId }, compensation: null });
    const calls = await under.ledger(order.orderId);
    expect(calls.map((e) => ({ label: label(e), idempotencyKey: e.idempotencyKey }))).toEqual(
      processedLedger(order.orderId, SCREENED),
    );
    expect(calls.every((e) => e.applied && e.requests === 1)).toBe(true);
  }, 90_000);

  it("a declined payment undoes the reservation and passes the screen, with no undo call for it", async () => {
    const order = e2eOrder("SCREENDECLINED", { items: [{ sku: "SKU-1", quantity: 1, unitPrice: 20_000 }] });
    expect((await under.submit(order)).status).toBe(202);
    const done = await under.waitFor(order.orderId, "Compensated", (r) => r.processState === "Compensated");
    const charge = stepIndex(SCREENED_BEFORE, SCREENED);
    const calls = await under.ledger(order.orderId);
    expect(calls.map((e) => ({ label: label(e), idempotencyKey: e.idempotencyKey }))).toEqual(
      compensatedLedger(order.orderId, charge, { workflow: SCREENED }),
    );
    expect(done.steps[screen]).toMatchObject({ status: "Succeeded", undoable: false, undo: null });
    expect(skips(done)).toEqual([`${SCREEN.name}: no undo declared`]);
  }, 90_000);
});
