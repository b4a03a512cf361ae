/** Plain-text tables for terminals and logs: columns padded to their widest cell, numbers right-aligned. */
export function formatTable(
  header: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
): string {
  const cells = rows.map((row) =>
    row.map((cell) => (typeof cell === "number" ? cell.toLocaleString("en-US") : cell)),
  );
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((row) => typeof row[i] === "number"));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? "").length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}
