/**
 * What infra/main.bicep deploys when a deployment chooses nothing, read from the Bicep itself: "the shipped
 * defaults" that the cost of an order is worked out for follow the template, and a fork that changes a default
 * changes the figure with it.
 */
import fs from "node:fs";
import path from "node:path";
import { repositoryRoot } from "../tools/repository";

export type CosmosCapacityMode = "Provisioned" | "Serverless";

/** The default of `param <name> string = '<value>'` in a Bicep file's text. */
export function bicepStringDefault(bicep: string, name: string): string {
  const match = new RegExp(`^param ${name} string = '([^']*)'`, "m").exec(bicep);
  if (!match) throw new Error(`infra/main.bicep: no string parameter ${name} with a default`);
  return match[1]!;
}

export function cosmosCapacityModeOf(bicep: string): CosmosCapacityMode {
  const mode = bicepStringDefault(bicep, "cosmosCapacityMode");
  if (mode !== "Provisioned" && mode !== "Serverless")
    throw new Error(
      `infra/main.bicep: cosmosCapacityMode defaults to '${mode}', not Provisioned or Serverless`,
    );
  return mode;
}

const mainBicep = fs.readFileSync(path.join(repositoryRoot(__dirname), "infra", "main.bicep"), "utf8");

/** COSMOS_CAPACITY_MODE when nobody sets it. */
export const SHIPPED_COSMOS_CAPACITY_MODE: CosmosCapacityMode = cosmosCapacityModeOf(mainBicep);
