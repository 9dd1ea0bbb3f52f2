//! The `http` bundle: `http.fetch`, a GET of one URL whose origin the
//! operator granted. The page comes back as the model can read it: JSON
//! parsed, HTML reduced to text with its links numbered, anything else as
//! text, cut at a size the call names.

mod fetch;
mod page;

cordon_sdk::export_tools!(fetch::Fetch);
