/**
 * The Service Bus emulator against azure-servicebus for Python: starts the emulator, runs
 * servicebus-python/conformance.py, and requires every test to pass, once per client (pythonRunner.ts):
 * - Debian 12's 7.8.2 on uamqp 1.5.3. It knows no UseDevelopmentEmulator and always uses TLS on port
 *   5671, so the emulator serves AMQPS for it with a throwaway certificate the client trusts through
 *   connection_verify, on a loopback address of its own (127.0.0.N), so that other runs on the machine
 *   keep their 5671.
 * - Debian 13's 7.14 on its pure-Python AMQP stack, which is strict about what the broker sends (every
 *   performative field by position, no AMQP defaults applied). It takes the emulator's own connection
 *   string (UseDevelopmentEmulator=true, plain AMQP on a free port), as a developer would use it.
 * Each run is skipped, saying what is missing, where its client (fetch-python-clients.sh fetches
 * Debian 13's) or, for TLS, openssl is not installed.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ServiceBusEmulator, type QueueProperties } from "../../src/emulators/servicebus";
import { queueConfig } from "../support/servicebus";
import {
  makeLoopbackCertificate,
  opensslVersion,
  type LoopbackCertificate,
} from "../support/loopbackCertificate";
import { findPythonServiceBusClients, runUnittest, type PythonServiceBus } from "./pythonRunner";

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

const clients = findPythonServiceBusClients();
const openssl = opensslVersion();

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

/** An emulator for one run: over TLS for a client that needs it, else plain AMQP on a free port. */
async function startFor(client: PythonServiceBus): Promise<{
  emulator: ServiceBusEmulator;
  certificate?: LoopbackCertificate;
}> {
  if (client.tls) return startOnLoopbackAddress();
  const emulator = new ServiceBusEmulator({ port: 0, config: queueConfig(QUEUES) });
  await emulator.start();
  return { emulator };
}

/** Runs conformance.py with one client against an emulator of its own (the tests leave messages behind). */
async function runSuite(client: PythonServiceBus): Promise<void> {
  const { emulator, certificate } = await startFor(client);
  try {
    const env: Record<string, string> = {
      ...client.env,
      SERVICEBUS_CONNECTION_STRING: emulator.connectionString,
      ...(certificate ? { SERVICEBUS_CA_FILE: certificate.certPath } : {}),
    };
    for (const role of Object.keys(QUEUES)) {
      env[`SERVICEBUS_QUEUE_${role.toUpperCase().replace(/-/g, "_")}`] = role;
    }
    const result = await runUnittest(client.python, SCRIPT, env, RUN_TIMEOUT_MS);
    const report = [...result.notPassed, "--- python output ---", result.output].join("\n");
    expect(result.ran, report).toBeGreaterThan(0);
    expect(result.notPassed, report).toEqual([]);
    expect(result.verdict, report).toBe("OK");
    expect(result.exitCode, report).toBe(0);
    // The one vitest test stands for many: the log says how many Python tests it ran.
    console.info(
      `servicebus-python (${client.name}): ${result.ran} unittest tests passed (${client.versions})`,
    );
  } finally {
    await emulator.stop();
    certificate?.dispose();
  }
}

describe("azure-servicebus for Python against the emulator", () => {
  for (const lookup of clients) {
    const missing =
      lookup.missing ??
      (lookup.client?.tls && !openssl
        ? "openssl is not on PATH (it makes the emulator's TLS certificate)"
        : undefined);
    const transport = lookup.client?.tls ? "AMQPS" : "plain AMQP, UseDevelopmentEmulator";
    it.skipIf(missing !== undefined)(
      `${lookup.release}'s client passes every test of servicebus-python/conformance.py (${lookup.client ? `${lookup.client.versions}; ${transport}` : `skipped: ${missing}`})`,
      () => runSuite(lookup.client!),
      RUN_TIMEOUT_MS + 15_000,
    );
    if (missing) console.warn(`servicebus-python.test.ts: ${lookup.release}'s client skipped, ${missing}`);
  }
});
