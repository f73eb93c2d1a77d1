// oidc-provider ships no types; the tests use a small part of it, typed loosely here.
declare module 'oidc-provider' {
  // biome-ignore lint/suspicious/noExplicitAny: the provider's configuration and context objects are untyped
  type Loose = any;
  const Provider: new (issuer: string, configuration: Loose) => Loose;
  export default Provider;
}
