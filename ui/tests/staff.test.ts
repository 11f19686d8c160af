import { emit } from '@tauri-apps/api/event';
// Staff at the till in the window: the PIN pad (keyboard and touch), the sign-in over the
// till, the name in the status bar, the manager's override that tries the refused command
// once more, and the idle lock. The checks themselves are the app's (Rust); these test
// what the window does with its answers.
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { activityEntry, category, paged, pet, staffMember, stockItem } from '../src/dev/fixtures';
import { mockBackend, reject } from '../src/dev/mockBackend';
import PinPad from '../src/components/PinPad.svelte';
import SignInScreen from '../src/components/SignInScreen.svelte';
import OverrideDialog from '../src/components/OverrideDialog.svelte';
import * as api from '../src/lib/api';
import { CHANGE_DEBOUNCE_MS, notifyChange } from '../src/lib/changes';
import ActivityScreen from '../src/screens/ActivityScreen.svelte';
import { SYNC_EVENT } from '../src/lib/sync.svelte';
import { staff } from '../src/lib/staff.svelte';

const ANA = { id: 2, name: 'Ana', role: 'cashier' as const };
const STAFF = [staffMember(1, 'Owner', 'owner'), staffMember(2, 'Ana', 'cashier'), staffMember(3, 'Bea', 'manager')];

afterEach(() => {
  staff.override?.answer(false);
  staff.serving = null;
  staff.switching = false;
  api.handleRefusals(null);
  vi.useRealTimers();
});

describe('the PIN pad', () => {
  it('takes digits from the keyboard, Backspace erases, Enter signs in, Escape goes back', async () => {
    const submitted: string[] = [];
    const cancel = vi.fn();
    render(PinPad, { name: 'Ana', onsubmit: async (pin: string) => void submitted.push(pin), oncancel: cancel });
    const field = screen.getByLabelText('PIN for Ana');
    expect(field).toHaveFocus();
    expect(field).toHaveAttribute('type', 'password');
    await userEvent.keyboard('12a39{Backspace}4{Enter}');
    expect(submitted).toEqual(['1234']);
    await userEvent.keyboard('{Escape}');
    expect(cancel).toHaveBeenCalledOnce();
  });

  it('is usable by touch, and says a refusal in the app’s words', async () => {
    const onsubmit = vi.fn(async () => {
      throw { code: 'wrong_pin', message: "the PIN is not Ana's; 4 tries left before a lockout", status: 401 };
    });
    render(PinPad, { name: 'Ana', onsubmit, oncancel: () => {} });
    for (const digit of ['4', '8', '2', '1']) await userEvent.click(screen.getByTestId(`pin-pad-${digit}`));
    await userEvent.click(screen.getByTestId('pin-pad-ok'));
    expect(onsubmit).toHaveBeenCalledWith('4821');
    expect(await screen.findByRole('alert')).toHaveTextContent("the PIN is not Ana's; 4 tries left");
    expect(screen.getByLabelText('PIN for Ana')).toHaveValue('');
  });
});

describe('the sign-in', () => {
  it('lists the active staff, then asks the chosen person’s PIN and signs them in', async () => {
    const b = mockBackend({
      list_staff: () => [...STAFF, staffMember(4, 'Cy', 'cashier', { active: false })],
      sign_in: ({ staffId }) => ({ staff: { ...ANA, id: staffId }, alone: false, remote: false }),
    });
    staff.serving = { staff: null, alone: false, remote: false };
    render(SignInScreen);
    const members = await screen.findByTestId('sign-in-members');
    await waitFor(() => expect(within(members).getAllByRole('button')).toHaveLength(3));
    expect(members).not.toHaveTextContent('Cy');
    await userEvent.click(screen.getByTestId('sign-in-2'));
    await userEvent.keyboard('1111{Enter}');
    await waitFor(() => expect(b.argsOf('sign_in')).toEqual([{ staffId: 2, pin: '1111' }]));
    expect(staff.serving?.staff?.name).toBe('Ana');
    expect(staff.locked).toBe(false);
  });

  it('switching goes back to the one signed in with Escape', async () => {
    mockBackend({ list_staff: () => STAFF });
    staff.serving = { staff: ANA, alone: false, remote: false };
    staff.switching = true;
    expect(staff.signInOpen).toBe(true);
    render(SignInScreen);
    await screen.findByTestId('sign-in-1');
    expect(screen.getByTestId('sign-in-back')).toHaveTextContent('Back to Ana');
    await userEvent.keyboard('{Escape}');
    expect(staff.switching).toBe(false);
    expect(staff.signInOpen).toBe(false);
  });

  it('a shop of one PIN-less owner, or a till writing as its key, never shows it', () => {
    staff.serving = { staff: { id: 1, name: 'Owner', role: 'owner' }, alone: true, remote: false };
    staff.switching = true;
    expect(staff.signInOpen).toBe(false);
    staff.serving = { staff: null, alone: true, remote: true };
    expect(staff.signInOpen).toBe(false);
  });

  it('a till that follows a server asks who is serving, as a shop of its own does', () => {
    staff.switching = false;
    staff.serving = { staff: null, alone: false, remote: true };
    expect(staff.locked).toBe(true);
    expect(staff.signInOpen).toBe(true);
  });
});

describe('the manager’s override', () => {
  it('a refused command asks for a manager’s PIN, and is tried again once approved', async () => {
    let approved = false;
    const b = mockBackend({
      set_inventory: () => {
        if (!approved) {
          throw {
            code: 'permission_denied',
            message: 'cashier Ana may not set a counted stock: that needs the count_stock permission',
            status: 403,
          };
        }
        return stockItem(4, 'Rex', 12);
      },
      list_staff: () => STAFF,
      approve: ({ staffId, pin }) => {
        approved = staffId === 3 && pin === '2222';
        if (!approved) throw { code: 'wrong_pin', message: "the PIN is not Bea's", status: 401 };
        return { id: 3, name: 'Bea', role: 'manager' };
      },
    });
    staff.serving = { staff: ANA, alone: false, remote: false };
    api.handleRefusals({ approve: (e) => staff.approve(e), locked: () => {} });
    const counted = api.setInventory(4, 12);
    await waitFor(() => expect(staff.override).not.toBeNull());
    render(OverrideDialog, { request: staff.override! });
    expect(screen.getByTestId('override-refused')).toHaveTextContent('count_stock');
    // The managers and owners with a PIN may approve; Ana herself is not offered.
    await screen.findByTestId('override-manager-3');
    expect(screen.getByTestId('override-manager-1')).toBeInTheDocument();
    expect(screen.queryByTestId('override-manager-2')).toBeNull();
    await userEvent.click(screen.getByTestId('override-manager-3'));
    await screen.findByLabelText('PIN for Bea');
    await userEvent.keyboard('2223{Enter}');
    expect(await screen.findByRole('alert')).toHaveTextContent("the PIN is not Bea's");
    await userEvent.keyboard('2222{Enter}');
    await expect(counted).resolves.toMatchObject({ quantity: 12 });
    expect(b.countOf('set_inventory')).toBe(2);
  });

  it('cancelled, the refusal is the answer; the sign-in’s own commands are never approved', async () => {
    const b = mockBackend({
      delete_pet: reject('permission_denied', 'cashier Ana may not delete pets', 403),
      approve: reject('permission_denied', 'cashier Ana may not approve', 403),
    });
    staff.serving = { staff: ANA, alone: false, remote: false };
    api.handleRefusals({ approve: (e) => staff.approve(e), locked: () => {} });
    const deleting = api.deletePet(1);
    await waitFor(() => expect(staff.override).not.toBeNull());
    staff.override!.answer(false);
    await expect(deleting).rejects.toMatchObject({ code: 'permission_denied' });
    expect(b.countOf('delete_pet')).toBe(1);
    await expect(api.approve(2, '1111')).rejects.toMatchObject({ code: 'permission_denied' });
    expect(staff.override).toBeNull();
  });
});

describe('the idle lock', () => {
  it('locks the till after the idle minutes without a touch or a key; 0 never', async () => {
    vi.useFakeTimers();
    const b = mockBackend({
      current_staff: () => ({ staff: ANA, alone: false, remote: false }),
      get_till_lock: () => ({ idleMinutes: 2 }),
      sign_out: () => ({ staff: null, alone: false, remote: false }),
    });
    const stop = staff.start();
    await vi.waitFor(() => expect(staff.serving?.staff?.name).toBe('Ana'));
    await vi.waitFor(() => expect(staff.idleMinutes).toBe(2));
    await vi.advanceTimersByTimeAsync(90_000);
    window.dispatchEvent(new KeyboardEvent('keydown', { key: 'a' }));
    await vi.advanceTimersByTimeAsync(90_000);
    expect(b.countOf('sign_out')).toBe(0);
    await vi.advanceTimersByTimeAsync(31_000);
    expect(b.countOf('sign_out')).toBe(1);
    expect(staff.locked).toBe(true);

    staff.serving = { staff: ANA, alone: false, remote: false };
    staff.setIdleMinutes(0);
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(b.countOf('sign_out')).toBe(1);
    stop();
  });
});

describe('the activity log', () => {
  it('names who did it and who approved it, and filters by person and kind', async () => {
    const b = mockBackend({
      list_staff: () => STAFF,
      list_activity: () =>
        paged([
          activityEntry(2, 'stock_counted', { staff: ANA, approvedBy: { id: 3, name: 'Bea', role: 'manager' } }, { entity: 'pet', id: '4' }, '12 (was 9)'),
          activityEntry(1, 'pet_created', null, { entity: 'pet', id: '4' }, 'Rex'),
        ]),
    });
    staff.serving = { staff: ANA, alone: false, remote: false };
    render(ActivityScreen);
    const rows = await screen.findAllByTestId('activity-row');
    expect(rows[0]).toHaveTextContent('Ana, approved by Bea');
    expect(rows[0]).toHaveTextContent('Stock counted · pet 4');
    expect(rows[0]).toHaveTextContent('12 (was 9)');
    expect(rows[1]).toHaveTextContent('Before staff');
    await waitFor(() => expect(within(screen.getByTestId('activity-person')).getAllByRole('option')).toHaveLength(4));
    await userEvent.selectOptions(screen.getByTestId('activity-person'), '3');
    await userEvent.selectOptions(screen.getByTestId('activity-kind'), 'stock_counted');
    await waitFor(() =>
      expect(b.argsOf('list_activity').at(-1)).toEqual({
        query: { staffId: 3, kind: 'stock_counted', limit: 25, offset: 0 },
      }),
    );
  });

  it('names what each entry is about, reading only the page’s pets; a deleted pet and an order keep their number', async () => {
    // 150 categories: the page's (Dogs, 2) is on the first page of the list, so one read.
    const categories = Array.from({ length: 150 }, (_, i) => category(i + 1, i === 1 ? 'Dogs' : `Category ${i + 1}`, 0));
    const b = mockBackend({
      list_staff: () => STAFF,
      list_activity: () =>
        paged([
          activityEntry(6, 'stock_counted', { staff: ANA }, { entity: 'pet', id: '4' }, '12 (was 9)'),
          activityEntry(5, 'pet_deleted', { staff: ANA }, { entity: 'pet', id: '9' }, null),
          activityEntry(4, 'pet_updated', { staff: ANA }, { entity: 'pet', id: '4' }, null),
          activityEntry(3, 'category_updated', { staff: ANA }, { entity: 'category', id: '2' }, null),
          activityEntry(2, 'staff_updated', { staff: ANA }, { entity: 'staff', id: '3' }, null),
          activityEntry(1, 'order_placed', { staff: ANA }, { entity: 'order', id: '12' }, null),
        ]),
      // Pet 9 was deleted: the app has only Rex (4) of the two asked for.
      list_pets: ({ query }) => paged([pet(4, 'Rex')].filter((p) => query.ids.includes(p.id))),
      list_categories: ({ page }) => paged(categories.slice(page.offset, page.offset + page.limit), categories.length),
    });
    staff.serving = { staff: ANA, alone: false, remote: false };
    render(ActivityScreen);
    await waitFor(() => expect(screen.getAllByTestId('activity-subject')[0]).toHaveTextContent('pet Rex'));
    await waitFor(() =>
      expect(screen.getAllByTestId('activity-subject').map((s) => s.textContent)).toEqual([
        ' · pet Rex',
        ' · pet 9',
        ' · pet Rex',
        ' · category Dogs',
        ' · staff member Bea',
        ' · order 12',
      ]),
    );
    // The page's pets, each once, in one call; the category list until Dogs was found.
    expect(b.argsOf('list_pets')).toHaveLength(1);
    expect(b.argsOf('list_pets')[0].query).toMatchObject({ ids: [4, 9], limit: 100 });
    expect(b.argsOf('list_categories')).toEqual([{ page: { limit: 100, offset: 0 } }]);
  });

  it('keeps the ids where the names cannot be read, and shows the others', async () => {
    const b = mockBackend({
      list_staff: () => STAFF,
      list_activity: () =>
        paged([
          activityEntry(3, 'pet_updated', { staff: ANA }, { entity: 'pet', id: '4' }, null),
          activityEntry(2, 'category_deleted', { staff: ANA }, { entity: 'category', id: '7' }, null),
          activityEntry(1, 'category_updated', { staff: ANA }, { entity: 'category', id: '1' }, null),
        ]),
      list_pets: reject('busy', 'the database is busy', 503),
      list_categories: ({ page }) => paged([category(1, 'Dogs', 0)].slice(page.offset), 1),
    });
    staff.serving = { staff: ANA, alone: false, remote: false };
    render(ActivityScreen);
    await waitFor(() =>
      expect(screen.getAllByTestId('activity-subject').map((s) => s.textContent)).toEqual([
        ' · pet 4',
        ' · category 7',
        ' · category Dogs',
      ]),
    );
    // Category 7 was deleted: the list read to its end, which is one page here.
    expect(b.argsOf('list_categories')).toEqual([{ page: { limit: 100, offset: 0 } }]);
    expect(screen.queryByTestId('error-alert')).not.toBeInTheDocument();
  });

  it('grows as the shop writes: new entries or a sale read the page again, a stock change alone does not', async () => {
    let entries = [activityEntry(1, 'pet_created', { staff: ANA }, null, 'Rex')];
    const b = mockBackend({ list_staff: () => STAFF, list_activity: () => paged(entries) });
    staff.serving = { staff: ANA, alone: false, remote: false };
    render(ActivityScreen);
    await waitFor(() => expect(screen.getAllByTestId('activity-row')).toHaveLength(1));
    const reads = () => b.argsOf('list_activity').length;
    const before = reads();

    entries = [activityEntry(2, 'stock_counted', { staff: ANA }, null, '12 (was 9)'), ...entries];
    notifyChange({ activity: true });
    await waitFor(() => expect(screen.getAllByTestId('activity-row')).toHaveLength(2));
    expect(reads()).toBe(before + 1);

    entries = [activityEntry(3, 'order_placed', { staff: ANA }, null, null), ...entries];
    notifyChange({ orders: [12] });
    await waitFor(() => expect(screen.getAllByTestId('activity-row')).toHaveLength(3));
    expect(reads()).toBe(before + 2);

    notifyChange({ stock: [4] });
    await new Promise((r) => setTimeout(r, CHANGE_DEBOUNCE_MS + 100));
    expect(reads()).toBe(before + 2);
  });
});

describe('a till that follows a server', () => {
  it('reads who is serving again each time it comes in step with the server, so the sign-in shows once the staff are known', async () => {
    let known = false;
    const b = mockBackend({
      current_staff: () => ({ staff: null, alone: !known, remote: true }),
      get_till_lock: () => ({ idleMinutes: 5 }),
    });
    const stop = staff.start();
    await waitFor(() => expect(staff.serving?.alone).toBe(true));
    expect(staff.signInOpen).toBe(false);
    const reads = b.countOf('current_staff');

    known = true;
    const status = (state: string) => ({ outbox: { pending: 0, attention: 0 }, position: 1, state });
    await emit(SYNC_EVENT, status('copying'));
    await emit(SYNC_EVENT, status('synced'));
    await waitFor(() => expect(staff.signInOpen).toBe(true));
    // Still in step: nothing more to read.
    await emit(SYNC_EVENT, status('synced'));
    expect(b.countOf('current_staff')).toBe(reads + 1);
    stop();
  });
});
