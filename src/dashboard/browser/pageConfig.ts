/**
 * What the page tells its browser code, as JSON in a <script type="application/json"> element: written by
 * renderDashboardPage (src/dashboard/page.ts) and read by the modules here, so both sides name the same fields.
 */

/** The id of the element holding the JSON. */
export const DASHBOARD_CONFIG_ID = "dashboard-config";

export interface DashboardConfig {
  /** Path the operator API is served under, ending in "/". */
  apiBase: string;
  /** The simulator whose /_faults the fault panel drives; "" when there is no playground. */
  simulatorUrl: string;
  refreshMs: number;
  /** Every processState, in the order the count cards show them. */
  states: readonly string[];
  /** The states retry and cancel start from (src/domain/transitions/operator.ts). */
  operatorStates: { retry: readonly string[]; cancel: readonly string[] };
  /** Each service's operations, for the fault form. */
  operations: Record<string, readonly string[]>;
  signedInAs: { name: string; roles: string[]; canOperate: boolean };
}
