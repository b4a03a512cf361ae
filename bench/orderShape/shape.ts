/** What the order-shape app (app.ts) and its benchmark (../orderShape.ts) both know; importing it loads no app. */
import { orderWorkflowV1 } from "../../src/domain/process";

/** The queue of the status messages, which nobody receives; the benchmark counts what is sent to it. */
export const STATUS_QUEUE = "status-demo";
/** The app setting that gives the size of each message's body, as the real app's were measured. */
export const MESSAGE_BYTES_SETTING = "SHAPE_MESSAGE_BYTES";
/**
 * The status messages an order of the shape sends, as the real app's processed order does (received, processing,
 * one per step of the declared process but the last, processed): all sent, it is through.
 */
export const STATUSES_PER_ORDER = orderWorkflowV1.steps.length + 2;
