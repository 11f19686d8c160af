// Who made a record, in words: the staff member (and the manager who approved it), or the
// API key that acted as itself; a record from before the shop kept staff has nobody.
import type { Actor } from './bindings/Actor';
import { t } from './i18n.svelte';

/** "Ana", "Ana, approved by Bea", "API key label printer", "The shop's own key"; null: nobody. */
export function actorName(actor: Actor | null): string | null {
  if (!actor) return null;
  const name =
    actor.staff?.name ?? (actor.key ? t('staff.activity.key', { name: actor.key }) : t('staff.activity.operator'));
  return actor.approvedBy ? t('staff.activity.approved', { name, manager: actor.approvedBy.name }) : name;
}
