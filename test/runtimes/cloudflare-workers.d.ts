// The one workerd module the worker entry imports: its bindings (secrets and text), readable while the module loads.
declare module 'cloudflare:workers' {
  export const env: Readonly<Record<string, string | undefined>>;
}
