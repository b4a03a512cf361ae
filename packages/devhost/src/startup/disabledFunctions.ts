// Functions disabled by app setting, read as the host reads them. The WebJobs SDK the host runs on decides it in
// HostListenerFactory.IsDisabled (azure-webjobs-sdk src/Microsoft.Azure.WebJobs.Host/Listeners/
// HostListenerFactory.cs): the setting `AzureWebJobs.<function>.Disabled`, or `AzureWebJobs_<function>_Disabled`
// (Linux has no dots in environment variable names), is "enabled" when its value is "1" or "true" in any case
// (IConfiguration.IsSettingEnabled). Configuration keys match in any case, so the function name does too. A
// disabled function gets no listener (no timer, no receiver), which the host logs as "Function '<name>' is
// disabled"; its HTTP route still matches but answers 404 (FunctionInvocationMiddleware in
// azure-functions-host src/WebJobs.Script.WebHost/Middleware). The Microsoft Learn page "How to disable functions
// in Azure Functions" names the first form.
//
// `AzureWebJobs__<function>__Disabled` is not one of them: .NET configuration reads "__" in an environment
// variable as the section separator ":", which neither name the SDK looks up contains. The devhost warns of it.

export function disabledSettingNames(functionName: string): string[] {
  return [`AzureWebJobs.${functionName}.Disabled`, `AzureWebJobs_${functionName}_Disabled`];
}

/** The value of `name` in `env`, the name matched in any case as .NET configuration keys are. */
function settingValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  if (env[name] !== undefined) return env[name];
  const lower = name.toLowerCase();
  const key = Object.keys(env).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : env[key];
}

/** IsSettingEnabled: "1" or "true", in any case; nothing else (no trimming, no "yes"). */
function isSettingEnabled(value: string | undefined): boolean {
  return value !== undefined && (value === "1" || value.toLowerCase() === "true");
}

export function isFunctionDisabled(functionName: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return disabledSettingNames(functionName).some((name) => isSettingEnabled(settingValue(env, name)));
}

/** Warnings for settings of the `AzureWebJobs__<function>__Disabled` form, which the host does not read. */
export function unreadDisabledSettings(
  functionNames: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const warnings: string[] = [];
  for (const name of functionNames) {
    const doubleUnderscore = `AzureWebJobs__${name}__Disabled`;
    if (settingValue(env, doubleUnderscore) === undefined) continue;
    warnings.push(
      `The setting ${doubleUnderscore} does not disable ${name}: the host reads ` +
        `${disabledSettingNames(name).join(" or ")}.`,
    );
  }
  return warnings;
}
