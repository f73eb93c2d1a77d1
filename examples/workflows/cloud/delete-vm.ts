// `delete_vm`: deletes a VM, only with the person's consent to exactly that VM as it is now — its id, name, size,
// state and owner. The facts are read from the inventory again at every round and at the moment of deletion: a VM
// resized, started, stopped or handed over since the yes is refused, and the person is asked again on a new call.
import type { HumanControls } from 'mrtr/controls';
import { type McpServer, type RequestContext, text } from 'mrtr/server';
import { z } from 'zod';
import { chooseVm } from './choose-vm.js';
import type { Inventory, Vm } from './vms.js';

const Input = z.object({
  vmId: z.string().max(40).optional().describe('Leave out to choose among your VMs'),
});

/** What the person consents to: the VM as the inventory holds it now. */
const effectOf = (vm: Vm) => ({
  tool: 'delete_vm',
  vm: vm.id,
  name: vm.name,
  size: vm.size,
  state: vm.state,
  owner: vm.owner,
});

export function registerDeleteVm(server: McpServer, inventory: Inventory, controls: HumanControls): void {
  const remove = inventory.db.prepare('UPDATE vms SET state = ? WHERE id = ?');
  server.tool(
    {
      name: 'delete_vm',
      title: 'Delete a VM',
      description: 'Deletes one of your VMs after you consent to exactly that VM in its current state',
      input: Input,
    },
    async ({ vmId }, ctx: RequestContext) => {
      const vm = await chooseVm(ctx, inventory, vmId, 'delete');
      if (typeof vm === 'string') return text(vm, { isError: true });
      const consent = await controls.consent(ctx, {
        effect: effectOf(vm),
        message: `Delete ${vm.id} (${vm.name})? This cannot be undone.`,
      });
      // Fresh facts at the point of execution: what changed since the yes is not what the person agreed to.
      const now = inventory.manageable(ctx.principal, vm.id);
      if (!now) return text(`You have no VM ${vm.id}`, { isError: true });
      const by = ctx.principal?.subject ?? 'anonymous';
      return consent.execute(effectOf(now), () => {
        // A row is kept (state `deleted`) so that the change log's reference stays valid.
        inventory.change(ctx.flowId, now, 'delete', effectOf(now), by, () => remove.run('deleted', now.id));
        ctx.audit.note({ vm: now.id, deleted: true });
        return text(`${now.id} (${now.name}) deleted`);
      });
    },
  );
}
