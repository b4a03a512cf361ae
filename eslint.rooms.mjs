// The ESLint rule that keeps the repository's three rooms apart (docs/architecture.md, "Layout: three rooms"):
// which folders a file's imports may resolve into, and which packages it may not import by name. Relative
// imports are resolved against the importing file, so `../../src` from a package test and from the package's own
// sources are told apart correctly, which a pattern on the import text cannot do.
import path from "node:path";

const root = import.meta.dirname;

const within = (file, dir) => {
  const rel = path.relative(path.join(root, dir), file);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
};

/** A module's path without its extension or a trailing /index: `../store/cosmos` and `src/store/cosmos.ts` meet. */
const stem = (file) => file.replace(/\.(ts|tsx|mts|cts|js|mjs|cjs)$/, "").replace(/[\\/]index$/, "");

const roomImports = {
  meta: {
    type: "problem",
    docs: { description: "imports stay inside the folders a room may use" },
    schema: [
      {
        type: "object",
        properties: {
          room: { type: "string" },
          inside: { type: "array", items: { type: "string" } },
          outside: { type: "array", items: { type: "string" } },
          except: { type: "array", items: { type: "string" } },
          packages: { type: "array", items: { type: "string" } },
        },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { room = "this room", inside, outside = [], except = [], packages = [] } = context.options[0] ?? {};
    const check = (node, specifier) => {
      if (typeof specifier !== "string") return;
      if (!specifier.startsWith(".") && !path.isAbsolute(specifier)) {
        const name = packages.find((p) => specifier === p || specifier.startsWith(`${p}/`));
        if (name) context.report({ node, message: `${room} does not import ${name}.` });
        return;
      }
      const target = stem(path.resolve(path.dirname(context.filename), specifier));
      const allowed = except.some((dir) => within(target, dir))
        ? true
        : inside
          ? inside.some((dir) => within(target, dir))
          : !outside.some((dir) => within(target, dir));
      if (!allowed) {
        context.report({
          node,
          message: `${room} does not import ${path.relative(root, target) || "."} ("${specifier}").`,
        });
      }
    };
    const fromSource = (node) => check(node, node.source?.value);
    return {
      ImportDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ImportExpression: (node) => check(node, node.source.type === "Literal" ? node.source.value : undefined),
      CallExpression(node) {
        if (
          node.callee.type === "Identifier" &&
          node.callee.name === "require" &&
          node.arguments[0]?.type === "Literal"
        )
          check(node, node.arguments[0].value);
      },
    };
  },
};

// What a role may take from the adapter rooms of src/ (docs/architecture.md, "The rooms of src/"). An
// import that brings only types (`import type`, or every specifier `type`) is one kind; anything that loads the
// module at run time (a value, a namespace, a side-effect import, `export ... from`, `import()`, `require`) is the
// other, allowed only where `values` names the module (and, when it lists them, the names; `in`, the importers).
const adapterImports = {
  meta: {
    type: "problem",
    docs: { description: "the adapter rooms are taken as types, or built by src/app/dependencies.ts" },
    schema: [
      {
        type: "object",
        properties: {
          room: { type: "string" },
          adapters: { type: "array", items: { type: "string" } },
          values: {
            type: "array",
            items: {
              type: "object",
              properties: {
                from: { type: "string" },
                names: { type: "array", items: { type: "string" } },
                in: { type: "array", items: { type: "string" } },
              },
              required: ["from"],
              additionalProperties: false,
            },
          },
        },
        required: ["adapters"],
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { room = "this room", adapters, values = [] } = context.options[0];
    const file = context.filename;
    /** names: undefined when the import brings types only; else the value names it takes ("*": the whole module). */
    const check = (node, specifier, names) => {
      if (typeof specifier !== "string" || !specifier.startsWith(".")) return;
      const target = stem(path.resolve(path.dirname(file), specifier));
      if (names === undefined || !adapters.some((dir) => within(target, dir))) return;
      const allowed = values.find(
        (v) => stem(path.join(root, v.from)) === target && (!v.in || v.in.some((dir) => within(file, dir))),
      );
      const refused = allowed ? names.filter((n) => allowed.names && !allowed.names.includes(n)) : names;
      if (refused.length === 0) return;
      context.report({
        node,
        message:
          `${room} takes ${path.relative(root, target)} as types only (import type), or as src/app/dependencies.ts ` +
          `builds it: ${refused.map((n) => (n === "*" ? "the module itself" : n)).join(", ")} ` +
          `${refused.length > 1 ? "are values" : "is a value"}.`,
      });
    };
    const nameOf = (n) => (n.type === "Identifier" ? n.name : String(n.value));
    return {
      ImportDeclaration(node) {
        if (node.importKind === "type") return check(node, node.source.value, undefined);
        const taken = node.specifiers.filter((s) => s.importKind !== "type");
        if (node.specifiers.length > 0 && taken.length === 0)
          return check(node, node.source.value, undefined);
        const names = taken.map((s) =>
          s.type === "ImportSpecifier"
            ? nameOf(s.imported)
            : s.type === "ImportDefaultSpecifier"
              ? "default"
              : "*",
        );
        check(node, node.source.value, names.length > 0 ? names : ["*"]);
      },
      ExportNamedDeclaration(node) {
        if (!node.source) return;
        if (node.exportKind === "type") return check(node, node.source.value, undefined);
        const taken = node.specifiers.filter((s) => s.exportKind !== "type");
        if (node.specifiers.length > 0 && taken.length === 0)
          return check(node, node.source.value, undefined);
        check(node, node.source.value, taken.length > 0 ? taken.map((s) => nameOf(s.local)) : ["*"]);
      },
      ExportAllDeclaration(node) {
        check(node, node.source.value, node.exportKind === "type" ? undefined : ["*"]);
      },
      ImportExpression(node) {
        if (node.source.type === "Literal") check(node, node.source.value, ["*"]);
      },
      CallExpression(node) {
        if (
          node.callee.type === "Identifier" &&
          node.callee.name === "require" &&
          node.arguments[0]?.type === "Literal"
        )
          check(node, node.arguments[0].value, ["*"]);
      },
    };
  },
};

export const rooms = { rules: { imports: roomImports, adapters: adapterImports } };
