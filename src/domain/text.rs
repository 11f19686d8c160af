//! Bounded text fields, trimmed. Lengths count characters (not bytes), which is what a
//! person typing a name means by "100 characters": at least the minimum after trimming
//! (so not blank), at most the maximum as sent (the document's `maxLength`, so a client
//! that checks the schema and the server never disagree). Control characters are refused: no
//! one types them into a shop's records, they garble labels and terminals, and SQLite's
//! `length()` stops at a NUL, so one would slip past the database's own checks (a name of
//! a single NUL would fail `length(name) BETWEEN 1 AND 100` as a 500). Descriptions, which
//! span lines, keep tab, line feed and carriage return.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! text_type {
    ($name:ident, $what:literal, $min:expr, $max:expr, multi_line: $multi_line:expr) => {
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            pub const MIN_CHARS: usize = $min;
            pub const MAX_CHARS: usize = $max;

            pub fn parse(raw: &str) -> Result<Self, String> {
                let trimmed = raw.trim();
                let chars = raw.chars().count();
                if let Some(c) = control_char(raw, $multi_line) {
                    Err(format!(
                        "{} must not contain control characters, found U+{:04X}",
                        $what,
                        u32::from(c)
                    ))
                } else if chars > $max {
                    Err(format!("{} must be at most {} characters, got {chars}", $what, $max))
                } else if trimmed.chars().count() < Self::MIN_CHARS {
                    Err(format!("{} must not be blank", $what))
                } else {
                    Ok(Self(trimmed.to_owned()))
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                Self::parse(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;

            fn try_from(s: String) -> Result<Self, String> {
                Self::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_type!(Name, "name", 1, 100, multi_line: false);
text_type!(Reason, "reason", 1, 200, multi_line: false);
text_type!(Description, "description", 0, 500, multi_line: true);
text_type!(Sku, "sku", 1, 64, multi_line: false);
text_type!(Phone, "customerPhone", 1, 40, multi_line: false);

/// Most characters of a client's value quoted back in a message. A refusal names the value
/// so a clerk can find it, and a few dozen characters do that; quoted whole, one 10 MB cell
/// of control characters made a 63 MB answer (each escaped to six characters).
pub const QUOTED_CHARS: usize = 40;

/// `value` quoted and escaped as Rust's `{:?}` does, cut after [`QUOTED_CHARS`] characters
/// with an ellipsis after the closing quote: `"abc…"` would read as if the value ended in one.
pub fn quoted(value: &str) -> String {
    match value.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{:?}…", &value[..cut]),
        None => format!("{value:?}"),
    }
}

/// The first control character (Unicode category Cc) of `text`, line breaks and tabs
/// excepted in multi-line text.
fn control_char(text: &str, multi_line: bool) -> Option<char> {
    text.chars().find(|&c| c.is_control() && !(multi_line && matches!(c, '\t' | '\n' | '\r')))
}

impl Sku {
    /// What barcodes are compared by: "ab-12" and "AB-12" are one code.
    pub fn folded(&self) -> String {
        fold_sku(&self.0)
    }
}

/// A barcode as barcodes are compared (and indexed): lower case. For a barcode as the
/// server sent it, already valid.
pub fn fold_sku(sku: &str) -> String {
    sku.to_lowercase()
}

impl Name {
    /// The key names are compared, sorted and searched by: lower case without accents, so
    /// "Bella" and "BELLA" are one category name, "Álvaro" sorts before "Bella", and a
    /// search for "alv" finds "Álvaro".
    pub fn folded(&self) -> String {
        fold(&self.0)
    }
}

/// Lower case with diacritics removed (canonical decomposition, then combining marks
/// dropped). Search terms go through the same function as stored names.
pub fn fold(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    text.nfd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
        .collect::<String>()
        .to_lowercase()
}

/// `%text%` for a `LIKE ... ESCAPE '\'` search, with `%`, `_` and `\` escaped so that user
/// text matches itself; the same pattern for both engines.
pub fn like_contains(text: &str) -> String {
    contains_pattern(text.chars().map(Some))
}

/// From this many characters on, a loose search tolerates one typo ([`like_one_typo`]).
/// Shorter text is too short to guess from: one edit of three letters finds nearly anything.
pub const ONE_TYPO_FROM: usize = 4;

/// The `LIKE ... ESCAPE '\'` patterns that together find `text` inside a value allowing one
/// typo: some part of the value is `text` with one character missing, one different, or
/// (from five characters on) one extra. A value matches if it matches any of the patterns;
/// `%`, `_` and `\` typed by the user match themselves, as in [`like_contains`]. Text
/// shorter than [`ONE_TYPO_FROM`] characters gets the exact pattern alone.
///
/// No pattern is fewer than [`ONE_TYPO_FROM`] characters of the value: a four-letter text
/// with one letter too many is a three-letter one, which is matched exactly, not left to
/// find every name holding three of its letters ("bela" would find each "Bear" and
/// "Beagle" by `%bea%`: 112,822 of the million demo pets against 23,203 Bellas).
///
/// For "bela": the exact `%bela%`; `%_ela%`, `%b_la%`, `%be_a%`, `%bel_%` (one typed
/// wrong: any character in its place); `%b_ela%`, `%be_la%`, `%bel_a%` (one left out by the
/// typist: any character between two). For "bella", also each character left out
/// (`%ella%`, `%bela%`, ...), which finds everything the exact pattern and a wrong first or
/// last character would: those are not listed, since every pattern is one more `LIKE` on
/// every row.
pub fn like_one_typo(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    if n < ONE_TYPO_FROM {
        return vec![like_contains(text)];
    }
    let literal = |range: std::ops::Range<usize>| chars[range].iter().copied().map(Some);
    let one_extra = n > ONE_TYPO_FROM;
    let mut patterns: Vec<String> = Vec::with_capacity(3 * n);
    if one_extra {
        for i in 0..n {
            patterns.push(contains_pattern(literal(0..i).chain(literal(i + 1..n))));
        }
    } else {
        patterns.push(like_contains(text));
    }
    let wrong = if one_extra { 1..n - 1 } else { 0..n };
    for i in wrong {
        patterns.push(contains_pattern(literal(0..i).chain([None]).chain(literal(i + 1..n))));
    }
    for i in 1..n {
        patterns.push(contains_pattern(literal(0..i).chain([None]).chain(literal(i..n))));
    }
    // A doubled letter left out either way is one pattern ("bella": `%bela%` twice).
    let mut seen = std::collections::HashSet::new();
    patterns.retain(|p| seen.insert(p.clone()));
    patterns
}

/// Patterns one of which every value [`like_one_typo`]`(text)` finds matches: the two halves
/// of `text`, exactly (one typo spoils at most one of them), or for short text its exact
/// pattern. Two `LIKE`s that most rows fail, tried before the typo's many (up to 3 per
/// character). Measured on the million demo pets (SQLite, a debug build whose SQLite is
/// optimised; one request, count and first page): "friendly beagle" 0.93 s without them,
/// 0.10 s with; a hundred characters 3.8 s, 0.10 s; "bella" 0.31 s, 0.14 s; `q=bella` 0.05 s.
pub fn like_halves(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < ONE_TYPO_FROM {
        return vec![like_contains(text)];
    }
    let (first, second) = chars.split_at(chars.len() / 2);
    vec![
        contains_pattern(first.iter().copied().map(Some)),
        contains_pattern(second.iter().copied().map(Some)),
    ]
}

/// `%...%` around `pieces`: a character matching itself (escaped if `LIKE` would read it as
/// a wildcard or the escape), or `None` for `_`, any one character.
fn contains_pattern(pieces: impl Iterator<Item = Option<char>>) -> String {
    let mut pattern = String::from("%");
    for piece in pieces {
        match piece {
            Some(c) => {
                if matches!(c, '%' | '_' | '\\') {
                    pattern.push('\\');
                }
                pattern.push(c);
            }
            None => pattern.push('_'),
        }
    }
    pattern.push('%');
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_ignores_case_and_accents() {
        assert_eq!(fold("Álvaro"), "alvaro");
        assert_eq!(fold("ÉLISE"), "elise");
        assert_eq!(fold("Straße"), "straße");
    }

    #[test]
    fn names_are_trimmed_and_bounded_in_characters() {
        assert_eq!(Name::parse("  Rex ").unwrap().as_str(), "Rex");
        assert!(Name::parse("   ").is_err());
        assert!(Name::parse(&"é".repeat(100)).is_ok());
        assert!(Name::parse(&"é".repeat(101)).is_err());
        // The maximum holds for the text as sent, as the document's maxLength says.
        assert!(Name::parse(&format!(" {} ", "x".repeat(99))).is_err());
        assert_eq!(Name::parse(&format!(" {}", "x".repeat(99))).unwrap().as_str(), "x".repeat(99));
    }

    #[test]
    fn control_characters_are_refused_but_descriptions_keep_line_breaks() {
        for bad in ["\0", "Rex\0", "\u{1b}[31mRex", "Re\u{7f}x", "Rex\u{85}Max", "two\nlines"] {
            let e = Name::parse(bad).unwrap_err();
            assert!(e.contains("control characters"), "{bad:?}: {e}");
            assert!(Reason::parse(bad).is_err(), "{bad:?}");
        }
        assert!(Description::parse("first line\r\n\tsecond line").is_ok());
        assert!(Description::parse("nul \0 inside").is_err());
        // Tab and line feed are control characters even where trimming would drop them.
        assert!(Name::parse("\tRex\n").is_err());
    }

    #[test]
    fn like_patterns_escape_the_users_wildcards() {
        assert_eq!(like_contains(r"a%b_c\d"), r"%a\%b\_c\\d%");
        // Each of the user's wildcards stays escaped in every pattern; the other `_`s are
        // the typo's.
        assert_eq!(
            like_one_typo("b%l_"),
            [
                r"%b\%l\_%",
                r"%_\%l\_%",
                r"%b_l\_%",
                r"%b\%_\_%",
                r"%b\%l_%",
                r"%b_\%l\_%",
                r"%b\%_l\_%",
                r"%b\%l_\_%"
            ]
        );
        assert_eq!(like_halves("b%l_"), [r"%b\%%", r"%l\_%"]);
    }

    #[test]
    fn short_text_is_found_exactly_and_longer_text_with_one_typo() {
        assert_eq!(like_one_typo("bel"), ["%bel%"]);
        assert_eq!(like_halves("bel"), ["%bel%"]);
        assert_eq!(
            like_one_typo("bela"),
            ["%bela%", "%_ela%", "%b_la%", "%be_a%", "%bel_%", "%b_ela%", "%be_la%", "%bel_a%"]
        );
        assert_eq!(
            like_one_typo("bella"),
            [
                "%ella%", "%blla%", "%bela%", "%bell%", "%b_lla%", "%be_la%", "%bel_a%", "%b_ella%",
                "%be_lla%", "%bel_la%", "%bell_a%"
            ],
            "one left out, an inner one wrong, one missing; a doubled letter left out once"
        );
        assert_eq!(like_halves("bella"), ["%be%", "%lla%"]);
    }

    /// Whether some part of `value` is `text` with at most one character different, missing
    /// or (if `extra` may be) extra: Sellers' approximate substring matching, the edit
    /// distance to the best part of `value`, any start and end free.
    fn within_one_typo(text: &[char], value: &[char], extra: bool) -> bool {
        const FAR: usize = 2;
        let mut row: Vec<usize> = vec![0; value.len() + 1];
        for (i, t) in text.iter().enumerate() {
            let mut next = vec![if extra { i + 1 } else { FAR }; value.len() + 1];
            for (j, v) in value.iter().enumerate() {
                let typed_extra = if extra { row[j + 1] + 1 } else { FAR };
                next[j + 1] = (row[j] + usize::from(t != v)).min(typed_extra).min(next[j] + 1);
            }
            row = next;
        }
        row.into_iter().min().unwrap() <= 1
    }

    /// Every value up to six characters long over an alphabet of the texts' letters, the
    /// wildcards and the escape, matched by SQLite itself: the patterns find exactly the
    /// values within one typo of the text (and short text exactly), and each of those
    /// matches one of the halves.
    #[test]
    fn the_patterns_find_exactly_what_is_one_typo_away() {
        let alphabet = ['b', 'e', 'l', 'a', '%', '_', '\\'];
        let mut values = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..6 {
            last = last.iter().flat_map(|v| alphabet.iter().map(move |c| format!("{v}{c}"))).collect();
            values.extend(last.iter().cloned());
        }
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE v (value TEXT NOT NULL)").unwrap();
        {
            let mut insert = conn.prepare("INSERT INTO v VALUES (?1)").unwrap();
            for v in &values {
                insert.execute([v]).unwrap();
            }
        }
        let any = |n: usize| vec!["value LIKE ? ESCAPE '\\'"; n].join(" OR ");
        for text in ["bela", "bell", "a%b_", "bella", r"e\l_a", "aaaa", "%_%_%", "bel", "%_"] {
            let (patterns, halves) = (like_one_typo(text), like_halves(text));
            let typo = any(patterns.len());
            let halved = format!("({}) AND ({typo})", any(halves.len()));
            for (condition, params) in
                [(typo.clone(), patterns.clone()), (halved, [&halves[..], &patterns].concat())]
            {
                let mut found: Vec<String> = conn
                    .prepare(&format!("SELECT value FROM v WHERE {condition}"))
                    .unwrap()
                    .query_map(rusqlite::params_from_iter(params), |r| r.get(0))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                found.sort();
                let t: Vec<char> = text.chars().collect();
                let mut expected: Vec<String> = values
                    .iter()
                    .filter(|v| {
                        let v: Vec<char> = v.chars().collect();
                        if t.len() < ONE_TYPO_FROM {
                            v.windows(t.len()).any(|w| w == t)
                        } else {
                            within_one_typo(&t, &v, t.len() > ONE_TYPO_FROM)
                        }
                    })
                    .cloned()
                    .collect();
                expected.sort();
                assert!(!expected.is_empty() && expected.len() < values.len(), "{text:?}");
                assert_eq!(found, expected, "{text:?}: {condition}");
            }
        }
    }

    #[test]
    fn description_may_be_empty_but_not_long() {
        assert!(Description::parse("").is_ok());
        assert!(Description::parse(&"x".repeat(501)).is_err());
    }

    #[test]
    fn a_quoted_value_is_escaped_and_cut_after_a_few_dozen_characters() {
        assert_eq!(quoted("Rex"), "\"Rex\"");
        assert_eq!(quoted(&"é".repeat(QUOTED_CHARS)), format!("{:?}", "é".repeat(QUOTED_CHARS)));
        let long = quoted(&"\u{1}".repeat(10_000_000));
        assert_eq!(long, format!("{:?}…", "\u{1}".repeat(QUOTED_CHARS)));
        assert!(long.len() < 300, "{}", long.len());
    }
}
