/**
 * What a printed line must not hold raw, lest it start a line of its own or read as another: C0 controls, DEL, C1
 * controls, the line and paragraph separators, and the bidirectional controls. Written out here rather than taken
 * from src/domain/validation.ts, so that a test of the escaping does not check the code against itself.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is what it is for
export const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
