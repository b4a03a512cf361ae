import { describe, expect, it } from "vitest";
import {
  bicepStringDefault,
  cosmosCapacityModeOf,
  SHIPPED_COSMOS_CAPACITY_MODE,
} from "../../../bench/shippedInfra";
import { readJson } from "../../support/infra";

describe("the shipped defaults the cost is worked out for", () => {
  it("reads a string parameter's default from Bicep text", () => {
    const bicep = "@allowed(['A', 'B'])\nparam mode string = 'B'\nparam other string = 'A'\n";
    expect(bicepStringDefault(bicep, "mode")).toBe("B");
    expect(() => bicepStringDefault(bicep, "missing")).toThrow(/no string parameter missing/);
  });

  it("refuses a capacity mode the template does not know, naming it", () => {
    expect(() => cosmosCapacityModeOf("param cosmosCapacityMode string = 'Manual'")).toThrow(/'Manual'/);
  });

  it("is the mode azd deploys when COSMOS_CAPACITY_MODE is not set", () => {
    const parameters = readJson<{ parameters: Record<string, { value: string }> }>(
      "infra/main.parameters.json",
    );
    expect(parameters.parameters.cosmosCapacityMode?.value).toBe(
      `\${COSMOS_CAPACITY_MODE=${SHIPPED_COSMOS_CAPACITY_MODE}}`,
    );
  });
});
