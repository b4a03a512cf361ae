export * from "./validation";
export * from "./order";
export * from "./workflow";
export * from "./stateRecord";
export * from "./messages";
export * from "./retryBudget";
export * from "./transitionTable";
export * from "./transitions";
