import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { mockBackend, reject } from '../src/dev/mockBackend';
import { readPreferences } from '../src/lib/preferences';
import { theme } from '../src/lib/theme.svelte';
import AppearancePanel from '../src/screens/settings/AppearancePanel.svelte';

// jsdom has no matchMedia: a system whose dark setting the test turns on and off.
function fakeSystem(dark: boolean) {
  const listeners = new Set<() => void>();
  const media = {
    get matches() {
      return dark;
    },
    addEventListener: (_: string, f: () => void) => listeners.add(f),
    removeEventListener: (_: string, f: () => void) => listeners.delete(f),
  };
  window.matchMedia = (() => media) as unknown as typeof window.matchMedia;
  return {
    set(next: boolean) {
      dark = next;
      listeners.forEach((f) => f());
    },
    listeners,
  };
}

const shown = () => document.documentElement.dataset.theme;

describe('theme', () => {
  beforeEach(() => theme.apply('system'));
  afterEach(() => {
    // @ts-expect-error jsdom has none; the tests add one.
    delete window.matchMedia;
  });

  it('follows the system until one is chosen, also when the system switches', async () => {
    const system = fakeSystem(true);
    mockBackend({ get_preferences: () => ({ theme: 'system' }) });
    theme.apply((await readPreferences()).theme);
    expect(shown()).toBe('dark');
    system.set(false);
    expect(shown()).toBe('light');
    expect(theme.look).toBe('light');

    theme.apply('dark');
    system.set(true);
    system.set(false);
    expect(shown()).toBe('dark');
    expect(system.listeners.size).toBe(0);
  });

  it('shows the saved choice before anything else, and the system when it cannot be read', async () => {
    fakeSystem(false);
    mockBackend({ get_preferences: () => ({ theme: 'dark' }) });
    theme.apply((await readPreferences()).theme);
    expect(shown()).toBe('dark');
    expect(theme.choice).toBe('dark');

    mockBackend({ get_preferences: reject('internal', 'settings.json: permission denied', 500) });
    theme.apply((await readPreferences()).theme);
    expect(theme.choice).toBe('system');
    expect(shown()).toBe('light');
  });

  it('Settings › Appearance applies a choice at once and saves it', async () => {
    fakeSystem(false);
    const b = mockBackend({ save_preferences: ({ preferences }) => preferences });
    render(AppearancePanel);
    expect(screen.getByTestId('theme-system')).toBeChecked();
    expect(screen.getByTestId('appearance-panel')).toHaveTextContent('now light');

    await userEvent.click(screen.getByLabelText('Dark'));
    expect(shown()).toBe('dark');
    await waitFor(() => expect(b.argsOf('save_preferences')).toEqual([{ preferences: { theme: 'dark', language: 'system' } }]));
    expect(screen.getByTestId('theme-dark')).toBeChecked();

    await userEvent.click(screen.getByLabelText('System'));
    await waitFor(() => expect(b.argsOf('save_preferences')).toHaveLength(2));
    expect(shown()).toBe('light');
  });

  it('says so when the choice cannot be saved, and keeps showing it', async () => {
    fakeSystem(false);
    mockBackend({ save_preferences: reject('internal', 'settings.json: read-only file system', 500) });
    render(AppearancePanel);
    await userEvent.click(screen.getByLabelText('Dark'));
    expect(await screen.findByRole('alert')).toHaveTextContent('read-only file system');
    expect(shown()).toBe('dark');
  });
});
