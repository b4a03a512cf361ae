/**
 * Entry of the Functions app (package.json "main"). The Functions host (or the devhost) loads this file, and the
 * modules it imports register their functions through @azure/functions and durable-functions.
 *
 * Settings are validated first: a bad value stops start-up here, with a message naming the setting.
 */
import { getConfig } from "./config";

getConfig();
