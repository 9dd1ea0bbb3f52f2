//! The `notes` bundle: notes kept in the agent's state under the key `notes`, a
//! JSON list, with ids drawn from the counter `notes.next-id`.

mod store;
mod tools;

cordon_sdk::export_tools!(tools::Add, tools::List, tools::Search, tools::Delete);
