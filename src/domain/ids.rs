//! Resource ids. They are positive: SQLite `AUTOINCREMENT` starts at 1, so 0 or a negative
//! number can only be a mistake and is refused at the edge.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($name:ident, $what:literal) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "i64", into = "i64")]
        pub struct $name(i64);

        impl $name {
            /// What the id names, for messages: "pet 7 does not exist".
            pub const WHAT: &'static str = $what;

            pub fn get(self) -> i64 {
                self.0
            }
        }

        impl TryFrom<i64> for $name {
            type Error = String;

            fn try_from(v: i64) -> Result<Self, String> {
                if v >= 1 {
                    Ok(Self(v))
                } else {
                    Err(format!("{} id must be a positive integer, got {v}", $what))
                }
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                let v: i64 =
                    s.parse().map_err(|_| format!("{} id must be a positive integer, got {s:?}", $what))?;
                Self::try_from(v)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(PetId, "pet");
id_type!(CategoryId, "category");
id_type!(OrderId, "order");
id_type!(AdjustmentId, "adjustment");
id_type!(StaffId, "staff member");
