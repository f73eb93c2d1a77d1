// Cloud administration. One inventory, one file per tool: resize_vm, and delete_vm (consent bound to the VM and its
// state, through the human controls).
import type { HumanControls } from 'mrtr/controls';
import type { McpServer } from 'mrtr/server';
import { registerDeleteVm } from './delete-vm.js';
import { registerResizeVm } from './resize-vm.js';
import { Inventory, openCloud } from './vms.js';

export function registerCloud(server: McpServer, dataDir: string, controls: HumanControls): Inventory {
  const inventory = new Inventory(openCloud(dataDir));
  registerResizeVm(server, inventory);
  registerDeleteVm(server, inventory, controls);
  return inventory;
}
