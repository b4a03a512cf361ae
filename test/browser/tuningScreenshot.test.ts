/**
 * Regenerates docs/tuning.png: the dashboard's "Tuning the timings" view at the shipped timing defaults, with the
 * step timeout and the Supervisor's period moved (what-if) so that the changes show. It writes a file in docs/,
 * so it runs only on request, as the dashboard's screenshot does:
 *
 *   DASHBOARD_SCREENSHOT=1 npx vitest run test/browser/tuningScreenshot.test.ts
 */
import path from "node:path";
import { describe } from "vitest";
import type { Browser } from "playwright-core";
import { e2eTest } from "../support/fixtures";
import { chromiumFixture, chromiumPath } from "./chromium";
import { SHIPPED_TIMINGS } from "./shippedTimings";

const OUTPUT = path.resolve(__dirname, "..", "..", "docs", "tuning.png");
const requested = process.env.DASHBOARD_SCREENSHOT === "1";

const it = e2eTest(SHIPPED_TIMINGS).extend<{ $file: { browser: Browser } }>({
  browser: [chromiumFixture, { scope: "file" }],
});

describe.runIf(requested && chromiumPath)("docs/tuning.png (DASHBOARD_SCREENSHOT=1)", () => {
  it("captures the tuning view with two what-if changes", { timeout: 60_000 }, async ({ e2e, browser }) => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${e2e.host.url}/api/dashboard`);
    await page.locator("#tuning[data-ready=true]").waitFor();
    // Step timeout 30 s → 60 s (two stops), the Supervisor every 15 s → 30 s (two stops).
    for (const [name, stops] of [
      ["Step timeout", 2],
      ["Supervisor sweep every", 2],
    ] as const) {
      await page.getByRole("slider", { name }).focus();
      for (let i = 0; i < stops; i++) await page.keyboard.press("ArrowRight");
    }
    await page.locator("#tuning-apply code").nth(1).waitFor();
    await page.locator("#tuning").screenshot({ path: OUTPUT });
  });
});
