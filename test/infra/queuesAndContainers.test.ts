/**
 * The queues and containers the infrastructure creates: infra/modules/servicebus.bicep and cosmos.bicep build
 * them from the emulators' config files, so what the app needs in Azure is what those files say
 * (docs/architecture.md), and the local emulators serve the same.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { parseIsoDuration } from "devhost/emulators";
import { sampleSettings } from "../../tools/repository";
import {
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  describeWithBicep,
  readJson,
  requestQueues,
  type ArmTemplate,
} from "../support/infra";

interface QueueConfig {
  UserConfig: {
    Namespaces: { Queues: { Name: string; Properties: Record<string, unknown> }[] }[];
  };
}
interface CosmosConfig {
  databases: {
    id: string;
    containers: {
      id: string;
      partitionKey?: { paths?: string[] };
      defaultTtl?: number;
      indexingPolicy?: { compositeIndexes?: { path: string; order: string }[][] };
    }[];
  }[];
}

const settings = sampleSettings();

describe("the queues Azure gets (infra/servicebus-emulator.config.json)", () => {
  const queues = readJson<QueueConfig>("infra/servicebus-emulator.config.json").UserConfig.Namespaces[0]!
    .Queues;
  const byName = new Map(queues.map((q) => [q.Name, q.Properties]));

  it("is the file local.settings.sample.json names, so the emulator serves what servicebus.bicep creates", () => {
    expect(settings.DEVHOST_SERVICEBUS_CONFIG).toBe("infra/servicebus-emulator.config.json");
  });

  it("holds every queue the app uses, one request queue per declared service, and a status-* template", () => {
    for (const name of ["orders", ...requestQueues, "agent-replies", "alerts", "rejected-messages"]) {
      expect(byName.has(name), name).toBe(true);
    }
    expect(queues.some((q) => q.Name.startsWith("status-"))).toBe(true);
  });

  it("detects duplicates on agent requests, alerts and refused messages, whose MessageId names one thing", () => {
    for (const name of [...requestQueues, "alerts", "rejected-messages"]) {
      expect(byName.get(name)?.RequiresDuplicateDetection, name).toBe(true);
    }
  });

  it("does not detect duplicates on orders, where it would drop a conflicting version unseen", () => {
    // The app tells a resend from a conflict itself, by the order's fingerprint.
    expect(byName.get("orders")?.RequiresDuplicateDetection).toBe(false);
  });

  it("gives every agent request queue one MaxDeliveryCount, the one AGENT_REQUEST_MAX_DELIVERY_COUNT names", () => {
    const counts = new Set(requestQueues.map((name) => byName.get(name)?.MaxDeliveryCount));
    expect([...counts]).toHaveLength(1);
    expect([...counts][0]).toEqual(expect.any(Number));
  });
});

describe("the Cosmos DB containers Azure gets (infra/cosmos-emulator.config.json)", () => {
  const databases = readJson<CosmosConfig>("infra/cosmos-emulator.config.json").databases;
  const containers = databases[0]?.containers ?? [];

  it("is the file local.settings.sample.json names, so the emulator serves what cosmos.bicep creates", () => {
    expect(settings.DEVHOST_COSMOS_CONFIG).toBe("infra/cosmos-emulator.config.json");
  });

  it("declares one database, the one COSMOS_DATABASE names", () => {
    expect(databases).toHaveLength(1);
    expect(databases[0]?.id).toBe(settings.COSMOS_DATABASE);
  });

  it("declares the orders, state, leases and rejected containers, each partitioned on /orderId", () => {
    expect(containers.map((c) => c.id).sort()).toEqual(["leases", "orders", "rejected", "state"]);
    for (const c of containers) expect(c.partitionKey?.paths, c.id).toEqual(["/orderId"]);
  });

  it("keeps the whole bodies of cut set-aside copies as long as rejected-messages keeps the copies", () => {
    const queues = readJson<QueueConfig>("infra/servicebus-emulator.config.json").UserConfig.Namespaces[0]!
      .Queues;
    const copies = queues.find((q) => q.Name === "rejected-messages")?.Properties.DefaultMessageTimeToLive;
    const bodies = containers.find((c) => c.id === "rejected")?.defaultTtl;
    expect(bodies).toBeDefined();
    expect(parseIsoDuration(String(copies)) / 1000).toBe(bodies);
  });

  it("indexes the state container for each two-field sort of the starter, the Supervisor and the operator listing", () => {
    const composites = (containers.find((c) => c.id === "state")?.indexingPolicy?.compositeIndexes ?? []).map(
      (index) => index.map((p) => `${p.path} ${p.order}`).join(", "),
    );
    expect(composites).toEqual(
      expect.arrayContaining([
        "/processState ascending, /createdAt ascending",
        "/processState ascending, /completeBy ascending",
        "/updatedAt descending, /id descending",
        "/processState ascending, /updatedAt descending, /id descending",
      ]),
    );
  });
});

describeWithBicep("the Cosmos DB database main.bicep deploys", () => {
  let template: ArmTemplate;
  beforeAll(async () => {
    ({ template } = await compiledInfra());
  }, COMPILE_TIMEOUT_MS);

  it("is the config's database: main.bicep's cosmosDatabaseName defaults to it", () => {
    const database = readJson<CosmosConfig>("infra/cosmos-emulator.config.json").databases[0];
    expect(template.parameters.cosmosDatabaseName?.defaultValue).toBe(database?.id);
  });
});
