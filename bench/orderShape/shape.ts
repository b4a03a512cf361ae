/** What the order-shape app (app.ts) and its benchmark (../orderShape.ts) both know; importing it loads no app. */
import { orderWorkflowV1 } from "../../src/domain/process";

/** The queue of the status messages, which nobody receives; the benchmark counts what is sent to it. */
export const STATUS_QUEUE = "status-demo";
/** The app setting that gives the size of each message's body, as the real app's were measured. */
export const MESSAGE_BYTES_SETTING = "SHAPE_MESSAGE_BYTES";
/** The app setting that gives the sizes of the documents the shape writes (ShapeDocuments, as JSON). */
export const DOCUMENT_BYTES_SETTING = "SHAPE_DOCUMENT_BYTES";
/** The app setting that gives the URL every remote call of the shape goes to. */
export const REMOTE_URL_SETTING = "SHAPE_REMOTE_URL";
/**
 * The status messages an order of the shape sends, as the real app's processed order does (received, processing,
 * one per step of the declared process but the last, processed): all sent, it is through.
 */
export const STATUSES_PER_ORDER = orderWorkflowV1.steps.length + 2;

/** The sizes, in bytes, of the documents an order writes, as the real order's were measured. */
export interface ShapeDocuments {
  /** The order document the front door creates (`POST docs orders`). */
  order: number;
  /** The state record as the front door creates it (`POST docs state`). */
  stateCreated: number;
  /** The state record as each of its replaces writes it (`PUT doc state`). */
  state: number;
  /** An admission shard as the claim's take writes it (`PUT doc leases`). */
  shard: number;
}

/** The request kinds (bench/instrument.ts requestKind) whose measured sizes the shape's documents take. */
export const DOCUMENT_KINDS: Record<keyof ShapeDocuments, string> = {
  order: "POST docs orders",
  stateCreated: "POST docs state",
  state: "PUT doc state",
  shard: "PUT doc leases",
};
