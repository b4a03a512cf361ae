/**
 * What a Cosmos DB REST path addresses: `/dbs/{db}/colls/{coll}/docs/{id}` and its parents. Segments stay as the
 * client encoded them, so a path built from them reaches the same resource on the server behind the gateway.
 */
export type Resource =
  | { kind: "account" }
  | { kind: "databases" }
  | { kind: "containers"; db: string }
  | { kind: "container"; db: string; coll: string }
  | { kind: "documents"; db: string; coll: string }
  | { kind: "document"; db: string; coll: string; doc: string }
  | { kind: "other" };

const PATTERNS: [RegExp, (m: string[]) => Resource][] = [
  [/^\/$/, () => ({ kind: "account" })],
  [/^\/dbs$/, () => ({ kind: "databases" })],
  [/^\/dbs\/([^/]+)\/colls$/, ([db = ""]) => ({ kind: "containers", db })],
  [/^\/dbs\/([^/]+)\/colls\/([^/]+)$/, ([db = "", coll = ""]) => ({ kind: "container", db, coll })],
  [/^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs$/, ([db = "", coll = ""]) => ({ kind: "documents", db, coll })],
  [
    /^\/dbs\/([^/]+)\/colls\/([^/]+)\/docs\/([^/]+)$/,
    ([db = "", coll = "", doc = ""]) => ({ kind: "document", db, coll, doc }),
  ],
];

/** Classifies a request URL; like the server, it tolerates a doubled leading slash and trailing slashes. */
export function resourceOf(url: string): Resource {
  const pathname = url.split("?")[0] ?? "";
  const path = "/" + pathname.replace(/^\/+/, "").replace(/\/+$/, "");
  for (const [pattern, build] of PATTERNS) {
    const match = pattern.exec(path);
    if (match) return build(match.slice(1));
  }
  return { kind: "other" };
}

/** The REST path of a container, for requests the gateway makes itself. */
export const containerPath = (db: string, coll: string): string => `/dbs/${db}/colls/${coll}`;
