import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import ts from "typescript";
import { describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config";
import { TUNING_KNOBS } from "../../../src/dashboard/browser/tuningKnobs";
import { readBrowserModules } from "../../../src/dashboard/browserModules";
import { dashboardContentSecurityPolicy, renderDashboardPage } from "../../../src/dashboard/page";
import { PROCESS_STATES, timingBudget, type TimingBudget, type TimingInputs } from "../../../src/domain";
import { TEST_PAGING_KEY } from "../../support/domain";

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

/** The browser build the tests' global setup emitted, as GET /api/dashboard/{module} serves it. */
const modules = readBrowserModules(path.join(inject("appBuildDir"), "browser"));

/** The modules the page's <script type="module"> elements load, as URLs, with their nonces. */
const pageScripts = (html: string): { src: string; nonce: string }[] =>
  [...html.matchAll(/<script type="module" nonce="([^"]*)" src="([^"]*)"><\/script>/g)].map((m) => ({
    nonce: m[1]!,
    src: m[2]!,
  }));

/** What a module imports, statically or not, resolved against its URL as a browser resolves it. */
const importsOf = (url: URL): URL[] => {
  const source = modules.get(path.posix.basename(url.pathname)) ?? "";
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => new URL(f.fileName, url));
};

describe("dashboard page", () => {
  it("loads its browser code as modules the dashboard serves, and every module those import", () => {
    const scripts = pageScripts(renderDashboardPage(options));
    expect(scripts.map((s) => s.src)).toEqual(["/api/dashboard/main.js", "/api/dashboard/tuning.js"]);
    expect(scripts.every((s) => s.nonce === options.nonce)).toBe(true);
    // The whole module graph from the page's scripts, as the browser fetches it: each from the dashboard's route.
    const loaded = new Set<string>();
    const pending = scripts.map((s) => new URL(s.src, "https://app.example"));
    for (let url = pending.pop(); url; url = pending.pop()) {
      if (loaded.has(url.pathname)) continue;
      expect(path.posix.dirname(url.pathname), `${url.pathname} is outside the route`).toBe("/api/dashboard");
      expect(modules.has(path.posix.basename(url.pathname)), `${url.pathname} is not served`).toBe(true);
      loaded.add(url.pathname);
      pending.push(...importsOf(url));
    }
    expect([...loaded].sort()).toEqual(
      ["dom", "main", "pageConfig", "stepView", "timingBudget", "tuning", "tuningKnobs"].map(
        (m) => `/api/dashboard/${m}.js`,
      ),
    );
  });

  it("has the tuning view: a what-if slider per timing setting, computed with the app's own formulas", async () => {
    const html = renderDashboardPage(options);
    expect(html).toContain('<h2 id="tuning-title">Tuning the timings</h2>');
    expect(html).toContain("What-if, not applied");
    for (const knob of TUNING_KNOBS) {
      expect(html).toContain(`<input type="range" id="knob-${knob.input}"`);
      expect(html).toContain(`<span class="setting mono">${knob.setting}</span>`);
    }
    // The view's formulas are the module src/domain/timingBudget.ts compiled for the browser: loaded as the page
    // loads it, it computes what the app computes, for any settings.
    const tuning = new URL("https://app.example/api/dashboard/tuning.js");
    expect(importsOf(tuning).map((u) => u.pathname)).toContain("/api/dashboard/timingBudget.js");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dashboard-modules-"));
    try {
      const file = path.join(dir, "timingBudget.mjs");
      fs.writeFileSync(file, modules.get("timingBudget.js")!);
      const browser = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as {
        timingBudget: (t: TimingInputs) => TimingBudget;
      };
      const inputs = fc.record({
        stepTimeoutSeconds: fc.integer({ min: 1, max: 3600 }),
        claimTimeoutSeconds: fc.integer({ min: 1, max: 3600 }),
        supervisorIntervalSeconds: fc.integer({ min: 1, max: 3600 }),
        starterIntervalSeconds: fc.integer({ min: 1, max: 3600 }),
        backoffBaseSeconds: fc.integer({ min: 1, max: 3600 }),
        maxFailures: fc.integer({ min: 1, max: 20 }),
        pageSize: fc.integer({ min: 1, max: 1000 }),
        steps: fc.integer({ min: 1, max: 32 }),
      });
      fc.assert(
        fc.property(inputs, (t) => {
          expect(browser.timingBudget(t)).toEqual(timingBudget(t));
        }),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
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
    // The inline style and the two module scripts.
    expect(html.match(/nonce="bm9uY2U="/g)).toHaveLength(3);
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

  it("allows its own code by nonce only, and calls to the simulator only when it has one", () => {
    expect(dashboardContentSecurityPolicy(options)).toContain("script-src 'nonce-bm9uY2U=';");
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
    PAGING_TOKEN_KEY: TEST_PAGING_KEY,
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
