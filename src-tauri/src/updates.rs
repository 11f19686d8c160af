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
//!
//! The installer's signature covers the file, not the version the manifest announces: a
//! host that can change the manifest could offer an older, genuinely signed installer as
//! a newer version. So each platform of the manifest also carries `version_signature`, the
//! release key's signature of [`version_statement`] (the version and that installer's
//! signature, made by the release workflow), checked before anything is offered; the
//! installer's address must be `https://` (or loopback, as the manifest's); and nothing at
//! or below the running version, or below the newest version already seen signed (the
//! floor, kept with the settings), is offered.

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
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback(&url) => Ok(url),
        "http" => Err(CommandError::validation(format!(
            "updates must come over https:// (only this computer may use http://): {raw}"
        ))),
        _ => Err(CommandError::validation(format!("{raw:?} is not an http:// or https:// address"))),
    }
}

/// Whether `url` names this computer.
fn loopback(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `url` may be fetched: https, or http to this computer.
fn secure(url: &Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && loopback(url))
}

/// What the release key signs for each platform's installer: the version and the
/// installer's own signature (as the manifest writes it, base64), so that a version can
/// name only the installer it was released with.
pub fn version_statement(version: &str, installer_signature: &str) -> String {
    format!("petstore update\nversion: {version}\ninstaller signature: {installer_signature}\n")
}

/// Checks `version_signature` (base64 of a minisign signature, as `tauri signer sign`
/// writes it) of the statement for `version` and `installer_signature` with `pubkey`.
fn verify_version(
    pubkey: &str,
    version: &str,
    installer_signature: &str,
    version_signature: &str,
) -> Result<(), String> {
    use base64::Engine as _;
    let text = |b64: &str, what: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| format!("the {what} is not base64 text"))
    };
    let key = minisign_verify::PublicKey::decode(&text(pubkey, "update key")?)
        .map_err(|e| format!("the update key: {e}"))?;
    let signature = minisign_verify::Signature::decode(&text(version_signature, "version signature")?)
        .map_err(|e| format!("the version signature: {e}"))?;
    key.verify(version_statement(version, installer_signature).as_bytes(), &signature, false)
        .map_err(|e| format!("the version signature does not match: {e}"))
}

/// Asks `address` whether a newer Petstore is out; answers the offer, or `None` when this
/// one is the latest or it is below `floor` (the newest version seen signed before).
/// `pubkey` checks the version's signature now and the installer's when it is downloaded.
pub async fn check<R: Runtime>(
    app: &AppHandle<R>,
    address: Url,
    pubkey: &str,
    floor: Option<&str>,
) -> CommandResult<Option<(UpdateOffer, Update)>> {
    if pubkey.is_empty() {
        return Err(CommandError::validation(
            "this build of Petstore has no update key, so it cannot install updates; new versions come with the installer",
        ));
    }
    let updater = app
        .updater_builder()
        .endpoints(vec![address.clone()])
        .map(|b| {
            // Newer than this one, and not below the floor: never a downgrade, even to a
            // version newer than this one but older than one offered before.
            let floor = floor.and_then(|f| semver::Version::parse(f).ok());
            b.version_comparator(move |current, remote| {
                remote.version > current && floor.as_ref().is_none_or(|floor| remote.version >= *floor)
            })
        })
        .and_then(|b| b.pubkey(pubkey).timeout(TIMEOUT).build())
        .map_err(|e| CommandError::validation(format!("cannot check {address}: {e}")))?;
    let update = updater
        .check()
        .await
        .map_err(|e| CommandError::validation(format!("checking {address} failed: {e}")))?;
    let Some(update) = update else { return Ok(None) };
    let refused = |why: String| {
        CommandError::validation(format!(
            "{address} offers Petstore {} but {why}; nothing was offered",
            update.version
        ))
    };
    if !secure(&update.download_url) {
        return Err(refused(format!(
            "its installer is not at an https:// address ({})",
            update.download_url
        )));
    }
    // The platform entry the updater took: the one with the installer's signature.
    let version_signature = update.raw_json["platforms"]
        .as_object()
        .and_then(|platforms| {
            platforms.values().find(|p| p["signature"].as_str() == Some(update.signature.as_str()))
        })
        .and_then(|p| p["version_signature"].as_str())
        .ok_or_else(|| refused("its version is not signed (no version_signature)".to_owned()))?;
    verify_version(pubkey, &update.version, &update.signature, version_signature).map_err(refused)?;
    Ok(Some({
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement signed by the release workflow's own tool (`tauri signer sign`, Tauri CLI
    /// 2.11.5, a key made for this test with `tauri signer generate`) is read as the app
    /// reads a manifest's `version_signature`: the workflow and the app agree on the
    /// statement and the encoding.
    #[test]
    fn a_statement_signed_by_tauri_signer_is_verified_and_no_other() {
        const PUBKEY: &str = "dW50cnVzdGVkIGNvbW1lbnQ6IG1pbmlzaWduIHB1YmxpYyBrZXk6IEJGNEZCRjRBMUFFQzhDQzAKUldUQWpPd2FTcjlQdjBqd1duaXNJNDdIbVU0Mlp4M0o3MGpJVEZpd2xFNHVlOUE1UFdCdHpkbE0K";
        const SIGNED: &str = "dW50cnVzdGVkIGNvbW1lbnQ6IHNpZ25hdHVyZSBmcm9tIHRhdXJpIHNlY3JldCBrZXkKUlVUQWpPd2FTcjlQdndxVFhveTN1THZLMzFBdTJDR0RRYis3V2s0RG52dEdwcCtRUFBuZktqQTFiMmFvZHM4RVZCVkRPQ3dZanJHMk4rWEJIa1QwbDRQV043YWVqTUJVc1FJPQp0cnVzdGVkIGNvbW1lbnQ6IHRpbWVzdGFtcDoxNzk1NzYyMjcwCWZpbGU6c3QKZ3lFRXBYUERiTUF0NENDbERCT0ptcXVuUTFkY1ljc0lMMS9GMzQwZDBFYUZZM0xKK20wVUt0ZDRXeDJYNnpiY0JCUmJDU3VRaXd4M0xTMzhCdk9vQnc9PQo=";
        assert_eq!(verify_version(PUBKEY, "1.2.3", "abc", SIGNED), Ok(()));
        for (version, installer) in [("1.2.4", "abc"), ("1.2.3", "abd")] {
            let refused = verify_version(PUBKEY, version, installer, SIGNED).unwrap_err();
            assert!(refused.contains("does not match"), "{version} {installer}: {refused}");
        }
    }
}
