import { createHash } from "node:crypto";
import type { Container } from "@azure/cosmos";
import { cosmosStatus } from "./cosmosErrors";

/**
 * The full bodies of refused messages whose set-aside copy on rejected-messages could not carry them (a copy
 * adds the rejection's properties to the original, so an original near the broker's size limit no longer fits).
 * Each body is kept in the `rejected` container in parts small enough for a Cosmos DB item (2 MB, base64 taking a
 * third more), under a partition of its own named by the copy's `fullBodyAt` property (docs/contract.md#data).
 */
export interface SetAsideBodyDocument {
  /** `<body id>.<part>`. */
  id: string;
  /** The body id: what the set-aside copy names in `fullBodyAt`, and the partition every part is in. */
  orderId: string;
  part: number;
  parts: number;
  /** This part's bytes. */
  base64: string;
  /** The whole body's size and SHA-256, as the copy carries them: the parts joined must match both. */
  bodyBytes: number;
  sha256: string;
  sourceQueue: string;
  originalMessageId: string;
  originalContentType: string | null;
  storedAt: string;
}

/** The container the bodies are kept in. */
export const SET_ASIDE_CONTAINER = "rejected";

/** Bytes per part: 1 MiB, 1.33 MiB once in base64, under Cosmos DB's 2 MB per item with room for the rest. */
export const SET_ASIDE_PART_BYTES = 1024 * 1024;

export interface KeptBody {
  /** The body id, unique per set-aside message: the same message refused again keeps the same id. */
  id: string;
  parts: number;
  bodyBytes: number;
  sha256: string;
}

export class SetAsideBodies {
  constructor(private readonly container: Container) {}

  /**
   * Keeps `body`, in parts, under an id derived from `copyKey` (the set-aside copy's own key: the source queue and
   * the original's sequence number), so a redelivered refusal writes the same documents: a part already there
   * (409) is the same part.
   */
  async keep(
    copyKey: string,
    body: Buffer,
    about: { sourceQueue: string; originalMessageId: string; originalContentType: string | undefined },
    now: Date,
  ): Promise<KeptBody> {
    const id = createHash("sha256").update(copyKey).digest("hex");
    const sha256 = createHash("sha256").update(body).digest("hex");
    const parts = Math.max(1, Math.ceil(body.length / SET_ASIDE_PART_BYTES));
    for (let part = 0; part < parts; part++) {
      const document: SetAsideBodyDocument = {
        id: `${id}.${part}`,
        orderId: id,
        part,
        parts,
        base64: body
          .subarray(part * SET_ASIDE_PART_BYTES, (part + 1) * SET_ASIDE_PART_BYTES)
          .toString("base64"),
        bodyBytes: body.length,
        sha256,
        sourceQueue: about.sourceQueue,
        originalMessageId: about.originalMessageId,
        originalContentType: about.originalContentType ?? null,
        storedAt: now.toISOString(),
      };
      try {
        await this.container.items.create(document);
      } catch (error) {
        if (cosmosStatus(error) !== 409) throw error;
      }
    }
    return { id, parts, bodyBytes: body.length, sha256 };
  }

  /** The body kept under `id`, joined from its parts; null when there is none (or it has expired). */
  async read(id: string): Promise<Buffer | null> {
    const { resources } = await this.container.items
      .query<SetAsideBodyDocument>(
        {
          query: "SELECT * FROM c WHERE c.orderId = @id ORDER BY c.part",
          parameters: [{ name: "@id", value: id }],
        },
        { partitionKey: id },
      )
      .fetchAll();
    if (resources.length === 0 || resources.length !== resources[0]!.parts) return null;
    return Buffer.concat(resources.map((r) => Buffer.from(r.base64, "base64")));
  }
}
