//! Integers with a range, refused at the edge when out of it.

/// Declares `$name`, an `i64` within `$min..=$max`, (de)serialized as a plain number.
macro_rules! bounded_int {
    ($(#[$doc:meta])* $name:ident, $what:literal, $min:literal ..= $max:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "i64", into = "i64")]
        pub struct $name(i64);

        impl $name {
            pub const MIN: i64 = $min;
            pub const MAX: i64 = $max;

            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl TryFrom<i64> for $name {
            type Error = String;

            fn try_from(v: i64) -> Result<Self, String> {
                if (Self::MIN..=Self::MAX).contains(&v) {
                    Ok(Self(v))
                } else {
                    Err(format!("{} must be between {} and {}, got {v}", $what, Self::MIN, Self::MAX))
                }
            }
        }

        impl From<$name> for i64 {
            fn from(v: $name) -> i64 {
                v.0
            }
        }
    };
}
