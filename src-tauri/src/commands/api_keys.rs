//! Named API keys for the programs that call this app's local API (a till, a label
//! printer, a script). They live in the LOCAL database whatever the window is connected
//! to, because the local API always serves the local store; a remote server's keys are
//! managed on that server with `petstore-server keys`.

use petstore::domain::{Name, Operation};
use petstore::engine::Keys;
use petstore::store::{IssuedKey, KeyInfo, Scope};
use tauri::State;

use crate::error::CommandResult;
use crate::input::Input;
use crate::shell::Shell;

/// Every key, active and revoked, without secrets.
#[tauri::command]
pub async fn list_api_keys(shell: State<'_, Shell>) -> CommandResult<Vec<KeyInfo>> {
    Ok(shell.backend().local().list_keys().await?)
}

/// A new key; its secret is in the answer and nowhere else.
#[tauri::command]
pub async fn create_api_key(
    shell: State<'_, Shell>,
    name: Input<Name>,
    scope: Input<Scope>,
) -> CommandResult<IssuedKey> {
    Ok(keys(&shell, Operation::CreateKey).await?.create_key(name.0, scope.0).await?)
}

/// Revokes a key; requests carrying it are refused from the next one on.
#[tauri::command]
pub async fn revoke_api_key(shell: State<'_, Shell>, name: Input<String>) -> CommandResult<KeyInfo> {
    Ok(keys(&shell, Operation::RevokeKey).await?.revoke_key(&name.0).await?)
}

/// A new secret for a key, same name and scope; the old secret stops working at once.
#[tauri::command]
pub async fn rotate_api_key(shell: State<'_, Shell>, name: Input<String>) -> CommandResult<IssuedKey> {
    Ok(keys(&shell, Operation::RotateKey).await?.rotate_key(&name.0).await?)
}

/// This computer's keys as the signed-in person, once they may do `operation`.
async fn keys(shell: &Shell, operation: Operation) -> CommandResult<std::sync::Arc<dyn Keys>> {
    let actor = shell.allowed(operation).await?;
    Ok(shell.backend().local().keys_acting(actor))
}
