/**
 * The dashboard's "Tuning the timings" view in headless Chromium against the app on the devhost, run with the
 * shipped timing defaults: the page shows the settings and figures GET /api/timings answers, a slider moved by
 * keyboard recomputes the figures in the page (with the app's own formulas: the values must equal what
 * timingBudget gives in Node.js), and nothing reaches the server: no request but GETs, the same settings after.
 */
import type { Browser, Page, Request } from "playwright-core";
import { describe, expect } from "vitest";
import { scheduleEvery, timingBudget, type TimingBudget, type TimingInputs } from "../../src/domain";
import { e2eTest } from "../support/fixtures";
import { NO_CHROMIUM, chromiumFixture, chromiumPath } from "./chromium";
import { SHIPPED_TIMINGS } from "./shippedTimings";

const it = e2eTest(SHIPPED_TIMINGS).extend<{ $file: { browser: Browser } }>({
  browser: [chromiumFixture, { scope: "file" }],
});

interface Timings {
  settings: Record<string, string | number>;
  inputs: TimingInputs;
  figures: TimingBudget;
}

/** A figure's value in one column, as the page computed it (the cell's data-value). */
const figure = async (page: Page, id: string, column: "running" | "whatif"): Promise<number> =>
  Number(
    await page
      .locator(`#tuning-figures-body tr[data-figure="${id}"] td.${column}`)
      .getAttribute("data-value"),
  );

describe.skipIf(!chromiumPath)(
  `dashboard tuning view in headless Chromium${chromiumPath ? "" : ` (${NO_CHROMIUM})`}`,
  () => {
    it(
      "shows the running figures, recomputes them as a slider moves, and changes nothing on the server",
      { timeout: 60_000 },
      async ({ e2e, browser }) => {
        const before = (await (await e2e.api("/api/timings")).json()) as Timings;
        expect(before.settings).toEqual({
          STEP_TIMEOUT_SECONDS: 30,
          CLAIM_TIMEOUT_SECONDS: 60,
          SUPERVISOR_SCHEDULE: "*/15 * * * * *",
          SUPERVISOR_BACKOFF_SECONDS: 10,
          SUPERVISOR_MAX_FAILURES: 3,
          SUPERVISOR_PAGE_SIZE: 100,
          STARTER_SCHEDULE: "*/5 * * * * *",
        });

        const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
        const pageErrors: string[] = [];
        page.on("pageerror", (error) => pageErrors.push(String(error)));
        const requests: Request[] = [];
        page.on("request", (request) => requests.push(request));
        await page.goto(`${e2e.host.url}/api/dashboard`);
        await page.locator("#tuning[data-ready=true]").waitFor();
        await page.locator("#tuning").scrollIntoViewIfNeeded();
        expect(await page.locator("#tuning-badge").textContent()).toBe("What-if, not applied");

        // The running column: the app's settings, and the figures the API computed for them.
        const running = page.locator("#tuning-settings td.running");
        expect(await running.evaluateAll((cells) => cells.map((c) => c.textContent))).toEqual([
          "30 s",
          "*/15 * * * * *",
          "10 s",
          "*/5 * * * * *",
          "3 retries",
          "1 min",
          "100 records",
        ]);
        // 30 + 15 + 10 + 5 s: the step timeout, the sweep, the first back-off, the starter's round.
        expect(await figure(page, "recovery-sweep", "running")).toBe(60);
        expect(before.figures.recovery.viaSweepSeconds).toBe(60);
        expect(await figure(page, "recovery-notice", "running")).toBe(
          before.figures.recovery.viaRecoveryQueueSeconds,
        );
        expect(await figure(page, "longest-order", "running")).toBe(before.figures.longestOrder.seconds);
        expect(await figure(page, "sweeps", "running")).toBe(before.figures.load.sweepsPerHour);
        expect(await page.locator("#tuning-apply").textContent()).toBe(
          "The sliders are at the settings the app runs with.",
        );

        // Two stops up the step timeout's slider: 30 s → 60 s; the figures follow, in the page.
        const stepSlider = page.getByRole("slider", { name: "Step timeout" });
        await stepSlider.focus();
        await page.keyboard.press("ArrowRight");
        await page.keyboard.press("ArrowRight");
        expect(await page.locator("#knob-stepTimeoutSeconds-value").textContent()).toBe("1 min");
        const step60 = timingBudget({ ...before.inputs, stepTimeoutSeconds: 60 });
        await expect
          .poll(() => figure(page, "recovery-sweep", "whatif"))
          .toBe(step60.recovery.viaSweepSeconds);
        expect(step60.recovery.viaSweepSeconds).toBe(90);
        expect(await figure(page, "recovery-sweep", "running")).toBe(60);
        expect(await figure(page, "longest-order", "whatif")).toBe(step60.longestOrder.seconds);
        expect(
          await page.locator('#tuning-figures-body tr[data-figure="recovery-sweep"] td.change').textContent(),
        ).toBe("+30 s");
        // The Supervisor's period changes the load, not the step's: a sweep every 30 s halves the sweeps.
        await page.getByRole("slider", { name: "Supervisor sweep every" }).focus();
        await page.keyboard.press("ArrowRight"); // 20 s
        await page.keyboard.press("ArrowRight"); // 30 s
        const whatIf = { ...before.inputs, stepTimeoutSeconds: 60, supervisorIntervalSeconds: 30 };
        await expect
          .poll(() => figure(page, "sweeps", "whatif"))
          .toBe(timingBudget(whatIf).load.sweepsPerHour);
        expect(await figure(page, "sweeps", "whatif")).toBe(120);
        expect(
          await page.locator("#tuning-figures-body tr[data-figure='sweeps'] td.change").textContent(),
        ).toBe("×0.5");
        const backoffs = await page
          .locator("#tuning-retries-body td.backoff")
          .evaluateAll((cells) => cells.map((c) => Number(c.getAttribute("data-value"))));
        expect(backoffs).toEqual(timingBudget(whatIf).retries.map((r) => r.backoffSeconds));
        expect(await page.locator("#tuning-apply code").allTextContents()).toEqual([
          "STEP_TIMEOUT_SECONDS=60",
          `SUPERVISOR_SCHEDULE=${scheduleEvery(30)}`,
        ]);
        expect(await page.locator("#tuning-apply").textContent()).toContain("What-if, not applied");

        // Nothing was applied: the page sent GETs only, and the app still runs with the settings it had.
        expect(requests.filter((r) => r.method() !== "GET").map((r) => `${r.method()} ${r.url()}`)).toEqual(
          [],
        );
        const after = (await (await e2e.api("/api/timings")).json()) as Timings;
        expect(after).toEqual(before);
        expect(await figure(page, "recovery-sweep", "running")).toBe(60);

        // Reset puts the sliders back at the running settings.
        await page.getByRole("button", { name: "Reset to the running settings" }).click();
        expect(await figure(page, "recovery-sweep", "whatif")).toBe(60);
        expect(await page.locator("#tuning-reset").isDisabled()).toBe(true);
        expect(pageErrors).toEqual([]);
      },
    );
  },
);
