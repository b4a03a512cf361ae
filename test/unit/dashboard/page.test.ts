import { Script } from "node:vm";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config";
import { dashboardContentSecurityPolicy, renderDashboardPage } from "../../../src/dashboard/page";
import { DASHBOARD_SCRIPT } from "../../../src/dashboard/script";
import { TUNING_KNOBS, TUNING_SCRIPT } from "../../../src/dashboard/tuningScript";
import { PROCESS_STATES, timingFormulas } from "../../../src/domain";

const options = {
  apiBase: "/api/",
  simulatorUrl: "",
  agentMaxAttempts: 3,
  nonce: "bm9uY2U=",
  signedInAs: { name: "ada@contoso.com", roles: ["Orders.Operator"], canOperate: true },
};

const embeddedConfig = (html: string): Record<string, unknown> => {
  const match = /<script type="application\/json" id="dashboard-config">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error("no embedded config");
  return JSON.parse(match[1]!) as Record<string, unknown>;
};

describe("dashboard page", () => {
  it("carries browser code that parses", () => {
    expect(() => new Script(DASHBOARD_SCRIPT, { filename: "dashboard.js" })).not.toThrow();
    expect(() => new Script(TUNING_SCRIPT, { filename: "tuning.js" })).not.toThrow();
  });

  it("has the tuning view: a what-if slider per timing setting, computed with the app's own formulas", () => {
    const html = renderDashboardPage(options);
    expect(html).toContain('<h2 id="tuning-title">Tuning the timings</h2>');
    expect(html).toContain("What-if, not applied");
    for (const knob of TUNING_KNOBS) {
      expect(html).toContain(`<input type="range" id="knob-${knob.input}"`);
      expect(html).toContain(`<span class="setting mono">${knob.setting}</span>`);
    }
    // The formulas' source as the app runs it, inside the page's one script: no second copy to drift.
    expect(html).toContain(`const TIMING = (${timingFormulas.toString()})();`);
    expect(html.match(/<script nonce=/g)).toHaveLength(1);
    // The view only reads: no call in it but GET timings.
    expect(TUNING_SCRIPT).not.toMatch(/method:|postJson|"POST"/);
  });

  it("has a count card and a filter option for every processState, and embeds its settings as JSON", () => {
    const html = renderDashboardPage(options);
    for (const state of PROCESS_STATES) {
      expect(html).toContain(`id="count-${state}"`);
      expect(html).toContain(`<option value="${state}">`);
    }
    expect(embeddedConfig(html)).toMatchObject({
      apiBase: "/api/",
      simulatorUrl: "",
      states: [...PROCESS_STATES],
    });
    expect(html.match(/nonce="bm9uY2U="/g)).toHaveLength(2);
  });

  it("names the signed-in principal as text, and says when the page is read only", () => {
    const html = renderDashboardPage(options);
    expect(html).toContain("Signed in as <strong>ada@contoso.com</strong> (Orders.Operator)");
    const reader = renderDashboardPage({
      ...options,
      signedInAs: { name: "<img src=x onerror=alert(1)>", roles: ["Orders.Reader"], canOperate: false },
    });
    expect(reader).toContain("&#60;img src=x onerror=alert(1)&#62;");
    expect(reader).not.toContain("<img src=x");
    expect(reader).toContain("read only: retry and cancel need the operator role");
    expect(embeddedConfig(reader)).toMatchObject({ signedInAs: { canOperate: false } });
  });

  it("offers bulk actions to operators only, for the states the single actions start from", () => {
    const html = renderDashboardPage(options);
    expect(html).toContain('id="bulk-form"');
    const offered = [...html.matchAll(/<select id="bulk-state">(.*?)<\/select>/g)][0]![1]!;
    expect([...offered.matchAll(/value="(\w+)"/g)].map((m) => m[1])).toEqual([
      "Error",
      "CompensationFailed",
      "Pending",
      "Processing",
    ]);
    expect(embeddedConfig(html)).toMatchObject({
      operatorStates: { retry: ["Error", "CompensationFailed"], cancel: ["Pending", "Processing", "Error"] },
    });
    const reader = renderDashboardPage({
      ...options,
      signedInAs: { ...options.signedInAs, canOperate: false },
    });
    expect(reader).not.toContain('id="bulk-form"');
  });

  it("shows the devhost playground only when a simulator is configured", () => {
    expect(renderDashboardPage(options)).not.toContain('id="fault-form"');
    const html = renderDashboardPage({
      ...options,
      simulatorUrl: "http://127.0.0.1:7081",
      agentMaxAttempts: 4,
    });
    expect(html).toContain('id="fault-form"');
    expect(html).toContain('id="sample-form"');
    expect(html).toContain("up to 4 calls per step");
    expect(embeddedConfig(html)).toMatchObject({ simulatorUrl: "http://127.0.0.1:7081" });
  });

  it("cannot be broken out of by a configured value", () => {
    const hostile = "http://127.0.0.1:7081/</script><script>alert(1)</script>";
    const html = renderDashboardPage({ ...options, simulatorUrl: hostile });
    expect(html).not.toContain("</script><script>alert(1)");
    expect(embeddedConfig(html).simulatorUrl).toBe(hostile);
  });

  it("allows its own inline code by nonce, and calls to the simulator only when it has one", () => {
    expect(dashboardContentSecurityPolicy(options)).toContain("script-src 'nonce-bm9uY2U='");
    expect(dashboardContentSecurityPolicy(options)).toContain("connect-src 'self';");
    expect(dashboardContentSecurityPolicy({ ...options, simulatorUrl: "http://127.0.0.1:7081" })).toContain(
      "connect-src 'self' http://127.0.0.1:7081;",
    );
  });
});

describe("DASHBOARD_SIMULATOR_URL", () => {
  const env = {
    ServiceBusConnection:
      "Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=true",
    CosmosConnection: "AccountEndpoint=http://127.0.0.1:8081/;AccountKey=a2V5;",
  };

  it("is empty unless set (no playground in Azure), and loses a trailing slash", () => {
    expect(loadConfig(env).dashboardSimulatorUrl).toBe("");
    expect(
      loadConfig({ ...env, DASHBOARD_SIMULATOR_URL: "http://127.0.0.1:7081/" }).dashboardSimulatorUrl,
    ).toBe("http://127.0.0.1:7081");
  });

  it("refuses anything but an http(s) URL, naming the setting", () => {
    try {
      loadConfig({ ...env, DASHBOARD_SIMULATOR_URL: "ftp://127.0.0.1:7081" });
      expect.unreachable("expected a ConfigError");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual([
        'DASHBOARD_SIMULATOR_URL="ftp://127.0.0.1:7081": expected an absolute http(s) URL, or empty to hide the fault panel',
      ]);
    }
  });
});
