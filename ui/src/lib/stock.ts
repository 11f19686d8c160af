// The Pets screen's stock buttons: the reason they write, and how a pet is named.

/** The reason kept in the stock history for the Pets screen's −/+ buttons. */
export const COUNTER_REASON = 'Counted at the counter';

/** How a pet is named in messages: "Nemo (#6)". */
export function petLabel(pet: { name: string; id: number }): string {
  return `${pet.name} (#${pet.id})`;
}
