import { hostname } from "node:os";
import { app, type InvocationContext, type Timer } from "@azure/functions";
import { dependencies } from "../app/dependencies";
import { sweep } from "../supervisor/sweep";
import { namedInvocation } from "./traced";

/** This process as a lease holder: stable across sweeps, so the leader renews its own lease. */
const holder = `${process.env.WEBSITE_INSTANCE_ID ?? hostname()}:${process.pid}`;

app.timer("supervisor", {
  schedule: "%SUPERVISOR_SCHEDULE%",
  handler: namedInvocation(async (_timer: Timer, context: InvocationContext) => {
    await sweep(dependencies(), context, holder);
  }),
});
