//! Bounded text fields. Lengths count characters (not bytes) after trimming, which is what
//! a person typing a name means by "100 characters".

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! text_type {
    ($name:ident, $what:literal, $min:expr, $max:expr) => {
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            pub const MIN_CHARS: usize = $min;
            pub const MAX_CHARS: usize = $max;

            pub fn parse(raw: &str) -> Result<Self, String> {
                let trimmed = raw.trim();
                let chars = trimmed.chars().count();
                if chars < Self::MIN_CHARS {
                    Err(format!("{} must not be blank", $what))
                } else if chars > $max {
                    Err(format!("{} must be at most {} characters, got {chars}", $what, $max))
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

text_type!(Name, "name", 1, 100);
text_type!(Reason, "reason", 1, 200);
text_type!(Description, "description", 0, 500);

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
    }

    #[test]
    fn description_may_be_empty_but_not_long() {
        assert!(Description::parse("").is_ok());
        assert!(Description::parse(&"x".repeat(501)).is_err());
    }
}
