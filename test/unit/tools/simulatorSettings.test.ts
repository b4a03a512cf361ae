import { describe, expect, it } from "vitest";
import {
  planSimulator,
  settingsForSimulator,
  settingsPointAtSimulator,
  simulatorUrlIn,
} from "../../../tools/simulator/settings";

describe("settings that point at the simulator", () => {
  it("are URLs on a loopback host and port 7081, by value", () => {
    expect(simulatorUrlIn("http://127.0.0.1:7081/inventory")?.origin).toBe("http://127.0.0.1:7081");
    expect(simulatorUrlIn("http://localhost:7081")).toBeDefined();
    expect(simulatorUrlIn("http://127.0.0.1:7082/inventory")).toBeUndefined();
    expect(simulatorUrlIn("https://example.com:7081/x")).toBeUndefined();
    expect(simulatorUrlIn("Endpoint=sb://127.0.0.1:7081")).toBeUndefined();
    expect(settingsPointAtSimulator({ PAYMENT_URL: "http://127.0.0.1:7081/payment" })).toBe(true);
    expect(settingsPointAtSimulator({ PAYMENT_URL: "https://payments.example.com" })).toBe(false);
  });

  it("are pointed at a simulator elsewhere, path kept, and every other value left alone", () => {
    const env = {
      ServiceBusConnection: "Endpoint=sb://localhost;UseDevelopmentEmulator=true;",
      INVENTORY_URL: "http://127.0.0.1:7081/inventory",
      DASHBOARD_SIMULATOR_URL: "http://127.0.0.1:7081",
      REMOTE_URL: "https://example.com/x",
    };
    expect(settingsForSimulator("http://127.0.0.1:40003", env)).toEqual({
      INVENTORY_URL: "http://127.0.0.1:40003/inventory",
      DASHBOARD_SIMULATOR_URL: "http://127.0.0.1:40003",
    });
  });

  it("start the simulator only when nothing listens on its port yet", async () => {
    const free = () => Promise.resolve(false);
    const taken = () => Promise.resolve(true);
    expect(await planSimulator({ REMOTE_URL: "https://example.com/x" }, free)).toEqual({ start: false });
    const pointing = { INVENTORY_URL: "http://127.0.0.1:7081/inventory" };
    expect(await planSimulator(pointing, free)).toEqual({
      start: true,
      port: 7081,
      note: "remote services simulator: starting on 127.0.0.1:7081.",
    });
    expect(await planSimulator(pointing, taken)).toEqual({
      start: false,
      note: "remote services simulator: something already listens on 127.0.0.1:7081; using it.",
    });
  });
});
