import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";
import { rooms } from "./eslint.rooms.mjs";

/** The roles of src/: what the pattern does, one folder each (docs/architecture.md, "The rooms of src/"). */
const ROLES = ["agents", "scheduler", "supervisor", "submission", "api", "functions", "dashboard"];
/** The adapter rooms of src/: what talks to Azure, the remote services or OpenTelemetry. */
const ADAPTER_ROOMS = ["store", "messaging", "remote", "coordination", "resilience", "telemetry"].map(
  (r) => `src/${r}`,
);

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
  // The rooms of src/ (docs/architecture.md, "The rooms of src/"). The domain is pure: it imports only itself. The
  // adapter rooms hold what talks to Azure, the remote services or OpenTelemetry; src/app/dependencies.ts builds
  // them once per process, and the roles take them from there: a role imports an adapter room's types
  // (`import type`), and its values only where the list below says why.
  {
    files: ["src/domain/**/*.ts"],
    plugins: { rooms },
    rules: {
      "rooms/imports": ["error", { room: "The domain", inside: ["src/domain"], packages: ["devhost"] }],
    },
  },
  {
    files: ["src/{store,messaging,remote,coordination,resilience,telemetry}/**/*.ts"],
    plugins: { rooms },
    rules: {
      "rooms/imports": [
        "error",
        {
          room: "An adapter room",
          outside: [
            ...["tools", "packages", "bench", "test"],
            ...ROLES.map((role) => `src/${role}`),
            ...["src/app/dependencies", "src/index"],
          ],
          packages: ["devhost"],
        },
      ],
    },
  },
  {
    files: ROLES.map((role) => `src/${role}/**/*.ts`),
    plugins: { rooms },
    rules: {
      "rooms/adapters": [
        "error",
        {
          room: "A role",
          adapters: ADAPTER_ROOMS,
          values: [
            // Spans and metrics go through the OpenTelemetry API, whose calls are no-ops until telemetry.ts installs
            // a provider: there is nothing to build or hand over, and a span travels with the logger a role is
            // given. Every role annotates its own span and counts what it did.
            { from: "src/telemetry/tracing.ts" },
            { from: "src/telemetry/metrics.ts" },
            // Whether an error of the store or the bus is worth another try, and one line about it: pure functions
            // of the error, but they know the SDKs' error shapes (isServiceBusError), which the domain may not import.
            {
              from: "src/resilience/infraResilience.ts",
              names: ["isTransientInfraError", "infraPartOf", "describeInfraError"],
            },
            // A bounded wait: a function of a promise and a timer, reaching no client (the front door's fast path).
            { from: "src/resilience/waitAtMost.ts", names: ["waitAtMost"] },
            // The Scheduler and the Supervisor send the alert a transition decided and mark it sent: a function of
            // the notifications and the state store it is handed (dependencies.ts built them), reaching no client.
            { from: "src/messaging/decidedAlerts.ts", names: ["sendDecidedAlert"] },
            // The trace route reads the span buffer telemetry.ts set up before any function loaded (src/index.ts);
            // the functions, where the host meets the roles, hand it over as they hand over dependencies().
            { from: "src/telemetry/telemetry.ts", names: ["currentTelemetry"], in: ["src/functions"] },
          ],
        },
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
    // The dashboard's browser code runs in the page, not in Node.js (src/dashboard/browser/tsconfig.json).
    files: ["src/dashboard/browser/**/*.ts"],
    // globals@11 spells one name with a trailing space ("AudioWorkletGlobalScope "), which ESLint 9 refuses.
    languageOptions: {
      globals: Object.fromEntries(Object.entries(globals.browser).map(([name, kind]) => [name.trim(), kind])),
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
