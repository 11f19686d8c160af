//! A text cell of an export made safe to open in a spreadsheet, and the import's exact
//! undoing of that. A spreadsheet runs a cell as a formula when it begins with `=`, `+`,
//! `-` or `@` (their fullwidth forms `＝＋－＠` too, which some spreadsheets fold to
//! ASCII), a tab or a carriage return; a leading byte order mark hides such a start from
//! a check of the first character. The export writes a `'` before such a cell (OWASP's
//! advice against CSV injection).
//!
//! So that importing an export gives back the same names, the import takes the `'` off
//! again, and only where the export put one: a cell of `'`s followed by a dangerous
//! character. For that to be exact, the export also writes a `'` before text that
//! already reads that way (a name typed as `'=x` is written `''=x`), so that every cell
//! of that shape is one the export made.

use std::borrow::Cow;

/// Characters a spreadsheet may take as the start of a formula, or that hide one.
const DANGEROUS: [char; 11] = ['=', '+', '-', '@', '\t', '\r', '＝', '＋', '－', '＠', '\u{feff}'];

/// Whether `value` is `'`s (none or more) then a dangerous character.
fn needs_quote(value: &str) -> bool {
    value.trim_start_matches('\'').starts_with(DANGEROUS)
}

/// `value` as an export writes it.
pub fn defuse(value: &str) -> Cow<'_, str> {
    if needs_quote(value) { Cow::Owned(format!("'{value}")) } else { Cow::Borrowed(value) }
}

/// A cell as the import reads it: the `'` that [`defuse`] added taken off, anything
/// else as it is.
pub fn undo_defuse(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if needs_quote(rest) => rest,
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_formula_start_is_defused_and_the_import_gives_back_exactly_what_was_written() {
        for dangerous in
            ["=1+2", "+1", "-5 kg", "@SUM(A1)", "\tx", "\rx", "＝1＋2", "＋1", "－1", "＠SUM", "\u{feff}=1"]
        {
            assert_eq!(defuse(dangerous), format!("'{dangerous}"), "{dangerous:?}");
        }
        for plain in ["Bella", "", "'quoted'", "O'Brien", "1+2", " =x", "'"] {
            assert_eq!(defuse(plain), plain, "{plain:?}");
        }
        let names =
            ["=1+2", "'=1+2", "''=1+2", "'", "''", "'Bella", "O'Brien", "＠x", "'＠x", "\u{feff}x", "Rex"];
        for name in names {
            assert_eq!(undo_defuse(&defuse(name)), name, "{name:?} round trip");
        }
        assert_eq!(undo_defuse("'Bella"), "'Bella", "a quote the export did not add is kept");
    }
}
