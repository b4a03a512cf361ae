/**
 * The leader leases: one document each in the `leases` container, named here. The starter's lease serialises
 * claim rounds (the timer, the fast path after a submission, the operator API), so MAX_IN_FLIGHT is strict; it
 * is long enough for one round, short enough that a crashed claimer blocks the next one only briefly. The
 * Supervisor's lease elects the one instance that sweeps, for SUPERVISOR_LEASE_SECONDS.
 */
export const STARTER_LEASE = "starter";
export const STARTER_LEASE_SECONDS = 15;
export const SUPERVISOR_LEASE = "supervisor";
