import type { PetStatus } from './bindings/PetStatus';

export const PET_STATUSES: readonly PetStatus[] = ['available', 'pending', 'sold'];
