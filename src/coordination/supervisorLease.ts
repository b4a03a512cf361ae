import type { Container } from "@azure/cosmos";
import { cosmosStatus } from "../store/cosmosErrors";

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
  /**
   * The etag of each lease this instance wrote last, by name and holder: renewing or releasing it is then one
   * conditional request instead of a read and a write. A stale etag only costs the fallback (412: read, decide).
   */
  private readonly written = new Map<string, { etag: string; acquiredAt: string }>();

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
    const key = `${name}\u0000${holder}`;
    const known = this.written.get(key);
    try {
      // The fast paths: renew the lease this instance holds, or take one nobody holds (released, or never made).
      const { resource, etag } = known
        ? await this.container
            .item(name, name)
            .replace(
              { ...fresh, acquiredAt: known.acquiredAt },
              { accessCondition: { type: "IfMatch", condition: known.etag } },
            )
        : await this.container.items.create(fresh);
      this.written.set(key, {
        etag: resource?._etag ?? etag,
        acquiredAt: resource?.acquiredAt ?? fresh.acquiredAt,
      });
      return { acquired: true, expiresAt };
    } catch (error) {
      this.written.delete(key);
      const status = cosmosStatus(error);
      if (status !== 409 && status !== 412 && status !== 404) throw error;
    }
    const { resource: current } = await this.container.item(name, name).read<LeaseDocument>();
    try {
      if (!current) {
        const { resource } = await this.container.items.create(fresh);
        if (resource?._etag) this.written.set(key, { etag: resource._etag, acquiredAt: resource.acquiredAt });
        return { acquired: true, expiresAt };
      }
      const free = current.holder === holder || current.expiresAt <= now.toISOString();
      if (!free) return { acquired: false, holder: current.holder, expiresAt: current.expiresAt };
      const { resource } = await this.container
        .item(name, name)
        .replace(
          { ...fresh, acquiredAt: current.holder === holder ? current.acquiredAt : fresh.acquiredAt },
          { accessCondition: { type: "IfMatch", condition: current._etag! } },
        );
      if (resource?._etag) this.written.set(key, { etag: resource._etag, acquiredAt: resource.acquiredAt });
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

  /** Gives the lease up early (clean shutdown, or the end of a claim round), only if still held by `holder`. */
  async release(name: string, holder: string): Promise<void> {
    const key = `${name}\u0000${holder}`;
    const known = this.written.get(key);
    this.written.delete(key);
    let etag = known?.etag;
    if (!etag) {
      const { resource: current } = await this.container.item(name, name).read<LeaseDocument>();
      if (!current || current.holder !== holder) return;
      etag = current._etag!;
    }
    try {
      await this.container.item(name, name).delete({ accessCondition: { type: "IfMatch", condition: etag } });
    } catch (error) {
      // 412: someone took it over after it expired; 404: it is gone already. Either way it is not ours to delete.
      if (cosmosStatus(error) !== 412 && cosmosStatus(error) !== 404) throw error;
    }
  }
}
