import { defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

// Tests run against TypeScript sources: an import of a workspace package ("devhost") resolves through its
// package.json "exports" condition "source" to its src/, so no build is needed first.
const conditions = ["source", ...defaultServerConditions.filter((c) => c !== "module")];

export default defineConfig({
  test: {
    // The app, its tools and benchmarks (this folder), and each workspace package with its own config.
    projects: [
      {
        resolve: { conditions },
        ssr: { resolve: { conditions } },
        // The global setup runs in vitest's own environment, which takes no conditions from the two above.
        environments: { __vitest__: { resolve: { conditions } } },
        test: {
          name: "app",
          include: ["test/**/*.test.ts"],
          globalSetup: ["test/support/globalSetup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      "packages/*/vitest.config.mts",
    ],
    // Integration and e2e tests start emulators on port 0 in their own process; two cores are plenty
    // for a few files at a time, and more only adds contention on the event loops under test.
    maxWorkers: 2,
  },
});
