/**
 * One Service Bus queue (or its dead-letter subqueue) in memory: ordering, peek-lock, settlement,
 * delivery counts, scheduled and deferred messages, duplicate detection and TTL. It knows nothing of
 * AMQP links; the emulator turns its records into transfers and management responses.
 */
import { randomUUID } from "node:crypto";
import type { QueueSettings } from "./config";
import type { EncodedMessage } from "./encodedMessage";
import { deadlineAt, type Deadline, type EmulatorClock } from "./wallClockTimer";

export type MessageState = "active" | "scheduled" | "deferred";
export type ReceiveMode = "peekLock" | "receiveAndDelete";

/** A message as the broker holds it: what the sender sent plus the broker's own bookkeeping. */
export interface StoredMessage {
  readonly sequenceNumber: number;
  message: EncodedMessage;
  state: MessageState;
  enqueuedAtMs: number;
  /** Infinity when the message never expires. */
  timeToLiveMs: number;
  expiresAtMs: number;
  deliveryCount: number;
  lockToken?: string;
  lockedUntilMs?: number;
  /** When a scheduled message becomes active. */
  scheduledAtMs?: number;
  /** The lock or schedule deadline currently armed for this message. */
  lockOrScheduleTimer?: Deadline;
  expiryTimer?: Deadline;
}

export interface QueueCounts {
  /** Active messages, locked or not (Service Bus's ActiveMessageCount). */
  active: number;
  /** Active messages currently locked by a receiver. */
  locked: number;
  scheduled: number;
  deferred: number;
  /** Messages in the dead-letter subqueue. */
  deadLettered: number;
}

export interface DeadLetterDetails {
  reason?: string;
  description?: string;
  propertiesToModify?: Record<string, unknown>;
}

/** The lock token is unknown: it expired, or the message was settled already. */
export class LockLostError extends Error {
  override name = "LockLostError";
  constructor(lockToken: string) {
    super(
      `The lock supplied (${lockToken}) is invalid. Either the lock expired, or the message has already been removed from the queue.`,
    );
  }
}

export class MessageNotFoundError extends Error {
  override name = "MessageNotFoundError";
}

export const DEAD_LETTER_SUFFIX = "$DeadLetterQueue";
export const MAX_DELIVERY_REASON = "MaxDeliveryCountExceeded";
export const TTL_EXPIRED_REASON = "TTLExpiredException";

/** Called whenever a message becomes receivable, so that waiting receivers get it. */
export type AvailabilityListener = (queue: MessageQueue) => void;

export class MessageQueue {
  /** `orders`, or `orders/$DeadLetterQueue` for the subqueue. */
  readonly name: string;
  readonly deadLetterQueue: MessageQueue | undefined;
  private nextSequenceNumber = 1;
  /** Every message the queue holds, in sequence-number order (insertion order). */
  private readonly messages = new Map<number, StoredMessage>();
  /** Active, unlocked messages waiting for a receiver, in sequence-number order. */
  private readonly ready: StoredMessage[] = [];
  private readonly locks = new Map<string, StoredMessage>();
  /** MessageId -> first-seen time; oldest first, so expired entries are pruned from the front. */
  private readonly recentMessageIds = new Map<string, number>();

  constructor(
    readonly settings: QueueSettings,
    private readonly onAvailable: AvailabilityListener,
    readonly isDeadLetterQueue = false,
    /** Time for enqueue stamps, schedules, locks, TTL and duplicate detection; default the wall clock. */
    private readonly clock?: EmulatorClock,
  ) {
    this.name = isDeadLetterQueue ? `${settings.name}/${DEAD_LETTER_SUFFIX}` : settings.name;
    this.deadLetterQueue = isDeadLetterQueue
      ? undefined
      : new MessageQueue(settings, onAvailable, true, clock);
  }

  private nowMs(): number {
    return this.clock ? this.clock.now().getTime() : Date.now();
  }

  private deadline(atMs: number, fire: () => void): Deadline {
    return deadlineAt(atMs, fire, this.clock);
  }

  /** True when an active message waits for a receiver. */
  get hasReady(): boolean {
    return this.ready.length > 0;
  }

  /**
   * Enqueues a sent or scheduled message. Returns undefined when duplicate detection drops it: like
   * Service Bus, the send still succeeds and the duplicate silently disappears.
   */
  send(message: EncodedMessage, nowMs = this.nowMs()): StoredMessage | undefined {
    // Service Bus stamps a MessageId when the sender set none; the SDK's lock renewer keys on it.
    let messageId = message.messageId;
    if (messageId === undefined || messageId === null) {
      messageId = randomUUID().replace(/-/g, "");
      message = message.withMessageId(messageId as string);
    }
    if (this.isDuplicate(messageIdKey(messageId), nowMs)) return undefined;
    const scheduledAtMs = scheduledEnqueueTimeOf(message);
    const stored = this.store(message, nowMs);
    if (scheduledAtMs !== undefined && scheduledAtMs > nowMs) {
      stored.state = "scheduled";
      stored.scheduledAtMs = scheduledAtMs;
      stored.expiresAtMs = Infinity; // the TTL starts when the message is enqueued for real
      stored.lockOrScheduleTimer = this.deadline(scheduledAtMs, () => this.activateScheduled(scheduledAtMs));
    } else {
      this.armExpiry(stored);
      this.makeReady(stored);
    }
    return stored;
  }

  /** Cancels scheduled messages; numbers that are not (or no longer) scheduled are ignored, as in Service Bus. */
  cancelScheduled(sequenceNumbers: number[]): void {
    for (const sequenceNumber of sequenceNumbers) {
      const stored = this.messages.get(sequenceNumber);
      if (stored?.state === "scheduled") this.remove(stored);
    }
  }

  /** The next message for a receiver, locked (peekLock) or already removed (receiveAndDelete). */
  receive(mode: ReceiveMode, nowMs = this.nowMs()): StoredMessage | undefined {
    for (let stored = this.ready.shift(); stored; stored = this.ready.shift()) {
      if (stored.expiresAtMs <= nowMs) {
        this.expire(stored);
        continue;
      }
      if (mode === "receiveAndDelete") this.remove(stored);
      else this.lock(stored, nowMs);
      return stored;
    }
    return undefined;
  }

  complete(lockToken: string): void {
    this.remove(this.locked(lockToken));
  }

  /** Gives the message back for redelivery, counting the failed attempt (abandon, or a lapsed lock). */
  abandon(lockToken: string, propertiesToModify?: Record<string, unknown>): void {
    const stored = this.locked(lockToken);
    this.modifyProperties(stored, propertiesToModify);
    this.unlock(stored);
    stored.deliveryCount++;
    this.afterUnlock(stored);
  }

  /** Gives the message back without counting an attempt (AMQP `released`: it was never processed). */
  release(lockToken: string): void {
    const stored = this.locked(lockToken);
    this.unlock(stored);
    this.afterUnlock(stored);
  }

  /** Sets the message aside: only receive-by-sequence-number (receiveDeferredMessages) returns it. */
  defer(lockToken: string, propertiesToModify?: Record<string, unknown>): void {
    const stored = this.locked(lockToken);
    this.modifyProperties(stored, propertiesToModify);
    this.unlock(stored);
    stored.state = "deferred";
    this.afterUnlock(stored);
  }

  deadLetter(lockToken: string, details: DeadLetterDetails): void {
    this.moveToDeadLetter(this.locked(lockToken), details);
  }

  /** Extends the lock by the queue's LockDuration from now; returns the new locked-until time. */
  renewLock(lockToken: string, nowMs = this.nowMs()): number {
    const stored = this.locked(lockToken);
    this.armLock(stored, nowMs + this.settings.lockDurationMs);
    return stored.lockedUntilMs as number;
  }

  /** Browses messages in every state, from a sequence number on, without locking them. */
  peek(fromSequenceNumber: number, maxCount: number, nowMs = this.nowMs()): StoredMessage[] {
    const found: StoredMessage[] = [];
    for (const stored of this.messages.values()) {
      if (found.length >= maxCount) break;
      if (stored.sequenceNumber < fromSequenceNumber) continue;
      if (stored.expiresAtMs <= nowMs && !stored.lockToken) continue; // expired, about to be swept
      found.push(stored);
    }
    return found;
  }

  /** Receives deferred messages by sequence number; fails, taking none, if any of them is not deferred. */
  receiveDeferred(sequenceNumbers: number[], mode: ReceiveMode, nowMs = this.nowMs()): StoredMessage[] {
    const found = sequenceNumbers.map((sequenceNumber) => {
      const stored = this.messages.get(sequenceNumber);
      if (stored?.state !== "deferred" || stored.lockToken) {
        throw new MessageNotFoundError(
          `The message with sequence number ${sequenceNumber} is not a deferred message in ${this.name}, or it is locked.`,
        );
      }
      return stored;
    });
    for (const stored of found) {
      if (mode === "receiveAndDelete") this.remove(stored);
      else this.lock(stored, nowMs);
    }
    return found;
  }

  counts(): QueueCounts {
    const counts: QueueCounts = { active: 0, locked: 0, scheduled: 0, deferred: 0, deadLettered: 0 };
    for (const stored of this.messages.values()) {
      if (stored.state === "active") counts.active++;
      else counts[stored.state]++;
      if (stored.lockToken && stored.state === "active") counts.locked++;
    }
    counts.deadLettered = this.deadLetterQueue?.messages.size ?? 0;
    return counts;
  }

  /** Drops every message and cancels every timer (emulator shutdown). */
  dispose(): void {
    for (const stored of this.messages.values()) this.cancelTimers(stored);
    this.messages.clear();
    this.ready.length = 0;
    this.locks.clear();
    this.recentMessageIds.clear();
    this.deadLetterQueue?.dispose();
  }

  // ------------------------------------------------------------------------------------ internals

  private store(message: EncodedMessage, nowMs: number, deliveryCount = 0): StoredMessage {
    const timeToLiveMs = this.isDeadLetterQueue ? Infinity : effectiveTimeToLive(message, this.settings);
    const stored: StoredMessage = {
      sequenceNumber: this.nextSequenceNumber++,
      message,
      state: "active",
      enqueuedAtMs: nowMs,
      timeToLiveMs,
      expiresAtMs: nowMs + timeToLiveMs,
      deliveryCount,
    };
    this.messages.set(stored.sequenceNumber, stored);
    return stored;
  }

  private isDuplicate(messageId: string, nowMs: number): boolean {
    if (this.isDeadLetterQueue || !this.settings.requiresDuplicateDetection) return false;
    const windowMs = this.settings.duplicateDetectionWindowMs;
    for (const [id, seenAtMs] of this.recentMessageIds) {
      if (nowMs - seenAtMs < windowMs) break;
      this.recentMessageIds.delete(id);
    }
    if (this.recentMessageIds.has(messageId)) return true;
    this.recentMessageIds.set(messageId, nowMs);
    return false;
  }

  /**
   * Activates every scheduled message that is due, in sequence-number order: messages scheduled for
   * the same time must reach receivers in the order they were scheduled, whichever timer fires first.
   */
  private activateScheduled(dueAtMs: number): void {
    const nowMs = Math.max(this.nowMs(), dueAtMs);
    const due = [...this.messages.values()].filter(
      (stored) => stored.state === "scheduled" && (stored.scheduledAtMs ?? 0) <= nowMs,
    );
    for (const stored of due) {
      stored.lockOrScheduleTimer?.cancel();
      stored.lockOrScheduleTimer = undefined;
      stored.state = "active";
      stored.enqueuedAtMs = nowMs; // Service Bus reports the scheduled time as the enqueued time
      stored.expiresAtMs = nowMs + stored.timeToLiveMs;
      this.armExpiry(stored);
      this.makeReady(stored);
    }
  }

  private makeReady(stored: StoredMessage): void {
    const last = this.ready.at(-1);
    if (!last || last.sequenceNumber < stored.sequenceNumber) this.ready.push(stored);
    else this.ready.splice(this.readyIndexOf(stored.sequenceNumber), 0, stored);
    this.onAvailable(this);
  }

  /** Binary search: where a sequence number is, or would go, in the ready list. */
  private readyIndexOf(sequenceNumber: number): number {
    let low = 0;
    let high = this.ready.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.ready[mid] as StoredMessage).sequenceNumber < sequenceNumber) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private removeFromReady(stored: StoredMessage): void {
    const at = this.readyIndexOf(stored.sequenceNumber);
    if (this.ready[at] === stored) this.ready.splice(at, 1);
  }

  private lock(stored: StoredMessage, nowMs: number): void {
    stored.lockToken = randomUUID();
    this.locks.set(stored.lockToken, stored);
    this.armLock(stored, nowMs + this.settings.lockDurationMs);
  }

  private armLock(stored: StoredMessage, untilMs: number): void {
    stored.lockedUntilMs = untilMs;
    stored.lockOrScheduleTimer?.cancel();
    const lockToken = stored.lockToken as string;
    stored.lockOrScheduleTimer = this.deadline(untilMs, () => {
      // A lapsed lock counts as a failed delivery attempt, exactly like an abandon.
      if (this.locks.get(lockToken) === stored) this.abandon(lockToken);
    });
  }

  private locked(lockToken: string): StoredMessage {
    const stored = this.locks.get(lockToken);
    if (!stored) throw new LockLostError(lockToken);
    return stored;
  }

  private unlock(stored: StoredMessage): void {
    if (stored.lockToken) this.locks.delete(stored.lockToken);
    stored.lockOrScheduleTimer?.cancel();
    stored.lockOrScheduleTimer = undefined;
    stored.lockToken = undefined;
    stored.lockedUntilMs = undefined;
  }

  /** Where a message goes once no receiver holds it: expired, dead-lettered, back in line, or left deferred. */
  private afterUnlock(stored: StoredMessage): void {
    if (stored.expiresAtMs <= this.nowMs()) this.expire(stored);
    else if (stored.deliveryCount >= this.settings.maxDeliveryCount && !this.isDeadLetterQueue) {
      this.moveToDeadLetter(stored, {
        reason: MAX_DELIVERY_REASON,
        description: `Message could not be consumed after ${this.settings.maxDeliveryCount} delivery attempts.`,
      });
    } else if (stored.state === "active") this.makeReady(stored);
  }

  private armExpiry(stored: StoredMessage): void {
    if (stored.expiresAtMs === Infinity) return;
    stored.expiryTimer = this.deadline(stored.expiresAtMs, () => {
      stored.expiryTimer = undefined;
      // A locked message outlives its TTL until the receiver lets go of it (afterUnlock checks again).
      if (!stored.lockToken && this.messages.get(stored.sequenceNumber) === stored) this.expire(stored);
    });
  }

  private expire(stored: StoredMessage): void {
    if (this.settings.deadLetteringOnMessageExpiration) {
      this.moveToDeadLetter(stored, {
        reason: TTL_EXPIRED_REASON,
        description: "The message expired and was dead lettered.",
      });
    } else this.remove(stored);
  }

  private moveToDeadLetter(stored: StoredMessage, details: DeadLetterDetails): void {
    const message = stored.message.withApplicationProperties({
      ...details.propertiesToModify,
      DeadLetterReason: details.reason,
      DeadLetterErrorDescription: details.description,
    });
    const dlq = this.deadLetterQueue;
    if (!dlq) {
      // There is no dead-letter queue below a dead-letter queue: the message stays, relabelled and unlocked.
      stored.message = message;
      this.unlock(stored);
      if (stored.state === "active") this.makeReady(stored);
      return;
    }
    this.remove(stored);
    dlq.makeReady(dlq.store(message, this.nowMs(), stored.deliveryCount));
  }

  private modifyProperties(stored: StoredMessage, propertiesToModify?: Record<string, unknown>): void {
    if (propertiesToModify) stored.message = stored.message.withApplicationProperties(propertiesToModify);
  }

  private remove(stored: StoredMessage): void {
    this.unlock(stored);
    this.cancelTimers(stored);
    if (stored.state === "active") this.removeFromReady(stored);
    this.messages.delete(stored.sequenceNumber);
  }

  private cancelTimers(stored: StoredMessage): void {
    stored.lockOrScheduleTimer?.cancel();
    stored.lockOrScheduleTimer = undefined;
    stored.expiryTimer?.cancel();
    stored.expiryTimer = undefined;
  }
}

/** The message's own TTL, capped by the queue's DefaultMessageTimeToLive (as Service Bus caps it). */
function effectiveTimeToLive(message: EncodedMessage, settings: QueueSettings): number {
  const ttl = message.timeToLiveMs;
  const own = ttl !== undefined && ttl > 0 ? ttl : Infinity;
  return Math.min(own, settings.defaultMessageTimeToLiveMs);
}

function scheduledEnqueueTimeOf(message: EncodedMessage): number | undefined {
  const value = message.annotation("x-opt-scheduled-enqueue-time");
  if (value instanceof Date) return value.getTime();
  if (typeof value === "number") return value;
  return undefined;
}

function messageIdKey(id: unknown): string {
  if (Buffer.isBuffer(id)) return `bin:${id.toString("hex")}`;
  return `${typeof id}:${String(id)}`;
}
