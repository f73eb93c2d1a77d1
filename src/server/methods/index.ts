// The method table: one file per method, as one operation per file in jose.
import { completionComplete } from './completion-complete.js';
import { serverDiscover } from './discover.js';
import { promptsList, resourcesList, resourceTemplatesList, toolsList } from './lists.js';
import type { MethodHandler } from './method.js';
import { promptsGet } from './prompts-get.js';
import { resourcesRead } from './resources-read.js';
import { subscriptionsListen } from './subscriptions-listen.js';
import { tasksCancel, tasksGet, tasksUpdate } from './tasks.js';
import { toolsCall } from './tools-call.js';

export type { Call, Core, FoundTool, MethodHandler } from './method.js';

/** Every request method this server answers. A null prototype: a method name is client-chosen text. */
export const METHODS: Readonly<Record<string, MethodHandler>> = Object.assign(Object.create(null), {
  'server/discover': serverDiscover,
  'tools/list': toolsList,
  'prompts/list': promptsList,
  'resources/list': resourcesList,
  'resources/templates/list': resourceTemplatesList,
  'completion/complete': completionComplete,
  'tools/call': toolsCall,
  'prompts/get': promptsGet,
  'resources/read': resourcesRead,
  'subscriptions/listen': subscriptionsListen,
  'tasks/get': tasksGet,
  'tasks/update': tasksUpdate,
  'tasks/cancel': tasksCancel,
} satisfies Record<string, MethodHandler>);
