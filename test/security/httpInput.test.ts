/**
 * Hostile and careless input over HTTP: ids in routes, listing parameters, bodies under the wrong content type,
 * amounts and codes that only look valid. Each gets a 4xx that names the problem (never a 500), and changes
 * nothing: the order, its state record and the ledger are what they were. Responses carry no store internals.
 */
import { createHmac } from "node:crypto";
import net from "node:net";
import { describe, expect } from "vitest";
import { type E2E } from "../support/e2e";
import { e2eOrder, orderSnapshot } from "../support/e2eOrders";
import { e2eTest } from "../support/fixtures";

const it = e2eTest().extend<{ $file: { known: string } }>({
  // The id of a processed order: what the hostile requests aim at, and must leave as it was.
  known: [
    async ({ e2e }, use) => {
      const order = e2eOrder("KNOWN");
      expect((await e2e.submit(order)).status).toBe(202);
      await e2e.waitForState(order.orderId, ["Processed"]);
      await use(order.orderId);
    },
    { scope: "file" },
  ],
});

const error = async (res: Response): Promise<string> => ((await res.json()) as { error: string }).error;

interface OrderPage {
  items: { orderId: string }[];
  continuation: string | null;
}
const ids = (page: OrderPage) => page.items.map((item) => item.orderId);

/** Sends raw bytes, for what fetch would normalise away (a backslash, a '#'); returns the status line's code. */
function rawStatus(e2e: E2E, requestLine: string): Promise<number> {
  const { hostname, port } = new URL(e2e.host.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`${requestLine}\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`);
    });
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.on("error", reject);
  });
}

describe("ids in routes", () => {
  const badIds = [
    "a%2Fb",
    "a%5Cb",
    "a%23b",
    "a%00b",
    "a%0Ab",
    "%2E%2Ea",
    "a%20b",
    "%C3%A9t%C3%A9",
    "x".repeat(65),
  ];
  const routes = [
    ["GET", (id: string) => `/api/orders/${id}`],
    ["GET", (id: string) => `/api/orders/${id}/status`],
    ["GET", (id: string) => `/api/orders/${id}/orchestration`],
    ["GET", (id: string) => `/api/orders/${id}/trace`],
    ["POST", (id: string) => `/api/orders/${id}/retry`],
    ["POST", (id: string) => `/api/orders/${id}/cancel`],
  ] as const;

  it("answer 400 naming the orderId for '/', '\\\\', '#', NUL, a newline, '..', a space, non-ASCII, 65 characters", async ({
    e2e,
    known,
  }) => {
    const before = await orderSnapshot(e2e, known);
    for (const [method, path] of routes) {
      for (const id of badIds) {
        const res = await e2e.api(path(id), {
          method,
          ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}),
        });
        expect(res.status, `${method} ${path(id)}`).toBe(400);
        expect(await error(res), `${method} ${path(id)}`).toMatch(
          /^orderId \(in the path\): expected 1-64 letters/,
        );
      }
    }
    expect(await orderSnapshot(e2e, known)).toEqual(before);
  });

  it("never reach the app as another path: a raw backslash or '#' is not found, not an error", async ({
    e2e,
    known,
  }) => {
    // The host reads a backslash as a separator and cuts the fragment: other paths, neither a 5xx.
    expect(await rawStatus(e2e, `GET /api/orders/${known}\\x HTTP/1.1`)).toBe(404);
    expect(await rawStatus(e2e, `GET /api/orders/NOPE#${known} HTTP/1.1`)).toBe(404);
  });

  it("still find a real order", async ({ e2e, known }) => {
    expect((await e2e.api(`/api/orders/${known}`)).status).toBe(200);
    expect((await e2e.api(`/api/orders/${known}/status`)).status).toBe(200);
  });
});

describe("listing parameters", () => {
  const PREFIX = /^continuation: expected the continuation of a previous page of this listing, got .+: /;

  it("refuse hand-made, re-signed, edited, truncated and garbage continuation tokens with 400 naming why, never a page", async ({
    e2e,
  }) => {
    for (let i = 0; i < 3; i++) expect((await e2e.submit(e2eOrder("LIST"))).status).toBe(202);
    const first = (await (await e2e.api("/api/orders?limit=1")).json()) as OrderPage;
    const [text, signature] = first.continuation!.split(".") as [string, string];
    // The position of a real record, as a client could read it out of the token.
    const position = JSON.parse(Buffer.from(text, "base64url").toString()) as Record<string, string>;
    expect(Object.keys(position).sort()).toEqual(["orderId", "updatedAt"]);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const signedWith = (key: string, value: string) =>
      `${value}.${createHmac("sha256", key).update(value).digest("base64url")}`;
    const unsigned = "not issued by this API (it carries no signature)";
    const mismatch = "not issued by this API (its signature does not match)";
    const malformed = "malformed (expected <position>.<signature>, both base64url)";
    const tokens: Record<string, [string, string]> = {
      "a real position, hand-made and unsigned": [encode(position), unsigned],
      "a real position, signed with another key": [
        signedWith("a-key-that-is-not-this-api's-key", text),
        mismatch,
      ],
      "an edited id, the signature kept": [
        `${encode({ ...position, orderId: "x' OR 1=1 --" })}.${signature}`,
        mismatch,
      ],
      "an extra field, the signature kept": [`${encode({ ...position, skip: 1000 })}.${signature}`, mismatch],
      "an edited timestamp, the signature kept": [
        `${encode({ ...position, updatedAt: "yesterday" })}.${signature}`,
        mismatch,
      ],
      "the signature of another position": [
        `${encode({ ...position, orderId: "OTHER" })}.${signature}`,
        mismatch,
      ],
      truncated: [first.continuation!.slice(0, -4), malformed],
      "no signature": [text, unsigned],
      garbage: ["!!!not-a-token!!!", malformed],
      "not base64 JSON": [Buffer.from("hello").toString("base64url"), unsigned],
      "a Cosmos DB token": [
        encode([{ compositeToken: "-RID:~abc", orderByItems: [], rid: "abc", skipCount: 0 }]),
        unsigned,
      ],
      empty: ["", malformed],
    };
    for (const [name, [token, why]] of Object.entries(tokens)) {
      const res = await e2e.api(`/api/orders?limit=1&continuation=${encodeURIComponent(token)}`);
      expect(res.status, name).toBe(400);
      const message = await error(res);
      expect(message, name).toMatch(PREFIX);
      expect(message.endsWith(`: ${why}`), `${name}: ${message}`).toBe(true);
    }
  });

  it("continue from the token of the previous page, as the API gave it", async ({ e2e }) => {
    for (let i = 0; i < 3; i++) expect((await e2e.submit(e2eOrder("PAGE"))).status).toBe(202);
    // Listed at one moment and then page by page: the same orders, in the same order, while nothing moves them.
    await expect
      .poll(
        async () => {
          const two = (await (await e2e.api("/api/orders?limit=2")).json()) as OrderPage;
          const page1 = (await (await e2e.api("/api/orders?limit=1")).json()) as OrderPage;
          const page2 = (await (
            await e2e.api(`/api/orders?limit=1&continuation=${encodeURIComponent(page1.continuation!)}`)
          ).json()) as OrderPage;
          return { listed: ids(two), paged: [...ids(page1), ...ids(page2)] };
        },
        { timeout: 20_000, interval: 200, message: "pages 1 and 2 are the first two orders" },
      )
      .toSatisfy(({ listed, paged }) => listed.length === 2 && paged.join() === listed.join());
  });

  it("refuse a bad limit or state naming it", async ({ e2e }) => {
    for (const limit of ["0", "101", "abc", "1e2", "-1", "2.5"]) {
      const res = await e2e.api(`/api/orders?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(await error(res), limit).toContain(
        `limit: expected a whole number from 1 to 100, got "${limit}"`,
      );
    }
    const res = await e2e.api("/api/orders?state=Bogus");
    expect(res.status).toBe(400);
    expect(await error(res)).toContain("state: expected one of Pending, Processing");
  });
});

describe("bodies", () => {
  it("refuse valid JSON under any content type but application/json with 415", async ({ e2e }) => {
    for (const contentType of [
      undefined,
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/json; charset=iso-8859-1",
      "application/jsonp",
    ]) {
      const order = e2eOrder("CTYPE");
      const res = await e2e.api("/api/orders", {
        method: "POST",
        // A Blob body keeps fetch from adding a content type of its own.
        body: new Blob([JSON.stringify(order)]),
        ...(contentType ? { headers: { "content-type": contentType } } : {}),
      });
      expect(res.status, String(contentType)).toBe(415);
      expect(await error(res), String(contentType)).toMatch(/^content-type: /);
      expect((await e2e.api(`/api/orders/${order.orderId}`)).status, String(contentType)).toBe(404);
    }
    for (const contentType of ["application/json; charset=utf-8", "Application/JSON"]) {
      const res = await e2e.api("/api/orders", {
        method: "POST",
        headers: { "content-type": contentType },
        body: JSON.stringify(e2eOrder("CTYPE-OK")),
      });
      expect(res.status, contentType).toBe(202);
    }
  });

  it("refuse amounts that are zero, too large, or have a total out of range, saying the range", async ({
    e2e,
  }) => {
    const item = (quantity: number, unitPrice: number) => ({ sku: "SKU-1", quantity, unitPrice });
    const cases: Array<[unknown[], string, string]> = [
      [[item(1, 0)], "items.0.unitPrice", "expected an amount from 0.01 to 1000000"],
      [[item(1, 1e308)], "items.0.unitPrice", "expected an amount from 0.01 to 1000000"],
      [[item(10_000, 1_000_000)], "items.0", "expected quantity × unitPrice at most 10000000"],
      [
        Array.from({ length: 11 }, () => item(1, 1_000_000)),
        "items",
        "expected an order total at most 10000000",
      ],
    ];
    for (const [items, path, message] of cases) {
      const order = e2eOrder("AMOUNT", { items });
      const res = await e2e.submit(order);
      expect(res.status, message).toBe(400);
      expect(await error(res), message).toContain(`${path}: ${message}`);
    }
    const yen = await e2e.submit(e2eOrder("YEN", { currency: "JPY", items: [item(1, 9.99)] }));
    expect(await error(yen)).toBe("items.0.unitPrice: expected at most 0 decimal places for JPY");
  });

  it("refuse prices below a cent, in exponent form too, and store nothing", async ({ e2e }) => {
    for (const unitPrice of [1e-9, 0.009999999, 1.5e-7]) {
      const order = e2eOrder("CENT", { items: [{ sku: "SKU-1", quantity: 1, unitPrice }] });
      const res = await e2e.submit(order);
      expect(res.status, String(unitPrice)).toBe(400);
      expect(await error(res), String(unitPrice)).toBe(
        "items.0.unitPrice: expected an amount from 0.01 to 1000000",
      );
      expect((await e2e.api(`/api/orders/${order.orderId}`)).status, String(unitPrice)).toBe(404);
    }
    const yen = e2eOrder("YEN-CENT", {
      currency: "JPY",
      items: [{ sku: "SKU-1", quantity: 1, unitPrice: 0.5 }],
    });
    const res = await e2e.submit(yen);
    expect(res.status).toBe(400);
    expect(await error(res)).toBe("items.0.unitPrice: expected at most 0 decimal places for JPY");
    expect((await e2e.api(`/api/orders/${yen.orderId}`)).status).toBe(404);
  });

  it("refuse a currency withdrawn from use that the platform still knows (HRK), and take current ones", async ({
    e2e,
  }) => {
    const kuna = e2eOrder("HRK", { currency: "HRK" });
    const res = await e2e.submit(kuna);
    expect(res.status).toBe(400);
    expect(await error(res)).toBe(
      'currency: expected an ISO 4217 code of a currency in use, such as EUR, got "HRK"',
    );
    expect((await e2e.api(`/api/orders/${kuna.orderId}`)).status).toBe(404);
    for (const currency of ["SLE", "ZWG"]) {
      expect((await e2e.submit(e2eOrder("CUR-OK", { currency }))).status, currency).toBe(202);
    }
  });

  it("refuse a body that is not UTF-8 with 400 naming where, storing nothing; read one with a BOM", async ({
    e2e,
  }) => {
    const post = (body: Uint8Array) =>
      e2e.api("/api/orders", { method: "POST", headers: { "content-type": "application/json" }, body });
    const shippingAddress = { line1: "1 Hauptstraße", city: "Zürich", postalCode: "8001", country: "CH" };
    const latin1 = e2eOrder("LATIN1", { shippingAddress });
    const text = JSON.stringify(latin1);
    const res = await post(Buffer.from(text, "latin1"));
    expect(res.status).toBe(400);
    expect(await error(res)).toBe(
      `body: expected UTF-8, got bytes that are not UTF-8 at byte offset ${text.indexOf("ß")}`,
    );
    expect((await e2e.api(`/api/orders/${latin1.orderId}`)).status).toBe(404);

    const bom = e2eOrder("BOM", { shippingAddress });
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(bom))]);
    expect((await post(withBom)).status).toBe(202);
    const stored = (await (await e2e.api(`/api/orders/${bom.orderId}`)).json()) as {
      order: { shippingAddress: unknown };
    };
    expect(stored.order.shippingAddress).toEqual(shippingAddress);
  });

  it("refuse currency and country codes that only look like codes", async ({ e2e }) => {
    for (const currency of ["ZZZ", "ABC", "XXX"]) {
      const res = await e2e.submit(e2eOrder("CUR", { currency }));
      expect(res.status, currency).toBe(400);
      expect(await error(res), currency).toMatch(/^currency: expected an ISO 4217 code of a currency in use/);
    }
    for (const country of ["ZZ", "UK", "EU", "QQ"]) {
      const shippingAddress = { line1: "1 Main St", city: "Berlin", postalCode: "10115", country };
      const res = await e2e.submit(e2eOrder("CTRY", { shippingAddress }));
      expect(res.status, country).toBe(400);
      expect(await error(res), country).toMatch(/^shippingAddress\.country: expected an ISO 3166-1 alpha-2/);
    }
  });

  it("refuse a replyTo that has the prefix but is not a status queue that exists", async ({ e2e }) => {
    const res = await e2e.submit(e2eOrder("REPLYTO", { replyTo: "status-attacker" }));
    expect(res.status).toBe(400);
    expect(await error(res)).toBe(
      'replyTo: expected one of the status queues status-demo, got "status-attacker"',
    );
  });

  it("describe a body that is not an object instead of echoing it", async ({ e2e }) => {
    for (const [body, described] of [
      ["[1,2,3]", "(root): JSON array of 3 items, expected a JSON object"],
      ['"ORD-1"', "(root): text body of 5 characters, expected a JSON object"],
      ["42", "(root): JSON number body, expected a JSON object"],
      ["null", "(root): JSON null body, expected a JSON object"],
    ]) {
      const res = await e2e.api("/api/orders", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(await error(res), body).toBe(described);
    }
  });

  it("keep a refusal short whatever the body holds", async ({ e2e }) => {
    const items = Array.from({ length: 100 }, () => ({
      sku: "",
      quantity: -1,
      unitPrice: "free",
      extra: "x".repeat(300),
    }));
    const res = await e2e.submit(e2eOrder("MANY-ERRORS", { items }));
    expect(res.status).toBe(400);
    const text = await error(res);
    expect(text.length).toBeLessThanOrEqual(1024);
    expect(text).toMatch(/and \d+ more problem\(s\)$/);
  });
});

describe("responses", () => {
  const STORE_FIELDS = ["_rid", "_self", "_ts", "_etag", "_attachments"];

  it("show no store internals in an order, its state or a listing", async ({ e2e, known }) => {
    const detail = (await (await e2e.api(`/api/orders/${known}`)).json()) as Record<
      string,
      Record<string, unknown>
    >;
    for (const part of ["order", "state"]) {
      for (const field of STORE_FIELDS)
        expect(Object.keys(detail[part]!), `${part}.${field}`).not.toContain(field);
    }
    const list = (await (await e2e.api("/api/orders?limit=100")).json()) as {
      items: Array<Record<string, unknown>>;
    };
    expect(list.items.length).toBeGreaterThan(0);
    for (const item of list.items)
      for (const field of STORE_FIELDS) expect(Object.keys(item)).not.toContain(field);
    const status = (await (await e2e.api(`/api/orders/${known}/status`)).json()) as Record<string, unknown>;
    expect(Object.keys(status).sort()).toEqual([
      "createdAt",
      "orderId",
      "processState",
      "statusMessages",
      "updatedAt",
    ]);
  });
});
