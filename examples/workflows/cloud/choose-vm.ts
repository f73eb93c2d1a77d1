// Which VM a cloud tool acts on: the one named in the arguments if the caller may manage it, else a choice among
// the caller's own machines.
import type { RequestContext } from 'mrtr/server';
import type { Inventory, Vm } from './vms.js';

/** The VM, or a message saying why there is none to act on. */
export async function chooseVm(
  ctx: RequestContext,
  inventory: Inventory,
  vmId: string | undefined,
  verb: string,
): Promise<Vm | string> {
  if (vmId !== undefined) return inventory.manageable(ctx.principal, vmId) ?? `You have no VM ${vmId}`;
  const own = inventory.ownedBy(ctx.principal);
  if (own.length === 0) return 'You have no VMs';
  // Only what names a machine: a question is asked again when its text changes between rounds (an answer is never
  // applied to a question it was not given for), and other flows resize and stop machines all the time — listing
  // sizes made every concurrent resize re-ask everyone else's choice, past the round limit under load.
  const list = own.map((vm) => `${vm.id} ${vm.name} (${vm.environment})`).join('\n');
  const id = await ctx.ask.choose(
    `Which VM to ${verb}?\n${list}`,
    own.map((vm) => vm.id),
    { key: 'vm' },
  );
  // Read again: between the rounds it may have changed hands.
  return inventory.manageable(ctx.principal, id) ?? `You have no VM ${id}`;
}
