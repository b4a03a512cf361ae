/** Where the emulators listen unless told otherwise: the official emulators' and the SDKs' defaults. */
export const DEFAULT_SERVICE_BUS_PORT = 5672;
/** AMQPS, which clients use without UseDevelopmentEmulator=true. */
export const DEFAULT_SERVICE_BUS_TLS_PORT = 5671;
export const DEFAULT_COSMOS_PORT = 8081;
