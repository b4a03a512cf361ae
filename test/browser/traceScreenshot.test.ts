/**
 * Regenerates docs/trace.png: the dashboard's trace view of an order the Supervisor recovered. Its charge fails on
 * every call of attempt 1, the agent replies transient, the attempt ends with a deadline notice, and attempt 2
 * finishes the order, all in the order's one trace. It writes a file in docs/, so it runs only on request, as the
 * dashboard's screenshot does:
 *
 *   DASHBOARD_SCREENSHOT=1 npx vitest run test/browser/traceScreenshot.test.ts
 */
import path from "node:path";
import { describe, expect } from "vitest";
import type { Browser } from "playwright-core";
import { submitRecoveredOrder } from "../support/e2eOrders";
import { e2eTest } from "../support/fixtures";
import { chromiumFixture, chromiumPath } from "./chromium";

const OUTPUT = path.resolve(__dirname, "..", "..", "docs", "trace.png");
const requested = process.env.DASHBOARD_SCREENSHOT === "1";

const it = e2eTest({ LOCAL_TRACING: "memory" }).extend<{ $file: { browser: Browser } }>({
  browser: [chromiumFixture, { scope: "file" }],
});

describe.runIf(requested && chromiumPath)("docs/trace.png (DASHBOARD_SCREENSHOT=1)", () => {
  it("captures the trace of a recovered order", { timeout: 60_000 }, async ({ e2e, browser }) => {
    const order = await submitRecoveredOrder(e2e, "ORD-TRACED");
    // Until the last reply of attempt 2 has been processed: four replies, each recorded where it was processed
    // (each attempt's claim dispatched its first step), and no activity.
    const replies = async () => {
      const res = await e2e.api(`/api/orders/${encodeURIComponent(order.orderId)}/trace`);
      const names = res.ok
        ? ((await res.json()) as { spans: { name: string }[] }).spans.map((s) => s.name)
        : [];
      return [
        names.filter((n) => n.startsWith("activity ")).length,
        names.filter((n) => n === "process agent-replies").length,
      ];
    };
    await expect.poll(replies, { timeout: 10_000 }).toEqual([0, 4]);
    const spans = (
      (await (await e2e.api(`/api/orders/${order.orderId}/trace`)).json()) as { spans: unknown[] }
    ).spans.length;

    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${e2e.host.url}/api/dashboard?order=${encodeURIComponent(order.orderId)}`);
    await expect
      .poll(() => page.locator("#trace table.trace tbody tr").count(), { timeout: 15_000 })
      .toBe(spans);
    // The whole waterfall, not the scrolled box the page keeps it in (CSSOM: the page's CSP allows no new style).
    await page
      .locator("#trace .scroll")
      .evaluate((box) => ((box as unknown as { style: { maxHeight: string } }).style.maxHeight = "none"));
    await page.locator("#trace").screenshot({ path: OUTPUT });
  });
});
