// No console window behind the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    petstore_desktop::prepare_process();
    let mut context = tauri::generate_context!();
    petstore_desktop::desktop_app(&mut context, petstore_desktop::Launch::from_env())
        .run(context)
        .expect("Petstore could not start its window");
}
