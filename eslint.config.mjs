import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";
import { rooms } from "./eslint.rooms.mjs";

export default tseslint.config(
  {
    ignores: ["**/dist/**", "**/node_modules/**", "coverage/**", ".ci/out/**", ".test-build/**"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
    },
  },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A dropped promise is a lost write or an unsettled message: the two bugs this project exists to prevent.
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      eqeqeq: ["error", "smart"],
      "no-restricted-syntax": [
        "error",
        {
          selector: "ImportDeclaration[source.value=/^@azure\\//]",
          message: "src/domain imports nothing from Azure: it is the pure state machine.",
        },
      ],
    },
  },
  {
    // The Azure import ban applies only to the domain.
    files: ["**/*.ts"],
    ignores: ["src/domain/**"],
    rules: { "no-restricted-syntax": "off" },
  },
  {
    // Vitest reads a fixture's dependencies from its first parameter's pattern: one with none is `({}, use) => ...`.
    files: ["test/**/*.ts", "packages/*/test/**/*.ts"],
    rules: { "no-empty-pattern": ["error", { allowObjectPatternsAsParameters: true }] },
  },
  // The three rooms (docs/architecture.md, "Layout: three rooms"): what each may import.
  {
    files: ["packages/devhost/**/*.{ts,js,mjs,cjs}"],
    plugins: { rooms },
    rules: {
      "rooms/imports": [
        "error",
        {
          room: "The devhost package",
          inside: ["packages/devhost"],
          packages: ["scheduler-agent-supervisor"],
        },
      ],
    },
  },
  {
    files: ["src/**/*.ts"],
    plugins: { rooms },
    rules: {
      "rooms/imports": [
        "error",
        { room: "The app", outside: ["tools", "packages", "bench", "test"], packages: ["devhost"] },
      ],
    },
  },
  {
    files: ["tools/**/*.ts"],
    plugins: { rooms },
    rules: {
      "rooms/imports": [
        "error",
        { room: "A tool", outside: ["src", "packages", "bench", "test"], except: ["src/domain"] },
      ],
    },
  },
  {
    // Plain JavaScript here is CommonJS (launchers, sample apps loaded as `func start` would) or Node ESM scripts.
    files: ["**/*.js", "**/*.cjs"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { ...globals.node },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["**/*.mjs"],
    languageOptions: { globals: { ...globals.node } },
  },
);
