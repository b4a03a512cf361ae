export * from "./result";
export * from "./submission";
export * from "./claim";
export * from "./steps";
export * from "./compensation";
export * from "./supervisor";
export * from "./operator";
export * from "./alerts";
