import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import PetPicker from '../src/components/PetPicker.svelte';
import { paged, pet } from '../src/dev/fixtures';
import { mockBackend } from '../src/dev/mockBackend';

const PETS = [pet(1, 'Bella'), pet(2, 'Benny'), pet(3, 'Bert')];

describe('PetPicker', () => {
  it('highlights the option the arrows are on while the focus stays in the field, and Enter picks it', async () => {
    mockBackend({
      list_pets: ({ query }) => paged(query.sku ? [] : PETS.filter((p) => p.name.toLowerCase().includes(query.q.toLowerCase()))),
    });
    render(PetPicker, { id: 'picker', label: 'Pet' });
    const field = screen.getByRole('combobox', { name: 'Pet' });
    await userEvent.type(field, 'be');
    await screen.findByTestId('pet-option-3');
    expect(field).not.toHaveAttribute('aria-activedescendant');

    await userEvent.keyboard('{ArrowDown}{ArrowDown}');
    const benny = screen.getByTestId('pet-option-2');
    expect(document.activeElement).toBe(field);
    expect(field).toHaveAttribute('aria-activedescendant', benny.id);
    expect(benny).toHaveAttribute('aria-selected', 'true');
    expect(benny).toHaveClass('active');
    expect(screen.getByTestId('pet-option-1')).toHaveAttribute('aria-selected', 'false');

    await userEvent.keyboard('{ArrowUp}{ArrowUp}');
    expect(field).not.toHaveAttribute('aria-activedescendant');
    await userEvent.keyboard('{ArrowDown}{ArrowDown}{ArrowDown}{ArrowDown}');
    expect(field).toHaveAttribute('aria-activedescendant', screen.getByTestId('pet-option-3').id);

    await userEvent.keyboard('{Enter}');
    expect(field).toHaveValue('Bert');
    expect(screen.queryByRole('listbox')).toBeNull();
    expect(document.activeElement).toBe(field);
  });
});
