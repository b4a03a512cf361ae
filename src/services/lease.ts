import type { Container } from "@azure/cosmos";
import { cosmosStatus } from "./cosmos";

/** A lease document in the `leases` container; its partition key (`orderId`) holds the lease name. */
interface LeaseDocument {
  id: string;
  orderId: string;
  holder: string;
  expiresAt: string;
  acquiredAt: string;
  _etag?: string;
}

export type LeaseResult =
  { acquired: true; expiresAt: string } | { acquired: false; holder: string; expiresAt: string };

/**
 * Leader election by lease (the Leader Election pattern): one document per lease name, taken with a
 * conditional write. The holder renews it by acquiring again before it expires; a crashed holder's lease simply
 * runs out and the next candidate takes it. Clocks of the candidates must agree within a small fraction of the
 * lease duration, which holds for Azure hosts (NTP-synchronised).
 */
export class LeaseManager {
  constructor(private readonly container: Container) {}

  async tryAcquire(name: string, holder: string, seconds: number, now: Date): Promise<LeaseResult> {
    const expiresAt = new Date(now.getTime() + seconds * 1000).toISOString();
    const fresh: LeaseDocument = {
      id: name,
      orderId: name,
      holder,
      expiresAt,
      acquiredAt: now.toISOString(),
    };
    const { resource: current } = await this.container.item(name, name).read<LeaseDocument>();
    try {
      if (!current) {
        await this.container.items.create(fresh);
        return { acquired: true, expiresAt };
      }
      const free = current.holder === holder || current.expiresAt <= now.toISOString();
      if (!free) return { acquired: false, holder: current.holder, expiresAt: current.expiresAt };
      await this.container
        .item(name, name)
        .replace(
          { ...fresh, acquiredAt: current.holder === holder ? current.acquiredAt : fresh.acquiredAt },
          { accessCondition: { type: "IfMatch", condition: current._etag! } },
        );
      return { acquired: true, expiresAt };
    } catch (error) {
      const status = cosmosStatus(error);
      // 409: another candidate created it first; 412: another candidate renewed or took it first.
      if (status === 409 || status === 412) {
        const { resource: winner } = await this.container.item(name, name).read<LeaseDocument>();
        return { acquired: false, holder: winner?.holder ?? "unknown", expiresAt: winner?.expiresAt ?? "" };
      }
      throw error;
    }
  }

  /** Gives the lease up early (clean shutdown), only if still held by `holder`. */
  async release(name: string, holder: string): Promise<void> {
    const { resource: current } = await this.container.item(name, name).read<LeaseDocument>();
    if (!current || current.holder !== holder) return;
    try {
      await this.container
        .item(name, name)
        .delete({ accessCondition: { type: "IfMatch", condition: current._etag! } });
    } catch (error) {
      if (cosmosStatus(error) !== 412 && cosmosStatus(error) !== 404) throw error;
    }
  }
}
