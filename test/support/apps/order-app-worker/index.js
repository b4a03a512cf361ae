// A second instance of the order app, for the "two supervisors at once" e2e test: the transpiled app entry
// (ORDER_APP_ENTRY, set by test/support/e2eChild.ts), loaded with this folder's host.json, which keeps the
// functions that need no durable task hub: the Supervisor and the three agents. In Azure every instance of the
// app shares one task hub; on the devhost each process owns its own, so a second full instance would start
// orchestrations the first cannot see and drop replies meant for the first one's orchestrations.
"use strict";

const entry = process.env.ORDER_APP_ENTRY;
if (!entry) throw new Error("ORDER_APP_ENTRY must name the transpiled order app entry (src/index.js)");
require(entry);
