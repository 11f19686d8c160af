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
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
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
    fn description_may_be_empty_but_not_long() {
        assert!(Description::parse("").is_ok());
        assert!(Description::parse(&"x".repeat(501)).is_err());
    }
}
