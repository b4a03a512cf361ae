/**
 * JSON text of a value that came from JSON (a message body as the trigger parsed it), however deeply it nests.
 * JSON.parse reads a body nested 50,000 deep, but JSON.stringify recurses and overflows the stack on it; so does
 * the Service Bus SDK, which stringifies an object body. A message set aside for being invalid must still be
 * forwarded, so its text is made here, without recursion when the plain way overflows.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
  }
  return iterativeJsonText(value);
}

type Frame =
  | { kind: "array"; items: readonly unknown[]; next: number }
  | { kind: "object"; entries: Array<[string, unknown]>; next: number };

/** JSON.stringify's output for plain JSON values, with an explicit stack instead of the call stack. */
function iterativeJsonText(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = (value: unknown): void => {
    if (Array.isArray(value)) {
      out.push("[");
      stack.push({ kind: "array", items: value, next: 0 });
    } else if (value !== null && typeof value === "object") {
      out.push("{");
      const entries = Object.entries(value).filter(
        ([, v]) => v !== undefined && typeof v !== "function" && typeof v !== "symbol",
      );
      stack.push({ kind: "object", entries, next: 0 });
    } else {
      out.push(JSON.stringify(value) ?? "null");
    }
  };
  open(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.kind === "array") {
      if (top.next >= top.items.length) {
        out.push("]");
        stack.pop();
        continue;
      }
      if (top.next > 0) out.push(",");
      open(top.items[top.next++]);
    } else {
      if (top.next >= top.entries.length) {
        out.push("}");
        stack.pop();
        continue;
      }
      const [key, value] = top.entries[top.next++]!;
      out.push(`${top.next > 1 ? "," : ""}${JSON.stringify(key)}:`);
      open(value);
    }
  }
  return out.join("");
}
