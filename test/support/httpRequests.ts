import { HttpRequest } from "@azure/functions";

/** POST /api/orders with `order` as its JSON body, as the Functions library hands it to the front door. */
export function orderPost(order: unknown): HttpRequest {
  return new HttpRequest({
    method: "POST",
    url: "http://127.0.0.1:7071/api/orders",
    headers: { "content-type": "application/json" },
    body: { string: JSON.stringify(order) },
  });
}
