// Entity queries, as the extension's `GET entities/{name}` answers them: the entities that exist, optionally of
// one name and by last operation time, with their state when asked, in pages carried by a continuation token.
import { fromJson } from "./history";
import type { EntityRecord } from "./store";

export interface EntityQuery {
  /** Entity function name (case-insensitive, as entity names are); all entities when absent. */
  name?: string;
  lastOperationTimeFrom?: Date;
  lastOperationTimeTo?: Date;
  fetchState?: boolean;
  /** Page size; all matches when absent. */
  top?: number;
  continuationToken?: string;
}

export interface EntityStatus {
  entityId: { name: string; key: string };
  lastOperationTime: string;
  state: unknown;
}

export interface EntityPage {
  entities: EntityStatus[];
  continuationToken?: string;
}

export function queryEntities(all: Iterable<EntityRecord>, q: EntityQuery): EntityPage {
  const name = q.name?.toLowerCase();
  let rows = [...all]
    .filter((e) => e.exists && (name === undefined || e.name === name))
    .filter(
      (e) => !q.lastOperationTimeFrom || Date.parse(e.lastModified) >= q.lastOperationTimeFrom.getTime(),
    )
    .filter((e) => !q.lastOperationTimeTo || Date.parse(e.lastModified) <= q.lastOperationTimeTo.getTime())
    .sort((a, b) => (a.schedulerId < b.schedulerId ? -1 : 1));
  if (q.continuationToken) {
    const after = decodeToken(q.continuationToken);
    rows = rows.filter((e) => e.schedulerId > after);
  }
  const page = q.top !== undefined ? rows.slice(0, q.top) : rows;
  const last = page[page.length - 1];
  return {
    entities: page.map((e) => ({
      entityId: { name: e.name, key: e.key },
      lastOperationTime: e.lastModified,
      state: q.fetchState && e.state !== undefined ? fromJson(e.state) : null,
    })),
    ...(q.top !== undefined && rows.length > q.top && last
      ? { continuationToken: Buffer.from(last.schedulerId).toString("base64url") }
      : {}),
  };
}

function decodeToken(token: string): string {
  const text = Buffer.from(token, "base64url").toString("utf8");
  if (!text.startsWith("@")) throw new InvalidEntityContinuationToken(token);
  return text;
}

export class InvalidEntityContinuationToken extends Error {
  constructor(token: string) {
    super(`Invalid continuation token '${token}': pass back the x-ms-continuation-token of a previous page`);
  }
}
