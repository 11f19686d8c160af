//! Command arguments parsed at the edge with the project's rules. Tauri would reject a
//! value that does not parse with a bare string; the UI must get the same error object as
//! for every other failure, naming the field, so arguments are wrapped in [`Input`].

use serde::de::DeserializeOwned;
use tauri::Runtime;
use tauri::ipc::{CommandArg, CommandItem, InvokeError};

use crate::error::CommandError;

/// A command argument of type `T`; a value that does not parse is refused with
/// `validation_failed` and a message like `pet.name: name must not be blank`.
pub struct Input<T>(pub T);

impl<'de, R: Runtime, T: DeserializeOwned> CommandArg<'de, R> for Input<T> {
    fn from_command(command: CommandItem<'de, R>) -> Result<Self, InvokeError> {
        let key = command.key;
        serde_path_to_error::deserialize(command).map(Input).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." { key.to_owned() } else { format!("{key}.{path}") };
            InvokeError::from(CommandError::validation(format!("{field}: {}", e.into_inner())))
        })
    }
}
