/**
 * The simulator's faults through its HTTP API (`/_faults`, docs/simulator.md): how a client arms, lists and
 * removes faults when the simulator runs elsewhere or it holds no handle to it, as the app's tests and the
 * benchmarks do.
 */
import type { Fault } from "./faults";
import type { FaultSpec } from "./schemas";

export interface SimulatorFaults {
  /** Arms a fault; resolves with it (its id, for `remove`). Throws if the simulator refuses the spec. */
  add(spec: FaultSpec): Promise<Fault>;
  /** The armed faults, with what each has hit so far. */
  list(): Promise<Fault[]>;
  /** Removes one fault; throws if the simulator has no such fault. */
  remove(id: string): Promise<void>;
  /** Removes every fault. */
  clear(): Promise<void>;
}

/** The faults of the simulator at `simulatorUrl` (its base URL, no trailing slash). */
export function simulatorFaults(simulatorUrl: string): SimulatorFaults {
  const faultsUrl = `${simulatorUrl}/_faults`;
  return {
    async add(spec) {
      const res = await fetch(faultsUrl, { method: "POST", body: JSON.stringify(spec) });
      if (res.status !== 201) throw new Error(`fault refused: ${res.status} ${await res.text()}`);
      return (await res.json()) as Fault;
    },
    async list() {
      const res = await fetch(faultsUrl);
      if (res.status !== 200) throw new Error(`faults not listed: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { faults: Fault[] }).faults;
    },
    async remove(id) {
      const res = await fetch(`${faultsUrl}/${encodeURIComponent(id)}`, { method: "DELETE" });
      if (res.status !== 204) throw new Error(`fault ${id} not removed: ${res.status} ${await res.text()}`);
    },
    async clear() {
      const res = await fetch(faultsUrl, { method: "DELETE" });
      if (res.status !== 204) throw new Error(`faults not cleared: ${res.status} ${await res.text()}`);
    },
  };
}
