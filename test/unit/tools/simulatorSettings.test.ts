import { describe, expect, it } from "vitest";
import { AGENT_NAMES, serviceUrlSetting } from "../../../src/domain";
import {
  loopbackUrlIn,
  planSimulator,
  settingsForSimulator,
  simulatorUrlsIn,
} from "../../../tools/simulator/settings";

/** Every declared service at its own URL, none of them the simulator. */
const elsewhere = Object.fromEntries(
  AGENT_NAMES.map((s) => [serviceUrlSetting(s), `https://${s}.example.com`]),
);
const pointing = (env: NodeJS.ProcessEnv) => [...simulatorUrlsIn(env).keys()];

describe("settings that point at the simulator", () => {
  it("are where the services are and the fault panel's, with a loopback URL, on any port", () => {
    expect(loopbackUrlIn("http://127.0.0.1:7081/inventory")?.origin).toBe("http://127.0.0.1:7081");
    expect(loopbackUrlIn("http://localhost:7090")).toBeDefined();
    expect(loopbackUrlIn("https://example.com:7081/x")).toBeUndefined();
    expect(loopbackUrlIn("Endpoint=sb://127.0.0.1:7081")).toBeUndefined();
    expect(pointing({ ...elsewhere, REMOTE_SERVICES_URL: "http://127.0.0.1:7090" })).toEqual([
      "REMOTE_SERVICES_URL",
    ]);
    expect(pointing({ ...elsewhere, PAYMENT_URL: "http://127.0.0.1:7090/payment" })).toEqual(["PAYMENT_URL"]);
    expect(pointing(elsewhere)).toEqual([]);
    // Another loopback URL is not the simulator: it must be one of the settings that address it.
    expect(pointing({ ...elsewhere, OTHER_URL: "http://127.0.0.1:7081/x" })).toEqual([]);
  });

  it("are pointed at a simulator elsewhere, path kept, and every other value left alone", () => {
    const env = {
      ServiceBusConnection: "Endpoint=sb://localhost;UseDevelopmentEmulator=true;",
      REMOTE_SERVICES_URL: "http://127.0.0.1:7081",
      INVENTORY_URL: "http://127.0.0.1:7081/inventory",
      DASHBOARD_SIMULATOR_URL: "http://127.0.0.1:7081",
      REMOTE_URL: "https://example.com/x",
    };
    expect(settingsForSimulator("http://127.0.0.1:40003", env)).toEqual({
      REMOTE_SERVICES_URL: "http://127.0.0.1:40003",
      INVENTORY_URL: "http://127.0.0.1:40003/inventory",
      DASHBOARD_SIMULATOR_URL: "http://127.0.0.1:40003",
    });
  });

  it("start the simulator on the port they name, only when nothing listens there yet", async () => {
    const free = () => Promise.resolve(false);
    const taken = () => Promise.resolve(true);
    expect(await planSimulator({ ...elsewhere, REMOTE_URL: "https://example.com/x" }, free)).toEqual({
      start: false,
    });
    const local = { REMOTE_SERVICES_URL: "http://127.0.0.1:7081" };
    expect(await planSimulator(local, free)).toEqual({
      start: true,
      port: 7081,
      note: "remote services simulator: starting on 127.0.0.1:7081.",
    });
    expect(await planSimulator(local, taken)).toEqual({
      start: false,
      note: "remote services simulator: something already listens on 127.0.0.1:7081; using it.",
    });
    expect(
      await planSimulator({ ...elsewhere, PAYMENT_URL: "http://localhost:7190/payment" }, free),
    ).toMatchObject({
      start: true,
      port: 7190,
    });
  });

  it("say which settings one simulator cannot serve when they name different ports", async () => {
    // Every declared service at 7190 but the last, at 7191.
    const odd = AGENT_NAMES.at(-1)!;
    const env = Object.fromEntries(
      AGENT_NAMES.map((s) => [serviceUrlSetting(s), `http://127.0.0.1:${s === odd ? 7191 : 7190}/${s}`]),
    );
    expect(await planSimulator(env, () => Promise.resolve(false))).toEqual({
      start: true,
      port: 7190,
      note:
        `remote services simulator: starting on 127.0.0.1:7190. Not served: ${serviceUrlSetting(odd)} (port 7191): one ` +
        "simulator serves every service, so point them all at one port.",
    });
  });
});
