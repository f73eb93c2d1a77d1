// The environment a stdio server starts with: a few variables a program needs to run, not the host's secrets.
// Other MCP hosts do the same (the official SDKs pass HOME, LOGNAME, PATH, SHELL, TERM, USER on POSIX).

/** Variables passed on to a stdio server by default. */
export const INHERITED_ENV_VARS: readonly string[] = Object.freeze(
  process.platform === 'win32'
    ? [
        'APPDATA',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'USERNAME',
        'USERPROFILE',
      ]
    : ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'],
);

/** The minimal environment from `from` (default: this process's), plus `extra` on top. */
export function minimalEnvironment(
  extra: Record<string, string | undefined> = {},
  from: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED_ENV_VARS) {
    const v = from[name];
    // A value that looks like a shell function definition is not passed on (shellshock-style injection).
    if (v !== undefined && !v.startsWith('()')) env[name] = v;
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}
