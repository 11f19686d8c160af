// Paths, sizes and import refusals in words for the Import and export panel.

import { formatNumber } from '../../lib/format';
import { i18n, t } from '../../lib/i18n.svelte';

/** The last part of a path, "/home/shop/pets.csv" → "pets.csv" (Windows paths too). */
export function fileName(path: string): string {
  const parts = path.split(/[/\\]/).filter((p) => p !== '');
  return parts.at(-1) ?? path;
}

/** The folder of a path, "/home/shop/pets.csv" → "/home/shop"; "" when there is none. */
export function folderOf(path: string): string {
  const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  if (cut < 0) return '';
  return cut === 0 ? path.slice(0, 1) : path.slice(0, cut);
}

/** A file's size as people read it: "512 bytes", "48 KB", "3.2 MB" (in the language shown). */
export function formatBytes(bytes: number, locale?: string): string {
  if (bytes < 1000) return t('settings.importExport.bytes', { count: bytes, n: formatNumber(bytes, locale) });
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  const shown = new Intl.NumberFormat(locale ?? i18n.locale, { maximumFractionDigits: value < 10 ? 1 : 0 }).format(value);
  return `${shown} ${units[unit]}`;
}

/**
 * An import's refusal split into where and what: the app says
 * `line 3, column category: there is no category named "Cats"; …`. Where is null when
 * the refusal is about the whole file (it cannot be read, it has no header).
 */
export function splitRefusal(message: string): { line: number | null; column: string | null; reason: string } {
  const m = /^\s*line (\d+)(?:,\s*column ([^:]+))?:\s*([\s\S]*)$/i.exec(message);
  if (!m) return { line: null, column: null, reason: message };
  const reason = m[3].trim();
  return {
    line: Number(m[1]),
    column: m[2]?.trim() ?? null,
    reason: reason.charAt(0).toUpperCase() + reason.slice(1),
  };
}
