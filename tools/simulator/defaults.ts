/**
 * The simulator's business rules as numbers, apart from its server so that code which only needs them (sample
 * orders that must pass or exceed the payment limit) does not load an HTTP server.
 */
export const DEFAULT_SIMULATOR_PORT = 7081;
/** A charge whose amount exceeds this is declined (402) unless the simulator is told otherwise. */
export const DEFAULT_PAYMENT_LIMIT = 10_000;
/** Stock of a sku the simulator is not given. */
export const DEFAULT_STOCK = 1_000;
