/**
 * Vitest fixtures for the tests that run the whole app. Each harness is file-scoped: it starts when the first
 * test of a file that asks for it runs, is shared by the file's tests, and stops after the file. A test asks for
 * what it uses by destructuring it: `it("...", async ({ e2e, alerts }) => ...)`.
 */
import { test } from "vitest";
import { SAMPLE_REPLY_TO } from "./domain";
import { startE2E, type E2E, type E2EOptions } from "./e2e";
import { queueLog, type QueueLog } from "./e2eQueues";
import { startChildStack, type ChildStack } from "./e2eChild";

export interface E2EFixtures {
  /** The app on the devhost in this process, against the local stack. */
  e2e: E2E;
  /** What the alerts queue received during the file. */
  alerts: QueueLog;
  /** What the status queue the sample order names (e2eOrder's replyTo) received during the file. */
  statuses: QueueLog;
}

/** `it` with E2EFixtures, the app started with `settings` on top of E2E_SETTINGS (startE2E's arguments). */
export function e2eTest(settings: Record<string, string> = {}, options: E2EOptions = {}) {
  return test.extend<{ $file: E2EFixtures }>({
    e2e: [
      async ({}, use) => {
        const e2e = await startE2E(settings, options);
        await use(e2e);
        await e2e.stop();
      },
      { scope: "file" },
    ],
    alerts: [async ({ e2e }, use) => use(queueLog(e2e, "alerts")), { scope: "file" }],
    statuses: [async ({ e2e }, use) => use(queueLog(e2e, SAMPLE_REPLY_TO)), { scope: "file" }],
  });
}

/** `it` with `stack`: the local stack in this process, on which a test starts the app in child processes. */
export const childStackTest = test.extend<{ $file: { stack: ChildStack } }>({
  stack: [
    async ({}, use) => {
      const stack = await startChildStack();
      await use(stack);
      await stack.stop();
    },
    { scope: "file" },
  ],
});
