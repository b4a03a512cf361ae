/**
 * The limits of the Supervisor's check that every stored order was submitted (./submissions.ts), and the name of its
 * checkpoint, which src/app/dependencies.ts opens: a module of their own, so the composition root takes the name
 * without importing the check, which imports the composition root's types.
 */
export const SUBMISSION_CHECK = {
  /** The checkpoint document's name in the `leases` container. */
  checkpoint: "submissions-checked",
  /** How old a document must be before its missing record counts as missing. */
  graceSeconds: 120,
  /** Pages (of SUPERVISOR_PAGE_SIZE) per sweep; the rest waits for the next sweep. */
  maxPages: 10,
} as const;
