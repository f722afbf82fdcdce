//! What the app, the tabs, the windows and the views are built from, below all of them: the
//! state of what is fetched (`remote`) and of a server-paged list (`paged`), the text inputs
//! (`input`, `search`), the registry of background jobs and where requests are sent (`jobs`),
//! the tabs as the bar names them (`tab`), what a tab or a window asks of the screen (`then`),
//! and the status line's tone and the reasons requests stop (`status`). Nothing here names the
//! app, a tab or a window.

pub mod input;
pub mod jobs;
pub mod paged;
pub mod remote;
pub mod search;
pub mod status;
pub mod tab;
pub mod then;
