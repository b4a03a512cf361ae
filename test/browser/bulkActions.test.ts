/**
 * The dashboard's bulk actions in headless Chromium against the whole app on the devhost: a dry run from the
 * panel counts the orders a filter matches, and Retry all pages through them, one call per page, until the API
 * says none is left. Orders reach Error in two failed calls (AGENT_MAX_ATTEMPTS=1, SUPERVISOR_MAX_FAILURES=1),
 * one order per step of the declared process, so no circuit breaker opens.
 */
import type { Browser, Page } from "playwright-core";
import { describe, expect } from "vitest";
import { orderWorkflowV1, type StateRecord } from "../../src/domain";
import { E2E_OPERATOR, type E2E, type FaultSpec } from "../support/e2e";
import { e2eOrder, forOrder, submitWithFaults } from "../support/e2eOrders";
import { faultOn } from "../support/expectedProcess";
import { e2eTest } from "../support/fixtures";
import { NO_CHROMIUM, chromiumFixture, chromiumPath } from "./chromium";

const it = e2eTest({ AGENT_MAX_ATTEMPTS: "1", SUPERVISOR_MAX_FAILURES: "1" }).extend<{
  $file: { browser: Browser; page: Page; pageErrors: string[] };
}>({
  browser: [chromiumFixture, { scope: "file" }],
  pageErrors: [async ({}, use) => use([]), { scope: "file" }],
  page: [
    async ({ browser, pageErrors }, use) => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      page.on("console", (message) => {
        if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
          pageErrors.push(message.text());
      });
      await use(page);
    },
    { scope: "file" },
  ],
});

/** The failing call of each order: one order per step of the declared process, each failing at its own step. */
const FAILING: Array<Pick<FaultSpec, "service" | "operation">> = orderWorkflowV1.steps.map((_, i) =>
  faultOn(i),
);
/** How many orders the dry run matches and Retry all pages through, one per call. */
const COUNT = FAILING.length;

interface BulkAnswer {
  dryRun: boolean;
  acted: number;
  continuation: string | null;
}

const result = (page: Page) => page.locator("#bulk-result").textContent();

/** What the datetime-local input takes for an instant: the browser's local time, to the second (rounded down). */
const localSecond = (page: Page, iso: string): Promise<string> =>
  page.evaluate((at) => {
    const d = new Date(at);
    const pad = (n: number) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }, iso);

async function ordersInError(e2e: E2E, prefix: string): Promise<StateRecord[]> {
  const orders = FAILING.map(() => e2eOrder(prefix));
  for (const [i, order] of orders.entries()) {
    await submitWithFaults(e2e, order, { ...FAILING[i]!, kind: "transient" });
  }
  return Promise.all(
    orders.map((o) =>
      e2e.waitForRecord(
        o.orderId,
        (r) => r.processState === "Error" && !!r.alert?.sentAt,
        "Error, alerted",
        40_000,
      ),
    ),
  );
}

describe.skipIf(!chromiumPath)(
  `dashboard bulk actions in headless Chromium${chromiumPath ? "" : ` (${NO_CHROMIUM})`}`,
  () => {
    it(
      "counts the matching orders in a dry run, then retries them all, a page per call, showing the counts",
      { timeout: 120_000 },
      async ({ e2e, page, pageErrors, alerts }) => {
        const start = new Date().toISOString();
        // Paging needs a second page: two orders at least, so two steps.
        expect(COUNT, "orders in Error, one per step").toBeGreaterThanOrEqual(2);
        const fine = e2eOrder("BULK-PAGE-FINE");
        expect((await e2e.submit(fine)).status).toBe(202);
        await e2e.waitForState(fine.orderId, ["Processed"]);
        const failed = await ordersInError(e2e, "BULK-PAGE");
        const ids = failed.map((r) => r.orderId);
        for (const id of ids) await alerts.waitFor(forOrder(id));

        await page.goto(`${e2e.host.url}/api/dashboard`);
        await expect.poll(() => page.locator("#connection").textContent()).toContain("Live");
        const panel = page.getByRole("region", { name: "Bulk actions" });
        expect(await panel.getByRole("button", { name: "Retry all" }).isDisabled()).toBe(true);
        expect(await panel.getByRole("button", { name: "Cancel all" }).isDisabled()).toBe(true);
        await expect.poll(() => page.locator("#bulk-max-in-flight").textContent()).toBe("50");

        // The API's refusal is shown as it gave it.
        await panel.getByLabel("In state").selectOption("Error");
        await panel.getByLabel("Error code").fill("not a code");
        await panel.getByLabel("Updated since").fill(await localSecond(page, start));
        await panel.getByRole("button", { name: "Dry run" }).click();
        await expect
          .poll(() => result(page))
          .toMatch(/^Dry run refused: HTTP 400, filter\.errorCode: expected a letter/);

        await panel.getByLabel("Error code").fill("RetriesExhausted");
        await panel.getByRole("button", { name: "Dry run" }).click();
        await expect.poll(() => result(page)).toMatch(new RegExp(`^${COUNT} orders match, as of `));
        expect((await page.locator("#bulk-sample button").allTextContents()).sort()).toEqual([...ids].sort());
        expect(await panel.getByRole("button", { name: "Retry all" }).isEnabled()).toBe(true);
        expect(await panel.getByRole("button", { name: "Cancel all" }).isEnabled()).toBe(true);
        // Nothing changed: the orders are still in Error.
        for (const id of ids) expect((await e2e.state(id))?.processState).toBe("Error");

        // A changed filter needs a dry run of its own.
        await panel.getByLabel("Error code").fill("CircuitOpen");
        await expect.poll(() => panel.getByRole("button", { name: "Retry all" }).isDisabled()).toBe(true);
        expect(await result(page)).toBe("Filter changed: dry run again.");
        await panel.getByLabel("Error code").fill("RetriesExhausted");
        expect(await panel.getByRole("button", { name: "Retry all" }).isDisabled()).toBe(true);
        await panel.getByRole("button", { name: "Dry run" }).click();
        await expect.poll(() => result(page)).toMatch(new RegExp(`^${COUNT} orders match`));

        await e2e.faults.clear();
        const answers: BulkAnswer[] = [];
        page.on("response", async (response) => {
          if (new URL(response.url()).pathname === "/api/bulk/retry")
            answers.push((await response.json()) as BulkAnswer);
        });
        await panel.getByLabel("Page size").fill("1");
        await panel.getByLabel("Reason").fill("payment is back");
        await panel.getByRole("button", { name: "Retry all" }).click();
        await expect
          .poll(() => result(page), { timeout: 20_000 })
          .toBe(`Retry all done: acted ${COUNT} of ${COUNT}.`);
        // The page's listener reads each answer's body on its own time.
        await expect.poll(() => answers.length).toBe(COUNT);
        // One order per page, each page but the last with a continuation.
        expect(answers.map((a) => [a.dryRun, a.acted, a.continuation !== null])).toEqual(
          Array.from({ length: COUNT }, (_, i) => [false, 1, i < COUNT - 1]),
        );
        const progress = page.locator("#bulk-progress");
        expect([await progress.getAttribute("value"), await progress.getAttribute("max")]).toEqual([
          String(COUNT),
          String(COUNT),
        ]);
        expect(await panel.getByRole("button", { name: "Retry all" }).isDisabled()).toBe(true);
        expect(await page.locator("#bulk-sample button").allTextContents()).toEqual(
          [...failed]
            .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.orderId.localeCompare(a.orderId))
            .map((r) => r.orderId),
        );

        for (const id of ids) {
          const done = await e2e.waitForState(id, ["Processed"], 40_000);
          expect(done.history).toContainEqual(
            expect.objectContaining({
              event: "operatorRetry",
              by: `operator:${E2E_OPERATOR.name} (${E2E_OPERATOR.id})`,
              detail: "bulk retry: payment is back",
            }),
          );
        }
        expect(pageErrors).toEqual([]);
      },
    );
  },
);
