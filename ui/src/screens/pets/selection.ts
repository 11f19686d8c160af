// "Show its pets" on the Categories screen opens the Pets screen with that category
// selected. The screens are separate components mounted by the hash (#pets), so the choice
// is handed over here and taken once by the Pets screen when it mounts.

let pending: number | null = null;

/** Opens the Pets screen with the pets of this category. */
export function showPetsOf(categoryId: number): void {
  pending = categoryId;
  location.hash = '#pets';
}

/** The category the Pets screen should open with, once; null when none was asked for. */
export function takePendingCategory(): number | null {
  const id = pending;
  pending = null;
  return id;
}
