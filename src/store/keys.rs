//! Named API keys: each has a name, a scope and only the SHA-256 hash of its secret, so a
//! copy of the database lets nobody in. The secret exists in exactly two places: the
//! [`IssuedKey`] that [`Store::create_key`] or [`Store::rotate_key`] returns, and the client
//! it was handed to.

use std::sync::Arc;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Snapshot, Store, activity};
use crate::api_key::{self, IssuedKey, KeyHolder, KeyInfo, KeyMatch, Scope};
use crate::domain::activity as log;
use crate::domain::{ActivityKind, Actor, Name, Timestamp};
use crate::engine::Keys;
use crate::error::{Error, Result};

#[async_trait]
impl Keys for Store {
    /// Makes a new key named `name` with a fresh 256-bit secret.
    async fn create_key(&self, name: Name, scope: Scope) -> Result<IssuedKey> {
        let secret = api_key::generate();
        let by = self.actor.clone();
        let (key, secret) = self
            .write_quietly(move |tx| {
                tx.execute(
                    "INSERT INTO api_keys (name, scope, hash, prefix, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        name.as_str(),
                        scope.as_str(),
                        api_key::hash(&secret),
                        api_key::prefix(&secret),
                        Timestamp::now()
                    ],
                )
                .map_err(|e| on_duplicate_name(e, tx, name.as_str()))?;
                let key = logged(tx, get(tx, name.as_str())?, ActivityKind::KeyCreated, &by)?;
                Ok((key, secret))
            })
            .await?;
        Ok(IssuedKey { key, secret: secret.into() })
    }

    /// Every key, active and revoked, by name.
    async fn list_keys(&self) -> Result<Vec<KeyInfo>> {
        self.read(|conn| {
            let mut stmt =
                conn.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys ORDER BY name, id"))?;
            let keys = stmt.query_map([], from_row)?.collect::<rusqlite::Result<_>>()?;
            Ok(keys)
        })
        .await
    }

    /// Revokes the key named `name`: from this moment no request carrying it is accepted.
    async fn revoke_key(&self, name: &str) -> Result<KeyInfo> {
        let name = name.to_owned();
        let by = self.actor.clone();
        self.write_quietly(move |tx| {
            let changed = tx.execute(
                "UPDATE api_keys SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
                params![name, Timestamp::now()],
            )?;
            if changed == 0 {
                return Err(why_not_active(tx, &name));
            }
            logged(tx, get(tx, &name)?, ActivityKind::KeyRevoked, &by)
        })
        .await
    }

    /// Gives the key named `name` a new secret, same name and scope; the old secret stops
    /// working at once.
    async fn rotate_key(&self, name: &str) -> Result<IssuedKey> {
        let name = name.to_owned();
        let secret = api_key::generate();
        let by = self.actor.clone();
        let (key, secret) = self
            .write_quietly(move |tx| {
                let changed = tx.execute(
                    "UPDATE api_keys SET hash = ?2, prefix = ?3, rotated_at = ?4
                     WHERE name = ?1 AND revoked_at IS NULL",
                    params![name, api_key::hash(&secret), api_key::prefix(&secret), Timestamp::now()],
                )?;
                if changed == 0 {
                    return Err(why_not_active(tx, &name));
                }
                Ok((logged(tx, get(tx, &name)?, ActivityKind::KeyRotated, &by)?, secret))
            })
            .await?;
        Ok(IssuedKey { key, secret: secret.into() })
    }

    /// Finds the key whose secret hashes to `hash`, for authenticating a request. One
    /// indexed read per request, by key, in a snapshot begun for it (see `engine/readers.rs`): a
    /// key revoked or rotated by another process (the CLI beside a running server) is
    /// refused from its next request on.
    async fn find_key(&self, hash: [u8; 32]) -> Result<KeyMatch> {
        self.inner.engine.read_bounded(Snapshot::Latest, move |conn| find(conn, &hash)).await
    }

    /// The same keys, whose writes are `actor`'s in the activity log.
    fn keys_acting(&self, actor: Actor) -> Arc<dyn Keys> {
        Arc::new(Store { actor: Arc::new(actor), ..self.clone() })
    }
}

/// `key`, just written, with its `kind` of entry in the log as `by`'s.
fn logged(conn: &Connection, key: KeyInfo, kind: ActivityKind, by: &Actor) -> Result<KeyInfo> {
    activity::record(conn, &log::key_written(kind, &key.name, key.scope.as_str(), by), Timestamp::now())?;
    Ok(key)
}

const COLUMNS: &str = "name, scope, prefix, created_at, rotated_at, revoked_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<KeyInfo> {
    let scope: String = r.get(1)?;
    Ok(KeyInfo {
        name: r.get(0)?,
        scope: scope.parse().map_err(|e: String| {
            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, e.into())
        })?,
        prefix: r.get(2)?,
        created_at: r.get(3)?,
        rotated_at: r.get(4)?,
        revoked_at: r.get(5)?,
    })
}

fn get(conn: &Connection, name: &str) -> Result<KeyInfo> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE name = ?1"))?
        .query_row([name], from_row)
        .optional()?
        .ok_or_else(|| api_key::no_such_key(name))
}

fn find(conn: &Connection, hash: &[u8; 32]) -> Result<KeyMatch> {
    // Looking a hash up through an index is not a constant-time comparison, and need not
    // be: timing could at most tell how many leading bytes of SHA-256(guess) match a stored
    // hash, which says nothing about any secret.
    let row = conn
        .prepare_cached("SELECT name, scope, revoked_at IS NOT NULL, id FROM api_keys WHERE hash = ?1")?
        .query_row([&hash[..]], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?, r.get::<_, i64>(3)?))
        })
        .optional()?;
    Ok(match row {
        None => KeyMatch::Unknown,
        Some((name, _, true, _)) => KeyMatch::Revoked { name },
        Some((name, scope, false, id)) => {
            KeyMatch::Active(KeyHolder { id, name, scope: scope.parse().map_err(Error::internal)? })
        }
    })
}

/// Why an update that targets the active key named `name` changed nothing.
fn why_not_active(conn: &Connection, name: &str) -> Error {
    match get(conn, name) {
        Ok(key) => api_key::revoked(&key),
        Err(e) => e,
    }
}

/// The unique name is the source of truth for "one key per name"; its violation becomes
/// the precise conflict. (A clash of hashes would need a SHA-256 collision.)
fn on_duplicate_name(e: rusqlite::Error, conn: &Connection, name: &str) -> Error {
    if e.sqlite_error_code() != Some(rusqlite::ErrorCode::ConstraintViolation) {
        return Error::from(e);
    }
    api_key::duplicate_name(name, get(conn, name).is_ok_and(|key| !key.is_active()))
}
