/**
 * Entry of the Functions app (package.json "main"). The Functions host (or the devhost) loads this file; the
 * modules below register the functions through @azure/functions and durable-functions.
 *
 * Settings are validated first: a bad value stops start-up here, with a message naming the setting.
 */
import { getConfig } from "./config";

getConfig();

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
