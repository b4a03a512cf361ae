import { z } from "zod";
import {
  isoTimestamp,
  orderDocumentSchema,
  orderIdSchema,
  orderSchema,
  processStateSchema,
  statusMessageSchema,
} from "../domain";
import { bulkActionBody, bulkAnswerSchema } from "./bulk";
import { orchestrationStatusSchema } from "./orchestrationStatus";
import {
  operatorActionAcceptedSchema,
  operatorActionBody,
  operatorRefusalSchema,
  orderAcceptedSchema,
  orderDetailsSchema,
  orderPageSchema,
  orderStatusSchema,
  shownStateRecordSchema,
} from "./orders";
import { problemSchema } from "./responses";
import { healthSchema, statsSchema } from "./stats";
import { timingsSchema } from "./timings";
import { orderTraceSchema } from "./trace";

/**
 * The schemas the OpenAPI document names (its components/schemas), by name. They are the zod schemas the handlers
 * validate with or return, never copies: a request body as the handler parses it, an answer as the handler's
 * `satisfies` checks it. The document is built from them (openApi.ts), so it describes what the code does.
 */

/** Shapes that requests and answers share, named once. */
const SHARED_SCHEMAS = {
  Timestamp: isoTimestamp,
  OrderId: orderIdSchema,
  ProcessState: processStateSchema,
};

/** Request bodies, as the handlers parse them (JSON Schema of their input). */
export const REQUEST_SCHEMAS = {
  ...SHARED_SCHEMAS,
  Order: orderSchema,
  OperatorAction: operatorActionBody,
  BulkRetry: bulkActionBody("retry"),
  BulkCancel: bulkActionBody("cancel"),
};

/** The smallest shape of an OpenAPI document: what GET /api/openapi.json promises about itself. */
export const openApiDocumentSchema = z.looseObject({
  openapi: z.string().regex(/^3\.1\.\d+$/),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  servers: z.array(z.looseObject({ url: z.string() })),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  components: z.record(z.string(), z.unknown()),
});
export type OpenApiDocument = z.infer<typeof openApiDocumentSchema>;

/** Answers, as the handlers build them (JSON Schema of their output). */
export const RESPONSE_SCHEMAS = {
  ...SHARED_SCHEMAS,
  Problem: problemSchema,
  OperatorRefusal: operatorRefusalSchema,
  OrderAccepted: orderAcceptedSchema,
  OrderStatus: orderStatusSchema,
  OrderDetails: orderDetailsSchema,
  OrderPage: orderPageSchema,
  OperatorActionAccepted: operatorActionAcceptedSchema,
  BulkAnswer: bulkAnswerSchema,
  OrchestrationStatus: orchestrationStatusSchema,
  OrderTrace: orderTraceSchema,
  Stats: statsSchema,
  Timings: timingsSchema,
  Health: healthSchema,
  OpenApiDocument: openApiDocumentSchema,
  StateRecord: shownStateRecordSchema,
  StoredOrder: orderDocumentSchema,
  StatusMessage: statusMessageSchema,
};

export type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;
export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;
