// The names of what the activity log's entries are about, for the one page shown: the log
// keeps a subject's id ("pet 4"), and a clerk knows the pet as Rex. Pets are read with one
// list_pets call for the page's ids; categories from the category list, a page at a time
// until the page's are found; staff from the list the screen already has for its person
// filter. An order has a number, not a name, and a key's id is its name already. What
// cannot be found (a pet deleted since, a failed read) keeps its id: the names are a help
// to read the log, never a reason not to show it.
import { listCategories, MAX_PAGE, petsByIds } from './api';
import type { ActivityEntry } from './bindings/ActivityEntry';
import type { StaffMember } from './bindings/StaffMember';
import type { Subject } from './bindings/Subject';

/** Names found for a page's subjects, by `entity:id`. */
export type SubjectNames = ReadonlyMap<string, string>;

const key = (entity: string, id: string | number) => `${entity}:${id}`;

/** The numeric ids of the page's subjects of this entity, each once. */
function idsOf(entries: readonly ActivityEntry[], entity: string): number[] {
  const ids = entries
    .filter((e) => e.subject?.entity === entity && /^\d+$/.test(e.subject.id))
    .map((e) => Number(e.subject!.id));
  return [...new Set(ids)];
}

async function petNames(ids: number[]): Promise<[string, string][]> {
  if (ids.length === 0) return [];
  const pets = await petsByIds(ids);
  return [...pets.values()].map((p) => [key('pet', p.id), p.name]);
}

// The category list has no filter by id: read it a page at a time, and stop as soon as
// every category of the page is named (a deleted one reads it to its end).
async function categoryNames(ids: number[]): Promise<[string, string][]> {
  const wanted = new Set(ids);
  const found: [string, string][] = [];
  for (let offset = 0; wanted.size > 0; ) {
    const page = await listCategories({ limit: MAX_PAGE, offset });
    for (const c of page.items) {
      if (wanted.delete(c.id)) found.push([key('category', c.id), c.name]);
    }
    offset += page.items.length;
    if (page.items.length === 0 || offset >= page.total) break;
  }
  return found;
}

/** The names of the pets and categories the entries are about; those not found are left out. */
export async function fetchSubjectNames(entries: readonly ActivityEntry[]): Promise<SubjectNames> {
  const reads = await Promise.allSettled([petNames(idsOf(entries, 'pet')), categoryNames(idsOf(entries, 'category'))]);
  return new Map(
    reads.flatMap((r) => {
      if (r.status === 'fulfilled') return r.value;
      console.warn('The activity log shows ids where names could not be read:', r.reason);
      return [];
    }),
  );
}

/** The subject's name when it is known (a staff member's from `staff`), else null. */
export function nameOfSubject(subject: Subject, names: SubjectNames, staff: readonly StaffMember[]): string | null {
  if (subject.entity === 'staff') return staff.find((m) => String(m.id) === subject.id)?.name ?? null;
  return names.get(key(subject.entity, subject.id)) ?? null;
}
