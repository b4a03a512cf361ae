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
      const target = path.resolve(path.dirname(context.filename), specifier);
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

export const rooms = { rules: { imports: roomImports } };
