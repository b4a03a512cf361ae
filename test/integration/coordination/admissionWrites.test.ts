/**
 * An instance's writes to one admission shard, against the Cosmos DB emulator: the give-backs of attempts that end
 * together go in one conditional replace, and a round's take waits for them instead of racing them. Without that,
 * every writer but one loses to the conditional write and reads again: the refused replaces the benchmark counted.
 */
import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { ADMISSION_SHARD_PREFIX, orderWorkflowV1, submit, type StateRecord } from "../../../src/domain";
import { AdmissionPlaces } from "../../../src/coordination/admissionShards";
import type { Logger } from "../../../src/telemetry/logger";
import { StateStore } from "../../../src/store/stateStore";
import { at, sampleOrder } from "../../support/domain";
import { startAppStack, type AppStack } from "../../support/appStack";

/** One shard of 20 places. */
const MAX_IN_FLIGHT = 20;

let stack: AppStack;
/** The replaces of admission shards the store received, and how many it refused. */
const shardReplaces = { sent: 0, refused: 0 };
const isShardReplace = (request: IncomingMessage) =>
  request.method === "PUT" && (request.url ?? "").includes(`/docs/${ADMISSION_SHARD_PREFIX}`);

beforeAll(async () => {
  stack = await startAppStack(
    {},
    {
      onCosmosRequest: (request) => {
        if (isShardReplace(request)) shardReplaces.sent++;
      },
      onCosmosResponse: (request, response) => {
        if (isShardReplace(request) && response.status === 412) shardReplaces.refused++;
      },
    },
  );
});
afterAll(() => stack?.stop());
beforeEach(async () => {
  const { resources } = await stack.containers.leases.items
    .query<{ id: string }>({
      query: "SELECT c.id FROM c WHERE STARTSWITH(c.id, @prefix)",
      parameters: [{ name: "@prefix", value: ADMISSION_SHARD_PREFIX }],
    })
    .fetchAll();
  await Promise.all(resources.map((r) => stack.containers.leases.item(r.id, r.id).delete()));
});

const log: Logger = { log: () => {}, warn: () => {}, error: () => {} };
let n = 0;

function places(): AdmissionPlaces {
  return new AdmissionPlaces(stack.containers.leases, {
    maxInFlight: MAX_IN_FLIGHT,
    claimTimeoutSeconds: 60,
    states: new StateStore(stack.containers.state),
    now: () => at(0),
  });
}

/** `count` new records, each holding a place taken in one round. */
async function placed(admission: AdmissionPlaces, count: number): Promise<StateRecord[]> {
  const states = new StateStore(stack.containers.state);
  const records: StateRecord[] = [];
  for (let i = 0; i < count; i++) {
    const orderId = `ADM-WRITE-${++n}`;
    records.push(
      (await states.create(submit(sampleOrder({ orderId }), { now: at(0), workflow: orderWorkflowV1 })))
        .record,
    );
  }
  const taken = await admission.take(await admission.findRoom(count, log), records);
  expect(taken).toHaveLength(count);
  return records;
}

/** The holder a place of attempt 1 of `record` is taken under. */
const holderOf = (record: StateRecord) => `${record.orderId}:1`;

it("gives back the places of ten attempts that end at once in one replace, refused never", async () => {
  const admission = places();
  const records = await placed(admission, 10);
  shardReplaces.sent = shardReplaces.refused = 0;

  await Promise.all(records.map((r) => admission.giveBack(0, { ended: [holderOf(r)] })));
  expect(shardReplaces).toEqual({ sent: 1, refused: 0 });
  expect((await admission.read(0)).entries).toEqual([]);
});

it("lets a round's take wait for the give-backs in progress instead of racing them", async () => {
  const admission = places();
  const ending = await placed(admission, 5);
  const states = new StateStore(stack.containers.state);
  const arriving: StateRecord[] = [];
  for (let i = 0; i < 3; i++) {
    const orderId = `ADM-WRITE-${++n}`;
    arriving.push(
      (await states.create(submit(sampleOrder({ orderId }), { now: at(0), workflow: orderWorkflowV1 })))
        .record,
    );
  }
  const rooms = await admission.findRoom(arriving.length, log);
  shardReplaces.sent = shardReplaces.refused = 0;

  // The take starts from the version the round read, which the give-backs change first.
  const [taken] = await Promise.all([
    admission.take(rooms, arriving),
    ...ending.map((r) => admission.giveBack(0, { ended: [holderOf(r)] })),
  ]);
  expect(taken).toHaveLength(arriving.length);
  expect(shardReplaces.refused).toBe(0);
  expect((await admission.read(0)).entries.map((e) => e.orderId).sort()).toEqual(
    arriving.map((r) => r.orderId).sort(),
  );
});
