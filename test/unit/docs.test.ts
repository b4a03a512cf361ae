/**
 * The documentation that describes the state machine, the contract and the settings is checked against the code,
 * so that it cannot drift. `npm run docs:update` rewrites the generated sections.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, serviceUrlUnder, SETTINGS, SETTING_NAMES } from "../../src/config";
import {
  AGENT_NAMES,
  ALERT_KINDS,
  SERVICES,
  claimLatencyBudget,
  defaultWorkflows,
  renderLatencyBudget,
  stepLatencyBudget,
  PROCESS_STATES,
  QUEUES,
  STATUS_VALUES,
  agentFunctionName,
  agentRequestQueue,
  serviceUrlSetting,
  renderStateDiagram,
  renderTransitionTable,
} from "../../src/domain";
import { azureTuningDefaults, queuePollingSeconds } from "../support/azureDefaults";
import { schedulerActivities } from "../../src/scheduler/activities";
import { SCHEDULER_ORCHESTRATION } from "../../src/scheduler/orchestration";
import { withGeneratedSections } from "../../tools/docSections";
import { costSource, renderCostSection } from "../../bench/costReport";
import { renderTimingExample } from "../../tools/timingExample";
import { renderProcessSteps, renderServiceContract, renderServiceUrlSettings } from "../../tools/processDocs";
import { TEST_PAGING_KEY } from "../support/domain";

const UPDATE = process.env.UPDATE_DOCS === "1";

function generatedSections(): Record<string, string> {
  return {
    "state-diagram": "```mermaid\n" + renderStateDiagram() + "\n```",
    "transition-table": renderTransitionTable(),
    "process-steps": renderProcessSteps(),
  };
}

function azureLatencyBudgets() {
  const d = azureTuningDefaults();
  const settings = {
    agentMaxAttempts: Number(d.AGENT_MAX_ATTEMPTS),
    agentAttemptTimeoutSeconds: Number(d.AGENT_ATTEMPT_TIMEOUT_SECONDS),
    queuePollingSeconds: queuePollingSeconds(),
  };
  return { defaults: d, step: stepLatencyBudget(settings), claim: claimLatencyBudget(settings) };
}

function deploymentSections(): Record<string, string> {
  const { step, claim } = azureLatencyBudgets();
  return {
    "step-latency-budget": renderLatencyBudget("one step, from dispatch to the answer recorded", step),
    "claim-latency-budget": renderLatencyBudget("one claim, from the claim to the first dispatch", claim),
  };
}

/** The timing figures of the local defaults (src/config.ts) and the Azure ones (infra/main.bicep), as the app reads them. */
function timingSections(): Record<string, string> {
  const connections = {
    ServiceBusConnection: "Endpoint=sb://localhost;SharedAccessKeyName=k;SharedAccessKey=v",
    CosmosConnection: "AccountEndpoint=https://localhost:8081/;AccountKey=a2V5;",
    PAGING_TOKEN_KEY: TEST_PAGING_KEY,
  };
  const steps = Math.max(
    ...defaultWorkflows()
      .list()
      .map((w) => w.steps.length),
  );
  const example = renderTimingExample(
    [
      { title: "Local defaults", settings: loadConfig(connections) },
      { title: "Azure defaults", settings: loadConfig({ ...connections, ...azureTuningDefaults() }) },
    ],
    steps,
  );
  return { "timing-example": example };
}

const withSections = (text: string, sections: Record<string, string>, file = "docs/architecture.md") =>
  withGeneratedSections(text, sections, file);

/** The docs a reader follows: README and every page of docs/. */
const DOCS = [
  "README.md",
  ...readdirSync("docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("docs", () => {
  it("docs/architecture.md shows the state machine as the code defines it", () => {
    const path = "docs/architecture.md";
    const current = readFileSync(path, "utf8");
    const expected = withSections(current, generatedSections());
    if (UPDATE) writeFileSync(path, expected);
    else expect(current, "run `npm run docs:update`").toBe(expected);
  });

  it("docs/deployment.md shows the latency budget of the Azure defaults", () => {
    const path = "docs/deployment.md";
    const current = readFileSync(path, "utf8");
    const expected = withSections(current, deploymentSections(), path);
    if (UPDATE) writeFileSync(path, expected);
    else expect(current, "run `npm run docs:update`").toBe(expected);
  });

  it("docs/benchmarks.md shows the cost of an order as bench/results.json and bench/azureRates.ts give it", () => {
    const path = "docs/benchmarks.md";
    const source = costSource(JSON.parse(readFileSync("bench/results.json", "utf8")));
    expect(source, "bench/results.json holds no measured order profile: run `npm run bench`").toBeDefined();
    const current = readFileSync(path, "utf8");
    const expected = withSections(current, { cost: renderCostSection(source!.entry, source!.small) }, path);
    if (UPDATE) writeFileSync(path, expected);
    else expect(current, "run `npm run docs:update`").toBe(expected);
  });

  it("docs/operations.md works the timing formulas through for the local and the Azure defaults", () => {
    const path = "docs/operations.md";
    const current = readFileSync(path, "utf8");
    const expected = withSections(current, timingSections(), path);
    if (UPDATE) writeFileSync(path, expected);
    else expect(current, "run `npm run docs:update`").toBe(expected);
  });

  it("the Azure deadlines in infra/main.bicep leave room for a step and a claim with a group scaling out", () => {
    const { defaults, step, claim } = azureLatencyBudgets();
    expect(queuePollingSeconds(), "host.json maxQueuePollingInterval").toBeLessThanOrEqual(5);
    expect(Number(defaults.STEP_TIMEOUT_SECONDS)).toBeGreaterThanOrEqual(step.scalingSeconds);
    expect(Number(defaults.CLAIM_TIMEOUT_SECONDS)).toBeGreaterThanOrEqual(claim.scalingSeconds);
  });

  it("docs/contract.md and docs/configuration.md list the remote services as src/domain/process.ts declares them", () => {
    const files = {
      "docs/contract.md": { "remote-services": renderServiceContract() },
      "docs/configuration.md": {
        "service-url-settings": renderServiceUrlSettings((service) =>
          serviceUrlUnder(SETTINGS.REMOTE_SERVICES_URL.default, service),
        ),
      },
    };
    for (const [path, sections] of Object.entries(files)) {
      const current = readFileSync(path, "utf8");
      const expected = withSections(current, sections, path);
      if (UPDATE) writeFileSync(path, expected);
      else expect(current, `${path}: run \`npm run docs:update\``).toBe(expected);
    }
  });

  it("no doc names a request queue, agent function or URL setting of a service src/domain/process.ts does not declare", () => {
    const declared = new Set<string>(
      AGENT_NAMES.flatMap((s) => [agentRequestQueue(s), agentFunctionName(s), serviceUrlSetting(s)]),
    );
    // Names of that shape that are no service's: Bicep's dashboard output, a Service Bus metric.
    const notServices = new Set(["DASHBOARD_URL", "throttled-requests"]);
    for (const file of DOCS) {
      const text = readFileSync(file, "utf8");
      const named = [...text.matchAll(/\b([a-z]+-requests|[a-z]+Agent|[A-Z]+_URL)\b/g)].map((m) => m[1]!);
      const undeclared = [...new Set(named.filter((n) => !declared.has(n) && !notServices.has(n)))];
      expect(
        undeclared,
        `${file} names ${undeclared.join(", ")}, of no service src/domain/process.ts declares: say <service>-requests, <service>Agent or <SERVICE>_URL, or declare the service`,
      ).toEqual([]);
    }
  });

  it("docs/contract.md names every queue, state, alert kind, status and Scheduler function of the code", () => {
    const text = readFileSync("docs/contract.md", "utf8");
    const names = [
      ...Object.values(QUEUES),
      ...AGENT_NAMES.map(agentRequestQueue),
      ...PROCESS_STATES,
      ...ALERT_KINDS,
      ...STATUS_VALUES,
      SCHEDULER_ORCHESTRATION,
      ...Object.keys(schedulerActivities),
    ];
    for (const name of names) expect(text, name).toContain(`\`${name}\``);
  });

  it("names only declared services and their operations in the fault specs it shows, so a rename leaves none stale", () => {
    // The simulator's /_faults bodies in commands (`"service":"payment","operation":"charge"`); the service names in
    // settings, queues and functions are checked with the other files that list the process (test/unit/process.test.ts).
    for (const file of DOCS) {
      const faults = [
        ...readFileSync(file, "utf8").matchAll(/"service": ?"([a-z]+)"(?:, ?"operation": ?"([a-z]+)")?/g),
      ];
      for (const [spec, service, operation] of faults) {
        expect(AGENT_NAMES as readonly string[], `${file}: ${spec}`).toContain(service);
        if (operation) {
          const operations: readonly string[] = SERVICES[service as (typeof AGENT_NAMES)[number]].operations;
          expect(operations, `${file}: ${spec}`).toContain(operation);
        }
      }
    }
  });

  it("every path of the repository a doc names exists", () => {
    for (const file of DOCS) {
      const text = readFileSync(file, "utf8");
      // `src/store/cosmos.ts`, `test/unit/domain`: a path from the root, in code format (a placeholder or glob is no path).
      const named = [...text.matchAll(/`((?:src|test|tools|bench|infra|packages|docs)\/[^`\s<>*]*)`/g)].map(
        (m) => m[1]!.replace(/[#:].*$/, ""),
      );
      // [text](../src/x.ts#anchor): a relative link, from the doc's folder.
      const linked = [...text.matchAll(/\]\(([^)#\s]+)/g)]
        .map((m) => m[1]!)
        .filter((link) => !/^[a-z]+:/i.test(link))
        .map((link) => join(dirname(file), link));
      // A build's output (`dist/`, `packages/devhost/dist`) is named as where the build puts it: it exists only after one.
      const missing = [...named, ...linked].filter((p) => !existsSync(p) && !/(^|\/)dist(\/|$)/.test(p));
      expect(missing, `${file} names paths that do not exist`).toEqual([]);
    }
  });

  it("docs/configuration.md documents every setting", () => {
    const text = readFileSync("docs/configuration.md", "utf8");
    for (const name of SETTING_NAMES) expect(text, name).toContain(`\`${name}\``);
  });
});
