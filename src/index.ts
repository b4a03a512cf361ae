/**
 * Entry of the Functions app (package.json "main"). The Functions host (or the devhost) loads this file; the
 * modules below register the functions through @azure/functions and durable-functions.
 *
 * Settings are validated first: a bad value stops start-up here, with a message naming the setting. Telemetry is
 * set up next, before any function module (or Azure SDK) loads, so that what instruments them sees them load.
 */
import { getConfig } from "./config";
import { setupTelemetry } from "./telemetry/telemetry";

setupTelemetry(getConfig().telemetry);

import "./functions/submitOrder";
import "./functions/httpApi";
import "./functions/starter";
import "./functions/scheduler";
import "./functions/agents";
import "./functions/agentReplies";
import "./functions/supervisor";
import "./functions/supervisorDeadline";
import "./functions/dashboard";
import "./functions/openApi";
