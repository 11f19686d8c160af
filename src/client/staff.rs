//! A till's staff, on the server: the PIN hashes the till keeps to sign its staff in while
//! it cannot reach the server, and the sessions of the server's that it asks for while it
//! can (`Petstore-Staff`, `Petstore-Approval`).

use reqwest::Method;

use super::Client;
use crate::domain::{Pin, StaffCredential, StaffId};
use crate::error::Result;
use crate::staff::{Purpose, SignedIn};

impl Client {
    /// `GET /staff/credentials`: every member with their PIN's hash (a till's key only).
    pub async fn staff_credentials(&self) -> Result<Vec<StaffCredential>> {
        self.send(Method::GET, &["staff", "credentials"], &[]).await?.json()
    }

    /// `POST /staff/sessions`: signs member `staff` in with `pin` for `purpose`; the server
    /// checks the PIN and counts a wrong one.
    pub async fn start_session(
        &self,
        staff: StaffId,
        pin: Option<&Pin>,
        purpose: Purpose,
    ) -> Result<SignedIn> {
        let mut body = serde_json::json!({ "staffId": staff, "purpose": purpose });
        if let Some(pin) = pin {
            body["pin"] = pin.digits().into();
        }
        self.send_json(Method::POST, &["staff", "sessions"], &body).await?.json()
    }

    /// `DELETE /staff/sessions/current`: ends the session this client acts with.
    pub async fn end_session(&self) -> Result<()> {
        self.send(Method::DELETE, &["staff", "sessions", "current"], &[]).await.map(drop)
    }
}
