// How a pet is named in stock messages.

/** How a pet is named in messages: "Nemo (#6)". */
export function petLabel(pet: { name: string; id: number }): string {
  return `${pet.name} (#${pet.id})`;
}
