use serde::{Deserialize, Serialize};

use super::{CategoryId, Description, Name, Timestamp};
use crate::error::{Error, ErrorCode};

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

/// The refusal of a body naming a category there is none of.
pub fn no_such_category(id: CategoryId) -> Error {
    Error::new(ErrorCode::InvalidReference, format!("categoryId {id} names no category"))
}

impl Category {
    /// The refusal of deleting this category while it has pets.
    pub fn in_use(&self) -> Error {
        Error::conflict(
            ErrorCode::CategoryInUse,
            format!("category {} still has {} pet(s); move or delete them first", self.id, self.pet_count),
        )
    }
}

impl NewCategory {
    /// The refusal of a name another category has, ignoring case (the engines learn it
    /// from their unique index on the folded name).
    pub fn duplicate_name(&self) -> Error {
        Error::conflict(
            ErrorCode::DuplicateName,
            format!("a category named {:?} already exists", self.name.as_str()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusals_of_categories_name_the_category_and_what_to_do() {
        let id = CategoryId::try_from(3).unwrap();
        let missing = no_such_category(id);
        assert_eq!(
            (missing.code, missing.message.as_str()),
            (ErrorCode::InvalidReference, "categoryId 3 names no category")
        );
        let at = Timestamp::parse("2026-11-27T10:00:00Z").unwrap();
        let birds = Category { id, name: "Birds".into(), description: None, pet_count: 2, created_at: at };
        let in_use = birds.in_use();
        assert_eq!(
            (in_use.code, in_use.message.as_str()),
            (ErrorCode::CategoryInUse, "category 3 still has 2 pet(s); move or delete them first")
        );
        let new = NewCategory { name: Name::try_from("Birds".to_owned()).unwrap(), description: None };
        assert_eq!(new.duplicate_name().message, "a category named \"Birds\" already exists");
    }
}
