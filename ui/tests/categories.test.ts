import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';

import { category, paged } from '../src/dev/fixtures';
import { mockBackend, reject } from './petsBackend';
import CategoriesScreen from '../src/screens/CategoriesScreen.svelte';
import PetsScreen from '../src/screens/PetsScreen.svelte';

describe('Categories screen', () => {
  it('lists categories with pet counts; a category in use cannot be deleted, and shows its pets', async () => {
    mockBackend({ list_categories: () => paged([category(1, 'Dogs', 12), category(2, 'Cats', 0)]) });
    render(CategoriesScreen);
    expect(await screen.findByTestId('pet-count-1')).toHaveTextContent('12');
    expect(screen.getByTestId('delete-category-1')).toBeDisabled();
    expect(screen.getByTestId('delete-category-1')).toHaveAccessibleName(/not possible while it has 12 pets/);
    expect(screen.getByTestId('delete-category-2')).toBeEnabled();
    expect(screen.queryByTestId('show-pets-2')).not.toBeInTheDocument();
    await userEvent.click(screen.getByTestId('show-pets-1'));
    expect(window.location.hash).toBe('#pets');
    // The Pets screen opens with Dogs selected.
    mockBackend({
      list_pets: () => paged([]),
      list_categories: () => paged([category(1, 'Dogs', 12)]),
    });
    render(PetsScreen);
    expect(await screen.findByTestId('category-filter-1')).toHaveAttribute('aria-current', 'true');
  });

  it('a refusal (the category got pets meanwhile) is shown clearly in the question', async () => {
    const b = mockBackend({
      list_categories: () => paged([category(1, 'Dogs', 0)]),
      delete_category: reject('category_in_use', 'Category 1 (Dogs) still has 12 pets.'),
    });
    render(CategoriesScreen);
    await userEvent.click(await screen.findByTestId('delete-category-1'));
    await userEvent.click(screen.getByTestId('confirm'));
    const alert = await within(screen.getByRole('dialog')).findByTestId('error-alert');
    expect(alert).toHaveTextContent('Category 1 (Dogs) still has 12 pets.');
    expect(alert).toHaveTextContent('Move its pets to another category');
    expect(b.argsOf('delete_category')).toEqual([{ id: 1 }]);
  });

  it('creates and renames (replace_category)', async () => {
    const b = mockBackend({
      list_categories: () => paged([category(1, 'Dogs', 12)]),
      create_category: ({ category: c }) => category(2, c.name),
      replace_category: ({ id, category: c }) => category(id, c.name),
    });
    render(CategoriesScreen);
    await userEvent.click(await screen.findByTestId('new-category'));
    await userEvent.type(screen.getByTestId('category-name'), 'Reptiles{Enter}');
    await waitFor(() =>
      expect(b.argsOf('create_category')).toEqual([{ category: { name: 'Reptiles', description: null } }]),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    await userEvent.click(screen.getByTestId('rename-category-1'));
    const name = screen.getByTestId('category-name');
    await userEvent.clear(name);
    await userEvent.type(name, 'Hounds');
    await userEvent.click(screen.getByTestId('save-category'));
    await waitFor(() =>
      expect(b.argsOf('replace_category')).toEqual([{ id: 1, category: { name: 'Hounds', description: null } }]),
    );
  });

  it('after deleting the only row of the last page, shows the page that is last now', async () => {
    let all = Array.from({ length: 26 }, (_, i) => category(i + 1, `C${i + 1}`));
    const b = mockBackend({
      list_categories: ({ page }) => paged(all.slice(page.offset, page.offset + page.limit), all.length),
      delete_category: ({ id }) => {
        all = all.filter((c) => c.id !== id);
        return null;
      },
    });
    render(CategoriesScreen);
    await userEvent.click(await screen.findByTestId('pager-last'));
    await userEvent.click(await screen.findByTestId('delete-category-26'));
    await userEvent.click(screen.getByTestId('confirm'));
    await screen.findByTestId('category-row-1');
    expect(screen.getByTestId('pager-range')).toHaveTextContent('1–25 of 25');
    expect(b.argsOf('list_categories').map((a) => a.page.offset)).toEqual([0, 25, 25, 0]);
  });
});
