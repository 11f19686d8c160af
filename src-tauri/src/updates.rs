//! Updates (tauri-plugin-updater), off until the shop gives an address: shops are often
//! offline, and an update is something staff choose, after reading what is new.
//!
//! The address is a manifest (`latest.json`, made by the release workflow) naming, per
//! platform, the installer and its minisign signature. Only an installer signed by the
//! release key is installed: the public half is compiled in from
//! `PETSTORE_UPDATER_PUBKEY` by the release workflow; a build without it (every local
//! build) cannot install updates at all and says so. The address must be `https://`, or
//! `http://` to this computer (a manifest served on loopback, as the tests do); the
//! plugin's own check would allow any `http://` with its "insecure transport" switch on,
//! which is on only so that loopback can pass.

use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;
use tauri::{AppHandle, Runtime, Url};
use tauri_plugin_updater::{Update, UpdaterExt};

use crate::error::{CommandError, CommandResult};

/// The release key's public half (base64 of minisign's public key file), or empty.
pub const RELEASE_PUBKEY: &str = match option_env!("PETSTORE_UPDATER_PUBKEY") {
    Some(key) => key,
    None => "",
};

/// How long a check or a download may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// An update on offer, as the Updates panel shows it before anything is installed.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateOffer {
    pub version: String,
    pub current_version: String,
    /// What is new, as the release wrote it.
    pub notes: Option<String>,
    /// When it was published (RFC 3339), if the manifest says.
    pub published: Option<String>,
}

/// The update last offered, kept for "Install" so that what is installed is what was shown.
#[derive(Default)]
pub struct Offered(pub Mutex<Option<Update>>);

/// The manifest's address from what staff typed: https, or http to this computer.
pub fn parse_address(raw: &str) -> CommandResult<Url> {
    let raw = raw.trim();
    let url = Url::parse(raw).map_err(|_| {
        CommandError::validation(format!(
            "{raw:?} is not a web address (like https://updates.example.com/petstore/latest.json)"
        ))
    })?;
    let host = url.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        "http" => Err(CommandError::validation(format!(
            "updates must come over https:// (only this computer may use http://): {raw}"
        ))),
        _ => Err(CommandError::validation(format!("{raw:?} is not an http:// or https:// address"))),
    }
}

/// Asks `address` whether a newer Petstore is out; answers the offer, or `None` when this
/// one is the latest. `pubkey` checks the installer when it is downloaded.
pub async fn check<R: Runtime>(
    app: &AppHandle<R>,
    address: Url,
    pubkey: &str,
) -> CommandResult<Option<(UpdateOffer, Update)>> {
    if pubkey.is_empty() {
        return Err(CommandError::validation(
            "this build of Petstore has no update key, so it cannot install updates; new versions come with the installer",
        ));
    }
    let updater = app
        .updater_builder()
        .endpoints(vec![address.clone()])
        .and_then(|b| b.pubkey(pubkey).timeout(TIMEOUT).build())
        .map_err(|e| CommandError::validation(format!("cannot check {address}: {e}")))?;
    let update = updater
        .check()
        .await
        .map_err(|e| CommandError::validation(format!("checking {address} failed: {e}")))?;
    Ok(update.map(|update| {
        let offer = UpdateOffer {
            version: update.version.clone(),
            current_version: update.current_version.clone(),
            notes: update.body.clone().filter(|n| !n.trim().is_empty()),
            // As the manifest wrote it (RFC 3339 in the release workflow's latest.json).
            published: update.raw_json["pub_date"].as_str().map(str::to_owned),
        };
        (offer, update)
    }))
}

/// Downloads the offered installer and checks its signature; answers its bytes.
pub async fn download(update: &Update) -> CommandResult<Vec<u8>> {
    update.download(|_, _| {}, || {}).await.map_err(|e| {
        CommandError::validation(format!(
            "the download of Petstore {} was refused, nothing was installed: {e}",
            update.version
        ))
    })
}
