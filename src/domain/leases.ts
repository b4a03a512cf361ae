/**
 * The leader lease: one document in the `leases` container. The Supervisor's lease elects the one instance that
 * sweeps, for SUPERVISOR_LEASE_SECONDS. (Claim rounds need no lease: admission places keep MAX_IN_FLIGHT strict
 * while rounds run at once, src/domain/admission.ts.)
 */
export const SUPERVISOR_LEASE = "supervisor";
