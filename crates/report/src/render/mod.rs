//! Rendering: the document model every human output shares, its text, markdown and HTML
//! renderers, the one escaping rule for control characters, and how quantities are shown.

pub mod chart;
pub mod doc;
pub mod escape;
pub mod html;
pub mod units;
