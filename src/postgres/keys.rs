//! Named API keys on PostgreSQL: the same operations and messages as `src/store/keys.rs`.
//! Only the SHA-256 hash of a secret is stored. Names are one key whatever the case of
//! their ASCII letters (SQLite's `COLLATE NOCASE`), which the statements below spell
//! `lower(name COLLATE "C")`, the expression of the unique index.

use std::sync::Arc;

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use super::types::col;
use super::{PgStore, pg, violates};
use crate::admission::WriteAdmission;
use crate::api_key::{self, IssuedKey, KeyHolder, KeyInfo, KeyMatch, Scope};
use crate::domain::{Actor, Name, Timestamp};
use crate::engine::Keys;
use crate::error::{Error, Result};

const COLUMNS: &str = "name, scope, prefix, created_at, rotated_at, revoked_at";

fn from_row(r: &Row) -> Result<KeyInfo> {
    Ok(KeyInfo {
        name: col(r, 0)?,
        scope: col::<&str>(r, 1)?.parse().map_err(Error::internal)?,
        prefix: col(r, 2)?,
        created_at: col(r, 3)?,
        rotated_at: col(r, 4)?,
        revoked_at: col(r, 5)?,
    })
}

#[async_trait]
impl Keys for PgStore {
    /// The same keys as `actor`'s. Only the handle so far: PostgreSQL logs no key writes
    /// until its staff migration (its helper's part) lands.
    fn keys_acting(&self, actor: Actor) -> Arc<dyn Keys> {
        Arc::new(PgStore { actor: Arc::new(actor), ..self.clone() })
    }

    async fn create_key(&self, name: Name, scope: Scope) -> Result<IssuedKey> {
        let secret = api_key::generate();
        let conn = self.client().await?;
        let c = &*conn;
        // Looked for first, so that a name taken does not use up an id (see categories.rs);
        // the unique index still decides between two replicas at once.
        if let Ok(key) = get(c, name.as_str()).await {
            return Err(api_key::duplicate_name(name.as_str(), !key.is_active()));
        }
        let sql = "INSERT INTO api_keys (name, scope, hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5)";
        WriteAdmission::begin_current()?;
        let inserted = c
            .execute(
                &c.prepare_cached(sql).await.map_err(pg)?,
                &[
                    &name.as_str(),
                    &scope.as_str(),
                    &&api_key::hash(&secret)[..],
                    &api_key::prefix(&secret),
                    &Timestamp::now().to_string(),
                ],
            )
            .await;
        if let Err(e) = inserted {
            // In autocommit, so the failed insert leaves the connection free to say why.
            if violates(&e, &SqlState::UNIQUE_VIOLATION, "api_keys_name_key") {
                let revoked = get(c, name.as_str()).await.is_ok_and(|key| !key.is_active());
                return Err(api_key::duplicate_name(name.as_str(), revoked));
            }
            return Err(pg(e));
        }
        Ok(IssuedKey { key: get(c, name.as_str()).await?, secret: secret.into() })
    }

    async fn list_keys(&self) -> Result<Vec<KeyInfo>> {
        let conn = self.client().await?;
        let c = &*conn;
        let sql = format!("SELECT {COLUMNS} FROM api_keys ORDER BY lower(name COLLATE \"C\"), id");
        let rows = c.query(&c.prepare_cached(&sql).await.map_err(pg)?, &[]).await.map_err(pg)?;
        rows.iter().map(from_row).collect()
    }

    async fn revoke_key(&self, name: &str) -> Result<KeyInfo> {
        let conn = self.client().await?;
        let c = &*conn;
        let sql = format!(
            "UPDATE api_keys SET revoked_at = $2
             WHERE lower(name COLLATE \"C\") = lower($1 COLLATE \"C\") AND revoked_at IS NULL
             RETURNING {COLUMNS}"
        );
        // One statement in autocommit: it may be applied once sent (see `crate::admission`).
        WriteAdmission::begin_current()?;
        let row = c
            .query_opt(&c.prepare_cached(&sql).await.map_err(pg)?, &[&name, &Timestamp::now().to_string()])
            .await
            .map_err(pg)?;
        match row {
            Some(row) => from_row(&row),
            None => Err(why_not_active(c, name).await),
        }
    }

    async fn rotate_key(&self, name: &str) -> Result<IssuedKey> {
        let secret = api_key::generate();
        let conn = self.client().await?;
        let c = &*conn;
        let sql = format!(
            "UPDATE api_keys SET hash = $2, prefix = $3, rotated_at = $4
             WHERE lower(name COLLATE \"C\") = lower($1 COLLATE \"C\") AND revoked_at IS NULL
             RETURNING {COLUMNS}"
        );
        // One statement in autocommit: it may be applied once sent (see `crate::admission`).
        WriteAdmission::begin_current()?;
        let row = c
            .query_opt(
                &c.prepare_cached(&sql).await.map_err(pg)?,
                &[
                    &name,
                    &&api_key::hash(&secret)[..],
                    &api_key::prefix(&secret),
                    &Timestamp::now().to_string(),
                ],
            )
            .await
            .map_err(pg)?;
        match row {
            Some(row) => Ok(IssuedKey { key: from_row(&row)?, secret: secret.into() }),
            None => Err(why_not_active(c, name).await),
        }
    }

    /// The key whose secret hashes to `hash`: one indexed statement in autocommit, so it
    /// reads what is committed now, on any replica. (Looking a hash up through an index
    /// is not a constant-time comparison and need not be; see `src/store/keys.rs`.)
    async fn find_key(&self, hash: [u8; 32]) -> Result<KeyMatch> {
        let conn = self.client().await?;
        let c = &*conn;
        let sql = "SELECT name, scope, revoked_at IS NOT NULL, id FROM api_keys WHERE hash = $1";
        let row = c.query_opt(&c.prepare_cached(sql).await.map_err(pg)?, &[&&hash[..]]).await.map_err(pg)?;
        let Some(row) = row else { return Ok(KeyMatch::Unknown) };
        let name: String = col(&row, 0)?;
        if col::<bool>(&row, 2)? {
            return Ok(KeyMatch::Revoked { name });
        }
        let scope = col::<&str>(&row, 1)?.parse().map_err(Error::internal)?;
        Ok(KeyMatch::Active(KeyHolder { id: col(&row, 3)?, name, scope }))
    }
}

async fn get(c: &impl GenericClient, name: &str) -> Result<KeyInfo> {
    let sql =
        format!("SELECT {COLUMNS} FROM api_keys WHERE lower(name COLLATE \"C\") = lower($1 COLLATE \"C\")");
    c.query_opt(&c.prepare_cached(&sql).await.map_err(pg)?, &[&name])
        .await
        .map_err(pg)?
        .map(|r| from_row(&r))
        .transpose()?
        .ok_or_else(|| api_key::no_such_key(name))
}

/// Why an update that targets the active key named `name` changed nothing.
async fn why_not_active(c: &impl GenericClient, name: &str) -> Error {
    match get(c, name).await {
        Ok(key) => api_key::revoked(&key),
        Err(e) => e,
    }
}
