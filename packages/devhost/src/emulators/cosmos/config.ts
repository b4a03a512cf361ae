/**
 * What the Cosmos DB emulator creates on start: databases and their containers, each with its partition key
 * and indexing policy, read from a JSON file. A container is written in the shape of the Cosmos DB resource
 * (`{ id, partitionKey, indexingPolicy }`), which is what the @azure/cosmos client sends to create one and what
 * an ARM/Bicep `sqlDatabases/containers` resource takes, so one file can configure the emulator and a deployment.
 */
import { readFileSync } from "node:fs";
import { IndexingMode, PartitionKeyDefinitionVersion, PartitionKeyKind } from "@azure/cosmos";
import { z } from "zod";

const indexPath = z.strictObject({ path: z.string().min(1) });

const indexingPolicySchema = z.strictObject({
  indexingMode: z.enum(IndexingMode).optional(),
  automatic: z.boolean().optional(),
  includedPaths: z.array(indexPath).optional(),
  excludedPaths: z.array(indexPath).optional(),
  compositeIndexes: z
    .array(
      z
        .array(z.strictObject({ path: z.string().min(1), order: z.enum(["ascending", "descending"]) }))
        .min(2, { error: "a composite index needs at least two paths" }),
    )
    .optional(),
});

const containerSchema = z.strictObject({
  id: z.string().min(1),
  partitionKey: z.strictObject({
    paths: z.array(z.string().startsWith("/", { error: "a partition key path starts with /" })).min(1),
    kind: z.enum(PartitionKeyKind).optional(),
    version: z.enum(PartitionKeyDefinitionVersion).optional(),
  }),
  indexingPolicy: indexingPolicySchema.optional(),
  /**
   * Seconds an item lives (-1: each item says, by its `ttl`). Accepted so that one file serves the emulator and a
   * deployment; the emulator keeps items until they are deleted.
   */
  defaultTtl: z
    .number()
    .int()
    .refine((n) => n === -1 || n > 0, { error: "defaultTtl is -1 or a positive number of seconds" })
    .optional(),
});

const configSchema = z.strictObject({
  databases: z.array(z.strictObject({ id: z.string().min(1), containers: z.array(containerSchema) })),
});

export type CosmosEmulatorConfig = z.infer<typeof configSchema>;
export type CosmosContainerConfig = z.infer<typeof containerSchema>;
export type CosmosIndexingPolicy = z.infer<typeof indexingPolicySchema>;

/** No databases: what the emulator creates when it is given no config. */
export const EMPTY_COSMOS_CONFIG: CosmosEmulatorConfig = { databases: [] };

export class CosmosConfigError extends Error {
  override name = "CosmosConfigError";
}

/** Reads and validates a config: a file path or an already parsed object. Every problem is reported at once. */
export function loadCosmosConfig(pathOrConfig: string | unknown): CosmosEmulatorConfig {
  let raw = pathOrConfig;
  const origin = typeof pathOrConfig === "string" ? pathOrConfig : "config object";
  if (typeof pathOrConfig === "string") {
    try {
      raw = JSON.parse(readFileSync(pathOrConfig, "utf8").replace(/^\uFEFF/, ""));
    } catch (error) {
      throw new CosmosConfigError(`Cannot read the Cosmos DB emulator config ${origin}: ${String(error)}`);
    }
  }
  const parsed = configSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `  - ${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`,
  );
  throw new CosmosConfigError(`Invalid Cosmos DB emulator config (${origin}):\n${problems.join("\n")}`);
}
