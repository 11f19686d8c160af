use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{CategoryId, Description, Name, PetId, Price, Sku, Timestamp, double_option, not_null};

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PetStatus {
    #[default]
    Available,
    Pending,
    Sold,
}

impl PetStatus {
    pub const ALL: [PetStatus; 3] = [PetStatus::Available, PetStatus::Pending, PetStatus::Sold];

    pub fn as_str(self) -> &'static str {
        match self {
            PetStatus::Available => "available",
            PetStatus::Pending => "pending",
            PetStatus::Sold => "sold",
        }
    }
}

impl fmt::Display for PetStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PetStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|status| status.as_str() == s).ok_or_else(|| {
            format!("status must be one of available, pending, sold; got {}", super::quoted(s))
        })
    }
}

/// Body of `POST /pets` and `PUT /pets/{petId}` (a full replacement: what is left out
/// takes its default).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewPet {
    pub name: Name,
    #[serde(default)]
    pub category_id: Option<CategoryId>,
    #[serde(default)]
    pub status: PetStatus,
    #[serde(default)]
    pub description: Option<Description>,
    /// What one costs; none means not for sale at a price yet (orders then have no total).
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub price: Option<Price>,
    /// The barcode, unique ignoring case.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default)]
    pub sku: Option<Sku>,
}

/// Body of `PATCH /pets/{petId}`: absent fields stay as they are; `null` clears the
/// category or the description.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PetPatch {
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "not_null", skip_serializing_if = "Option::is_none")]
    pub name: Option<Name>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub category_id: Option<Option<CategoryId>>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "not_null", skip_serializing_if = "Option::is_none")]
    pub status: Option<PetStatus>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub description: Option<Option<Description>>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub price: Option<Option<Price>>,
    #[serde(default, deserialize_with = "double_option", skip_serializing_if = "Option::is_none")]
    pub sku: Option<Option<Sku>>,
}

impl PetPatch {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The pet as it is after the patch, as a full replacement: what the patch leaves
    /// out stays as `pet` has it. `Err` only if `pet` holds what the domain would refuse.
    pub fn applied_to(&self, pet: Pet) -> Result<NewPet, String> {
        Ok(NewPet {
            name: match &self.name {
                Some(name) => name.clone(),
                None => Name::parse(&pet.name)?,
            },
            category_id: self.category_id.unwrap_or(pet.category_id),
            status: self.status.unwrap_or(pet.status),
            description: match &self.description {
                Some(d) => d.clone(),
                None => pet.description.as_deref().map(Description::parse).transpose()?,
            },
            price: self.price.unwrap_or(pet.price),
            sku: match &self.sku {
                Some(sku) => sku.clone(),
                None => pet.sku.as_deref().map(Sku::parse).transpose()?,
            },
        })
    }
}

/// The refusal of a barcode another pet has.
/// A pet with orders is kept: the orders name it. (Not "mark it sold": it may have stock.)
pub fn pet_has_orders(id: PetId, orders: i64) -> crate::Error {
    crate::Error::conflict(
        crate::ErrorCode::PetHasOrders,
        format!("pet {id} has {orders} order(s) and is kept for their record; it cannot be deleted"),
    )
}

pub fn duplicate_sku(sku: &Sku) -> crate::Error {
    crate::Error::conflict(
        crate::ErrorCode::DuplicateSku,
        format!("another pet already has the sku {:?}", sku.as_str()),
    )
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pet {
    pub id: PetId,
    pub name: String,
    pub category_id: Option<CategoryId>,
    pub status: PetStatus,
    pub description: Option<String>,
    pub price: Option<Price>,
    pub sku: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PetSort {
    Name,
    NameDesc,
    #[default]
    Id,
    IdDesc,
}

impl PetSort {
    pub fn as_str(self) -> &'static str {
        match self {
            PetSort::Name => "name",
            PetSort::NameDesc => "-name",
            PetSort::Id => "id",
            PetSort::IdDesc => "-id",
        }
    }
}

impl FromStr for PetSort {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        [PetSort::Name, PetSort::NameDesc, PetSort::Id, PetSort::IdDesc]
            .into_iter()
            .find(|sort| sort.as_str() == s)
            .ok_or_else(|| format!("sort must be one of name, -name, id, -id; got {}", super::quoted(s)))
    }
}

/// What `GET /pets` may filter on; every field narrows the result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PetFilter {
    pub statuses: Vec<PetStatus>,
    pub category_id: Option<CategoryId>,
    /// Part of the name, matched case-insensitively.
    pub name_contains: Option<Name>,
    /// A loose search (the clerk's): found in the name allowing one typo, or in the
    /// description exactly; see [`PetSearch`].
    pub search: Option<Name>,
    pub ids: Vec<PetId>,
    /// The pet with this barcode (ignoring case).
    pub sku: Option<Sku>,
    pub sort: PetSort,
}

impl PetFilter {
    /// Most `id`s one list may name: a page of look-ups by key.
    pub const MAX_IDS: usize = super::Page::MAX_LIMIT as usize;

    /// Refuses more `id`s than [`PetFilter::MAX_IDS`].
    pub fn check_ids(&self) -> crate::error::Result<()> {
        if self.ids.len() > Self::MAX_IDS {
            return Err(crate::error::Error::invalid_parameter(format!(
                "id may be given at most {} times",
                Self::MAX_IDS
            )));
        }
        Ok(())
    }

    /// Whether the filter searches text: the list is then a scan, counted as it is read,
    /// not a walk along an index with a kept count.
    pub fn searches(&self) -> bool {
        self.name_contains.is_some() || self.search.is_some()
    }

    /// The patterns of [`PetFilter::search`], for both engines.
    pub fn search_patterns(&self) -> Option<PetSearch> {
        self.search.as_ref().map(PetSearch::of)
    }
}

/// A loose search as `LIKE ... ESCAPE '\'` patterns, the same for both engines: a pet is
/// found if its folded name (`name_folded`: lower case, no accents) matches one of `halves`
/// and one of `names`, or its description matches `description`.
///
/// - The name tolerates one typo from [`ONE_TYPO_FROM`](super::ONE_TYPO_FROM) characters of
///   folded text on: one character missing, one different, or (from five on) one extra
///   ([`like_one_typo`](super::like_one_typo)); so "Bela" finds "Bella", and "Bello" (one
///   letter off "bell"). Shorter text is found exactly, as `q` finds it. `halves` changes
///   nothing found: every such name holds one half of the text exactly
///   ([`like_halves`](super::like_halves)), and two `LIKE`s most rows fail spare them the
///   many of the typo.
/// - The description is matched exactly (the text as typed, a substring), with no typo
///   patterns: they would multiply the `LIKE`s every row is tried against, and a description
///   is long enough to find nearly anything one letter off. Descriptions are not folded in
///   the database, so the match ignores the case of the ASCII letters only (SQLite's `LIKE`;
///   PostgreSQL's `ILIKE` under `COLLATE "C"`): "BELLA" finds "a calm bella", but "élise"
///   does not find "Élise" in a description (it does in a name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PetSearch {
    pub halves: Vec<String>,
    pub names: Vec<String>,
    pub description: String,
}

impl PetSearch {
    pub fn of(text: &Name) -> Self {
        let folded = text.folded();
        PetSearch {
            halves: super::like_halves(&folded),
            names: super::like_one_typo(&folded),
            description: super::like_contains(text.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_names_at_most_a_page_of_ids() {
        let ids = |n: i64| PetFilter {
            ids: (1..=n).map(|i| PetId::try_from(i).unwrap()).collect(),
            ..PetFilter::default()
        };
        assert!(ids(PetFilter::MAX_IDS as i64).check_ids().is_ok());
        let refused = ids(PetFilter::MAX_IDS as i64 + 1).check_ids().unwrap_err();
        assert_eq!(refused.message, format!("id may be given at most {} times", PetFilter::MAX_IDS));
    }
}
