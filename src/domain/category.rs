use serde::{Deserialize, Serialize};

use super::{CategoryId, Description, Name, Timestamp};

/// Body of `POST /categories` and `PUT /categories/{categoryId}`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewCategory {
    pub name: Name,
    #[serde(default)]
    pub description: Option<Description>,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Category {
    pub id: CategoryId,
    pub name: String,
    pub description: Option<String>,
    /// How many pets are in the category (the sidebar shows it).
    pub pet_count: i64,
    pub created_at: Timestamp,
}
