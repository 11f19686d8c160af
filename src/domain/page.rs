use crate::error::{Error, Result};

/// A window into a list: `limit` 1..=100 (default 20) items from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    limit: u32,
    offset: u32,
}

impl Page {
    pub const MAX_LIMIT: u32 = 100;
    pub const DEFAULT_LIMIT: u32 = 20;
    pub const MAX_OFFSET: u32 = i32::MAX as u32;

    pub fn new(limit: u32, offset: u32) -> Result<Self> {
        if !(1..=Self::MAX_LIMIT).contains(&limit) {
            return Err(Error::invalid_parameter(format!(
                "limit must be between 1 and {}, got {limit}",
                Self::MAX_LIMIT
            )));
        }
        if offset > Self::MAX_OFFSET {
            return Err(Error::invalid_parameter(format!(
                "offset must be between 0 and {}, got {offset}",
                Self::MAX_OFFSET
            )));
        }
        Ok(Self { limit, offset })
    }

    pub fn limit(self) -> u32 {
        self.limit
    }

    pub fn offset(self) -> u32 {
        self.offset
    }
}

impl Default for Page {
    fn default() -> Self {
        Self { limit: Self::DEFAULT_LIMIT, offset: 0 }
    }
}

/// One page of a list and how many items the whole list holds.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Paged<T> {
    pub items: Vec<T>,
    pub total: u64,
}
