// `resize_vm`: changes a VM's size. A missing VM id is asked as a choice among the caller's own machines; a
// production machine needs a written justification, which the change log keeps.
import { type McpServer, type RequestContext, text } from 'mrtr/server';
import { z } from 'zod';
import { chooseVm } from './choose-vm.js';
import { type Inventory, SIZES } from './vms.js';

const Input = z.object({
  vmId: z.string().max(40).optional().describe('Leave out to choose among your VMs'),
  size: z.enum(SIZES),
});

export function registerResizeVm(server: McpServer, inventory: Inventory): void {
  const resize = inventory.db.prepare('UPDATE vms SET size = ? WHERE id = ?');
  server.tool(
    {
      name: 'resize_vm',
      title: 'Resize a VM',
      description: 'Resizes one of your VMs; asks which when not named, and why when it is in production',
      input: Input,
    },
    async ({ vmId, size }, ctx: RequestContext) => {
      // This flow resized already (its answer was lost, and the client sent the round again): the VM now has the new
      // size, so a fresh look would say "already" — answer with what the flow did instead.
      const done = inventory.changeOf(ctx.flowId, 'resize');
      if (done) return text(`${done.vmId} resized from ${done.detail.from} to ${done.detail.to}`);
      const vm = await chooseVm(ctx, inventory, vmId, `resize to ${size}`);
      if (typeof vm === 'string') return text(vm, { isError: true });
      if (vm.size === size) return text(`${vm.id} is already ${size}`);
      let justification = '';
      if (vm.environment === 'production')
        justification = await ctx.ask.text(
          `${vm.id} (${vm.name}) is in production: why resize it to ${size}?`,
          {
            key: 'justification',
            minLength: 10,
            maxLength: 500,
          },
        );
      const by = ctx.principal?.subject ?? 'anonymous';
      await ctx.ask.step('resize', () =>
        inventory.change(ctx.flowId, vm, 'resize', { from: vm.size, to: size, justification }, by, () =>
          resize.run(size, vm.id),
        ),
      );
      ctx.audit.note({ vm: vm.id, from: vm.size, to: size });
      return text(`${vm.id} resized from ${vm.size} to ${size}`);
    },
  );
}
