//! `petstore-server keys`: named API keys with a scope, for the programs that call the API
//! (a till, a label printer, a script). Changes take effect at once, also for a server
//! running in another process.

use clap::Subcommand;
use petstore::api_key::{IssuedKey, KeyInfo, Scope};
use petstore::domain::Name;

use crate::database::Db;

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make a new key and print its secret (shown this once only).
    Create {
        /// What the key is for, e.g. "till" (1 to 100 characters, unique).
        #[arg(long)]
        name: Name,
        /// `read` (GET operations only), `write` (every operation), `reports` (GET
        /// operations that carry no personal data: no orders, no change feed) or `till` (a
        /// till's: reads, signs staff in, writes only for the staff member signed in).
        #[arg(long)]
        scope: Scope,
    },
    /// List the keys: name, scope, the start of the secret, when made, whether revoked.
    List,
    /// Revoke a key: requests carrying it are refused from now on.
    Revoke {
        /// The key's name.
        name: String,
    },
    /// Give a key a new secret (same name and scope); the old one stops working at once.
    Rotate {
        /// The key's name.
        name: String,
    },
}

pub async fn run(db: &Db, command: KeysCommand) -> Result<(), String> {
    if !matches!(command, KeysCommand::Create { .. }) && !db.exists() {
        return Err(format!("the database {db} does not exist"));
    }
    let store = db.open().await?;
    match command {
        KeysCommand::Create { name, scope } => {
            let issued = store.create_key(name, scope).await.map_err(|e| e.to_string())?;
            print_secret("Created", &issued);
        }
        KeysCommand::List => print_list(&store.list_keys().await.map_err(|e| e.to_string())?),
        KeysCommand::Revoke { name } => {
            let key = store.revoke_key(&name).await.map_err(|e| e.to_string())?;
            println!("Revoked the API key {:?}; requests carrying it are refused from now on.", key.name);
        }
        KeysCommand::Rotate { name } => {
            let issued = store.rotate_key(&name).await.map_err(|e| e.to_string())?;
            print_secret("Rotated (the old secret no longer works)", &issued);
        }
    }
    Ok(())
}

/// The secret on a line of its own, so a script can take the first line.
fn print_secret(what: &str, issued: &IssuedKey) {
    println!("{}", issued.secret.expose());
    println!(
        "{what}: API key {:?}, scope {}. This secret will not be shown again: store it now; \
         only its hash is kept.",
        issued.key.name, issued.key.scope
    );
}

fn print_list(keys: &[KeyInfo]) {
    if keys.is_empty() {
        println!(
            "No named API keys. Make one with: petstore-server keys create --name NAME --scope read|write|reports|till"
        );
        return;
    }
    let width = keys.iter().map(|k| k.name.chars().count()).max().unwrap_or(0).max(4);
    println!("{:width$}  SCOPE  KEY            CREATED               STATUS", "NAME");
    for key in keys {
        let status = match (key.revoked_at, key.rotated_at) {
            (Some(at), _) => format!("revoked {at}"),
            (None, Some(at)) => format!("active (rotated {at})"),
            (None, None) => "active".to_owned(),
        };
        println!(
            "{:width$}  {:5}  {:13}  {}  {status}",
            key.name,
            key.scope,
            format!("{}…", key.prefix),
            key.created_at
        );
    }
}
