/**
 * What Application Insights receives of one order, from the app as it runs in Azure: the app on the devhost in a
 * child process with APPLICATIONINSIGHTS_CONNECTION_STRING set, so it starts the Azure Monitor distro, whose real
 * exporter sends to a stand-in for the ingestion endpoint on loopback (tools/ingestionStandIn.ts). Each envelope is
 * billed, so the order's trace holds the app's own spans and its outgoing calls once each, and nothing the worker
 * does not do in Azure: there the Functions host receives and settles the messages and serves the HTTP requests.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { agentRequestQueue, orderWorkflowV1, QUEUES } from "../../src/domain";
import {
  loopbackCertificate,
  startIngestionStandIn,
  type Envelope,
  type IngestionStandIn,
} from "../../tools/ingestionStandIn";
import { submitTo } from "../support/e2eChild";
import { e2eOrder } from "../support/e2eOrders";
import { childStackTest as it } from "../support/fixtures";

const certificate = loopbackCertificate();
let standIn: IngestionStandIn | undefined;
let caDir: string | undefined;
const caBefore = process.env.NODE_EXTRA_CA_CERTS;

beforeAll(async () => {
  if (!certificate) {
    console.log(
      "azureMonitorTrace: skipped, openssl is missing (the exporter needs an https ingestion endpoint)",
    );
    return;
  }
  standIn = await startIngestionStandIn(certificate);
  // The app's process trusts the stand-in's certificate; NODE_EXTRA_CA_CERTS is read when a process starts.
  caDir = fs.mkdtempSync(path.join(os.tmpdir(), "trace-ca-"));
  fs.writeFileSync(path.join(caDir, "ca.pem"), certificate.cert);
  process.env.NODE_EXTRA_CA_CERTS = path.join(caDir, "ca.pem");
});

afterAll(async () => {
  if (caBefore === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
  else process.env.NODE_EXTRA_CA_CERTS = caBefore;
  await standIn?.close();
  if (caDir) fs.rmSync(caDir, { recursive: true, force: true });
});

const nameOf = (e: Envelope) => e.data.baseData.name ?? "";
const count = (names: string[], name: string) => names.filter((n) => n === name).length;

it.skipIf(!certificate)(
  "sends an order's trace as the app's own spans and calls, once each, and none of the host's work",
  async ({ stack }) => {
    const app = await stack.startApp({
      settings: {
        APPLICATIONINSIGHTS_CONNECTION_STRING: `InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=${standIn!.url}`,
        // The distro's own usage reports go to Microsoft's endpoint: not from a test.
        APPLICATIONINSIGHTS_STATSBEAT_DISABLED: "true",
      },
    });
    const order = e2eOrder("TRACE-AZ");
    const orderId = order.orderId;
    expect((await submitTo(app, order)).status).toBe(202);

    const received = () => standIn!.received.map((r) => r.envelope);
    const traceOf = () => {
      const traces = new Set(
        received()
          .filter((e) => e.data.baseData.properties?.["sas.order_id"] === orderId)
          .map((e) => e.tags["ai.operation.id"]),
      );
      return received().filter((e) => traces.has(e.tags["ai.operation.id"]));
    };
    const record = await stack.waitForState(orderId, ["Processed"]);
    // What the order did, from its audit trail: a slow machine may dispatch a step again (a step's deadline is 3 s
    // here), and each dispatch is a send of its own.
    const dispatches = (step: string) =>
      record.history.filter((h) => h.event === "stepDispatched" && h.detail === step).length;
    const replies = `process ${QUEUES.agentReplies}`;
    const steps = orderWorkflowV1.steps.length;
    // The exporter sends in batches, every 5 s at most: wait for the reply router's spans of every step.
    await expect
      .poll(() => count(traceOf().map(nameOf), replies), { timeout: 20_000, interval: 250 })
      .toBeGreaterThanOrEqual(steps);
    await app.stop();

    const names = traceOf().map(nameOf);
    expect(new Set(traceOf().map((e) => e.tags["ai.operation.id"])).size, "one trace").toBe(1);
    expect(count(names, "POST /api/orders"), "the front door's request, once").toBe(1);
    expect(count(names, "start attempt")).toBe(record.attempt);
    for (const step of orderWorkflowV1.steps) {
      const queue = agentRequestQueue(step.agent);
      expect(count(names, `send ${queue}`), `send ${queue}: one per dispatch`).toBe(dispatches(step.name));
      expect(count(names, `process ${queue}`), `process ${queue}`).toBeGreaterThanOrEqual(1);
    }
    // The store's requests are the order's dependencies too: its creates and the state record's replaces.
    expect(names).toContain("POST /dbs/sas/colls/orders/docs");
    expect(names.filter((n) => n === `PUT /dbs/sas/colls/state/docs/${orderId}`).length).toBeGreaterThan(0);

    // Nothing of the Azure SDKs' own spans (a second span for each send; the devhost's receives and settlements,
    // which the host makes in Azure), and no request of the worker's HTTP server (the host serves HTTP in Azure).
    const everything = received();
    expect(everything.filter((e) => e.data.baseData.properties?.["az.namespace"]).map(nameOf)).toEqual([]);
    expect(
      everything
        .filter((e) => e.data.baseType === "RequestData" && !e.data.baseData.properties?.["sas.function"])
        .map(nameOf),
    ).toEqual([]);
  },
  60_000,
);
