/**
 * The durable backend (docs/deployment.md, "Durable backend"): chosen in the deployed host.json, which the scale
 * controller reads, never by an AzureFunctionsJobHost__ app setting it cannot see; with the Durable Task
 * Scheduler, an identity-based connection and the role that goes with it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  appSettingsOf,
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  DEPLOYMENTS,
  deployedHostJsonModule,
  describeWithBicep,
  isAppIdentity,
  readText,
  roleAssignments,
  type CompiledInfra,
  type HostJson,
} from "../support/infra";

const DURABLE_TASK_DATA_CONTRIBUTOR = "0ad04412-c4d5-4796-b79c-f76d14c8d402";
const { deployedHostJson, SCHEDULER_CONNECTION_SETTING } = await deployedHostJsonModule();

const withScheduler = DEPLOYMENT_NAMES.filter((name) => DEPLOYMENTS[name].scheduler);
const withStorage = DEPLOYMENT_NAMES.filter((name) => !DEPLOYMENTS[name].scheduler);

/** A TimeSpan such as 00:00:02, in seconds. */
function timeSpanSeconds(span: string): number {
  const [h, m, s] = span.split(":").map(Number);
  return h! * 3600 + m! * 60 + s!;
}

describeWithBicep("the durable backend", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  it.each(DEPLOYMENT_NAMES)("is not set by an AzureFunctionsJobHost__ app setting (%s)", (name) => {
    const overrides = Object.keys(appSettingsOf(infra.snapshots[name])).filter((k) =>
      /^AzureFunctionsJobHost__extensions__durableTask/i.test(k),
    );
    expect(overrides).toEqual([]);
  });

  it.each(withScheduler)(
    "with the scheduler, reaches it through an identity-based connection and Durable Task Data Contributor (%s)",
    (name) => {
      const snapshot = infra.snapshots[name];
      // References stay unresolved in a snapshot: format('Endpoint={0};Authentication=ManagedIdentity;ClientID={1}', ...)
      expect(String(appSettingsOf(snapshot)[SCHEDULER_CONNECTION_SETTING] ?? "")).toMatch(
        /Endpoint=.+;Authentication=ManagedIdentity;ClientID=/,
      );
      const grants = roleAssignments(snapshot).filter(
        (a) => isAppIdentity(a.principalId) && a.roleId === DURABLE_TASK_DATA_CONTRIBUTOR,
      );
      expect(grants.length).toBeGreaterThanOrEqual(1);
    },
  );

  it.each(withStorage)("with Azure Storage, sets no scheduler connection (%s)", (name) => {
    expect(appSettingsOf(infra.snapshots[name])[SCHEDULER_CONNECTION_SETTING]).toBeUndefined();
  });
});

// No Bicep needed for what stage-package.sh deploys: these run everywhere.
describe("the deployed host.json (stage-package.sh)", () => {
  it("for the scheduler, names the azureManaged provider and its connection setting", () => {
    expect(deployedHostJson("DurableTaskScheduler").extensions.durableTask.storageProvider).toMatchObject({
      type: "azureManaged",
      connectionStringName: SCHEDULER_CONNECTION_SETTING,
    });
  });

  it("for the scheduler, asks for extension bundle 4.32 or later", () => {
    // azureManaged arrived in bundle 4.30; the scheduler's quickstart asks for 4.32 or later.
    const host: HostJson = deployedHostJson("DurableTaskScheduler");
    const lower = /^\[(\d+)\.(\d+)/.exec(host.extensionBundle?.version ?? "");
    expect(lower, host.extensionBundle?.version).not.toBeNull();
    const [major, minor] = [Number(lower![1]), Number(lower![2])];
    expect(major > 4 || (major === 4 && minor >= 32), host.extensionBundle?.version).toBe(true);
  });

  it("for Azure Storage, names no other provider and polls its queues every few seconds", () => {
    const provider = deployedHostJson("AzureStorage").extensions.durableTask.storageProvider ?? {};
    expect([undefined, "AzureStorage"]).toContain(provider.type);
    // The default, 30 s, would be added to every hop of an orchestration once the queues go quiet.
    expect(provider.maxQueuePollingInterval).toEqual(expect.any(String));
    expect(timeSpanSeconds(provider.maxQueuePollingInterval!)).toBeLessThanOrEqual(5);
  });

  it("is written by stage-package.sh with deployed-host-json.mjs, from DURABLE_BACKEND", () => {
    const stage = readText("infra/scripts/stage-package.sh");
    expect(stage).toMatch(/node infra\/scripts\/deployed-host-json\.mjs "\$durable_backend"/);
    expect(stage).toMatch(/DURABLE_BACKEND/);
  });
});
