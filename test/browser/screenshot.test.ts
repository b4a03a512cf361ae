/**
 * Regenerates docs/dashboard.png from a realistic state: a dozen orders, processed, compensated, recovered by the
 * Supervisor, in Error, in CompensationFailed and one still in flight, with the recovered one opened. It writes a
 * file in docs/, so it runs only on request:
 *
 *   DASHBOARD_SCREENSHOT=1 npx vitest run test/browser/screenshot.test.ts
 */
import path from "node:path";
import { describe, expect } from "vitest";
import type { Browser } from "playwright-core";
import { orderWorkflowV1 } from "../../src/domain";
import { e2eOrder } from "../support/e2eOrders";
import { faultOn } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { chromiumFixture, chromiumPath } from "./chromium";

const OUTPUT = path.resolve(__dirname, "..", "..", "docs", "dashboard.png");
const requested = process.env.DASHBOARD_SCREENSHOT === "1";

// A long step deadline keeps the hung order visibly in flight, with its countdown running.
const it = e2eTest({
  AGENT_MAX_ATTEMPTS: "1",
  STEP_TIMEOUT_SECONDS: "300",
  AGENT_ATTEMPT_TIMEOUT_SECONDS: "240",
  DASHBOARD_SIMULATOR_URL: "http://127.0.0.1:7081",
}).extend<{ $file: { browser: Browser } }>({ browser: [chromiumFixture, { scope: "file" }] });

describe.runIf(requested && chromiumPath)("docs/dashboard.png (DASHBOARD_SCREENSHOT=1)", () => {
  it(
    "captures the dashboard with orders in several states",
    { timeout: 120_000 },
    async ({ e2e, browser }) => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      await page.goto(`${e2e.host.url}/`);

      const recovered = e2eOrder("ORD-RECOVERED");
      const failing = e2eOrder("ORD-ERROR");
      const stuckUndo = e2eOrder("ORD-UNDO", { items: [{ sku: "SKU-20", quantity: 50, unitPrice: 249 }] });
      const inFlight = e2eOrder("ORD-INFLIGHT");
      await e2e.faults.add({
        service: "payment",
        operation: "charge",
        orderId: recovered.orderId,
        kind: "transient",
        count: 1,
      });
      await e2e.faults.add({ service: "inventory", orderId: failing.orderId, kind: "transient" });
      await e2e.faults.add({
        service: "inventory",
        operation: "release",
        orderId: stuckUndo.orderId,
        kind: "permanent",
      });
      // In flight at its last step, whose call never answers.
      await e2e.faults.add({
        ...faultOn(orderWorkflowV1.steps.length - 1),
        orderId: inFlight.orderId,
        kind: "hang",
      });

      await page.getByRole("spinbutton", { name: "Orders" }).fill("7");
      await page.getByRole("button", { name: "Submit sample orders" }).click();
      await page.locator("#sample-ids li").nth(6).waitFor();
      await page.getByLabel("Over the payment limit").check();
      await page.getByRole("spinbutton", { name: "Orders" }).fill("2");
      await page.getByRole("button", { name: "Submit sample orders" }).click();
      await page.locator("#sample-ids li").nth(1).waitFor();
      for (const order of [recovered, failing, stuckUndo, inFlight])
        expect((await e2e.submit(order)).status).toBe(202);

      await e2e.waitForState(failing.orderId, ["Error"], 60_000);
      await e2e.waitForState(stuckUndo.orderId, ["CompensationFailed"], 60_000);
      await e2e.waitForState(recovered.orderId, ["Processed"], 60_000);
      await e2e.waitForState(inFlight.orderId, ["Processing"], 60_000);
      await page.waitForFunction('document.querySelectorAll("#orders-body tr[data-order-id]").length === 13');

      await page.locator(`tr[data-order-id="${recovered.orderId}"] button`).click();
      await page.locator("#audit-trail").waitFor();
      await page.evaluate("window.scrollTo(0, 0)");
      await page.waitForTimeout(2500); // one more refresh, so the counts and countdowns are current
      const states = await page
        .locator("#orders-body tr[data-order-id]")
        .evaluateAll((rows) => [...new Set(rows.map((r) => r.getAttribute("data-state")))]);
      expect(new Set(states)).toEqual(
        new Set(["Processed", "Compensated", "Processing", "Error", "CompensationFailed"]),
      );
      await page.screenshot({ path: OUTPUT, fullPage: true });
    },
  );
});
