/**
 * A Service Bus emulator on rhea that the real @azure/service-bus client uses unchanged, with
 * `UseDevelopmentEmulator=true` (plain AMQP 1.0 over TCP). It plays the broker side of what the SDK
 * does on the wire: CBS put-token with SAS checks, senders (single and batch transfers), peek-lock and
 * receive-and-delete receivers with manual credit and drain, dispositions, and `$management`. Topics
 * fan messages out to their subscriptions (topic.ts), which receivers consume like queues.
 */
import type { AddressInfo, Server, Socket } from "node:net";
import {
  create_container,
  type Connection,
  type Container,
  type Delivery,
  type EventContext,
  type Message,
  type Receiver,
  type Sender,
  type Session,
} from "rhea";
import {
  EMPTY_CONFIG,
  loadEmulatorConfig,
  queueSettingsOf,
  topicSettingsOf,
  type EmulatorConfigFile,
} from "./config";
import { Topic } from "./topic";
import { DEFAULT_SERVICE_BUS_PORT, DEFAULT_SERVICE_BUS_TLS_PORT } from "../ports";
import { handleManagementRequest } from "./management";
import { LockLostError, MessageQueue, type QueueCounts, type ReceiveMode, type StoredMessage } from "./queue";
import {
  forgetSettledDelivery,
  linkCredit,
  localBegin,
  answerAttachWithoutTerminus,
  attachAnswered,
  localAttach,
  nextUntransferredDeliveryId,
  receiveUndecoded,
  remoteAttach,
  saslMechanismOf,
  writeEveryPerformativeField,
} from "./rheaLinks";
import { grantsNamespace, offerServiceBusMechanisms } from "./sasl";
import { answerPutToken } from "./cbs";
import { EncodedMessage, MessageDecodeError } from "./encodedMessage";
import { covers, entityPathOf } from "./sas";
import type { EmulatorClock } from "./wallClockTimer";
import { reportsBusy } from "../../timeSkipping";
import { keepDispositionsApart } from "../../amqpDispositions";
import {
  decodeTransfer,
  deliveryTagFor,
  decodeMessage,
  encodeForReceiver,
  PLAIN_MESSAGE_FORMAT,
  rejectedWith,
  settledOutcome,
  STANDARD_TIER_MAX_MESSAGE_SIZE_BYTES,
  typedPropertiesOf,
  type AmqpErrorFields,
} from "./wire";

export interface ServiceBusEmulatorOptions {
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /**
   * TCP port; default 5672 (the SDKs' default with UseDevelopmentEmulator), or 5671 with `tls`. 0
   * picks a free port.
   */
  port?: number;
  /**
   * Serve AMQPS (AMQP over TLS) with this key and certificate (PEM), for clients that always use TLS
   * and cannot be told UseDevelopmentEmulator=true, such as azure-servicebus 7.8 for Python (uamqp),
   * which trusts a CA file given as connection_verify.
   */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** A Config.json path, JSON text, or parsed object; default: no queues or topics (an app brings its own). */
  config?: string | EmulatorConfigFile;
  /** Default RootManageSharedAccessKey. */
  sasKeyName?: string;
  /** Default "SAS_KEY_VALUE", as the official emulator. */
  sasKey?: string;
  /**
   * The largest message (or batch) a sender may transfer, in bytes; larger ones are refused as Azure
   * refuses them. Default 256 KiB, the Standard tier's limit; Premium allows up to 100 MiB.
   */
  maxMessageSizeBytes?: number;
  /** Receives one line per notable event (connections, refusals); nothing is printed without it. */
  log?: (line: string) => void;
  /**
   * Time for enqueue stamps, scheduled messages, locks, TTL and duplicate detection; default the wall clock.
   * A host's time-skipping clock (timeSkipping.ts) also learns from the emulator when messages are on their
   * way to a receiver, so that it does not skip ahead meanwhile. SAS tokens are always checked on the wall clock.
   */
  clock?: EmulatorClock;
}

export const DEFAULT_SAS_KEY_NAME = "RootManageSharedAccessKey";
export const DEFAULT_SAS_KEY = "SAS_KEY_VALUE";

const CBS_ADDRESS = "$cbs";
const MANAGEMENT_SUFFIX = "/$management";
const DEAD_LETTER_PATH_SUFFIX = "/$deadletterqueue";
const SESSION_FILTER = "com.microsoft:session-filter";
/** How long stop() lets clients answer the close frame before it drops their sockets. */
const CLOSE_GRACE_MS = 100;
/**
 * The max-frame-size the emulator advertises in its open. Without one (AMQP's default, 4 GiB) uamqp
 * (Python) writes a whole message into one transfer frame, which its own 64 KiB frame limit then
 * refuses: no message over 64 KiB could be sent, and one over the size limit never reached the check
 * that answers MessageSizeExceeded. With it, every client splits large messages into frames.
 */
const MAX_FRAME_SIZE_BYTES = 64 * 1024;
/**
 * The rest of the open as Service Bus sends it (Azure's open in a client's trace: channel-max 4999,
 * idle-time-out 120000, no hostname, which only the connecting side names, part 2.7.1). Written out
 * rather than left to AMQP's defaults (65535 channels, no idle time-out), which a strict client does not
 * apply (writeEveryPerformativeField). The idle time-out also has clients send empty frames when they
 * have nothing else to say (part 2.4.5); rhea closes a connection that stays silent for twice as long.
 */
const CHANNEL_MAX = 4999;
const IDLE_TIME_OUT_MS = 120_000;
/**
 * The begin's handle-max: the highest link handle a client may use on a session. Service Bus's begin
 * carries 255; AMQP's default is 2^32 - 1 (part 2.7.2). azure-servicebus 7.14 for Python does not apply
 * that default: Session._get_next_output_handle (azure/servicebus/_pyamqp/session.py) compares its
 * handle count with the begin's handle_max, and with None there every link fails before its attach.
 * Not enforced: the clients open one link or two per session.
 */
const HANDLE_MAX = 255;

/** A receiver link of a client, fed from a queue. */
interface Consumer {
  link: Sender;
  queue: MessageQueue;
  mode: ReceiveMode;
  /** Ids of deliveries handed to rhea but not yet on the wire (rhea counts credit only when it transfers). */
  queuedDeliveryIds: number[];
  /** A pump is due once the emulator's attach for the link has gone out. */
  pumpScheduled?: boolean;
}

type LinkRole =
  { kind: "cbs" } | { kind: "management"; queue: MessageQueue } | { kind: "intake"; queue: MessageQueue };

export class ServiceBusEmulator {
  private readonly host: string;
  private readonly requestedPort: number;
  private readonly tls: ServiceBusEmulatorOptions["tls"];
  private readonly sasKeyName: string;
  private readonly sasKey: string;
  private readonly maxMessageSizeBytes: number;
  private readonly log: (line: string) => void;
  /** Queues by lower-cased name: entity names are case-insensitive. */
  private readonly queues = new Map<string, MessageQueue>();
  /** Topics by lower-cased name. */
  private readonly topics = new Map<string, Topic>();
  /** Subscriptions' queues by lower-cased `<topic>/subscriptions/<name>`, the path clients attach to. */
  private readonly subscriptionQueues = new Map<string, MessageQueue>();
  /** The topics' intakes: senders attach to them, receivers may not. */
  private readonly topicIntakes = new WeakSet<MessageQueue>();
  private readonly container: Container;
  private server: Server | undefined;
  private boundPort: number | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly connections = new Set<Connection>();
  /** Per connection, the CBS claims it holds: entity path (covering the paths below it) -> expiry. */
  private readonly claims = new WeakMap<Connection, Map<string, number>>();
  private readonly roles = new WeakMap<Receiver, LinkRole>();
  private readonly consumers = new Map<MessageQueue, Consumer[]>();
  private readonly consumerOf = new WeakMap<Sender, Consumer>();
  private readonly rotation = new Map<MessageQueue, number>();
  private readonly clock: EmulatorClock | undefined;
  private removeBusyProbe: (() => void) | undefined;
  private readonly lockedDeliveries = new WeakMap<Delivery, { queue: MessageQueue; lockToken: string }>();

  constructor(options: ServiceBusEmulatorOptions = {}) {
    // A refused transfer and an accepted one in one tick must reach the client as the two outcomes they are.
    keepDispositionsApart();
    this.host = options.host ?? "127.0.0.1";
    this.tls = options.tls;
    this.requestedPort = options.port ?? (this.tls ? DEFAULT_SERVICE_BUS_TLS_PORT : DEFAULT_SERVICE_BUS_PORT);
    this.sasKeyName = options.sasKeyName ?? DEFAULT_SAS_KEY_NAME;
    this.sasKey = options.sasKey ?? DEFAULT_SAS_KEY;
    this.maxMessageSizeBytes = options.maxMessageSizeBytes ?? STANDARD_TIER_MAX_MESSAGE_SIZE_BYTES;
    if (!Number.isInteger(this.maxMessageSizeBytes) || this.maxMessageSizeBytes < 1) {
      throw new RangeError(`maxMessageSizeBytes must be a positive integer, got ${this.maxMessageSizeBytes}`);
    }
    this.log = options.log ?? (() => undefined);
    const file = loadEmulatorConfig(options.config ?? EMPTY_CONFIG);
    for (const settings of queueSettingsOf(file)) {
      this.queues.set(
        settings.name.toLowerCase(),
        new MessageQueue(settings, (queue) => this.pump(queue), false, options.clock),
      );
    }
    for (const settings of topicSettingsOf(file)) {
      const topic = new Topic(settings, (queue) => this.pump(queue), options.clock);
      this.topics.set(settings.name.toLowerCase(), topic);
      this.topicIntakes.add(topic.intake);
      for (const subscription of topic.subscriptions.values()) {
        this.subscriptionQueues.set(subscription.queue.name.toLowerCase(), subscription.queue);
      }
    }
    // Abandon and defer must arrive as `modified` (rhea would turn them into `released`), and incoming
    // transfers are accepted explicitly, once the message is stored.
    this.container = create_container({
      id: "servicebus-emulator",
      treat_modified_as_released: false,
      autoaccept: false,
    });
    this.wire();
    this.clock = options.clock;
  }

  /** The bound port once started (the requested one before). */
  get port(): number {
    return this.boundPort ?? this.requestedPort;
  }

  /** What a client passes to `new ServiceBusClient(...)`. */
  get connectionString(): string {
    if (this.port === 0) throw new Error("The Service Bus emulator has no port yet: start() it first.");
    const host = this.host === "0.0.0.0" || this.host === "::" ? "127.0.0.1" : this.host;
    // Over TLS the clients' defaults are right; UseDevelopmentEmulator would make them use plain TCP.
    return (
      `Endpoint=sb://${host}:${this.port};SharedAccessKeyName=${this.sasKeyName};` +
      `SharedAccessKey=${this.sasKey}${this.tls ? "" : ";UseDevelopmentEmulator=true"}`
    );
  }

  queueNames(): string[] {
    return [...this.queues.values()].map((queue) => queue.name);
  }

  topicNames(): string[] {
    return [...this.topics.values()].map((topic) => topic.name);
  }

  /** The paths of a topic's subscriptions, `<topic>/Subscriptions/<name>`, as queueCounts() takes them. */
  subscriptionPaths(topicName: string): string[] {
    const topic = this.topics.get(topicName.toLowerCase());
    return topic ? [...topic.subscriptions.values()].map((subscription) => subscription.queue.name) : [];
  }

  /**
   * Message counts of a queue, or of a subscription (`<topic>/Subscriptions/<name>`): active (incl.
   * locked), locked, scheduled, deferred, dead-lettered.
   */
  queueCounts(queueName: string): QueueCounts {
    return this.queueNamed(queueName).counts();
  }

  /** How many receiver links are attached to a queue (or its dead-letter subqueue). */
  receiverCount(queueName: string, subQueue: "deadLetter" | undefined = undefined): number {
    const queue = this.queueNamed(queueName);
    const target = subQueue === "deadLetter" ? queue.deadLetterQueue : queue;
    return target ? (this.consumers.get(target)?.length ?? 0) : 0;
  }

  async start(): Promise<void> {
    if (this.server) return;
    if (reportsBusy(this.clock) && !this.removeBusyProbe) {
      this.removeBusyProbe = this.clock.addBusyProbe(() => this.hasDeliverableMessages());
    }
    const server = this.container.listen({
      host: this.host,
      port: this.requestedPort,
      max_frame_size: MAX_FRAME_SIZE_BYTES,
      channel_max: CHANNEL_MAX,
      idle_time_out: IDLE_TIME_OUT_MS,
      ...(this.tls ? { transport: "tls", key: this.tls.key, cert: this.tls.cert } : {}),
    });
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("listening", resolve);
      server.once("error", reject);
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    const queues = this.queueNames();
    const topics = [...this.topics.values()].map(
      (topic) => `${topic.name} [${[...topic.subscriptions.values()].map((s) => s.name).join(", ")}]`,
    );
    const served = [
      ...(queues.length > 0 ? [`queues: ${queues.join(", ")}`] : []),
      ...(topics.length > 0 ? [`topics: ${topics.join("; ")}`] : []),
    ];
    this.log(
      `listening on ${this.host}:${this.boundPort} ` +
        (served.length > 0
          ? `(${served.join("; ")})`
          : "(no queues or topics: pass a Config.json to serve some)"),
    );
  }

  /** Closes every connection, stops listening and drops all messages and timers. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const connection of this.connections) {
      try {
        connection.close({
          condition: "amqp:connection:forced",
          description: "The emulator is shutting down.",
        });
      } catch {
        // already closing
      }
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const grace = setTimeout(() => this.sockets.forEach((socket) => socket.destroy()), CLOSE_GRACE_MS);
    await closed;
    clearTimeout(grace);
    this.connections.clear();
    this.consumers.clear();
    this.removeBusyProbe?.();
    this.removeBusyProbe = undefined;
    for (const queue of this.queues.values()) queue.dispose();
    for (const topic of this.topics.values()) topic.dispose();
    this.log("stopped");
  }

  // ------------------------------------------------------------------------------------ AMQP wiring

  private wire(): void {
    const c = this.container;
    offerServiceBusMechanisms(c.sasl_server_mechanisms as unknown as Record<string, unknown>, {
      keyName: this.sasKeyName,
      key: this.sasKey,
    });
    c.on("connection_open", (ctx: EventContext) => {
      this.connections.add(ctx.connection);
      writeEveryPerformativeField(ctx.connection); // before rhea answers the open, on the next tick
      // SASL PLAIN with the SAS key authorizes the whole namespace, without CBS (as in Azure).
      if (grantsNamespace(saslMechanismOf(ctx.connection))) this.claimsOf(ctx.connection).set("", Infinity);
      const props = (ctx.connection.remote.open?.properties ?? {}) as Record<string, unknown>;
      this.log(`connection from ${String(props.product ?? "client")} ${String(props.version ?? "")}`);
    });
    const dropConnection = (ctx: EventContext) => {
      this.connections.delete(ctx.connection);
      this.dropConsumers((consumer) => consumer.link.connection === ctx.connection);
    };
    c.on("connection_close", dropConnection);
    c.on("disconnected", dropConnection);
    // Before rhea answers the client's begin, on the next tick.
    c.on("session_open", (ctx: EventContext) => {
      localBegin(ctx.session as Session).handle_max = HANDLE_MAX;
    });
    c.on("session_close", (ctx: EventContext) => {
      const session = ctx.session as Session;
      this.dropConsumers((consumer) => consumer.link.session === session);
    });
    c.on("sender_close", (ctx: EventContext) =>
      this.dropConsumers((consumer) => consumer.link === ctx.sender),
    );
    // Without an 'error' listener, a client closing a link with an error would throw inside rhea.
    c.on("error", (error: unknown) => this.log(String(error)));

    c.on("receiver_open", (ctx: EventContext) => this.onClientSenderAttached(ctx.receiver as Receiver));
    c.on("sender_open", (ctx: EventContext) => this.onClientReceiverAttached(ctx.sender as Sender));
    c.on("message", (ctx: EventContext) => this.onTransfer(ctx));
    c.on("sendable", (ctx: EventContext) => {
      const consumer = this.consumerOf.get(ctx.sender as Sender);
      if (consumer) this.pump(consumer.queue);
    });
    // receiveMessages() ends its wait with a drain; rhea does not answer one by itself.
    c.on("sender_draining", (ctx: EventContext) => {
      const sender = ctx.sender as Sender;
      const consumer = this.consumerOf.get(sender);
      if (consumer) this.pump(consumer.queue);
      sender.set_drained(true);
    });
    for (const kind of ["accepted", "rejected", "released", "modified"] as const) {
      c.on(kind, (ctx: EventContext) => this.onDisposition(kind, ctx.delivery as Delivery));
    }
  }

  /** The client attached a sender: to $cbs, to a queue's $management, or to a queue itself. */
  private onClientSenderAttached(link: Receiver): void {
    receiveUndecoded(link.session);
    const address = String(remoteAttach(link).target?.address ?? "");
    if (address === CBS_ADDRESS) {
      this.echoAttach(link);
      this.roles.set(link, { kind: "cbs" });
      return;
    }
    const management = address.toLowerCase().endsWith(MANAGEMENT_SUFFIX);
    const queue = this.admit(link, address);
    if (!queue) return;
    if (!management && queue.isDeadLetterQueue) {
      this.refuse(link, "amqp:not-allowed", `Cannot send to the dead-letter queue '${queue.name}'.`);
      return;
    }
    if (!management && this.isSubscription(queue)) {
      this.refuse(
        link,
        "amqp:not-allowed",
        `Cannot send to the subscription '${queue.name}': send to its topic.`,
      );
      return;
    }
    this.echoAttach(link);
    this.roles.set(link, management ? { kind: "management", queue } : { kind: "intake", queue });
  }

  /** The client attached a receiver: for $cbs or $management replies, or to consume a queue. */
  private onClientReceiverAttached(link: Sender): void {
    const source = remoteAttach(link).source;
    const address = String(source?.address ?? "");
    if (address === CBS_ADDRESS || address.toLowerCase().endsWith(MANAGEMENT_SUFFIX)) {
      this.echoAttach(link); // a reply link
      return;
    }
    if (source?.filter && SESSION_FILTER in source.filter) {
      this.refuse(link, "amqp:not-implemented", "Sessions are not supported by the Service Bus emulator.");
      return;
    }
    const queue = this.admit(link, address);
    if (!queue) return;
    if (this.topicIntakes.has(queue)) {
      this.refuse(
        link,
        "amqp:not-allowed",
        `Cannot receive from the topic '${queue.name}': receive from one of its subscriptions, '${queue.name}/Subscriptions/<name>'.`,
      );
      return;
    }
    this.echoAttach(link);
    const mode: ReceiveMode = remoteAttach(link).snd_settle_mode === 1 ? "receiveAndDelete" : "peekLock";
    const consumer: Consumer = { link, queue, mode, queuedDeliveryIds: [] };
    this.consumerOf.set(link, consumer);
    this.consumers.set(queue, [...(this.consumers.get(queue) ?? []), consumer]);
  }

  /** The queue a link may use, or undefined once the link is refused (no claim, or no such entity). */
  private admit(link: Sender | Receiver, address: string): MessageQueue | undefined {
    const path = entityPathOf(address);
    const now = Date.now();
    const claims = [...(this.claims.get(link.connection) ?? new Map<string, number>())];
    if (!claims.some(([claimPath, expiresAtMs]) => expiresAtMs > now && covers(claimPath, path))) {
      this.refuse(
        link,
        "amqp:unauthorized-access",
        `Unauthorized access. No valid CBS token (put-token) covers '${this.endpoint()}${path}'.`,
      );
      return undefined;
    }
    const queue = this.resolve(path);
    if (!queue) {
      // The SDK recognises a missing entity by this wording and raises MessagingEntityNotFound.
      this.refuse(
        link,
        "amqp:not-found",
        `The messaging entity '${this.endpoint()}${path}' could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions.`,
      );
      return undefined;
    }
    return queue;
  }

  private resolve(path: string): MessageQueue | undefined {
    let name = path.endsWith(MANAGEMENT_SUFFIX) ? path.slice(0, -MANAGEMENT_SUFFIX.length) : path;
    const deadLetter = name.endsWith(DEAD_LETTER_PATH_SUFFIX);
    if (deadLetter) name = name.slice(0, -DEAD_LETTER_PATH_SUFFIX.length);
    const queue = this.queues.get(name) ?? this.subscriptionQueues.get(name);
    if (deadLetter) return queue?.deadLetterQueue;
    return queue ?? this.topics.get(name)?.intake;
  }

  private isSubscription(queue: MessageQueue): boolean {
    return this.subscriptionQueues.get(queue.name.toLowerCase()) === queue;
  }

  /** Answers the attach as Service Bus does: the same terminus and settle modes, and a max message size. */
  private echoAttach(link: Sender | Receiver): void {
    const remote = remoteAttach(link);
    if (remote.source) link.set_source(remote.source);
    if (remote.target) link.set_target(remote.target);
    const local = localAttach(link);
    local.snd_settle_mode = remote.snd_settle_mode;
    local.rcv_settle_mode = remote.rcv_settle_mode;
    local.max_message_size = this.maxMessageSizeBytes; // the clients size their batches by it
  }

  /**
   * Refuses a link as AMQP says a peer does (part 2.6.3): an attach with a null source and target, at
   * once followed by a detach with the error. The clients raise that error, typed, without waiting.
   */
  private refuse(link: Sender | Receiver, condition: string, description: string): void {
    this.log(`refused link '${link.name}': ${condition}: ${description}`);
    answerAttachWithoutTerminus(link);
    link.close({ condition, description });
  }

  private endpoint(): string {
    return `sb://${this.host}:${this.port}/`;
  }

  private queueNamed(queueName: string): MessageQueue {
    const key = queueName.toLowerCase();
    const queue = this.queues.get(key) ?? this.subscriptionQueues.get(key);
    if (!queue)
      throw new Error(
        `No queue '${queueName}' in the Service Bus emulator (queues: ${this.queueNames().join(", ")})`,
      );
    return queue;
  }

  // ------------------------------------------------------------------------------------ inbound

  private onTransfer(ctx: EventContext): void {
    const link = ctx.receiver as Receiver;
    const delivery = ctx.delivery as Delivery;
    const role = this.roles.get(link);
    if (!role) return;
    // Undecoded (see receiveUndecoded): the bytes as the client sent them.
    const payload = ctx.message as unknown as Buffer;
    const format = (ctx as { format?: number | null }).format;
    if (role.kind === "cbs" || role.kind === "management") {
      delivery.update(true, settledOutcome("accepted"));
      const request = decodeMessage(payload);
      const encoded = EncodedMessage.decode(payload);
      const requestId = encoded.typedMessageId;
      const response =
        role.kind === "cbs"
          ? this.putToken(ctx.connection, request)
          : handleManagementRequest(role.queue, request, encoded.typedValueMap());
      // The response goes out after the request's settlement, as Azure sends them: uamqp (Python) fails
      // an operation whose response comes first. rhea writes a session's transfers before its
      // dispositions in one pass, and writes this disposition on the next tick; the reply follows it.
      setImmediate(() => this.reply(link, request, requestId, response));
      return;
    }
    if (payload.length > this.maxMessageSizeBytes) {
      // Azure's wording; the clients raise it as MessageSizeExceeded.
      const description = `The received message (delivery-id:${delivery.id}, size:${payload.length} bytes) exceeds the limit (${this.maxMessageSizeBytes} bytes) currently allowed on the link.`;
      this.log(`refused a message to '${role.queue.name}': ${description}`);
      delivery.update(true, rejectedWith({ condition: "amqp:link:message-size-exceeded", description }));
      return;
    }
    let messages: EncodedMessage[];
    try {
      messages = decodeTransfer(payload, format);
    } catch (error) {
      if (!(error instanceof MessageDecodeError)) throw error;
      delivery.update(true, rejectedWith({ condition: "amqp:decode-error", description: error.message }));
      return;
    }
    for (const each of messages) role.queue.send(each);
    delivery.update(true, settledOutcome("accepted"));
  }

  /** CBS put-token: checks the token and records the claim on this connection. */
  private putToken(connection: Connection, request: Message): Message {
    const outcome = answerPutToken(request, { keyName: this.sasKeyName, key: this.sasKey }, Date.now());
    // The SDKs put a token before every link and renew it before it expires: one claim per path.
    if (outcome.claim) this.claimsOf(connection).set(outcome.claim.path, outcome.claim.expiresAtMs);
    if (outcome.refusal) this.log(outcome.refusal);
    return outcome.response;
  }

  private claimsOf(connection: Connection): Map<string, number> {
    let claims = this.claims.get(connection);
    if (!claims) {
      claims = new Map<string, number>();
      this.claims.set(connection, claims);
    }
    return claims;
  }

  /**
   * Sends a CBS or management response on the client's reply link. The request's reply_to names it by
   * its target address (the .NET client) or by its link name (the Node client uses one string for
   * both); the address is the one the client attached with, since the emulator's own echo of it is
   * already encoded for the wire. Without a reply_to (the Python client's uamqp), the reply link is
   * the client's receiver from the same node ($cbs or <entity>/$management) on the same session. The
   * correlation-id is the request's message-id with its AMQP type: uamqp matches a ulong.
   */
  private reply(requestLink: Receiver, request: Message, requestId: unknown, response: Message): void {
    const replyTo = request.reply_to;
    const node = remoteAttach(requestLink).target?.address;
    const link =
      replyTo === undefined || replyTo === null
        ? requestLink.session.find_sender((sender: Sender) => remoteAttach(sender).source?.address === node)
        : requestLink.connection.find_sender(
            (sender: Sender) => remoteAttach(sender).target?.address === replyTo || sender.name === replyTo,
          );
    if (!link?.is_open()) {
      this.log(`no reply link '${String(replyTo ?? node)}' for a request; dropping the response`);
      return;
    }
    const correlationId = (requestId ?? request.message_id) as Message["correlation_id"]; // rhea passes a Typed through
    link.send({ ...response, correlation_id: correlationId, to: replyTo ?? undefined });
  }

  // ------------------------------------------------------------------------------------ outbound

  /** Hands available messages to consumers with credit, round-robin, so concurrent receivers share the load. */
  private pump(queue: MessageQueue): void {
    const consumers = this.consumers.get(queue);
    if (!consumers || consumers.length === 0) return;
    let delivered = true;
    while (delivered) {
      delivered = false;
      const start = this.rotation.get(queue) ?? 0;
      for (let i = 0; i < consumers.length; i++) {
        const consumer = consumers[(start + i) % consumers.length] as Consumer;
        if (!this.hasCredit(consumer)) continue;
        const stored = queue.receive(consumer.mode);
        if (!stored) return;
        this.deliver(consumer, stored);
        this.rotation.set(queue, (start + i + 1) % consumers.length);
        delivered = true;
      }
    }
  }

  /**
   * True while a message is on its way to a receiver: ready in a queue whose receiver has credit, or handed to
   * rhea and not yet on the wire. A time-skipping host waits for this to be false before it moves time on.
   */
  hasDeliverableMessages(): boolean {
    for (const [queue, consumers] of this.consumers) {
      for (const consumer of consumers) {
        if (!consumer.link.is_open()) continue;
        if (queue.hasReady && this.hasCredit(consumer)) return true;
        if (consumer.queuedDeliveryIds.length > 0) return true;
      }
    }
    return false;
  }

  private hasCredit(consumer: Consumer): boolean {
    const link = consumer.link;
    if (!link.is_open() || !link.sendable()) return false;
    if (!attachAnswered(link)) {
      // rhea writes the attach when it next processes the connection (a process.nextTick); after that.
      if (!consumer.pumpScheduled) {
        consumer.pumpScheduled = true;
        setImmediate(() => {
          consumer.pumpScheduled = false;
          this.pump(consumer.queue);
        });
      }
      return false;
    }
    // rhea lowers link.credit only when a delivery goes on the wire; deliveries still queued in the
    // session (ids at or above its next_pending_delivery) have used credit already.
    const onTheWireBelow = nextUntransferredDeliveryId(link);
    const queued = consumer.queuedDeliveryIds;
    while (queued.length > 0 && (queued[0] as number) < onTheWireBelow) queued.shift();
    return linkCredit(link) - queued.length > 0;
  }

  private deliver(consumer: Consumer, stored: StoredMessage): void {
    const encoded = encodeForReceiver(stored);
    if (consumer.mode === "receiveAndDelete" || !stored.lockToken) {
      consumer.queuedDeliveryIds.push(consumer.link.send(encoded, undefined, PLAIN_MESSAGE_FORMAT).id);
      return;
    }
    // The delivery tag is the lock token: that is where the clients read the message's lock token from.
    const delivery = consumer.link.send(encoded, deliveryTagFor(stored.lockToken), PLAIN_MESSAGE_FORMAT);
    consumer.queuedDeliveryIds.push(delivery.id);
    this.lockedDeliveries.set(delivery, { queue: consumer.queue, lockToken: stored.lockToken });
  }

  private dropConsumers(matches: (consumer: Consumer) => boolean): void {
    for (const [queue, consumers] of this.consumers) {
      const kept = consumers.filter((consumer) => !matches(consumer));
      if (kept.length !== consumers.length) this.consumers.set(queue, kept);
    }
  }

  /**
   * A receiver settled a peek-locked message. The SDK sends dispositions unsettled (rcv-settle-mode
   * second) and resolves completeMessage() etc. only when the broker settles back: with the same outcome,
   * or with `rejected` + message-lock-lost when the lock had lapsed (the SDK raises MessageLockLost).
   */
  private onDisposition(kind: "accepted" | "rejected" | "released" | "modified", delivery: Delivery): void {
    const locked = this.lockedDeliveries.get(delivery);
    if (!locked) return;
    this.lockedDeliveries.delete(delivery);
    const state = (delivery.remote_state ?? {}) as {
      error?: AmqpErrorFields;
      undeliverable_here?: boolean;
    };
    // The properties to modify keep the types the client gave them.
    const propertiesToModify = typedPropertiesOf(kind, delivery.remote_state);
    const { queue, lockToken } = locked;
    try {
      if (kind === "accepted") queue.complete(lockToken);
      else if (kind === "released") queue.release(lockToken);
      else if (kind === "rejected") {
        const {
          DeadLetterReason: _reason,
          DeadLetterErrorDescription: _description,
          ...extra
        } = propertiesToModify;
        const reason = state.error?.info?.DeadLetterReason;
        const description = state.error?.info?.DeadLetterErrorDescription;
        queue.deadLetter(lockToken, {
          reason: typeof reason === "string" ? reason : undefined,
          description: typeof description === "string" ? description : undefined,
          propertiesToModify: extra,
        });
      } else if (state.undeliverable_here) queue.defer(lockToken, propertiesToModify);
      else queue.abandon(lockToken, propertiesToModify);
      delivery.update(true, settledOutcome(kind, state.undeliverable_here));
    } catch (error) {
      if (!(error instanceof LockLostError)) throw error;
      delivery.update(
        true,
        rejectedWith({ condition: "com.microsoft:message-lock-lost", description: error.message }),
      );
    }
    forgetSettledDelivery(delivery);
  }
}
