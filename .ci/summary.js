// Prints vitest's JSON report as one closing line that any CI reader understands:
// "vitest: N passed, N failed, N skipped". Exits non-zero when the report is missing, nothing ran, or a test failed.
const fs = require("node:fs");

const file = process.argv[2];
let report;
try {
  report = JSON.parse(fs.readFileSync(file, "utf8"));
} catch (e) {
  console.error(`no test report at ${file}: ${e.message}`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
for (const suite of report.testResults ?? []) {
  if (suite.status === "failed" && (suite.assertionResults ?? []).length === 0) {
    console.error(`suite failed to run: ${suite.name}\n${suite.message ?? ""}`);
  }
}
console.log(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 || report.success === false ? 1 : 0);
