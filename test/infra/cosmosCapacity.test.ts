/**
 * Cosmos DB's capacity mode (docs/deployment.md, "Cosmos DB"): autoscale throughput shared by the database unless
 * a deployment asks for serverless, as `bicep snapshot` says Azure would be asked to create it.
 */
import { beforeAll, expect, it } from "vitest";
import {
  compiledInfra,
  COMPILE_TIMEOUT_MS,
  DEPLOYMENT_NAMES,
  DEPLOYMENTS,
  describeWithBicep,
  predicted,
  type CompiledInfra,
  type DeploymentName,
} from "../support/infra";

interface CosmosAccount {
  capabilities?: { name: string }[];
  enableBurstCapacity?: boolean;
}
interface CosmosDatabase {
  options?: { autoscaleSettings?: { maxThroughput?: number }; throughput?: number };
}

describeWithBicep("Cosmos DB's capacity mode", () => {
  let infra: CompiledInfra;
  beforeAll(async () => {
    infra = await compiledInfra();
  }, COMPILE_TIMEOUT_MS);

  const only = <T>(name: DeploymentName, type: string): T => {
    const found = predicted(infra.snapshots[name], type);
    expect(found, `${type} in ${name}`).toHaveLength(1);
    return found[0]!.properties as T;
  };

  it("is autoscale by default, from the smallest maximum main.bicep allows", () => {
    expect(infra.template.parameters.cosmosCapacityMode?.defaultValue).toBe("Provisioned");
    expect(infra.template.parameters.cosmosAutoscaleMaxThroughput?.defaultValue).toBe(1000);
  });

  it("covers both modes in the evaluated deployments", () => {
    const modes = new Set(DEPLOYMENT_NAMES.map((name) => Boolean(DEPLOYMENTS[name].serverless)));
    expect([...modes].sort()).toEqual([false, true]);
  });

  it.each(DEPLOYMENT_NAMES)("gives the database what its mode bills (%s)", (name) => {
    const account = only<CosmosAccount>(name, "Microsoft.DocumentDB/databaseAccounts");
    const database = only<CosmosDatabase>(name, "Microsoft.DocumentDB/databaseAccounts/sqlDatabases");
    const capabilities = (account.capabilities ?? []).map((c) => c.name);
    if (DEPLOYMENTS[name].serverless) {
      expect(capabilities).toContain("EnableServerless");
      expect(account.enableBurstCapacity).toBe(false);
      expect(database.options?.autoscaleSettings).toBeUndefined();
    } else {
      expect(capabilities).not.toContain("EnableServerless");
      // A partition may then spend throughput it left unused on a burst above the maximum, before answering 429.
      expect(account.enableBurstCapacity).toBe(true);
      expect(database.options?.autoscaleSettings?.maxThroughput).toBe(1000);
    }
    expect(database.options?.throughput).toBeUndefined();
  });
});
