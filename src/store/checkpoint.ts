import type { Container } from "@azure/cosmos";
import { cosmosStatus } from "./cosmosErrors";

/** A checkpoint document in the `leases` container; its partition key (`orderId`) holds its name, as a lease's does. */
interface CheckpointDocument {
  id: string;
  orderId: string;
  value: string;
  _etag?: string;
}

/**
 * How far a periodic job has got, kept in one document so that the next run, on whichever instance, goes on from
 * there. Written only by conditional requests: two writers (a leader that lost its lease and the next) cannot
 * move it back.
 */
export class Checkpoint {
  constructor(
    private readonly container: Container,
    readonly name: string,
  ) {}

  async read(): Promise<{ value: string; etag: string } | undefined> {
    const { resource } = await this.container.item(this.name, this.name).read<CheckpointDocument>();
    return resource?._etag ? { value: resource.value, etag: resource._etag } : undefined;
  }

  /** Moves it to `value` from the version read (`etag`; undefined: none yet). False when someone moved first. */
  async write(value: string, etag: string | undefined): Promise<boolean> {
    const document: CheckpointDocument = { id: this.name, orderId: this.name, value };
    try {
      if (etag === undefined) await this.container.items.create(document);
      else
        await this.container
          .item(this.name, this.name)
          .replace(document, { accessCondition: { type: "IfMatch", condition: etag } });
      return true;
    } catch (error) {
      const status = cosmosStatus(error);
      if (status === 409 || status === 412) return false;
      throw error;
    }
  }
}
