/**
 * Continuation tokens outlive the instance that gave them: a page one app process gave, a process started after it
 * with the same PAGING_TOKEN_KEY continues (the platform may send each call of a page-through to any instance, or
 * to one restarted since), a process with another key refuses, and one rotated from it (the old key as
 * PAGING_TOKEN_PREVIOUS_KEY) still continues. The apps run in child processes on one stack, each with its settings.
 */
import { createHmac } from "node:crypto";
import { expect } from "vitest";
import { sampleSettings } from "../../tools/repository";
import { e2eOrder } from "../support/e2eOrders";
import { submitTo, type AppProcess } from "../support/e2eChild";
import { childStackTest as it } from "../support/fixtures";

interface OrderPage {
  items: { orderId: string }[];
  continuation: string | null;
}

async function list(app: AppProcess, query: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${app.url}/api/orders?${query}`);
  return { status: res.status, body: await res.json() };
}

const ids = (page: unknown) => (page as OrderPage).items.map((item) => item.orderId);

/** Only the listing: nothing else runs, so the records stay where the first instance left them. */
const LISTING_ONLY = ["httpApi-listOrders"];
const SHIPPED_KEY = sampleSettings().PAGING_TOKEN_KEY!;
const ROTATED_KEY = "the-paging-key-after-a-rotation-of-the-shipped-one";

it("continues a page another instance gave with the same key, refuses it with another, and reads it after a rotation", async ({
  stack,
}) => {
  const first = await stack.startApp();
  const orders = [e2eOrder("PAGED"), e2eOrder("PAGED"), e2eOrder("PAGED")];
  for (const order of orders) expect((await submitTo(first, order)).status).toBe(202);
  // A finished order is written no more: the pages keep their places.
  for (const order of orders) await stack.waitForState(order.orderId, ["Processed"]);
  const all = await list(first, "limit=3");
  expect(ids(all.body).sort()).toEqual(orders.map((o) => o.orderId).sort());
  const page1 = await list(first, "limit=1");
  expect(ids(page1.body)).toEqual(ids(all.body).slice(0, 1));
  const token = (page1.body as OrderPage).continuation!;
  expect(token).toEqual(expect.any(String));
  await first.kill();

  const next = `limit=1&continuation=${encodeURIComponent(token)}`;
  const sameKey = await stack.startApp({ functions: LISTING_ONLY });
  const page2 = await list(sameKey, next);
  expect(page2.status).toBe(200);
  expect(ids(page2.body)).toEqual(ids(all.body).slice(1, 2));
  await sameKey.kill();

  const otherKey = await stack.startApp({
    functions: LISTING_ONLY,
    settings: { PAGING_TOKEN_KEY: ROTATED_KEY },
  });
  expect(await list(otherKey, next)).toEqual({
    status: 400,
    body: {
      error: expect.stringMatching(
        /^continuation: expected the continuation of a previous page of this listing, got ".{40}"\.\.\. \(\d+ characters\): not issued by this API \(its signature does not match\)$/,
      ),
    },
  });
  await otherKey.kill();

  const rotated = await stack.startApp({
    functions: LISTING_ONLY,
    settings: { PAGING_TOKEN_KEY: ROTATED_KEY, PAGING_TOKEN_PREVIOUS_KEY: SHIPPED_KEY },
  });
  const carriedOn = await list(rotated, next);
  expect(carriedOn.status).toBe(200);
  expect(ids(carriedOn.body)).toEqual(ids(all.body).slice(1, 2));
  // What it gives is signed with the current key, and leads on to the last page.
  const last = (carriedOn.body as OrderPage).continuation!;
  const [position, signature] = last.split(".");
  expect(signature).toBe(createHmac("sha256", ROTATED_KEY).update(position!).digest("base64url"));
  expect(ids((await list(rotated, `limit=1&continuation=${encodeURIComponent(last)}`)).body)).toEqual(
    ids(all.body).slice(2),
  );
});
