import { app, type HttpRequest } from "@azure/functions";
import { API, httpTrigger } from "../api/apiOperations";
import { openApiRequest } from "../api/openApi";

/**
 * GET /api/openapi.json: the OpenAPI 3.1 description of every HTTP route of the app, for API Management, client
 * generators and people. Anonymous: it describes the routes and who may call them, and holds no secret.
 */
app.http(API.openApi.functionName, {
  ...httpTrigger(API.openApi),
  handler: (request: HttpRequest) => openApiRequest(request),
});
