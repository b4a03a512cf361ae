/**
 * The Service Bus emulator on its own: `node packages/devhost/dist/emulators/servicebus/cli.js
 * [--host 127.0.0.1] [--port 5672] [--config path/to/Config.json] [--max-message-size 262144]
 * [--tls-key key.pem --tls-cert cert.pem]`. With a TLS key and certificate it serves AMQPS (port 5671
 * by default). Prints the connection string and runs until SIGINT or SIGTERM.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { ServiceBusEmulator } from "./emulator";

const argsSchema = z.strictObject({
  host: z.string().min(1).default("127.0.0.1"),
  /** Default 5672, or 5671 with TLS (the emulator's defaults). */
  port: z.coerce.number().int().min(0).max(65_535).optional(),
  config: z.string().min(1).optional(),
  /** Bytes; default the Standard tier's 256 KiB. */
  "max-message-size": z.coerce.number().int().min(1).optional(),
  "tls-key": z.string().min(1).optional(),
  "tls-cert": z.string().min(1).optional(),
});

const USAGE =
  "usage: cli.js [--host <address>] [--port <number>] [--config <Config.json>] [--max-message-size <bytes>] [--tls-key <key.pem> --tls-cert <cert.pem>]";

function parseArgs(argv: string[]): z.infer<typeof argsSchema> {
  const raw: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] ?? "";
    const value = argv[i + 1];
    if (!flag.startsWith("--") || value === undefined) {
      throw new Error(`${USAGE}; got "${flag}"`);
    }
    raw[flag.slice(2)] = value;
  }
  const parsed = argsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `--${i.path.join(".") || "?"}: ${i.message}`).join("; "));
  }
  return parsed.data;
}

async function main(): Promise<void> {
  const {
    "max-message-size": maxMessageSizeBytes,
    "tls-key": tlsKey,
    "tls-cert": tlsCert,
    ...args
  } = parseArgs(process.argv.slice(2));
  if ((tlsKey === undefined) !== (tlsCert === undefined))
    throw new Error(`--tls-key and --tls-cert go together; ${USAGE}`);
  const emulator = new ServiceBusEmulator({
    ...args,
    maxMessageSizeBytes,
    tls: tlsKey && tlsCert ? { key: readFileSync(tlsKey), cert: readFileSync(tlsCert) } : undefined,
    log: (line) => process.stdout.write(`${line}\n`),
  });
  await emulator.start();
  process.stdout.write(`${emulator.connectionString}\n`);
  const shutdown = () => {
    emulator.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
