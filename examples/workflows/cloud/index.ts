// Cloud administration. One inventory, one file per tool: delete_vm (consent bound to the VM and its state) joins
// resize_vm here once the human controls exist.
import type { McpServer } from 'mrtr/server';
import { registerResizeVm } from './resize-vm.js';
import { Inventory, openCloud } from './vms.js';

export function registerCloud(server: McpServer, dataDir: string): Inventory {
  const inventory = new Inventory(openCloud(dataDir));
  registerResizeVm(server, inventory);
  return inventory;
}
