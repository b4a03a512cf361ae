/** What the order-shape app (app.ts) and its benchmark (../orderShape.ts) both know; importing it loads no app. */
import { orderWorkflowV1 } from "../../src/domain/process";
import { agentRequestQueue } from "../../src/domain/services";
import type { SampleMessage } from "../instrument";

/** The queue of the status messages, which nobody receives; the benchmark counts what is sent to it. */
export const STATUS_QUEUE = "status-demo";
/** The queue the agents answer on, as the real app's do. */
export const REPLY_QUEUE = "agent-replies";
/** Each step's request queue: its service's agent's, as the real app sends it. */
export const STEP_QUEUES = orderWorkflowV1.steps.map((step) => agentRequestQueue(step.agent));
/** The services the steps call, one agent each. */
export const SERVICES = [...new Set(orderWorkflowV1.steps.map((step) => step.agent))];
/** Every queue the shape sends to: it sends each a real message of that queue (ShapePayloads.messages). */
export const SHAPE_QUEUES = [...new Set([...STEP_QUEUES, REPLY_QUEUE, STATUS_QUEUE])];
/** The app setting that names the file of the payloads the shape carries (ShapePayloads, as JSON). */
export const PAYLOADS_FILE_SETTING = "SHAPE_PAYLOADS_FILE";
/** The app setting that gives the URL every remote call of the shape goes to. */
export const REMOTE_URL_SETTING = "SHAPE_REMOTE_URL";
/**
 * The status messages an order of the shape sends, as the real app's processed order does (received, processing,
 * one per step of the declared process but the last, processed): all sent, it is through.
 */
export const STATUSES_PER_ORDER = orderWorkflowV1.steps.length + 2;

/** The documents an order writes, by the request kind (bench/instrument.ts requestKind) that writes each. */
export const DOCUMENT_KINDS = {
  /** The order document the front door creates. */
  order: "POST docs orders",
  /** The state record as the front door creates it. */
  stateCreated: "POST docs state",
  /** The state record as each of its replaces writes it. */
  state: "PUT doc state",
  /** An admission shard as the claim's take writes it. */
  shard: "PUT doc leases",
} as const;
export type ShapeDocumentKind = keyof typeof DOCUMENT_KINDS;

/** The request kind of the starter's claim queries (bench/instrument.ts requestKind). */
export const CLAIM_QUERY_KIND = "POST query state";

/**
 * What the shape carries in place of its own filler: a real document of each kind and a real message of each queue
 * (body and properties), as the end-to-end run sampled them, each of about the mean size of its kind. Encoding,
 * sending, parsing and storing them costs what the order's own cost; the shape only swaps in its ids.
 */
export interface ShapePayloads {
  documents: Record<ShapeDocumentKind, Record<string, unknown>>;
  messages: Record<string, SampleMessage>;
  /**
   * The claim queries an order came with in the end-to-end run: a claim round queries the state container for due
   * records once for however many orders it admits, so an order costs a share of a query (and of its query plan).
   */
  claimQueriesPerOrder: number;
}
