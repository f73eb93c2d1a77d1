// tasks/get, tasks/update and tasks/cancel (the tasks extension, SEP-2663): only for a client that declares the
// extension on the request, and only for the principal who made the task — any other id is "not found".
import {
  declaresTasks,
  ErrorCode,
  McpError,
  type Result,
  TASKS_REQUIRED_DATA,
} from '../../protocol/index.js';
import type { TaskService } from '../tasks/task-service.js';
import type { Call, Core, MethodHandler } from './method.js';

function tasksFor(core: Core, call: Call): TaskService {
  if (!core.tasks) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${call.request.method}`);
  if (!declaresTasks(call.meta.clientCapabilities))
    throw new McpError(
      ErrorCode.MissingRequiredClientCapability,
      `Missing required client capability: ${call.request.method} needs the io.modelcontextprotocol/tasks extension declared on the request`,
      TASKS_REQUIRED_DATA,
    );
  return core.tasks;
}

export const tasksGet: MethodHandler = (core, call) =>
  tasksFor(core, call)
    .get(call.params.taskId, call.env.principal)
    .then((task) => ({ ...task, resultType: 'complete' }) as unknown as Result);

export const tasksUpdate: MethodHandler = (core, call) =>
  tasksFor(core, call)
    .update(call.params.taskId, call.env.principal, call.params.inputResponses)
    .then(() => ({ resultType: 'complete' }));

export const tasksCancel: MethodHandler = (core, call) =>
  tasksFor(core, call)
    .cancel(call.params.taskId, call.env.principal, call.request.id)
    .then(() => ({ resultType: 'complete' }));
