/**
 * The `<entity>/$management` request/response operations that @azure/service-bus 7.9.5 uses outside
 * sessions and rules: peek, renew-lock, schedule, cancel-scheduled, receive-by-sequence-number
 * (deferred messages) and update-disposition (settling deferred messages, or after the link is gone).
 */
import { z } from "zod";
import { types, type Message, type Typed } from "rhea";
import { LockLostError, MessageNotFoundError, type MessageQueue, type ReceiveMode } from "./queue";
import { EncodedMessage, typedMapEntries } from "./encodedMessage";
import {
  encodeForReceiver,
  lockTokenFromAmqp,
  lockTokenToAmqp,
  longArrayToAmqp,
  numberFromAmqpLong,
  timestampArrayToAmqp,
} from "./wire";

const OPERATION_PREFIX = "com.microsoft:";

/** An AMQP value converted by one of the wire helpers; a failure becomes a validation issue. */
function amqpValue<T>(convert: (value: unknown) => T) {
  return z.unknown().transform((value, ctx) => {
    try {
      return convert(value);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error) });
      return z.NEVER;
    }
  });
}
const sequenceNumber = amqpValue(numberFromAmqpLong);
const lockToken = amqpValue(lockTokenFromAmqp);

/**
 * A management operation: validates the request body, then acts on the queue. `typedBody` is the same
 * body with its values as the client typed them, for the values that are passed on to a message.
 */
type OperationHandler = (
  queue: MessageQueue,
  rawBody: unknown,
  operation: string,
  typedBody: Record<string, Typed>,
) => Message;

function operation<S extends z.ZodType>(
  schema: S,
  run: (queue: MessageQueue, body: z.output<S>, typedBody: Record<string, Typed>) => Message,
): OperationHandler {
  return (queue, rawBody, name, typedBody) => {
    const parsed = schema.safeParse(rawBody);
    if (!parsed.success) {
      const details = parsed.error.issues
        .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
        .join("; ");
      throw new ManagementError(400, "com.microsoft:argument-error", `Invalid ${name} request: ${details}`);
    }
    return run(queue, parsed.data, typedBody);
  };
}

const operations: Record<string, OperationHandler> = {
  "peek-message": operation(
    z.looseObject({ "from-sequence-number": sequenceNumber, "message-count": z.int().min(1) }),
    (queue, body) => {
      const found = queue.peek(body["from-sequence-number"], body["message-count"]);
      // The SDK recognises an empty peek only by statusCode 204.
      if (found.length === 0) return success(undefined, 204);
      return success({
        messages: found.map((stored) => ({ message: encodeForReceiver(stored) })),
      });
    },
  ),
  "renew-lock": operation(z.looseObject({ "lock-tokens": z.array(lockToken).min(1) }), (queue, body) =>
    success({
      expirations: timestampArrayToAmqp(body["lock-tokens"].map((token) => queue.renewLock(token))),
    }),
  ),
  "schedule-message": operation(
    z.looseObject({ messages: z.array(z.looseObject({ message: z.instanceof(Buffer) })).min(1) }),
    (queue, body) => {
      const numbers = body.messages.map((entry) => {
        const stored = queue.send(EncodedMessage.decode(entry.message));
        // Duplicate detection dropped it: answer with a number that cancels nothing rather than fail.
        return stored?.sequenceNumber ?? 0;
      });
      return success({ "sequence-numbers": longArrayToAmqp(numbers) });
    },
  ),
  "cancel-scheduled-message": operation(
    z.looseObject({ "sequence-numbers": z.array(sequenceNumber) }),
    (queue, body) => {
      queue.cancelScheduled(body["sequence-numbers"]);
      return success({});
    },
  ),
  "receive-by-sequence-number": operation(
    z.looseObject({
      "sequence-numbers": z.array(sequenceNumber).min(1),
      "receiver-settle-mode": z.union([z.literal(0), z.literal(1)]),
    }),
    (queue, body) => {
      const mode: ReceiveMode = body["receiver-settle-mode"] === 0 ? "receiveAndDelete" : "peekLock";
      const messages = queue.receiveDeferred(body["sequence-numbers"], mode).map((stored) => {
        const entry: Record<string, unknown> = {
          message: encodeForReceiver(stored, { lockTokenAnnotation: true }),
        };
        if (stored.lockToken) entry["lock-token"] = lockTokenToAmqp(stored.lockToken);
        return entry;
      });
      return success({ messages });
    },
  ),
  "update-disposition": operation(
    z.looseObject({
      "lock-tokens": z.array(lockToken).min(1),
      "disposition-status": z.enum(["completed", "abandoned", "suspended", "defered"]), // sic: the SDK's spelling
      "deadletter-reason": z.string().nullish(),
      "deadletter-description": z.string().nullish(),
      "properties-to-modify": z.record(z.string(), z.unknown()).nullish(),
    }),
    (queue, body, typedBody) => {
      // The values as the client typed them (an int stays an int); rhea's decoding would retype them.
      const props =
        typedMapEntries(typedBody["properties-to-modify"]) ?? body["properties-to-modify"] ?? undefined;
      for (const token of body["lock-tokens"]) {
        const status = body["disposition-status"];
        if (status === "completed") queue.complete(token);
        else if (status === "abandoned") queue.abandon(token, props);
        else if (status === "defered") queue.defer(token, props);
        else {
          queue.deadLetter(token, {
            reason: body["deadletter-reason"] ?? undefined,
            description: body["deadletter-description"] ?? undefined,
            propertiesToModify: props,
          });
        }
      }
      return success({});
    },
  ),
};

/** A failed operation, carried to the client as statusCode + errorCondition (the SDK maps the condition). */
class ManagementError extends Error {
  constructor(
    readonly statusCode: number,
    readonly condition: string,
    description: string,
  ) {
    super(description);
  }
}

/**
 * Answers one management request against `queue` (the queue, or its dead-letter subqueue).
 * `typedBody` is the request's body map with its values still typed (EncodedMessage.typedValueMap).
 */
export function handleManagementRequest(
  queue: MessageQueue,
  request: Message,
  typedBody: Record<string, Typed> = {},
): Message {
  const operationName = String(request.application_properties?.operation ?? "");
  try {
    const handler = operationName.startsWith(OPERATION_PREFIX)
      ? operations[operationName.slice(OPERATION_PREFIX.length)]
      : undefined;
    if (!handler) {
      throw new ManagementError(
        501,
        "amqp:not-implemented",
        `The operation '${operationName}' is not supported by the Service Bus emulator (sessions, rules and batch delete are not implemented).`,
      );
    }
    const body: unknown = request.body;
    if (body && typeof body === "object" && (body as Record<string, unknown>)["session-id"] != null) {
      throw new ManagementError(
        501,
        "amqp:not-implemented",
        "Sessions are not supported by the Service Bus emulator.",
      );
    }
    return handler(queue, body, operationName, typedBody);
  } catch (error) {
    if (error instanceof ManagementError) return failure(error.statusCode, error.condition, error.message);
    if (error instanceof LockLostError) return failure(410, "com.microsoft:message-lock-lost", error.message);
    if (error instanceof MessageNotFoundError)
      return failure(404, "com.microsoft:message-not-found", error.message);
    return failure(500, "amqp:internal-error", `${operationName} failed: ${String(error)}`);
  }
}

function success(body: unknown, statusCode = 200): Message {
  return {
    application_properties: { statusCode: types.wrap_int(statusCode), statusDescription: "OK" },
    body,
  };
}

function failure(statusCode: number, condition: string, description: string): Message {
  return {
    application_properties: {
      statusCode: types.wrap_int(statusCode),
      statusDescription: description,
      errorCondition: types.wrap_symbol(condition), // a symbol, as every AMQP error condition
    },
    body: undefined,
  };
}
