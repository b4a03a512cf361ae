// An app on @azure/functions 4.2, which reads the query from the host's query map, not from the URL (the test
// links node_modules/@azure/functions to 4.2.0 for this app).
const { app } = require("@azure/functions");

app.http("hello", {
  methods: ["GET"],
  authLevel: "anonymous",
  handler: async (request) => ({
    jsonBody: { name: request.query.get("name"), library: require("@azure/functions/package.json").version },
  }),
});
