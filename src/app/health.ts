import type { CosmosClient } from "@azure/cosmos";
import type { ServiceBusClient } from "@azure/service-bus";
import { QUEUES } from "../domain";

/**
 * How long the health check waits for each dependency: a probe (a load balancer, a monitor) wants an answer now,
 * while the store's own retries of a failing request may go on for 20 s (infraResilience.ts).
 */
export const HEALTH_TIMEOUT_MS = 3_000;

/** What GET /api/health checks. */
export const DEPENDENCIES = ["store", "bus"] as const;
export type Dependency = (typeof DEPENDENCIES)[number];

/** Whether the app's two dependencies answer: the state store's database, and the bus (a sender's link). */
export class HealthProbe {
  constructor(
    private readonly cosmos: CosmosClient,
    private readonly database: string,
    private readonly serviceBus: ServiceBusClient,
  ) {}

  /** Each dependency, and the error it gave when it did not answer. */
  async check(): Promise<Array<{ what: Dependency; error?: unknown }>> {
    const probe = async (what: Dependency, check: () => Promise<unknown>) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${HEALTH_TIMEOUT_MS} ms`)),
          HEALTH_TIMEOUT_MS,
        );
      });
      try {
        await Promise.race([check(), late]);
        return { what };
      } catch (error) {
        return { what, error };
      } finally {
        clearTimeout(timer);
      }
    };
    const sender = this.serviceBus.createSender(QUEUES.alerts);
    try {
      return await Promise.all([
        probe("store", () => this.cosmos.database(this.database).read()),
        probe("bus", () => sender.createMessageBatch()),
      ]);
    } finally {
      await sender.close().catch(() => undefined);
    }
  }
}
