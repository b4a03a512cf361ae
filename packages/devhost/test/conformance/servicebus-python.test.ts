/**
 * The Service Bus emulator against azure-servicebus for Python, as Debian bookworm ships it (7.8.2 on
 * uamqp 1.5.3): starts the emulator, runs servicebus-python/conformance.py, and requires every test to
 * pass. That client always uses TLS on port 5671 (it knows no UseDevelopmentEmulator), so the emulator
 * serves AMQPS here with a throwaway certificate the client trusts through connection_verify, on a
 * loopback address of its own (127.0.0.N), so that other runs on the machine keep their 5671. Skipped,
 * saying what is missing, where the Python modules or openssl are not installed.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceBusEmulator, type QueueProperties } from "../../src/emulators/servicebus";
import { queueConfig } from "../support/servicebus";
import {
  makeLoopbackCertificate,
  opensslVersion,
  type LoopbackCertificate,
} from "../support/loopbackCertificate";
import { findPythonServiceBus, runUnittest } from "./pythonRunner";

/** One queue per test, read by the script from SERVICEBUS_QUEUE_<ROLE>. */
const QUEUES: Record<string, QueueProperties> = {
  "py-send-receive": {},
  "py-batch": {},
  "py-abandon": {},
  "py-dead-letter": {},
  "py-deferral": {},
  "py-locks": { LockDuration: "PT5S" },
  "py-scheduling": {},
  "py-peek": {},
  "py-properties": {},
  "py-sizes": {},
  "py-max-delivery": { MaxDeliveryCount: 2 },
  "py-lock-lost": { LockDuration: "PT1S" },
  "py-renewal": { LockDuration: "PT5S" },
  "py-expiry": { DeadLetteringOnMessageExpiration: true },
  "py-duplicates": { RequiresDuplicateDetection: true, DuplicateDetectionHistoryTimeWindow: "PT1M" },
  "py-refusals": {},
};

const SCRIPT = join(import.meta.dirname, "servicebus-python", "conformance.py");
const AMQPS_PORT = 5671;
const RUN_TIMEOUT_MS = 180_000;

const python = findPythonServiceBus();
const openssl = opensslVersion();
const missing = !python
  ? "azure-servicebus and uamqp are not importable (Debian: apt-get install python3-azure python3-uamqp)"
  : !openssl
    ? "openssl is not on PATH (it makes the emulator's TLS certificate)"
    : undefined;

/** Starts the emulator over TLS on 127.0.0.N:5671, trying other N where 5671 is taken. */
async function startOnLoopbackAddress(): Promise<{
  emulator: ServiceBusEmulator;
  certificate: LoopbackCertificate;
}> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 8; attempt++) {
    const host = `127.0.0.${2 + Math.floor(Math.random() * 250)}`;
    const certificate = await makeLoopbackCertificate(host);
    const emulator = new ServiceBusEmulator({
      host,
      port: AMQPS_PORT,
      config: queueConfig(QUEUES),
      tls: { key: certificate.key, cert: certificate.cert },
    });
    try {
      await emulator.start();
      return { emulator, certificate };
    } catch (error) {
      lastError = error;
      certificate.dispose();
    }
  }
  throw new Error(`no loopback address with port ${AMQPS_PORT} free: ${String(lastError)}`);
}

describe("azure-servicebus for Python against the emulator", () => {
  let started: { emulator: ServiceBusEmulator; certificate: LoopbackCertificate } | undefined;

  beforeAll(async () => {
    if (!missing) started = await startOnLoopbackAddress();
  });
  afterAll(async () => {
    await started?.emulator.stop();
    started?.certificate.dispose();
  });

  it.skipIf(missing !== undefined)(
    `passes every test of servicebus-python/conformance.py (${python ? python.versions : `skipped: ${missing}`})`,
    async () => {
      const { emulator, certificate } = started!;
      const env: Record<string, string> = {
        SERVICEBUS_CONNECTION_STRING: emulator.connectionString,
        SERVICEBUS_CA_FILE: certificate.certPath,
      };
      for (const role of Object.keys(QUEUES)) {
        env[`SERVICEBUS_QUEUE_${role.toUpperCase().replace(/-/g, "_")}`] = role;
      }
      const result = await runUnittest(python!.python, SCRIPT, env, RUN_TIMEOUT_MS);
      const report = [...result.notPassed, "--- python output ---", result.output].join("\n");
      expect(result.ran, report).toBeGreaterThan(0);
      expect(result.notPassed, report).toEqual([]);
      expect(result.verdict, report).toBe("OK");
      expect(result.exitCode, report).toBe(0);
      // The one vitest test stands for many: the log says how many Python tests it ran.
      console.info(`servicebus-python: ${result.ran} unittest tests passed (${python!.versions})`);
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});

if (missing) console.warn(`servicebus-python.test.ts: skipped, ${missing}`);
