/**
 * What a soak run watches from outside the app: the state records, read straight from the Cosmos DB stand-in
 * (so they can be read while the app is down), and the operator alerts, drained from the `alerts` queue as
 * they arrive.
 */
import { ServiceBusClient, type ServiceBusReceiver } from "@azure/service-bus";
import { CosmosClient } from "@azure/cosmos";
import type { CosmosAccount } from "../localStack";
import {
  INFRA_FAULTS,
  infraFaultRecordSchema,
  type BreakerRecord,
  type InfraFaultRecord,
  type ProcessState,
  type StateRecord,
} from "../../src/domain";

export class StateReader {
  private readonly client: CosmosClient;
  /** `userAgentSuffix` marks this reader's requests, so that request counters can leave them out. */
  constructor(
    private readonly cosmos: CosmosAccount,
    options: { userAgentSuffix?: string } = {},
  ) {
    this.client = new CosmosClient({
      endpoint: cosmos.endpoint,
      key: cosmos.key,
      connectionPolicy: { enableEndpointDiscovery: false },
      ...(options.userAgentSuffix ? { userAgentSuffix: options.userAgentSuffix } : {}),
    });
  }

  private get container() {
    return this.client.database(this.cosmos.database).container("state");
  }

  /** Every state record, whole. */
  async all(): Promise<StateRecord[]> {
    const { resources } = await this.container.items.query<StateRecord>("SELECT * FROM c").fetchAll();
    return resources;
  }

  /** orderId → processState, for progress displays (a much smaller answer than `all`). */
  async states(): Promise<Map<string, ProcessState>> {
    const { resources } = await this.container.items
      .query<{ orderId: string; processState: ProcessState }>("SELECT c.orderId, c.processState FROM c")
      .fetchAll();
    return new Map(resources.map((r) => [r.orderId, r.processState]));
  }

  /** Every service's shared circuit breaker record (in the `leases` container), whole. */
  async breakers(): Promise<BreakerRecord[]> {
    const { resources } = await this.client
      .database(this.cosmos.database)
      .container("leases")
      .items.query<BreakerRecord>("SELECT * FROM c WHERE STARTSWITH(c.id, 'breaker:')")
      .fetchAll();
    return resources;
  }

  /** What the app has recorded of its own store and bus failing (src/domain/infraFaults.ts); undefined before any. */
  async infraFaults(): Promise<InfraFaultRecord | undefined> {
    const { resource } = await this.client
      .database(this.cosmos.database)
      .container("leases")
      .item(INFRA_FAULTS.recordId, INFRA_FAULTS.recordId)
      .read();
    return resource ? infraFaultRecordSchema.parse(resource) : undefined;
  }

  close(): void {
    this.client.dispose();
  }
}

export interface ObservedAlert {
  kind: string;
  /** The remote service of a ServiceUnavailable or ServiceRecovered alert. */
  service?: string;
  /** The alert's MessageId: `breaker:<service>:<outage>:<kind>` for a service's. */
  messageId?: string;
  orderId: string | null;
  processState: string | null;
  reason: string;
  at: string;
}

/** Collects every message on the `alerts` queue from now on (peek-lock, completed once recorded). */
export class AlertCollector {
  readonly alerts: ObservedAlert[] = [];
  private readonly client: ServiceBusClient;
  private readonly receiver: ServiceBusReceiver;

  constructor(serviceBusConnectionString: string) {
    this.client = new ServiceBusClient(serviceBusConnectionString);
    this.receiver = this.client.createReceiver("alerts");
    this.receiver.subscribe(
      {
        processMessage: async (message) => {
          this.alerts.push({
            ...(message.body as ObservedAlert),
            ...(typeof message.messageId === "string" ? { messageId: message.messageId } : {}),
          });
        },
        processError: async () => {
          // The emulator lives as long as the run; a transient link error is retried by the SDK.
        },
      },
      { autoCompleteMessages: true, maxConcurrentCalls: 4 },
    );
  }

  async close(): Promise<void> {
    await this.receiver.close();
    await this.client.close();
  }
}
