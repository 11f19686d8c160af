//! The counter writes a till may have to send again (`CounterWrite`), each under an
//! `Idempotency-Key` of the caller's choosing (a UUID per write, kept with it until the
//! server has answered), so that the server runs it once however often it is sent: after a
//! timeout, a lost connection, or a restart of the app with the write still queued. A retry
//! with the same key and the same write gets the first answer again, success or refusal;
//! the same key with another write is `422 idempotency_key_reused`. Keys belong to the API
//! key the client sends, and the server keeps them for its `--idempotency-window` (7 days
//! unless configured).
//!
//! A key must be 1 to 255 printable ASCII characters; another is refused with
//! `validation_failed` before anything is sent.

use std::time::Duration;

use reqwest::Method;

use super::Client;
use crate::domain::{CounterAnswer, CounterWrite, OrderId};
use crate::error::Result;

/// How long a server keeps a key unless it says: its default.
pub const DEFAULT_IDEMPOTENCY_WINDOW: Duration = crate::server::DEFAULT_WINDOW;

/// The most of `GET /health` the till reads.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Health {
    idempotency_window_seconds: Option<u64>,
}

impl Client {
    /// How long the server keeps an `Idempotency-Key` (`GET /health`); a server that does
    /// not say keeps them for the default. A write queued longer ago than this must not be
    /// sent again blindly: if an earlier try of it reached the server, the server no longer
    /// knows, and would apply it twice.
    pub async fn idempotency_window(&self) -> Result<Duration> {
        let health: Health = self.send(Method::GET, &["health"], &[]).await?.json()?;
        Ok(health.idempotency_window_seconds.map_or(DEFAULT_IDEMPOTENCY_WINDOW, Duration::from_secs))
    }

    /// `write` under `key`, as its REST call: the server runs it once however often it is
    /// sent with that key.
    pub async fn once(&self, key: &str, write: &CounterWrite) -> Result<CounterAnswer> {
        let order = |id: &OrderId| id.to_string();
        match write {
            CounterWrite::Place(new) => {
                let sent = self.send_once(Method::POST, &["store", "orders"], key, Some(new)).await?;
                sent.json().map(CounterAnswer::Order)
            }
            CounterWrite::Update { order: id, patch } => {
                let path = ["store", "orders", &order(id)];
                self.send_once(Method::PATCH, &path, key, Some(patch)).await?.json().map(CounterAnswer::Order)
            }
            CounterWrite::Cancel(id) => {
                let path = ["store", "orders", &order(id), "cancel"];
                self.send_once::<()>(Method::POST, &path, key, None).await?.json().map(CounterAnswer::Order)
            }
            CounterWrite::Delete(id) => {
                let path = ["store", "orders", &order(id)];
                self.send_once::<()>(Method::DELETE, &path, key, None).await.map(|_| CounterAnswer::Done)
            }
            CounterWrite::Adjust { pet, adjustment } => {
                let path = ["store", "inventory", &pet.to_string(), "adjustments"];
                let sent = self.send_once(Method::POST, &path, key, Some(adjustment)).await?;
                sent.json().map(CounterAnswer::Item)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::transport::idempotency_key;

    #[test]
    fn a_key_is_sent_as_an_sf_string() {
        let value = |key: &str| idempotency_key(key).unwrap().to_str().unwrap().to_owned();
        assert_eq!(value("8e03978e-40d5"), r#""8e03978e-40d5""#);
        assert_eq!(value(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        for bad in ["", "caf\u{e9}", "tab\there", &"k".repeat(256)] {
            let error = idempotency_key(bad).unwrap_err();
            assert_eq!(error.code, crate::error::ErrorCode::ValidationFailed, "{bad:?}");
        }
    }
}
