// Which latency profile a run uses, and with which seed: the `latencyProfile`/`latencySeed` options (the CLI's
// --latency-profile and --latency-seed), else the DEVHOST_LATENCY_PROFILE and DEVHOST_LATENCY_SEED settings, else
// none. A value that is not allowed stops the start with a message naming the setting and what it allows.
import { randomInt } from "node:crypto";
import { z } from "zod";
import {
  LATENCY_PROFILE_NAMES,
  LATENCY_PROFILES,
  latencyProfileSchema,
  type LatencyProfile,
} from "./profiles";
import type { LatencyProfileName } from "./profiles";
import { MAX_SEED } from "./random";

export const LATENCY_PROFILE_SETTING = "DEVHOST_LATENCY_PROFILE";
export const LATENCY_SEED_SETTING = "DEVHOST_LATENCY_SEED";

const nameSchema = z.enum(LATENCY_PROFILE_NAMES);
const seedSchema = z.coerce.number().int().min(0).max(MAX_SEED);

/** A profile name, checked; `where` names the setting or flag in the error. */
export function parseLatencyProfileName(value: string, where: string): LatencyProfileName {
  const parsed = nameSchema.safeParse(value.trim());
  if (!parsed.success) {
    throw new Error(
      `${where}: "${value}" is not a latency profile; allowed: ${LATENCY_PROFILE_NAMES.join(", ")}.`,
    );
  }
  return parsed.data;
}

/** A seed, checked: an unsigned 32-bit integer. */
export function parseLatencySeed(value: string | number, where: string): number {
  const parsed = /^\s*\d+\s*$/.test(String(value)) ? seedSchema.safeParse(value) : undefined;
  if (!parsed?.success) {
    throw new Error(`${where}: "${value}" is not a seed; allowed: an integer from 0 to ${MAX_SEED}.`);
  }
  return parsed.data;
}

export interface LatencyChoice {
  profile: LatencyProfile;
  seed: number;
  /** Where the seed came from, for the start-up line. */
  seedFrom: "option" | "setting" | "random";
}

/** The profile in effect (undefined for "none") and its seed. */
export function chooseLatency(
  options: { latencyProfile?: LatencyProfileName | LatencyProfile; latencySeed?: number },
  env: NodeJS.ProcessEnv = process.env,
): LatencyChoice | undefined {
  const setting = env[LATENCY_PROFILE_SETTING];
  const given =
    options.latencyProfile ??
    (setting !== undefined && setting !== ""
      ? parseLatencyProfileName(setting, LATENCY_PROFILE_SETTING)
      : "none");
  let profile: LatencyProfile;
  if (typeof given === "string") {
    const name = parseLatencyProfileName(given, "latencyProfile");
    if (name === "none") return undefined;
    profile = LATENCY_PROFILES[name];
  } else {
    const parsed = latencyProfileSchema.safeParse(given);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
      throw new Error(`latencyProfile: the profile is invalid: ${problems.join("; ")}`);
    }
    profile = given;
  }
  if (options.latencySeed !== undefined) {
    return { profile, seed: parseLatencySeed(options.latencySeed, "latencySeed"), seedFrom: "option" };
  }
  const seedSetting = env[LATENCY_SEED_SETTING];
  if (seedSetting !== undefined && seedSetting !== "") {
    return { profile, seed: parseLatencySeed(seedSetting, LATENCY_SEED_SETTING), seedFrom: "setting" };
  }
  return { profile, seed: randomInt(0, MAX_SEED), seedFrom: "random" };
}
