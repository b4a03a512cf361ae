/**
 * One Service Bus topic in memory: what senders send to it is copied into each subscription whose rules
 * select it. Each subscription is a MessageQueue (peek-lock, settlement, lock renewal, delivery counts,
 * TTL, dead-lettering), named `<topic>/Subscriptions/<name>` as clients address it.
 *
 * The topic's own intake is a MessageQueue too, which nobody receives from: it gives the topic duplicate
 * detection and scheduled messages (schedule-message and cancel-scheduled on `<topic>/$management`) as
 * queues have them. The moment a message becomes active there, it is taken out and fanned out.
 */
import { QUEUE_DEFAULTS, type SubscriptionSettings, type TopicSettings } from "./config";
import type { EncodedMessage } from "./encodedMessage";
import { MessageQueue, type AvailabilityListener } from "./queue";
import { copiesFor, sqlValueOf, systemPropertiesOf, type SubscriptionCopy } from "./subscriptionRules";
import type { FilterableMessage } from "./sqlFilter";
import type { EmulatorClock } from "./wallClockTimer";

export class Subscription {
  readonly queue: MessageQueue;
  constructor(
    readonly settings: SubscriptionSettings,
    onAvailable: AvailabilityListener,
    clock?: EmulatorClock,
  ) {
    this.queue = new MessageQueue(settings, onAvailable, false, clock);
  }

  get name(): string {
    return this.settings.subscriptionName;
  }

  /** Stores the copies of a message this subscription's rules select. */
  offer(message: EncodedMessage, view: FilterableMessage): void {
    for (const copy of copiesFor(this.settings.rules, view)) this.queue.send(applyCopy(message, copy));
  }
}

export class Topic {
  readonly name: string;
  /** Where senders' messages land first; emptied as soon as a message is active. */
  readonly intake: MessageQueue;
  /** Subscriptions by lower-cased name: entity names are case-insensitive. */
  readonly subscriptions = new Map<string, Subscription>();

  constructor(settings: TopicSettings, onSubscriptionAvailable: AvailabilityListener, clock?: EmulatorClock) {
    this.name = settings.name;
    this.intake = new MessageQueue(
      {
        ...QUEUE_DEFAULTS,
        name: settings.name,
        requiresDuplicateDetection: settings.requiresDuplicateDetection,
        duplicateDetectionWindowMs: settings.duplicateDetectionWindowMs,
        // The TTL is the subscriptions' to apply (each has the topic's as its upper bound).
      },
      () => this.fanOut(),
      false,
      clock,
    );
    for (const subscription of settings.subscriptions) {
      this.subscriptions.set(
        subscription.subscriptionName.toLowerCase(),
        new Subscription(subscription, onSubscriptionAvailable, clock),
      );
    }
  }

  /** Drops every message and timer (emulator shutdown). */
  dispose(): void {
    this.intake.dispose();
    for (const subscription of this.subscriptions.values()) subscription.queue.dispose();
  }

  /** Moves every active message of the intake into the subscriptions that select it. */
  private fanOut(): void {
    for (let stored = this.intake.receive("receiveAndDelete"); stored;) {
      const view = filterableView(stored.message);
      for (const subscription of this.subscriptions.values()) subscription.offer(stored.message, view);
      stored = this.intake.receive("receiveAndDelete");
    }
  }
}

/** What a rule sees of a message: its system properties and application properties. */
export function filterableView(message: EncodedMessage): FilterableMessage {
  const user = new Map(
    Object.entries(message.applicationProperties()).map(
      ([name, value]) => [name, sqlValueOf(value)] as const,
    ),
  );
  return { system: systemPropertiesOf(message.systemProperties()), user };
}

/** The copy a subscription stores: the message as sent, or as the rule's action changed it. */
function applyCopy(message: EncodedMessage, copy: SubscriptionCopy): EncodedMessage {
  if (!copy.changes) return message;
  const user: Record<string, unknown> = Object.fromEntries(copy.changes.user);
  // Learn, "Topic filters and actions": a copy made by a rule with an action carries RuleName.
  if (copy.ruleName !== undefined) user.RuleName = copy.ruleName;
  return message
    .withoutApplicationProperties(copy.changes.removed)
    .withApplicationProperties(user)
    .withSystemProperties(copy.changes.system);
}
