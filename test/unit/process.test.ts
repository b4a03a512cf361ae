/**
 * Every file outside src/ that lists the process's services agrees with the declaration (src/domain/process.ts), in
 * both directions: a declared service missing from one fails, and so does an entry for a service nobody declares.
 * The files the declaration fully determines are rewritten by `npm run docs:update`.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import prettier from "prettier";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config";
import { AGENT_NAMES, SERVICES, agentRequestQueue, hasUndo, orderWorkflowV1 } from "../../src/domain";
import {
  REQUEST_QUEUE,
  SERVICE_URL_SETTING,
  compareNames,
  disagreement,
  processJson,
} from "../../tools/processFiles";
import {
  EMULATOR_CONFIG_FILE,
  QUEUES_TEMPLATE_FILE,
  REQUEST_QUEUE_ENTRY,
  emulatorConfigFrom,
  type EmulatorConfig,
} from "../../tools/emulatorConfig";
import {
  BEHAVIOURS,
  DECLARED_SERVICES,
  SERVICES as SIMULATED_SERVICES,
  SIMULATED_OPERATIONS,
  type Role,
} from "../../tools/simulator";
import { genericBody } from "../../tools/simulator/schemas";
import { RemoteServices, idFieldOf } from "../../tools/simulator/services";
import { sampleOrder } from "../../tools/sampleOrders";
import { seededRandom } from "../../tools/seededRandom";

const UPDATE = process.env.UPDATE_DOCS === "1";

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

/** JSON as the repository formats it (prettier, .prettierrc.json), so that a rewritten file passes `npm run lint`. */
async function formatJson(file: string, value: unknown): Promise<string> {
  const options = await prettier.resolveConfig(file);
  return prettier.format(JSON.stringify(value), { ...options, filepath: file });
}

const SAMPLE_SETTINGS = "local.settings.sample.json";
const PARAMETERS = "infra/main.parameters.json";
const WORKFLOW = ".github/workflows/azure-dev.yml";

describe("the files that list the process's services", () => {
  it("infra/process.json is what src/domain/process.ts declares (Bicep and test/infra read it)", async () => {
    const file = "infra/process.json";
    const expected = await formatJson(file, processJson());
    const current = existsSync(file) ? readFileSync(file, "utf8") : "{}";
    if (UPDATE) writeFileSync(file, expected);
    else {
      const listed = (JSON.parse(current) as { services?: { name: string }[] }).services ?? [];
      const { missing, extra } = compareNames(
        AGENT_NAMES,
        listed.map((s) => s.name),
      );
      expect(
        current,
        disagreement(file, "service", { missing, extra }) || `${file} is stale: run \`npm run docs:update\``,
      ).toBe(expected);
    }
  });

  it(`${QUEUES_TEMPLATE_FILE} stands for every request queue with one entry; ${EMULATOR_CONFIG_FILE} has them all`, () => {
    const template = readJson(QUEUES_TEMPLATE_FILE) as EmulatorConfig;
    const names = template.UserConfig.Namespaces[0]!.Queues.map((q) => q.Name);
    expect(names.filter((n) => n === REQUEST_QUEUE_ENTRY)).toHaveLength(1);
    expect(
      names.filter((n) => REQUEST_QUEUE.test(n)),
      `${QUEUES_TEMPLATE_FILE} names a service's own queue: its ${REQUEST_QUEUE_ENTRY} entry stands for every one`,
    ).toEqual([]);
    const entry = template.UserConfig.Namespaces[0]!.Queues.find((q) => q.Name === REQUEST_QUEUE_ENTRY)!;
    // What the emulators serve (written by this run's global set-up, as by `npm run build`).
    const served = (readJson(EMULATOR_CONFIG_FILE) as EmulatorConfig).UserConfig.Namespaces[0]!.Queues;
    expect(served).toEqual(emulatorConfigFrom(template).UserConfig.Namespaces[0]!.Queues);
    const requests = served.filter((q) => REQUEST_QUEUE.test(q.Name));
    expect(requests.map((q) => q.Name)).toEqual(AGENT_NAMES.map(agentRequestQueue));
    for (const queue of requests) expect(queue.Properties, queue.Name).toEqual(entry.Properties);
    expect(served.map((q) => q.Name)).toEqual(
      names.flatMap((n) => (n === REQUEST_QUEUE_ENTRY ? AGENT_NAMES.map(agentRequestQueue) : [n])),
    );
  });

  it(`${SAMPLE_SETTINGS}, ${PARAMETERS} and ${WORKFLOW} name no service: two settings say where they all are`, () => {
    // A service declared in process.ts is reached at REMOTE_SERVICES_URL/<service>, or where SERVICE_URLS says:
    // these files hand on those two settings and list no service, so a fork adds or removes one without them.
    const sample: Record<string, string> = readJson(SAMPLE_SETTINGS).Values;
    expect(sample).toMatchObject({
      REMOTE_SERVICES_URL: SETTINGS.REMOTE_SERVICES_URL.default,
      SERVICE_URLS: "",
    });
    const parameters: Record<string, { value: unknown }> = readJson(PARAMETERS).parameters;
    expect(parameters.remoteServicesUrl?.value).toBe("${REMOTE_SERVICES_URL=}");
    expect(parameters.serviceUrlList?.value).toBe("${SERVICE_URLS=}");
    const env: Record<string, string> = parseYaml(readFileSync(WORKFLOW, "utf8")).jobs.deploy.env;
    expect(env).toMatchObject({
      REMOTE_SERVICES_URL: "${{ vars.REMOTE_SERVICES_URL }}",
      SERVICE_URLS: "${{ vars.SERVICE_URLS }}",
    });
    for (const [file, names] of [
      [SAMPLE_SETTINGS, Object.keys(sample)],
      [PARAMETERS, Object.keys(parameters)],
      [WORKFLOW, Object.keys(env)],
    ] as const) {
      expect(
        names.filter(
          (n) => SERVICE_URL_SETTING.test(n) || AGENT_NAMES.some((s) => n.toLowerCase().includes(s)),
        ),
        `${file} names a service's own setting or parameter: REMOTE_SERVICES_URL and SERVICE_URLS say where each service is`,
      ).toEqual([]);
    }
  });

  it("the simulator (tools/simulator) serves every declared operation of every declared service, and no other", () => {
    const declared = AGENT_NAMES.flatMap((s) => SERVICES[s].operations.map((op) => `${s}/${op}`));
    const { missing, extra } = compareNames(declared, SIMULATED_OPERATIONS);
    expect(
      missing,
      `the simulator serves no route for ${missing.join(", ")}: tools/simulator/served.ts must derive DECLARED_SERVICES from SERVICES in src/domain/process.ts`,
    ).toEqual([]);
    expect(
      extra,
      `the simulator serves ${extra.join(", ")}, which src/domain/process.ts does not declare (tools/simulator/served.ts)`,
    ).toEqual([]);
    for (const step of orderWorkflowV1.steps) {
      expect(DECLARED_SERVICES[step.agent], `tools/simulator/served.ts: roles of ${step.agent}`).toEqual({
        [step.doOperation]: "do",
        ...(hasUndo(step) ? { [step.undoOperation]: "undo" } : {}),
      });
    }
    // The soak's fault plan names services and their do/undo by these lists.
    expect(SIMULATED_SERVICES, "tools/simulator/served.ts SERVICES").toEqual(AGENT_NAMES);
    const undeclared = Object.keys(BEHAVIOURS).filter((s) => !(AGENT_NAMES as readonly string[]).includes(s));
    expect(
      undeclared,
      `tools/simulator/behaviours.ts has a behaviour for ${undeclared.join(", ")}, which src/domain/process.ts does not declare: remove it or declare the service`,
    ).toEqual([]);
  });

  it("the simulator takes each step's do and undo bodies and answers what its compensationFrom picks", () => {
    // A step without undo has only its do: the simulator takes its body.
    const behaviours = Object.fromEntries(Object.entries(BEHAVIOURS).map(([s, make]) => [s, make({})]));
    const services = new RemoteServices(behaviours);
    const order = sampleOrder(1, { prefix: "ORD", random: seededRandom(1), declined: 0 });
    const run = (service: string, role: Role, request: unknown) => {
      const b = services.behaviourOf(service);
      const schema = (role === "do" ? b?.doBody : undefined) ?? genericBody(role, idFieldOf(b));
      const parsed = schema.safeParse(request);
      expect(
        parsed.error,
        `tools/simulator refuses ${service}'s ${role} body ${JSON.stringify(request)}`,
      ).toBeUndefined();
      return services.run(service, role, parsed.data!);
    };
    for (const step of orderWorkflowV1.steps) {
      const done = run(step.agent, "do", step.doRequest(order));
      expect(done.status).toBe(200);
      if (!hasUndo(step)) continue;
      const compensation = step.compensationFrom(done.body);
      expect(
        compensation,
        `step ${step.name}'s compensationFrom picks nothing from the simulator's answer ${JSON.stringify(done.body)}: give ${step.agent} a behaviour in tools/simulator/behaviours.ts whose idField is the field it picks`,
      ).not.toBeNull();
      const undone = run(step.agent, "undo", step.undoRequest(order, compensation));
      expect(
        undone,
        `${step.agent}/${step.undoOperation} reverses what ${step.doOperation} applied`,
      ).toMatchObject({
        status: 200,
        applied: true,
        body: { undone: [Object.values(compensation!)[0]] },
      });
    }
  });
});
