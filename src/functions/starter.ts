import { app, type InvocationContext, type Timer } from "@azure/functions";
import * as df from "durable-functions";
import { dependencies } from "../app/dependencies";
import { startAttemptsIn } from "./attemptStarts";
import { requestClaimRound } from "../scheduler/starter";
import { namedInvocation } from "./traced";

app.timer("starter", {
  schedule: "%STARTER_SCHEDULE%",
  extraInputs: [df.input.durableClient()],
  handler: namedInvocation(async (_timer: Timer, context: InvocationContext) => {
    await requestClaimRound(dependencies(), context, startAttemptsIn(context));
  }),
});
