/**
 * Where the top-level clauses of a Cosmos DB SQL query start, by character offset. The query engine's parser
 * keeps no source positions, so a rewrite that must leave the rest of the text as written (partitionScope.ts)
 * finds the clauses here: keywords inside string literals, comments, brackets (subqueries) or after a `.` or
 * `@` (a property or parameter named like a keyword) are not clauses.
 */
export type ClauseKeyword = "SELECT" | "FROM" | "WHERE" | "GROUP BY" | "ORDER BY" | "OFFSET" | "LIMIT";

export interface Clause {
  keyword: ClauseKeyword;
  /** Offset of the keyword's first character. */
  start: number;
  /** Offset just past the keyword (past `BY` for the two-word ones). */
  end: number;
}

const SINGLE_WORD: ReadonlySet<string> = new Set(["SELECT", "FROM", "WHERE", "OFFSET", "LIMIT"]);
const BEFORE_BY: ReadonlySet<string> = new Set(["GROUP", "ORDER"]);

const isIdentifierStart = (ch: string): boolean => /[A-Za-z_]/.test(ch);
const isIdentifierPart = (ch: string): boolean => /[A-Za-z0-9_]/.test(ch);

/** The top-level clauses of `sql`, in order. */
export function topLevelClauses(sql: string): Clause[] {
  const clauses: Clause[] = [];
  let depth = 0;
  let previousSignificant = "";
  let i = 0;
  const skipSpace = (from: number): number => {
    let j = from;
    while (j < sql.length && /\s/.test(sql.charAt(j))) j += 1;
    return j;
  };
  const wordAt = (from: number): string => {
    let j = from;
    while (j < sql.length && isIdentifierPart(sql.charAt(j))) j += 1;
    return sql.slice(from, j);
  };
  while (i < sql.length) {
    const ch = sql.charAt(i);
    if (/\s/.test(ch)) {
      i += 1;
    } else if (ch === "'" || ch === '"') {
      i = endOfString(sql, i);
      previousSignificant = ch;
    } else if (ch === "-" && sql.charAt(i + 1) === "-") {
      while (i < sql.length && sql.charAt(i) !== "\n") i += 1;
    } else if ("([{".includes(ch)) {
      depth += 1;
      previousSignificant = ch;
      i += 1;
    } else if (")]}".includes(ch)) {
      depth -= 1;
      previousSignificant = ch;
      i += 1;
    } else if (isIdentifierStart(ch)) {
      const word = wordAt(i);
      const upper = word.toUpperCase();
      const isName = previousSignificant === "." || previousSignificant === "@";
      let end = i + word.length;
      if (depth === 0 && !isName) {
        if (SINGLE_WORD.has(upper)) {
          clauses.push({ keyword: upper as ClauseKeyword, start: i, end });
        } else if (BEFORE_BY.has(upper)) {
          const next = skipSpace(end);
          if (wordAt(next).toUpperCase() === "BY") {
            end = next + 2;
            clauses.push({ keyword: `${upper} BY` as ClauseKeyword, start: i, end });
          }
        }
      }
      previousSignificant = "a";
      i = end;
    } else {
      previousSignificant = ch;
      i += 1;
    }
  }
  return clauses;
}

/** Offset just past the string literal that opens at `start`, honouring backslash escapes. */
function endOfString(sql: string, start: number): number {
  const quote = sql.charAt(start);
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql.charAt(i);
    if (ch === "\\") i += 2;
    else if (ch === quote) return i + 1;
    else i += 1;
  }
  return sql.length;
}
