import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "devhost",
    include: ["test/**/*.test.ts"],
    // Integration tests start emulators on port 0 in their own process; two cores are plenty for a few files at
    // a time, and more only adds contention on the event loops under test.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
