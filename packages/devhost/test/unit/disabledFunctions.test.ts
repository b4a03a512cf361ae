// azure-webjobs-sdk HostListenerFactory.IsDisabled and ConfigurationExtensions.IsSettingEnabled.
import { describe, expect, it } from "vitest";
import { isFunctionDisabled, unreadDisabledSettings } from "../../src/startup/disabledFunctions";

describe("isFunctionDisabled", () => {
  it("reads AzureWebJobs.<name>.Disabled and AzureWebJobs_<name>_Disabled, names in any case", () => {
    expect(isFunctionDisabled("orders", { "AzureWebJobs.orders.Disabled": "true" })).toBe(true);
    expect(isFunctionDisabled("orders", { AzureWebJobs_orders_Disabled: "1" })).toBe(true);
    expect(isFunctionDisabled("Orders", { "azurewebjobs.ORDERS.disabled": "TRUE" })).toBe(true);
    expect(isFunctionDisabled("orders", {})).toBe(false);
  });

  it("takes only 1 and true: not yes, not 0, not false, not padded", () => {
    for (const value of ["yes", "0", "false", " true", "on", ""]) {
      expect(isFunctionDisabled("orders", { "AzureWebJobs.orders.Disabled": value })).toBe(false);
    }
  });

  it("does not read AzureWebJobs__<name>__Disabled, and warns of it", () => {
    const env = { AzureWebJobs__orders__Disabled: "true" };
    expect(isFunctionDisabled("orders", env)).toBe(false);
    expect(unreadDisabledSettings(["orders", "other"], env)).toEqual([
      "The setting AzureWebJobs__orders__Disabled does not disable orders: the host reads " +
        "AzureWebJobs.orders.Disabled or AzureWebJobs_orders_Disabled.",
    ]);
  });
});
