// The request methods of revision 2026-07-28 that mrtr serves, and their request and result definitions in
// schema.json (used by the server's validators and by tests that check what goes over the wire).

export const REQUEST_DEFINITION: Readonly<Record<string, string>> = {
  'server/discover': 'DiscoverRequest',
  'tools/list': 'ListToolsRequest',
  'tools/call': 'CallToolRequest',
  'prompts/list': 'ListPromptsRequest',
  'prompts/get': 'GetPromptRequest',
  'resources/list': 'ListResourcesRequest',
  'resources/templates/list': 'ListResourceTemplatesRequest',
  'resources/read': 'ReadResourceRequest',
  'completion/complete': 'CompleteRequest',
  'subscriptions/listen': 'SubscriptionsListenRequest',
};

export const RESULT_DEFINITION: Readonly<Record<string, string>> = {
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'completion/complete': 'CompleteResult',
  'subscriptions/listen': 'SubscriptionsListenResult',
};

/** Error codes whose responses have their own schema definition. */
export const ERROR_DEFINITION: Readonly<Record<number, string>> = {
  [-32020]: 'HeaderMismatchError',
  [-32021]: 'MissingRequiredClientCapabilityError',
  [-32022]: 'UnsupportedProtocolVersionError',
};
