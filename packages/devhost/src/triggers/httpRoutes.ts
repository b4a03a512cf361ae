// HTTP trigger route templates, matched the way the Functions host (ASP.NET Core routing) matches them:
// literal segments compared case-insensitively; `{name}` parameters; optional `{name?}` and defaulted
// `{name=value}` parameters at the end; catch-all `{*rest}`; inline constraints such as `{id:int}`,
// `{code:alpha:length(3)}` or `{x:regex(^a+$)}`; and several parameters in one segment (`{a}.{b}`).
// When several routes match, the most specific wins: literals before constrained parameters, before
// plain parameters, before optional ones, before catch-alls.

type Constraint = (value: string) => boolean;

interface ParameterPart {
  kind: "parameter";
  name: string;
  optional: boolean;
  catchAll: boolean;
  defaultValue?: string;
  constraints: Constraint[];
}

type Part = { kind: "literal"; text: string } | ParameterPart;

interface Segment {
  parts: Part[];
  /** Specificity rank: lower is more specific. */
  rank: number;
  regex: RegExp;
  parameters: ParameterPart[];
}

export interface CompiledRoute {
  template: string;
  segments: Segment[];
  /** Route values for the path segments, or undefined when the path does not match. */
  match(pathSegments: string[]): Record<string, string> | undefined;
  /** Sort key: compare with compareRoutes. */
  ranks: number[];
}

const INT32 = /^-?\d{1,10}$/;

function numberIn(value: string, low: number, high: number): boolean {
  return /^-?\d+$/.test(value) && Number(value) >= low && Number(value) <= high;
}

function argNumbers(args: string, count: number, constraint: string, template: string): number[] {
  const values = args.split(",").map((a) => a.trim());
  if (values.length !== count || values.some((v) => !/^-?\d+$/.test(v))) {
    throw new Error(`Route "${template}": constraint "${constraint}" needs ${count} integer argument(s).`);
  }
  return values.map(Number);
}

function parseConstraint(text: string, template: string): Constraint {
  const call = /^([a-zA-Z]+)(?:\((.*)\))?$/s.exec(text);
  if (!call) throw new Error(`Route "${template}": cannot read the constraint "${text}".`);
  const name = (call[1] ?? "").toLowerCase();
  const args = call[2];
  switch (name) {
    case "int":
      return (v) => INT32.test(v) && Math.abs(Number(v)) <= 2 ** 31;
    case "long":
      return (v) => /^-?\d{1,19}$/.test(v);
    case "bool":
      return (v) => /^(true|false)$/i.test(v);
    case "datetime":
      return (v) => !Number.isNaN(Date.parse(v));
    case "decimal":
    case "double":
    case "float":
      return (v) => v.trim() !== "" && Number.isFinite(Number(v));
    case "guid":
      return (v) => /^\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i.test(v);
    case "alpha":
      return (v) => /^[a-z]+$/i.test(v);
    case "required":
      return (v) => v.length > 0;
    case "minlength": {
      const [min = 0] = argNumbers(args ?? "", 1, text, template);
      return (v) => v.length >= min;
    }
    case "maxlength": {
      const [max = 0] = argNumbers(args ?? "", 1, text, template);
      return (v) => v.length <= max;
    }
    case "length": {
      const values = (args ?? "").split(",");
      const [low = 0, high = low] = argNumbers(args ?? "", values.length === 2 ? 2 : 1, text, template);
      return (v) => v.length >= low && v.length <= high;
    }
    case "min": {
      const [min = 0] = argNumbers(args ?? "", 1, text, template);
      return (v) => numberIn(v, min, Number.MAX_SAFE_INTEGER);
    }
    case "max": {
      const [max = 0] = argNumbers(args ?? "", 1, text, template);
      return (v) => numberIn(v, Number.MIN_SAFE_INTEGER, max);
    }
    case "range": {
      const [low = 0, high = 0] = argNumbers(args ?? "", 2, text, template);
      return (v) => numberIn(v, low, high);
    }
    case "regex": {
      if (args === undefined) throw new Error(`Route "${template}": regex constraint needs a pattern.`);
      const pattern = new RegExp(args, "i");
      return (v) => pattern.test(v);
    }
    default:
      throw new Error(`Route "${template}": unknown route constraint "${name}".`);
  }
}

/** Splits `{name:c1:c2(arg:with:colons)}` on the colons outside parentheses. */
function splitConstraints(inner: string): string[] {
  const pieces: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of inner) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === ":" && depth === 0) {
      pieces.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  pieces.push(current);
  return pieces;
}

function parseParameter(inner: string, template: string): ParameterPart {
  const [head = "", ...constraintTexts] = splitConstraints(inner);
  let nameText = head;
  let optional = false;
  let defaultValue: string | undefined;
  const catchAll = nameText.startsWith("*");
  if (catchAll) nameText = nameText.replace(/^\*+/, "");
  // The `?` and `=default` may follow the name or the last constraint.
  let lastConstraint = constraintTexts.length > 0 ? constraintTexts[constraintTexts.length - 1] : undefined;
  const takeSuffix = (text: string): string => {
    const eq = text.indexOf("=");
    if (eq >= 0 && !text.slice(0, eq).includes("(")) {
      defaultValue = text.slice(eq + 1);
      text = text.slice(0, eq);
    }
    if (text.endsWith("?")) {
      optional = true;
      text = text.slice(0, -1);
    }
    return text;
  };
  if (lastConstraint !== undefined) {
    lastConstraint = takeSuffix(lastConstraint);
    constraintTexts[constraintTexts.length - 1] = lastConstraint;
  } else {
    nameText = takeSuffix(nameText);
  }
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(nameText)) {
    throw new Error(`Route "${template}": "{${inner}}" does not name a parameter.`);
  }
  return {
    kind: "parameter",
    name: nameText,
    optional: optional || catchAll,
    catchAll,
    ...(defaultValue !== undefined ? { defaultValue } : {}),
    constraints: constraintTexts.map((c) => parseConstraint(c, template)),
  };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function parseSegment(text: string, template: string): Segment {
  const parts: Part[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf("{", i);
    if (open < 0) {
      parts.push({ kind: "literal", text: text.slice(i) });
      break;
    }
    if (open > i) parts.push({ kind: "literal", text: text.slice(i, open) });
    // Find the matching brace, allowing braces inside a regex constraint's parentheses.
    let depth = 0;
    let close = -1;
    for (let j = open + 1; j < text.length; j++) {
      const ch = text[j];
      if (ch === "(") depth++;
      else if (ch === ")") depth--;
      else if (ch === "}" && depth === 0) {
        close = j;
        break;
      }
    }
    if (close < 0) throw new Error(`Route "${template}": unclosed "{" in segment "${text}".`);
    parts.push(parseParameter(text.slice(open + 1, close), template));
    i = close + 1;
  }
  const parameters = parts.filter((p): p is ParameterPart => p.kind === "parameter");
  if (parameters.length > 1 && parameters.some((p) => p.catchAll)) {
    throw new Error(`Route "${template}": a catch-all parameter must be alone in its segment.`);
  }
  const regexSource = parts
    .map((p) => (p.kind === "literal" ? escapeRegex(p.text) : p.catchAll ? "(.*)" : "(.+?)"))
    .join("");
  let rank: number;
  const only = parts.length === 1 ? parts[0] : undefined;
  if (parameters.length === 0) rank = 1;
  else if (!only) rank = 2;
  else if (parameters[0]?.catchAll) rank = 6;
  else if (parameters[0]?.optional || parameters[0]?.defaultValue !== undefined) rank = 5;
  else if ((parameters[0]?.constraints.length ?? 0) > 0) rank = 3;
  else rank = 4;
  return { parts, rank, regex: new RegExp(`^${regexSource}$`, "is"), parameters };
}

function canBeOmitted(segment: Segment): boolean {
  const only = segment.parts.length === 1 ? segment.parts[0] : undefined;
  return only?.kind === "parameter" && (only.optional || only.defaultValue !== undefined);
}

export function compileRoute(template: string): CompiledRoute {
  const trimmed = template.replace(/^[~/]+|\/+$/g, "");
  const segments = trimmed === "" ? [] : trimmed.split("/").map((text) => parseSegment(text, template));
  segments.forEach((segment, index) => {
    if (segment.parameters.some((p) => p.catchAll) && index !== segments.length - 1) {
      throw new Error(`Route "${template}": a catch-all parameter must be the last segment.`);
    }
  });
  const names = segments.flatMap((s) => s.parameters.map((p) => p.name.toLowerCase()));
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new Error(`Route "${template}": parameter "${duplicate}" appears twice.`);

  const match = (path: string[]): Record<string, string> | undefined => {
    const values: Record<string, string> = {};
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as Segment;
      const catchAll = segment.parameters.find((p) => p.catchAll);
      if (catchAll) {
        const rest = path.slice(i).join("/");
        if (rest !== "" && !catchAll.constraints.every((c) => c(rest))) return undefined;
        if (rest !== "") values[catchAll.name] = rest;
        else if (catchAll.defaultValue !== undefined) values[catchAll.name] = catchAll.defaultValue;
        return values;
      }
      const text = path[i];
      if (text === undefined) {
        // Missing trailing segments are fine only if every remaining one may be omitted.
        for (const rest of segments.slice(i)) {
          if (!canBeOmitted(rest)) return undefined;
          const p = rest.parameters[0];
          if (p?.defaultValue !== undefined) values[p.name] = p.defaultValue;
        }
        return values;
      }
      const found = segment.regex.exec(text);
      if (!found) return undefined;
      for (let k = 0; k < segment.parameters.length; k++) {
        const parameter = segment.parameters[k] as ParameterPart;
        const value = found[k + 1] ?? "";
        if (!parameter.constraints.every((c) => c(value))) return undefined;
        values[parameter.name] = value;
      }
    }
    return path.length === segments.length ? values : undefined;
  };
  return { template, segments, match, ranks: segments.map((s) => s.rank) };
}

/** Orders routes most specific first. */
export function compareRoutes(a: CompiledRoute, b: CompiledRoute): number {
  const length = Math.max(a.ranks.length, b.ranks.length);
  for (let i = 0; i < length; i++) {
    // A route that ends earlier loses to one that still has segments here only if those are literals.
    const ra = a.ranks[i] ?? 7;
    const rb = b.ranks[i] ?? 7;
    if (ra !== rb) return ra - rb;
  }
  return 0;
}
