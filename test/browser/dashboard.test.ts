/**
 * The operator dashboard in headless Chromium against the whole app on the devhost: one test per scenario, in
 * one browser page, as an operator would use it. The agent makes one call per step here
 * (AGENT_MAX_ATTEMPTS=1), so that a fault on one call fails the step and the Supervisor's recovery shows. The
 * shared circuit breaker opens only on failures from several orders: in the outage scenario, not the Error one.
 */
import type { Browser, Page } from "playwright-core";
import { describe, expect } from "vitest";
import {
  AGENT_NAMES,
  orderWorkflowV1,
  PROCESS_STATES,
  type ProcessState,
  type StateRecord,
} from "../../src/domain";
import { E2E_OPERATOR, type E2E } from "../support/e2e";
import { e2eOrder, submitWithFaults } from "../support/e2eOrders";
import { processedStatuses } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { NO_CHROMIUM, chromiumFixture, chromiumPath } from "./chromium";

const it = e2eTest({ AGENT_MAX_ATTEMPTS: "1", DASHBOARD_SIMULATOR_URL: "http://127.0.0.1:7081" }).extend<{
  $file: { browser: Browser; page: Page; pageErrors: string[] };
}>({
  browser: [chromiumFixture, { scope: "file" }],
  /** What went wrong in the page's own code, across the file. */
  pageErrors: [async ({}, use) => use([]), { scope: "file" }],
  /** The one page every test uses, as an operator keeps the dashboard open. */
  page: [
    async ({ browser, pageErrors }, use) => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      // Errors of the page's own code; answers such as a 404 or a refused retry are the page's business to show.
      page.on("console", (message) => {
        if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
          pageErrors.push(message.text());
      });
      await use(page);
    },
    { scope: "file" },
  ],
});

/** The declared process's steps (src/domain/process.ts). */
const STEPS = orderWorkflowV1.steps;

const row = (page: Page, orderId: string) => page.locator(`#orders-body tr[data-order-id="${orderId}"]`);
const rowState = async (page: Page, orderId: string) =>
  (await row(page, orderId).count()) ? row(page, orderId).getAttribute("data-state") : null;
const cell = (page: Page, orderId: string, name: string) =>
  row(page, orderId).locator(`td.${name}`).textContent();
const pageCounts = async (page: Page): Promise<Record<string, number>> =>
  Object.fromEntries(
    await Promise.all(
      PROCESS_STATES.map(async (s) => [s, Number(await page.locator(`#count-${s}`).textContent())] as const),
    ),
  );
const openOrder = async (page: Page, orderId: string) => {
  await row(page, orderId).getByRole("button", { name: orderId }).click();
  await expect.poll(() => page.locator("#detail-id").textContent()).toBe(orderId);
  await page.locator("#audit-trail").waitFor();
};
const auditEvents = (page: Page) =>
  page.locator("#audit-trail tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-event")));

async function waitForAll(e2e: E2E, orderIds: string[], states: ProcessState[]): Promise<StateRecord[]> {
  return Promise.all(orderIds.map((id) => e2e.waitForState(id, states, 40_000)));
}

describe.skipIf(!chromiumPath)(
  `operator dashboard in headless Chromium${chromiumPath ? "" : ` (${NO_CHROMIUM})`}`,
  () => {
    it("loads from / on the devhost, live, with the playground pointed at the simulator", async ({
      e2e,
      page,
      pageErrors,
    }) => {
      const response = await page.goto(`${e2e.host.url}/`);
      expect(response?.status()).toBe(200);
      expect(new URL(page.url()).pathname).toBe("/api/dashboard");
      expect(response?.headers()["content-type"]).toContain("text/html");
      expect(await page.title()).toContain("Operator dashboard");
      await expect.poll(() => page.locator("#connection").textContent()).toContain("Live");
      expect(await page.getByRole("heading", { name: "Orders by state" }).isVisible()).toBe(true);
      expect(await page.locator("#simulator-url").textContent()).toBe(e2e.emulators.simulatorUrl);
      await expect.poll(() => page.locator("#faults").textContent()).toContain("No faults armed");
      expect(await page.getByLabel("State", { exact: true }).locator("option").count()).toBe(
        PROCESS_STATES.length + 1,
      );
      expect(pageErrors).toEqual([]);
    });

    it("shows the counts the operator API reports", { timeout: 60_000 }, async ({ e2e, page }) => {
      const orders = [
        e2eOrder("DASH-COUNT"),
        e2eOrder("DASH-COUNT"),
        e2eOrder("DASH-COUNT", { items: [{ sku: "SKU-9", quantity: 3, unitPrice: 5000 }] }),
      ];
      for (const order of orders) expect((await e2e.submit(order)).status).toBe(202);
      await waitForAll(
        e2e,
        orders.map((o) => o.orderId),
        ["Processed", "Compensated"],
      );

      const stats = (await (await e2e.api("/api/stats")).json()) as {
        counts: Record<ProcessState, number>;
        inFlight: number;
        maxInFlight: number;
        backlog: number;
      };
      expect(stats.counts.Processed).toBeGreaterThanOrEqual(2);
      expect(stats.counts.Compensated).toBeGreaterThanOrEqual(1);
      await expect.poll(() => pageCounts(page), { timeout: 10_000 }).toEqual(stats.counts);
      expect(await page.locator("#in-flight").textContent()).toBe(
        `${stats.inFlight} of ${stats.maxInFlight}`,
      );
      expect(await page.locator("#backlog").textContent()).toBe(`${stats.backlog} of 1000`);

      // The table agrees too: filtering by a state lists exactly that many orders.
      await page.getByLabel("State", { exact: true }).selectOption("Compensated");
      await expect
        .poll(() => page.locator("#orders-body tr[data-order-id]").count())
        .toBe(stats.counts.Compensated);
      await page.getByLabel("State", { exact: true }).selectOption("");
      await expect
        .poll(() => page.locator("#orders-body tr[data-order-id]").count())
        .toBe(Object.values(stats.counts).reduce((a, b) => a + b, 0));
    });

    it(
      "submits a sample order that reaches Processed and is shown so, with its steps, messages and orchestration",
      { timeout: 60_000 },
      async ({ e2e, page }) => {
        await page.getByRole("spinbutton", { name: "Orders" }).fill("1");
        await page.getByRole("button", { name: "Submit sample orders" }).click();
        await expect
          .poll(() => page.locator("#sample-result").textContent())
          .toContain("1 of 1 accepted (202)");
        const orderId = (await page.locator("#sample-ids button").textContent())!;
        expect(orderId).toMatch(/^WEB-/);

        await expect.poll(() => rowState(page, orderId), { timeout: 30_000 }).toBe("Processed");
        expect((await e2e.state(orderId))?.processState).toBe("Processed");
        expect(await cell(page, orderId, "state")).toBe("Processed");

        await openOrder(page, orderId);
        expect(await page.locator("#detail-state").textContent()).toBe("Processed");
        const steps = page.locator("ol.steps > li");
        expect(await steps.count()).toBe(STEPS.length);
        for (const [i, step] of STEPS.entries()) {
          expect(await steps.nth(i).getAttribute("data-step")).toBe(step.name);
          const events = await steps.nth(i).locator("ul.events .what").allTextContents();
          expect(events).toEqual(["dispatched", "succeeded"]);
        }
        expect(await page.locator("#status-messages td.status").allTextContents()).toEqual(
          processedStatuses(),
        );
        await expect.poll(() => page.locator("#orchestration").textContent()).toContain("Completed");
        expect(await page.locator("#orchestration").textContent()).toContain(`${orderId}:1`);
        expect(await page.locator("#retry").isDisabled()).toBe(true);
        expect(await page.locator("#cancel").isDisabled()).toBe(true);

        // Its trace, as a waterfall: the front door first, the remote calls as client spans with their bars.
        const spans = page.locator("#trace table.trace tbody tr");
        // At least the order's own two (the POST, which records the submission, and the attempt, which sends the
        // first request) and five per step (the request's send and delivery, the remote call, the reply's send,
        // and its delivery, which records it and sends the next request).
        await expect
          .poll(() => spans.count(), { timeout: 10_000 })
          .toBeGreaterThanOrEqual(2 + 5 * STEPS.length);
        expect(await spans.first().locator("td.span-name").textContent()).toBe("POST /api/orders");
        expect(await page.locator('#trace tr[data-kind="client"] td.service').allTextContents()).toEqual(
          STEPS.map((s) => s.agent),
        );
        const widths = await page
          .locator("#trace .bar")
          .evaluateAll((bars) => bars.map((b) => (b as unknown as { style: { width: string } }).style.width));
        expect(widths.every((w) => /^\d+(\.\d+)?%$/.test(w))).toBe(true);

        // What the page shows comes from the API, whose derived status messages are the ones the queue got.
        const detail = (await (await e2e.api(`/api/orders/${orderId}`)).json()) as {
          statusMessages: Array<{ status: string; processState: string }>;
        };
        type Sent = { orderId: string; status: string; processState: string };
        const received: Sent[] = [];
        await expect
          .poll(async () => {
            received.push(
              ...((await e2e.drain("status-demo")) as Sent[]).filter((m) => m.orderId === orderId),
            );
            return received.map((m) => m.status);
          })
          .toContain("processed");
        expect(
          detail.statusMessages.map((m) => ({ status: m.status, processState: m.processState })),
        ).toEqual(received.map((m) => ({ status: m.status, processState: m.processState })));

        const orchestration = await e2e.api(`/api/orders/${orderId}/orchestration`);
        expect(orchestration.status).toBe(200);
        expect(await orchestration.json()).toMatchObject({
          instanceId: `${orderId}:1`,
          runtimeStatus: "Completed",
        });
        expect((await e2e.api("/api/orders/NO-SUCH-ORDER/orchestration")).status).toBe(404);
      },
    );

    it(
      "arms a fault from the page and shows the Supervisor's recovery",
      { timeout: 60_000 },
      async ({ e2e, page }) => {
        const order = e2eOrder("DASH-FAULT");
        await page.getByLabel("Service").selectOption("payment");
        await page.getByLabel("Operation").selectOption("charge");
        await page.getByLabel("Kind").selectOption("transient");
        await page.getByLabel("Next calls").fill("1");
        await page.getByLabel("Order id").fill(order.orderId);
        await page.getByRole("button", { name: "Arm fault" }).click();
        await expect
          .poll(() => page.locator("#fault-result").textContent())
          .toMatch(
            new RegExp(`^Armed F-\\d+: transient on payment/charge for ${order.orderId}, next 1 call\\.$`),
          );
        await expect.poll(() => page.locator("#faults tbody tr").count()).toBe(1);

        expect((await e2e.submit(order)).status).toBe(202);
        await expect.poll(() => rowState(page, order.orderId), { timeout: 40_000 }).toBe("Processed");
        // Recovered by a second attempt after one failure, as the table and the audit trail show.
        expect(await cell(page, order.orderId, "attempt")).toBe("2");
        expect(await cell(page, order.orderId, "failures")).toBe("1");
        await openOrder(page, order.orderId);
        await expect.poll(() => auditEvents(page)).toContain("processed");
        const events = await auditEvents(page);
        expect(events).toEqual(expect.arrayContaining(["stepFailedTransient", "expired", "processed"]));
        expect(events.indexOf("expired")).toBeLessThan(events.lastIndexOf("claimed"));
        expect(await page.locator('#audit-trail tr[data-event="expired"] td').nth(2).textContent()).toBe(
          "supervisor",
        );
        const payment = page.locator('ol.steps > li[data-step="chargePayment"] ul.events li');
        expect(await payment.locator(".what").allTextContents()).toEqual(["dispatched", "succeeded"]);
        expect(await payment.first().textContent()).toContain("attempt 2");
        await expect.poll(() => page.locator("#faults tbody tr td.hits").textContent()).toBe("1");
        expect(await page.locator("#faults tbody tr td.remaining").textContent()).toBe("0");

        await page.getByRole("button", { name: "Clear all faults" }).click();
        await expect.poll(() => page.locator("#faults").textContent()).toContain("No faults armed");
      },
    );

    it(
      "retries an Error order from the page once its cause is gone",
      { timeout: 90_000 },
      async ({ e2e, page, pageErrors }) => {
        const order = e2eOrder("DASH-ERROR");
        // Armed on the simulator directly, not through the page.
        const [fault] = await submitWithFaults(e2e, order, { service: "inventory", kind: "transient" });
        await e2e.waitForState(order.orderId, ["Error"], 40_000);
        await e2e.faults.remove(fault!.id);

        await expect.poll(() => rowState(page, order.orderId), { timeout: 10_000 }).toBe("Error");
        expect(await cell(page, order.orderId, "error")).toContain("RetriesExhausted");
        await openOrder(page, order.orderId);
        expect(await page.locator("#retry").isEnabled()).toBe(true);
        expect(await page.locator("#cancel").isEnabled()).toBe(true);
        expect(await page.locator("#status-messages td.status").last().textContent()).toBe("failed");

        await page.getByRole("button", { name: "Retry", exact: true }).click();
        await expect.poll(() => page.locator("#action-result").textContent()).toMatch(/^Retry: 202 Accepted/);
        await expect.poll(() => rowState(page, order.orderId), { timeout: 30_000 }).toBe("Processed");
        expect((await e2e.state(order.orderId))?.processState).toBe("Processed");
        await expect.poll(() => auditEvents(page)).toContain("processed");
        expect(
          await page.locator('#audit-trail tr[data-event="operatorRetry"] td').nth(2).textContent(),
        ).toBe(`operator:${E2E_OPERATOR.name} (${E2E_OPERATOR.id})`);
        expect(await page.locator("#retry").isDisabled()).toBe(true);

        // A retry the API refuses is shown with its answer.
        await page.evaluate('document.getElementById("retry").disabled = false');
        await page.getByRole("button", { name: "Retry", exact: true }).click();
        await expect
          .poll(() => page.locator("#action-result").textContent())
          .toContain("Retry refused: HTTP 409, only Error or CompensationFailed orders can be retried");
        expect(pageErrors).toEqual([]);
      },
    );

    it(
      "shows each service's breaker: payment unavailable during an outage, up again once it answers",
      { timeout: 90_000 },
      async ({ e2e, page, pageErrors }) => {
        await expect.poll(() => page.locator("#service-payment").textContent()).toBe("up");
        const outage = await e2e.faults.add({ service: "payment", kind: "transient", status: 503 });
        const orders = Array.from({ length: 6 }, () => e2eOrder("DASH-OUTAGE"));
        for (const order of orders) expect((await e2e.submit(order)).status).toBe(202);
        await expect
          .poll(() => page.locator("#service-payment").getAttribute("data-state"), { timeout: 30_000 })
          .toBe("open");
        expect(await page.locator("#service-payment").textContent()).toMatch(
          /^unavailable, next probe \d\d:\d\d:\d\d$/,
        );
        for (const service of AGENT_NAMES.filter((s) => s !== "payment"))
          expect(await page.locator(`#service-${service}`).textContent(), service).toBe("up");
        await e2e.faults.remove(outage.id);
        await expect
          .poll(() => page.locator("#service-payment").textContent(), { timeout: 40_000 })
          .toBe("up");
        await waitForAll(
          e2e,
          orders.map((o) => o.orderId),
          ["Processed"],
        );
        expect(pageErrors).toEqual([]);
      },
    );
  },
);
